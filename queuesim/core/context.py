"""What a policy sees and may do during one scheduling pass: the :class:`Context`.

It reads the run's bookkeeping (:mod:`queuesim.core.state`) and forwards the policy's
actions to it, where each is checked; it never reaches the engine that drives the run.
"""

from __future__ import annotations

import math

import numpy as np

from queuesim.common.errors import PolicyViolation
from queuesim.core.ordering import WaitingOrder
from queuesim.core.planning import set_aside_held
from queuesim.core.profile import JobArrays, LimitState, ProfileState
from queuesim.core.shared_nodes import SharedNodes
from queuesim.core.state import EventKind, RunState

#: How far past ``now`` a running job that outlived its estimate is expected to end.
OVERDUE_GRACE = 1.0


class Context:
    """What a policy sees and may do during one scheduling pass."""

    def __init__(self, state: RunState, ordering: WaitingOrder) -> None:
        self._state = state
        self._limits = state.limits
        self._order = ordering.order
        self._starving_from = getattr(ordering, "starving_from", None)
        self.site = state.site
        self.cluster = state.cluster
        self.cpus: np.ndarray = state.cpus
        self.estimate: np.ndarray = state.estimate
        self.submit: np.ndarray = state.submit
        self.queue: np.ndarray = state.queue
        self.mem_per_cpu: np.ndarray = state.mem_per_cpu
        self.ppn: np.ndarray = state.ppn
        self.user: np.ndarray = state.workload.jobs["user"].to_numpy()
        self._job_arrays = JobArrays(
            self.cpus, self.queue, self.estimate, self.ppn, self.cluster.masks, state.mask_of
        )
        none = np.zeros(0, dtype=np.int64)
        gpus = self.cluster.gpus_modelled
        self._free_gpus = self.cluster.pool_free_gpus if gpus else none
        self._capacity_gpus = self.cluster.pool_capacity_gpus if gpus else none
        self.freed = False  #: resources were released since the last pass
        self.arrived: list[int] = []  #: jobs submitted at this instant
        self.finished: list[int] = state.finished  #: jobs that ended at this instant

    @property
    def now(self) -> float:
        return self._state.now

    @property
    def free_cpus(self) -> int:
        return self.cluster.total_free

    # --- facts about the run, for a policy to refuse what it cannot model ----------------

    @property
    def workload_source(self) -> str:
        """Where the jobs come from (a trace path or a generator), for messages."""
        return self._state.workload.source

    @property
    def workload_annotated(self) -> bool:
        """Every job has the time-sharing columns (tasks, CPU need, memory fraction)."""
        return self._state.workload.annotated

    @property
    def queue_limits_set(self) -> bool:
        """The site limits some queue this workload uses (running jobs, CPUs, CPU pool)."""
        return self._limits.any

    # --- the jobs --------------------------------------------------------------------

    def waiting(self) -> np.ndarray:
        """Waiting jobs, in the order the site's ordering gives them."""
        state = self._state
        return self._order(state.now, state.waiting_jobs())

    def starving_from(self, jobs: np.ndarray) -> np.ndarray:
        """When each of ``jobs`` starts to starve by the site's ordering (PBS's
        help_starving_jobs with max_starve, :mod:`queuesim.core.pbs_order`); ``inf``: never
        (every job, under an ordering without starving)."""
        if self._starving_from is None:
            return np.full(jobs.shape[0], np.inf)
        since: np.ndarray = self._starving_from(jobs)
        return since

    def running(self) -> np.ndarray:
        state = self._state
        return state.run_ids[: state.nrun]

    def running_estimated_ends(self) -> np.ndarray:
        """Estimated end of each running job (same order as :meth:`running`); a job that
        outlived its estimate is expected to end just after now."""
        ends: np.ndarray = self._state.est_end[self.running()]
        clipped: np.ndarray = np.maximum(ends, self.now + OVERDUE_GRACE)
        return clipped

    def work_done(self, jobs: np.ndarray) -> np.ndarray:
        """Work each of ``jobs`` has done so far (seconds at rate 1; its virtual time)."""
        return self._state.work_done(jobs)

    # --- what the profile kernels read -------------------------------------------------

    def profile_state(self) -> ProfileState:
        """What the availability profile of :mod:`queuesim.core.profile` is built from."""
        cluster = self.cluster
        alloc_start, alloc_len, alloc_pool, alloc_cpus = self.running_allocations()
        return ProfileState(
            self.now,
            cluster.pool_free_cpus,
            cluster.pool_free_mem,
            self.running_estimated_ends(),
            self.running(),
            alloc_start,
            alloc_len,
            alloc_pool,
            alloc_cpus,
            self.mem_per_cpu,
            self._state.gpn,
            cluster.pool_capacity_cpus,
            cluster.pool_capacity_mem,
            self._free_gpus,
            self._capacity_gpus,
        )

    def job_arrays(self) -> JobArrays:
        """What the profile kernels know of every job (the run's own arrays)."""
        return self._job_arrays

    def limit_state(self) -> LimitState:
        """The queue limits and what counts against them now."""
        return self._limits.state()

    def running_allocations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where every job started so far runs, per pool, as flat arrays: a job's entries
        are ``pool[start[j] : start[j] + length[j]]`` and ``cpus[...]`` alike."""
        state = self._state
        return state.alloc_start, state.alloc_len, state.alloc_pool, state.alloc_cpus

    # --- queue limits ----------------------------------------------------------------

    def within_limits(self, order: np.ndarray) -> np.ndarray:
        """``order`` without the jobs a queue limit holds back already (their user's or
        queue's running jobs are at the limit), which are recorded as held; the profile
        kernel checks the rest as this pass starts jobs. Limits only tighten within a
        pass, so nothing removed here could have started."""
        limits = self._limits
        if not limits.any or order.size == 0:
            return order
        kept: np.ndarray = set_aside_held(
            order,
            self._job_arrays,
            limits.state(),
            self.cluster.pool_free_cpus,
            limits.held_times,
            limits.held_jobs,
        )
        return kept

    def held_back(self, jobs: np.ndarray, held: np.ndarray) -> None:
        """Record that queue limits kept ``jobs`` from starting although they fit (``held``:
        1 + the limit's index in :data:`~queuesim.core.planning.HELD_BY`, 0: not held)."""
        limits = self._limits
        if limits.any:
            limits.record_held(jobs, held)

    # --- actions (checked by the run's bookkeeping) ------------------------------------

    def start(self, job: int, plan: np.ndarray | None = None) -> None:
        """Start a waiting job now: where ``plan`` says (CPUs per pool, see
        :mod:`queuesim.core.cluster`), or first fit over the pools its queue may use."""
        self._state.start(job, plan)

    def wake_at(self, when: float) -> None:
        """Ask for a scheduling pass at ``when`` (later than now), even if no job waits."""
        if not (math.isfinite(when) and when > self.now):
            raise PolicyViolation(
                f"a wake-up at {when} must lie after now ({self.now}); one in the past or the "
                "present would make the engine loop for ever"
            )
        self._state.push(when, EventKind.WAKE, -1)

    def set_rate(self, job: int, rate: float) -> None:
        """Change a running job's progress rate in [0, 1] (0 pauses it)."""
        self._state.set_rate(job, rate)

    def shared_nodes(self) -> SharedNodes:
        """The nodes as time-sharing policies see them (made on first use; see
        :mod:`queuesim.core.shared_nodes`): raises :class:`ConfigError` when the workload
        lacks the time-sharing columns."""
        return self._state.shared_nodes()

    def place(self, job: int, hosts: np.ndarray | None) -> None:
        """Time-sharing: map ``job``'s tasks on ``hosts`` (one node each), starting it if it
        waits (at rate 0: give it a rate with :meth:`set_rate`), or moving it; ``None``
        takes a running job off its nodes and pauses it (rate 0)."""
        self._state.place(job, hosts)

    def count(self, counter: str, n: int = 1) -> None:
        """Add to a named counter reported with the run (e.g. how often a bound was hit)."""
        counters = self._state.counters
        counters[counter] = counters.get(counter, 0) + n
