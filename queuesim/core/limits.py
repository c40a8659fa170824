"""Per-queue limits of a site (paper 004, section 2.1: at most so many running jobs or CPUs per
user in a queue, and a queue's CPU pool) and what counts against them during one run.

The counts are kept in arrays that the profile kernels read as they plan a pass
(:class:`~queuesim.core.profile.LimitState`); the run's bookkeeping adds a job when it starts
and takes it off when it ends, and checks every start against the limits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queuesim.core.planning import HELD_BY, held_by_each, record_held
from queuesim.core.profile import LimitState
from queuesim.site.model import Site

#: a limit that never binds
_NO_LIMIT = np.iinfo(np.int64).max // 4


class QueueLimits:
    """Per-queue limits (site file ``queues[]``) and what counts against them: running jobs
    and CPUs per (user, queue), CPUs per queue; and how often each limit held a job back."""

    def __init__(
        self,
        site: Site,
        jobs: pd.DataFrame,
        queue_names: list[str],
        cpus: np.ndarray,
        queue: np.ndarray,
    ) -> None:
        """``cpus`` and ``queue``: every job's CPUs and queue number, as the kernels get them."""
        queues = [site.queue(name) for name in queue_names]
        self.cpus = cpus
        self.queue = queue

        def caps(values: list[int | None]) -> np.ndarray:
            return np.array([_NO_LIMIT if v is None else v for v in values], dtype=np.int64)

        self.user_jobs_cap = caps([q.max_running_per_user for q in queues])
        self.user_cpus_cap = caps([q.max_cpus_per_user for q in queues])
        self.pool_cap = caps([site.pool_cpus(q) for q in queues])
        codes, uniques = pd.factorize(jobs["user"], sort=True)
        self.user = np.asarray(codes, dtype=np.int64)
        shape = (max(len(uniques), 1), len(queues))
        self.user_jobs = np.zeros(shape, dtype=np.int64)
        self.user_cpus = np.zeros(shape, dtype=np.int64)
        self.queue_cpus = np.zeros(len(queues), dtype=np.int64)
        #: whether the site sets any limit; the counts are kept, and checked, only then
        self.any = bool(
            (
                np.concatenate([self.user_jobs_cap, self.user_cpus_cap, self.pool_cap]) < _NO_LIMIT
            ).any()
        )
        self._state = LimitState(
            self.user,
            self.user_jobs_cap,
            self.user_cpus_cap,
            self.pool_cap,
            self.user_jobs,
            self.user_cpus,
            self.queue_cpus,
        )
        self.held_times = np.zeros(len(HELD_BY), dtype=np.int64)
        self.held_jobs = np.zeros((len(HELD_BY), len(jobs)), dtype=np.bool_)

    def held_now(self, jobs: np.ndarray) -> np.ndarray:
        """For each of ``jobs``, the limit (1 + index in :data:`HELD_BY`; 0: none) that
        starting it alone now would exceed (the profile kernel's own rule)."""
        held: np.ndarray = held_by_each(jobs, self.cpus, self.queue, self.state())
        return held

    def state(self) -> LimitState:
        """The limits and the counts against them, as the profile kernels read them (the
        counts change in place, so this is made once)."""
        return self._state

    def check(self, job: int) -> str | None:
        """The limit starting ``job`` now would exceed, described, or None."""
        held = int(self.held_now(np.array([job], dtype=np.int64))[0])
        if held == 0:
            return None
        cap = (self.user_jobs_cap, self.user_cpus_cap, self.pool_cap)[held - 1]
        return f"{HELD_BY[held - 1]} ({cap[self.queue[job]]})"

    def add(self, job: int, sign: int) -> None:
        """Count ``job`` as started (``sign`` 1) or ended (-1)."""
        u = self.user[job]
        q = self.queue[job]
        self.user_jobs[u, q] += sign
        self.user_cpus[u, q] += sign * self.cpus[job]
        self.queue_cpus[q] += sign * self.cpus[job]

    def record_held(self, jobs: np.ndarray, held: np.ndarray) -> None:
        """Record that the limits ``held`` kept ``jobs`` from starting although they fit
        (:func:`~queuesim.core.planning.record_held`)."""
        record_held(self.held_times, self.held_jobs, jobs, held)

    def counters(self) -> dict[str, int]:
        """``held:<limit>`` (passes at which the limit kept a job that fit from starting)
        and ``held_jobs:<limit>`` (jobs it held at least once), for limits the site sets."""
        out: dict[str, int] = {}
        for k, name in enumerate(HELD_BY):
            cap = (self.user_jobs_cap, self.user_cpus_cap, self.pool_cap)[k]
            if (cap < _NO_LIMIT).any():
                out[f"held:{name}"] = int(self.held_times[k])
                out[f"held_jobs:{name}"] = int(self.held_jobs[k].sum())
        return out
