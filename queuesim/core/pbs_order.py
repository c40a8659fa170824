"""The order in which the PBS scheduler considers waiting jobs (``ordering: pbs``).

Following sched_config(5) and the PBS Professional Administrator's Guide ("Job
prioritization and preemption": starving jobs come before normal jobs; "Starving jobs";
"Using fairshare"; ``by_queue``, ``round_robin``, ``job_sort_key``), a job's key is, most
significant first:

1. starving or not (``max_starve``, the help_starving_jobs rule): a job that has waited
   ``max_starve`` or longer (since its submission; PBS counts eligible or queued time)
   goes before every job that has not;
2. its queue: higher priority first; with ``round_robin``, queues of equal priority give
   one job each in turn (the k-th job of each before the (k+1)-th of any; queues in the
   site file's order), else with ``by_queue`` all of a queue's jobs together (queues of
   equal priority in file order), else queues do not count;
3. with ``fair_share``, its entity's place in the fairshare tree
   (:mod:`.fairshare_tree`, the decayed usage of :class:`~.fairshare.FairshareLedger`);
4. each ``job_sort_key`` in turn (``ncpus``, ``walltime``, ``mem``, ``fairshare_perc``;
   HIGH: larger first);
5. submit order (the job number).

The order is computed in Python (numpy sorts); a site with this ordering runs pass by
pass through the :class:`~.context.Context` (the compiled run of :mod:`.batch_run` knows
only the FCFS, fairshare and queue-priority orders and is not used for it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queuesim.core.cluster import Allocation
from queuesim.core.fairshare import FairshareLedger
from queuesim.core.fairshare_tree import FairshareTree
from queuesim.site.model import Site

__all__ = ["PbsJobOrder"]


class PbsJobOrder:
    """The PBS scheduler's job order of :mod:`this module <.pbs_order>`."""

    def __init__(self, site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]) -> None:
        rules = site.pbs_order
        self.rules = rules
        self.ledger = FairshareLedger.for_site(site, jobs, capacity)
        self.tree = FairshareTree(site.fairshare, self.ledger.account_ids)
        names = [q.name for q in site.queues]
        self.job_queue = np.asarray(
            pd.Categorical(jobs["queue"], categories=names).codes, dtype=np.int64
        )
        priority = np.array([q.priority for q in site.queues], dtype=np.int64)
        self.job_priority = priority[self.job_queue]
        self.submit = jobs["submit"].to_numpy(dtype=np.float64)
        cpus = jobs["cpus"].to_numpy(dtype=np.float64)
        walltime = jobs["walltime"].to_numpy(dtype=np.float64)
        estimate = jobs["estimate"].to_numpy(dtype=np.float64)
        values = {
            "ncpus": cpus,
            "walltime": np.where(np.isnan(walltime), estimate, walltime),
            "mem": cpus * jobs["mem_per_cpu"].to_numpy(dtype=np.float64),
            "fairshare_perc": self.tree.percent[self.ledger.job_account],
        }
        #: per sort key, most significant first: the values to sort ascending
        self.sort_values = [
            -values[k.resource] if k.high else values[k.resource] for k in rules.sort_keys
        ]

    # --- help_starving_jobs --------------------------------------------------------------

    def starving_from(self, jobs: np.ndarray) -> np.ndarray:
        """When each of ``jobs`` starts to starve (``inf``: never, without max_starve)."""
        if self.rules.max_starve is None:
            return np.full(jobs.shape[0], np.inf)
        since: np.ndarray = self.submit[jobs] + self.rules.max_starve
        return since

    # --- the order -------------------------------------------------------------------

    def _within_queue(self, now: float, waiting: np.ndarray) -> list[np.ndarray]:
        """The keys after the queue's (least significant first, for np.lexsort)."""
        keys: list[np.ndarray] = [waiting]
        keys += [v[waiting] for v in reversed(self.sort_values)]
        if self.rules.fair_share:
            usage = self.ledger.effective_usage(now) * self.ledger.state.share
            keys.append(self.tree.ranks(usage)[self.ledger.job_account[waiting]])
        return keys

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        if waiting.size <= 1:
            return waiting
        keys = self._within_queue(now, waiting)
        rules = self.rules
        if rules.round_robin:
            inner = np.lexsort(keys)
            queue = self.job_queue[waiting[inner]]
            # the place of each job within its queue, in the inner order
            by_queue = np.argsort(queue, kind="stable")
            first = np.searchsorted(queue[by_queue], queue[by_queue])
            turn = np.empty(waiting.shape[0], dtype=np.int64)
            turn[inner[by_queue]] = np.arange(waiting.shape[0]) - first
            keys += [self.job_queue[waiting], turn]
        elif rules.by_queue:
            keys.append(self.job_queue[waiting])
        if rules.round_robin or rules.by_queue:
            keys.append(-self.job_priority[waiting])
        if rules.max_starve is not None:
            keys.append((self.starving_from(waiting) > now).astype(np.int8))
        result: np.ndarray = waiting[np.lexsort(keys)]
        return result

    # --- fairshare usage ---------------------------------------------------------------

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None:
        self.ledger.job_started(job, cpus, alloc, now)

    def job_finished(self, job: int, now: float) -> None:
        self.ledger.job_finished(job, now)
