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

One kernel, :func:`pbs_order_of`, orders the jobs on both run paths (the Context's
ordering and the compiled run of :mod:`.batch_run`, which also counts the starving jobs
that may reserve under ``starving_only``), from the order's facts gathered once per run
(:class:`PbsKeys`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from queuesim.common.jit import jit
from queuesim.core.cluster import Allocation
from queuesim.core.fairshare import FairshareLedger
from queuesim.core.fairshare_tree import FairshareTree, tree_ranks
from queuesim.site.model import Site

__all__ = ["PbsJobOrder", "PbsKeys", "pbs_order_of", "starving_count", "tiny_pbs_keys"]


class PbsKeys(NamedTuple):
    """What the PBS order knows of every job and of the site, for :func:`pbs_order_of`."""

    submit: np.ndarray
    #: per job: its queue (the site file's order) and that queue's priority
    job_queue: np.ndarray
    job_priority: np.ndarray
    #: per job_sort_key, most significant first: every job's value, to sort ascending
    sort_values: np.ndarray
    #: max_starve in seconds (``inf``: no job starves)
    max_starve: float
    queues: int
    by_queue: bool
    round_robin: bool
    fair_share: bool
    #: the fairshare tree (:class:`~.fairshare_tree.FairshareTree`)
    tree_path: np.ndarray
    tree_groups: int
    group_shares: np.ndarray
    account_shares: np.ndarray


#: the usage the order does not read (without fair_share)
_UNREAD = np.zeros(0)


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
        tree = self.tree
        # writable copies: numba compiles read-only arrays (pandas hands some out) apart
        self.keys = PbsKeys(
            np.array(self.submit),
            np.array(self.job_queue),
            np.array(self.job_priority),
            np.array(self.sort_values, dtype=np.float64).reshape(len(rules.sort_keys), len(jobs)),
            np.inf if rules.max_starve is None else float(rules.max_starve),
            len(names),
            rules.by_queue,
            rules.round_robin,
            rules.fair_share,
            np.array(tree.path),
            tree.n_groups,
            np.array(tree.group_shares),
            np.array(tree.account_shares),
        )

    # --- help_starving_jobs --------------------------------------------------------------

    def starving_from(self, jobs: np.ndarray) -> np.ndarray:
        """When each of ``jobs`` starts to starve (``inf``: never, without max_starve)."""
        if self.rules.max_starve is None:
            return np.full(jobs.shape[0], np.inf)
        since: np.ndarray = self.submit[jobs] + self.rules.max_starve
        return since

    # --- the order -------------------------------------------------------------------

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        if waiting.size <= 1:
            return waiting
        ledger = self.ledger
        # the ledger is brought to now only when the order reads it (as the compiled run)
        usage = ledger.effective_usage(now) if self.rules.fair_share else _UNREAD
        state = ledger.state
        result: np.ndarray = pbs_order_of(
            self.keys, now, waiting, usage, state.share, state.job_account
        )
        return result

    # --- fairshare usage ---------------------------------------------------------------

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None:
        self.ledger.job_started(job, cpus, alloc, now)

    def job_finished(self, job: int, now: float) -> None:
        self.ledger.job_finished(job, now)


@jit
def _by_key(perm: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``perm`` stably sorted by ``key`` (one value per place in the waiting list)."""
    by: np.ndarray = perm[np.argsort(key[perm], kind="mergesort")]
    return by


@jit
def pbs_order_of(
    keys: PbsKeys,
    now: float,
    waiting: np.ndarray,
    usage_now: np.ndarray,
    share: np.ndarray,
    job_account: np.ndarray,
) -> np.ndarray:
    """``waiting`` (ascending job numbers) in the PBS order of :mod:`this module
    <.pbs_order>` at ``now``: stable sorts from the least significant key to the most,
    starting from job-number order. ``usage_now``: every account's effective usage
    (read only with ``fair_share``), ``share``: each account's share."""
    m = waiting.shape[0]
    perm = np.arange(m)
    value = np.empty(m)
    for s in range(keys.sort_values.shape[0] - 1, -1, -1):
        for k in range(m):
            value[k] = keys.sort_values[s, waiting[k]]
        perm = _by_key(perm, value)
    if keys.fair_share and m > 1:
        rank = tree_ranks(
            keys.tree_path,
            keys.tree_groups,
            keys.group_shares,
            keys.account_shares,
            usage_now * share,
        )
        for k in range(m):
            value[k] = rank[job_account[waiting[k]]]
        perm = _by_key(perm, value)
    queue = np.empty(m)
    for k in range(m):
        queue[k] = keys.job_queue[waiting[k]]
    if keys.round_robin:
        # each job's place within its queue in the order so far: queues take turns
        turn = np.empty(m)
        taken = np.zeros(keys.queues, dtype=np.int64)
        for i in range(m):
            q = keys.job_queue[waiting[perm[i]]]
            turn[perm[i]] = taken[q]
            taken[q] += 1
        perm = _by_key(_by_key(perm, queue), turn)
    elif keys.by_queue:
        perm = _by_key(perm, queue)
    if keys.round_robin or keys.by_queue:
        for k in range(m):
            value[k] = -keys.job_priority[waiting[k]]
        perm = _by_key(perm, value)
    if keys.max_starve < np.inf:
        for k in range(m):
            value[k] = 1.0 if keys.submit[waiting[k]] + keys.max_starve > now else 0.0
        perm = _by_key(perm, value)
    ordered: np.ndarray = waiting[perm]
    return ordered


@jit
def starving_count(keys: PbsKeys, now: float, jobs: np.ndarray) -> int:
    """How many of ``jobs`` starve at ``now`` (have waited ``max_starve`` or longer)."""
    n = 0
    for k in range(jobs.shape[0]):
        if keys.submit[jobs[k]] + keys.max_starve <= now:
            n += 1
    return n


def tiny_pbs_keys() -> PbsKeys:
    """The keys of one job in one queue, typed as a run's (to compile the kernels)."""
    one_i = np.zeros(1, dtype=np.int64)
    return PbsKeys(
        np.zeros(1),
        one_i,
        one_i.copy(),
        np.zeros((1, 1)),
        1.0,
        1,
        True,
        True,
        True,
        np.full((1, 1), -1, dtype=np.int64),
        0,
        np.ones(0),
        np.ones(1),
    )
