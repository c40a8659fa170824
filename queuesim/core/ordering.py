"""The order in which a policy sees the waiting jobs.

Ordering is separate from placement (as in Ciw's queue disciplines and AccaSim's split of
"which job next" from "which nodes"): an ordering sorts the waiting jobs by a key whose
last element is the job number (submit order, ties by trace line), so the result is
deterministic. The orderings of Klusáček et al. (paper 004, section 2.1):

* ``fcfs`` - by submit time;
* ``queue-priority`` - by queue priority (higher first), then fairshare within a queue
  (MetaCentrum's historic and conservative setups);
* ``fairshare`` - by fairshare over the jobs of all queues, queues being only "virtual"
  (the complex setup);
* ``pbs`` - the PBS scheduler's order (starving jobs, queues, the fairshare tree,
  job_sort_key; :mod:`.pbs_order`).
* ``slurm-multifactor`` - by queue priority, then Slurm's multifactor priority (age,
  fair-share, job size, partition; :mod:`queuesim.core.multifactor`).

An ordering that keeps state (fairshare usage) also listens to jobs starting and ending.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from queuesim.core.cluster import Allocation
from queuesim.core.fairshare import FairshareLedger
from queuesim.core.multifactor import dynamic_weights, multifactor_order, static_priority
from queuesim.core.pbs_order import PbsJobOrder
from queuesim.site.enums import Ordering
from queuesim.site.model import Site


class WaitingOrder(Protocol):
    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        """``waiting`` (job numbers, ascending) sorted by the ordering's key at time ``now``."""
        ...


@runtime_checkable
class JobListener(Protocol):
    """Told of every start and end, in time order."""

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None: ...

    def job_finished(self, job: int, now: float) -> None: ...


class FCFSOrder:
    """First come, first served: by submit time, then trace line (the job number)."""

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        return waiting  # the engine lists waiting jobs by job number already


class FairshareOrder:
    """Less effective fairshare usage first, then submit order."""

    def __init__(self, site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]) -> None:
        self.ledger = FairshareLedger.for_site(site, jobs, capacity)

    def usage_of(self, now: float, waiting: np.ndarray) -> np.ndarray:
        usage: np.ndarray = self.ledger.effective_usage(now)[self.ledger.job_account[waiting]]
        return usage

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        result: np.ndarray = waiting[np.lexsort((waiting, self.usage_of(now, waiting)))]
        return result

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None:
        self.ledger.job_started(job, cpus, alloc, now)

    def job_finished(self, job: int, now: float) -> None:
        self.ledger.job_finished(job, now)


class QueuePriorityOrder(FairshareOrder):
    """Higher queue priority first, then fairshare within a queue, then submit order."""

    def __init__(self, site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]) -> None:
        super().__init__(site, jobs, capacity)
        priority = np.array([q.priority for q in site.queues], dtype=np.float64)
        names = [q.name for q in site.queues]
        codes = pd.Categorical(jobs["queue"], categories=names).codes
        self.job_priority = priority[codes]

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        keys = (waiting, self.usage_of(now, waiting), -self.job_priority[waiting])
        result: np.ndarray = waiting[np.lexsort(keys)]
        return result


class SlurmMultifactorOrder(QueuePriorityOrder):
    """Queue priority (PriorityTier) first, then Slurm's multifactor priority, computed
    afresh at every pass, then submit order (:mod:`queuesim.core.multifactor`)."""

    def __init__(self, site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]) -> None:
        super().__init__(site, jobs, capacity)
        self.static = static_priority(site, jobs)
        self.weights = dynamic_weights(site)
        self.submit = jobs["submit"].to_numpy(dtype=np.float64)

    def order(self, now: float, waiting: np.ndarray) -> np.ndarray:
        usage = self.ledger.effective_usage(now)
        state = self.ledger.state
        result: np.ndarray = multifactor_order(
            now,
            waiting,
            self.submit,
            self.static,
            self.job_priority,
            self.weights,
            state.job_account,
            state.share,
            usage,
        )
        return result


def make_ordering(site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]) -> WaitingOrder:
    """The site's ordering for these jobs; ``capacity`` is (node CPUs, node memory)."""
    if site.ordering is Ordering.FAIRSHARE:
        return FairshareOrder(site, jobs, capacity)
    if site.ordering is Ordering.QUEUE_PRIORITY:
        return QueuePriorityOrder(site, jobs, capacity)
    if site.ordering is Ordering.PBS:
        return PbsJobOrder(site, jobs, capacity)
    if site.ordering is Ordering.SLURM_MULTIFACTOR:
        return SlurmMultifactorOrder(site, jobs, capacity)
    return FCFSOrder()
