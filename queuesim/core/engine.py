"""The discrete-event engine: one clock, one heap, one scheduling pass per instant.

Events are kept in a heap of ``(time, kind, sequence, job, version)`` tuples; the sequence
number makes the order of simultaneous events deterministic, as in SimPy's core. Submits
are not pushed on the heap: jobs arrive from the workload, already sorted by submit time.
At each instant the engine applies every finish first, then every submit, then gives the
policy one scheduling pass (skipped when nothing waits or nothing has changed).

Every running job has a progress rate and an amount of work left. Batch policies run jobs
at rate 1.0; time-sharing policies change rates (and pause jobs with rate 0), and the
engine re-computes the finish time from the work left, so fractional execution is the same
mechanism as batch execution. A superseded finish event is skipped by its version number.

The engine validates every action of a policy - a start before submit, a second start, a
start that over-commits CPUs or memory - and raises :class:`PolicyViolation` naming the
job and the rule.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from enum import IntEnum
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.errors import ConfigError, PolicyViolation
from queuesim.core.cluster import Allocation, ClusterState
from queuesim.core.cluster import warm_up as warm_up_placement
from queuesim.core.ordering import JobListener, make_ordering
from queuesim.core.policy import Policy
from queuesim.core.profile import HELD_BY, JobArrays, LimitState, ProfileState, held_by_each
from queuesim.core.profile import warm_up as warm_up_profile
from queuesim.core.result import Result
from queuesim.core.shared_nodes import SharedNodes
from queuesim.core.workload import Workload
from queuesim.site.model import Site

#: How far past ``now`` a running job that outlived its estimate is expected to end.
OVERDUE_GRACE = 1.0


class JobState(IntEnum):
    PENDING = 0  #: not submitted yet
    WAITING = 1
    RUNNING = 2
    DONE = 3


_WAITING = int(JobState.WAITING)
_RUNNING = int(JobState.RUNNING)
_DONE = int(JobState.DONE)


class EventKind(IntEnum):
    """Kinds of heap events; the value orders simultaneous events (finishes first)."""

    FINISH = 0
    WAKE = 2


class Context:
    """What a policy sees and may do during one scheduling pass."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim
        self.site = sim.site
        self.cluster = sim.cluster
        jobs = sim.workload.jobs
        self.cpus: np.ndarray = sim._cpus
        self.estimate: np.ndarray = sim._estimate
        self.submit: np.ndarray = sim.submit_times
        self.queue: np.ndarray = sim._queue
        self.mem_per_cpu: np.ndarray = sim._mem
        self.ppn: np.ndarray = sim._ppn
        self.user: np.ndarray = jobs["user"].to_numpy()
        self.now = 0.0
        self.freed = False  #: resources were released since the last pass
        self.arrived: list[int] = []  #: jobs submitted at this instant
        self.finished: list[int] = []  #: jobs that ended at this instant

    @property
    def free_cpus(self) -> int:
        return self.cluster.total_free

    def waiting(self) -> np.ndarray:
        """Waiting jobs, in the order the site's ordering gives them."""
        return self._sim.ordering.order(self, self._sim.waiting_jobs())

    def running(self) -> np.ndarray:
        sim = self._sim
        return sim.run_ids[: sim.nrun]

    def running_estimated_ends(self) -> np.ndarray:
        """Estimated end of each running job (same order as :meth:`running`); a job that
        outlived its estimate is expected to end just after now."""
        ends: np.ndarray = self._sim.est_end[self.running()]
        clipped: np.ndarray = np.maximum(ends, self.now + OVERDUE_GRACE)
        return clipped

    def start(self, job: int, plan: np.ndarray | None = None) -> None:
        """Start a waiting job now: where ``plan`` says (CPUs per pool, see
        :mod:`queuesim.core.cluster`), or first fit over the pools its queue may use."""
        self._sim.start(job, plan)

    def profile_state(self) -> ProfileState:
        """What the availability profile is built from, as the leading arguments of the
        kernels in :mod:`queuesim.core.profile`: now, free CPUs and memory per pool, the running
        jobs' estimated ends and numbers, where every started job runs (per pool), and
        every job's memory per CPU."""
        cluster = self.cluster
        alloc_start, alloc_len, alloc_pool, alloc_cpus = self.running_allocations()
        return (
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
        )

    def job_arrays(self) -> JobArrays:
        """What the profile kernels know of every job (see :data:`JobArrays`)."""
        return (self.cpus, self.queue, self.estimate, self.ppn, self.cluster.queue_masks)

    def limit_state(self) -> LimitState:
        """The queue limits and what counts against them now (see :data:`LimitState`)."""
        limits = self._sim.limits
        cluster = self.cluster
        return (
            limits.user,
            limits.user_jobs_cap,
            limits.user_cpus_cap,
            limits.pool_cap,
            limits.user_jobs,
            limits.user_cpus,
            limits.queue_cpus,
            cluster.pool_capacity_cpus,
            cluster.pool_capacity_mem,
        )

    def within_limits(self, order: np.ndarray) -> np.ndarray:
        """``order`` without the jobs a queue limit holds back already (their user's or
        queue's running jobs are at the limit), which are recorded as held; the profile
        kernel checks the rest as this pass starts jobs. Limits only tighten within a
        pass, so nothing removed here could have started."""
        limits = self._sim.limits
        if not limits.any or order.size == 0:
            return order
        held = limits.held_now(order)
        if not held.any():
            return order
        free = self.cluster.queue_masks @ self.cluster.pool_free_cpus
        self.held_back(order, np.where(self.cpus[order] <= free[self.queue[order]], held, 0))
        kept: np.ndarray = order[held == 0]
        return kept

    def held_back(self, jobs: np.ndarray, held: np.ndarray) -> None:
        """Record that queue limits kept ``jobs`` from starting although they fit (``held``:
        1 + the limit's index in :data:`~queuesim.core.profile.HELD_BY`, 0: not held)."""
        limits = self._sim.limits
        if limits.any:
            limits.record_held(jobs, held)

    def running_allocations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where every job started so far runs, per pool, as flat arrays: a job's entries
        are ``pool[start[j] : start[j] + length[j]]`` and ``cpus[...]`` alike."""
        sim = self._sim
        return sim.alloc_start, sim.alloc_len, sim.alloc_pool, sim.alloc_cpus

    def wake_at(self, when: float) -> None:
        """Ask for a scheduling pass at ``when`` (later than now), even if no job waits."""
        if not (math.isfinite(when) and when > self.now):
            raise PolicyViolation(
                f"a wake-up at {when} must lie after now ({self.now}); one in the past or the "
                "present would make the engine loop for ever"
            )
        self._sim.push(when, EventKind.WAKE, -1)

    def set_rate(self, job: int, rate: float) -> None:
        """Change a running job's progress rate in [0, 1] (0 pauses it)."""
        self._sim.set_rate(job, rate)

    def shared_nodes(self) -> SharedNodes:
        """The nodes as time-sharing policies see them (made on first use; see
        :mod:`queuesim.core.shared_nodes`): raises :class:`ConfigError` when the workload or the
        site cannot be run that way."""
        return self._sim.shared_nodes()

    def place(self, job: int, hosts: np.ndarray | None) -> None:
        """Time-sharing: map ``job``'s tasks on ``hosts`` (one node each), starting it if it
        waits (at rate 0: give it a rate with :meth:`set_rate`), or moving it; ``None``
        takes a running job off its nodes and pauses it (rate 0)."""
        self._sim.place(job, hosts)

    def work_done(self, jobs: np.ndarray) -> np.ndarray:
        """Work each of ``jobs`` has done so far (seconds at rate 1; its virtual time)."""
        sim = self._sim
        left = sim.work_left[jobs] - (self.now - sim.last_update[jobs]) * sim.rate[jobs]
        started = sim.state[jobs] >= _RUNNING
        done: np.ndarray = np.where(started, sim.work[jobs] - left, 0.0)
        return done

    def count(self, counter: str, n: int = 1) -> None:
        """Add to a named counter reported with the run (e.g. how often a bound was hit)."""
        counters = self._sim.counters
        counters[counter] = counters.get(counter, 0) + n


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
        self.held_times = np.zeros(len(HELD_BY), dtype=np.int64)
        self.held_jobs = np.zeros((len(HELD_BY), len(jobs)), dtype=np.bool_)

    def held_now(self, jobs: np.ndarray) -> np.ndarray:
        """For each of ``jobs``, the limit (1 + index in :data:`HELD_BY`; 0: none) that
        starting it alone now would exceed (the profile kernel's own rule)."""
        held: np.ndarray = held_by_each(
            jobs,
            self.cpus,
            self.queue,
            self.user,
            self.user_jobs_cap,
            self.user_cpus_cap,
            self.pool_cap,
            self.user_jobs,
            self.user_cpus,
            self.queue_cpus,
        )
        return held

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
        which = np.flatnonzero(held)
        if which.size:
            kinds = held[which].astype(np.int64) - 1
            self.held_times += np.bincount(kinds, minlength=len(HELD_BY))
            self.held_jobs[kinds, jobs[which]] = True

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


class Simulation:
    """Replay ``workload`` on ``site`` under ``policy``."""

    def __init__(
        self,
        site: Site,
        workload: Workload,
        policy: Policy,
        *,
        params: dict[str, Any] | None = None,
        progress: Callable[[int, int], None] | None = None,
        record_allocations: bool = False,
    ) -> None:
        self.site = site
        self.allocation_log: dict[int, Allocation] | None = {} if record_allocations else None
        self.workload = workload
        self.policy = policy
        self.params = dict(params or {})
        self.progress = progress
        jobs = workload.jobs
        n = len(jobs)
        self.n = n
        self.cluster = ClusterState(site, workload.queue_names, per_node=workload.shaped)
        # what the compiled kernels read, as writable copies: pandas may hand out read-only
        # views, which numba compiles separately from the warm-up's arrays - inside the clock
        self._estimate = jobs["estimate"].to_numpy(dtype=np.float64, copy=True)
        self._cpus = jobs["cpus"].to_numpy(dtype=np.int64, copy=True)
        self._mem = jobs["mem_per_cpu"].to_numpy(dtype=np.int64, copy=True)
        self._ppn = jobs["ppn"].to_numpy(dtype=np.int64, copy=True)
        self._queue = jobs["queue"].cat.codes.to_numpy().astype(np.int64)
        self._job_ids = jobs["job_id"].to_numpy()
        self.limits = QueueLimits(site, jobs, workload.queue_names, self._cpus, self._queue)
        self.submit_times = jobs["submit"].to_numpy()
        runtime = jobs["runtime"].to_numpy()
        walltime = jobs["walltime"].to_numpy()
        self.killed = (runtime > walltime) if site.kill_at_walltime else np.zeros(n, dtype=bool)
        self.work = np.where(self.killed, walltime, runtime)
        self.state = np.zeros(n, dtype=np.int8)
        self.start_time = np.full(n, np.nan)
        self.end_time = np.full(n, np.nan)
        self.est_end = np.full(n, np.inf)
        self.rate = np.ones(n)
        self.work_left = self.work.copy()
        self.last_update = np.zeros(n)
        self.version = np.zeros(n, dtype=np.int64)
        self.allocs: dict[int, Allocation] = {}
        # per-pool allocations of every started job, flat, for the availability profile
        self.alloc_start = np.zeros(n, dtype=np.int64)
        self.alloc_len = np.zeros(n, dtype=np.int64)
        self.alloc_pool = np.zeros(max(n, 1), dtype=np.int64)
        self.alloc_cpus = np.zeros(max(n, 1), dtype=np.int64)
        self.alloc_used = 0
        self.run_ids = np.zeros(n, dtype=np.int64)
        self.run_pos = np.full(n, -1, dtype=np.int64)
        self.nrun = 0
        self.nwaiting = 0
        self.submitted = 0  #: jobs 0 .. submitted - 1 have arrived
        self.wait_lo = 0  #: no job before this one is still waiting
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        self.counters: dict[str, int] = {}
        self.ordering = make_ordering(
            site, jobs, (self.cluster.capacity_cpus, self.cluster.capacity_mem)
        )
        self.listeners = [self.ordering] if isinstance(self.ordering, JobListener) else []
        #: nodes shared by a time-sharing policy, made on its first placement
        self.shared: SharedNodes | None = None
        #: the policy wants a pass at every finish, even when no job waits
        self.every_event = bool(getattr(policy, "every_event", False))
        #: jobs run time-shared: their runtime is their work, not their time on the nodes
        self.time_shared = np.zeros(n, dtype=bool)
        self.ctx = Context(self)

    # --- events ------------------------------------------------------------------------

    def push(self, when: float, kind: EventKind, job: int) -> None:
        if not when >= self.ctx.now:  # also refuses NaN
            what = f"job {self._job_id(job)}'s finish" if job >= 0 else "a wake-up"
            raise PolicyViolation(f"{what} at {when} lies in the past (now is {self.ctx.now})")
        self.seq += 1
        version = int(self.version[job]) if job >= 0 else 0
        heapq.heappush(self.heap, (when, int(kind), self.seq, job, version))

    def _finish(self, job: int, version: int) -> bool:
        if version != self.version[job] or self.state[job] != _RUNNING:
            return False  # superseded by a rate change
        now = self.ctx.now
        self.state[job] = _DONE
        self.end_time[job] = now
        self.ctx.finished.append(job)
        alloc = self.allocs.pop(job, None)
        if alloc is None:  # a time-shared job
            assert self.shared is not None
            self.shared.remove(job)
        else:
            self.cluster.release(alloc)
        if self.limits.any:
            self.limits.add(job, -1)
        for listener in self.listeners:
            listener.job_finished(job, now)
        pos = self.run_pos[job]
        last = self.nrun - 1
        moved = self.run_ids[last]
        self.run_ids[pos] = moved
        self.run_pos[moved] = pos
        self.run_pos[job] = -1
        self.nrun = last
        return True

    def _wake(self, job: int, version: int) -> bool:
        return True

    # --- actions (validated) -----------------------------------------------------------

    def _check_job(self, job: int) -> None:
        if not 0 <= job < self.n:
            raise PolicyViolation(f"job number {job} does not exist (there are {self.n} jobs)")

    def start(self, job: int, plan: np.ndarray | None = None) -> None:
        self._check_job(job)
        now = self.ctx.now
        state = self.state[job]
        if state != _WAITING:
            rule = {
                JobState.PENDING: "it has not been submitted yet (no start before submit)",
                JobState.RUNNING: "it is already running (each job starts once)",
                JobState.DONE: "it has already run (each job starts once)",
            }[JobState(state)]
            raise PolicyViolation(f"job {self._job_id(job)} cannot start at {now}: {rule}")
        cpus = int(self._cpus[job])
        queue = int(self._queue[job])
        limit = self.limits.check(job) if self.limits.any else None
        if limit is not None:
            raise PolicyViolation(
                f"job {self._job_id(job)} cannot start at {now}: it would exceed queue "
                f"{self.workload.queue_names[queue]!r}'s {limit}"
            )
        try:
            alloc = self.cluster.allocate(
                self._job_id(job), cpus, int(self._mem[job]), queue, plan, int(self._ppn[job])
            )
        except PolicyViolation as exc:
            raise PolicyViolation(f"at time {now}: {exc}") from None
        if self.limits.any:
            self.limits.add(job, 1)
        self.allocs[job] = alloc
        self._store_pools(job, alloc)
        for listener in self.listeners:
            listener.job_started(job, int(self._cpus[job]), alloc, now)
        if self.allocation_log is not None:
            self.allocation_log[job] = alloc
        self._mark_running(job)
        self.push(now + self.work_left[job] / self.rate[job], EventKind.FINISH, job)

    def _mark_running(self, job: int) -> None:
        """Book a waiting job as started now (batch or time-shared): its times and its
        place in the list of running jobs."""
        now = self.ctx.now
        self.state[job] = _RUNNING
        self.start_time[job] = now
        self.est_end[job] = now + self._estimate[job]
        self.last_update[job] = now
        self.nwaiting -= 1
        self.run_ids[self.nrun] = job
        self.run_pos[job] = self.nrun
        self.nrun += 1

    def _store_pools(self, job: int, alloc: Allocation) -> None:
        k = alloc.pools.shape[0]
        used = self.alloc_used
        if used + k > self.alloc_pool.shape[0]:
            size = max(2 * self.alloc_pool.shape[0], used + k)
            self.alloc_pool = np.resize(self.alloc_pool, size)
            self.alloc_cpus = np.resize(self.alloc_cpus, size)
        self.alloc_pool[used : used + k] = alloc.pools
        self.alloc_cpus[used : used + k] = alloc.pool_cpus
        self.alloc_start[job] = used
        self.alloc_len[job] = k
        self.alloc_used = used + k

    def shared_nodes(self) -> SharedNodes:
        if self.shared is None:
            self.shared = self._make_shared_nodes()
        return self.shared

    def _make_shared_nodes(self) -> SharedNodes:
        from queuesim.core.workload import DFRS_COLUMNS

        site = self.site
        policy = self.policy.name
        if not self.workload.annotated:
            raise ConfigError(
                f"policy {policy!r} time-shares nodes and needs every job's DFRS tasks, CPU "
                f"need and memory ({', '.join(DFRS_COLUMNS)}): {self.workload.source} has no "
                "annotation file (make one with 'queuesim generate lublin', or set the site's "
                "'dfrs: annotation: hpc2n' to apply paper 000's HPC2N rule)"
            )
        node_cpus = set(site.node_cpus().tolist())
        if len(node_cpus) != 1:
            raise ConfigError(
                f"policy {policy!r} needs identical nodes (DFRS tasks take fractions of a node); "
                f"site {site.name!r} has nodes of {sorted(node_cpus)} CPUs"
            )
        if self.listeners:
            raise ConfigError(
                f"policy {policy!r} orders jobs by its own priority; site {site.name!r} sets "
                "'ordering: fairshare', which it would ignore (use 'ordering: fcfs')"
            )
        if self.limits.any:
            raise ConfigError(
                f"policy {policy!r} does not enforce queue limits; site {site.name!r} sets some "
                "(max_running_per_user, max_cpus_per_user or cpu_pool)"
            )
        jobs = self.workload.jobs
        tasks = jobs["tasks"].to_numpy(dtype=np.int64, copy=True)
        mem = jobs["mem_fraction"].to_numpy(dtype=np.float64, copy=True)
        hosts = site.total_nodes
        with np.errstate(divide="ignore"):
            per_node = np.where(mem > 0, np.floor(1.0 / np.where(mem > 0, mem, 1.0)), np.inf)
        too_big = np.flatnonzero(tasks > hosts * per_node)
        if too_big.size:
            j = int(too_big[0])
            raise ConfigError(
                f"{self.workload.source}: {too_big.size} jobs can never run on the {hosts} "
                f"nodes of site {site.name!r}, e.g. job {self._job_id(j)} ({tasks[j]} tasks "
                f"of memory {mem[j]:g}, at most {per_node[j]:g} per node)"
            )
        return SharedNodes(
            hosts,
            tasks,
            jobs["cpu_need"].to_numpy(dtype=np.float64, copy=True),
            mem,
            self._job_ids.astype(np.int64),
        )

    def place(self, job: int, hosts: np.ndarray | None) -> None:
        self._check_job(job)
        shared = self.shared_nodes()
        state = self.state[job]
        now = self.ctx.now
        if state == _WAITING:
            if hosts is None:
                raise PolicyViolation(f"job {self._job_id(job)} waits: there is nothing to pause")
            shared.place(job, hosts)
            self.time_shared[job] = True
            self._mark_running(job)
            self.rate[job] = 0.0  # the policy gives it a rate
            self.version[job] += 1
            return
        if state != _RUNNING or job in self.allocs:
            raise PolicyViolation(
                f"job {self._job_id(job)} cannot be placed at {now}: only a waiting job or a "
                "time-shared running job can"
            )
        if hosts is None:
            self.set_rate(job, 0.0)
            shared.remove(job)
        else:
            shared.place(job, hosts)

    def set_rate(self, job: int, rate: float) -> None:
        """Change a running job's progress rate (0 pauses it); its finish moves."""
        self._check_job(job)
        if self.state[job] != JobState.RUNNING:
            raise PolicyViolation(f"job {self._job_id(job)}: only a running job has a rate")
        shared = self.shared
        if (
            rate > 0
            and shared is not None
            and job not in self.allocs
            and shared.mapped(job) is None
        ):
            raise PolicyViolation(
                f"job {self._job_id(job)}: a paused job (on no node) cannot progress"
            )
        if not 0.0 <= rate <= 1.0:
            raise PolicyViolation(f"job {self._job_id(job)}: rate {rate} is outside [0, 1]")
        now = self.ctx.now
        self.work_left[job] -= (now - self.last_update[job]) * self.rate[job]
        self.last_update[job] = now
        self.rate[job] = rate
        self.version[job] += 1
        if rate > 0:
            self.push(now + self.work_left[job] / rate, EventKind.FINISH, job)

    def waiting_jobs(self) -> np.ndarray:
        """Waiting job numbers in ascending order (submit order), from the state array."""
        state = self.state
        lo = self.wait_lo
        while lo < self.submitted and state[lo] != _WAITING:
            lo += 1
        self.wait_lo = lo
        return np.flatnonzero(state[lo : self.submitted] == _WAITING) + lo

    def _job_id(self, job: int) -> int:
        return int(self._job_ids[job])

    # --- the loop ----------------------------------------------------------------------

    def run(self) -> Result:
        warm_up_placement()
        warm_up_profile()
        started_at = time.perf_counter()
        ctx = self.ctx
        heap = self.heap
        submit = self.submit_times
        n = self.n
        state = self.state
        handlers = {EventKind.FINISH: self._finish, EventKind.WAKE: self._wake}
        handler_by_value = {int(kind): handler for kind, handler in handlers.items()}
        schedule = self.policy.schedule
        finish_kind = int(EventKind.FINISH)
        next_job = 0
        passes = 0
        done_before = 0
        report_every = max(1, n // 200)
        inf = float("inf")
        while True:
            t_submit = submit[next_job] if next_job < n else inf
            t_event = heap[0][0] if heap else inf
            now = t_submit if t_submit < t_event else t_event
            if now == inf:
                break
            ctx.now = float(now)
            finished = woke = False
            while heap and heap[0][0] == now:
                _, kind, _, job, version = heapq.heappop(heap)
                if handler_by_value[kind](job, version):
                    if kind == finish_kind:
                        finished = True
                    else:
                        woke = True
            arrived = []
            while next_job < n and submit[next_job] == now:
                state[next_job] = _WAITING
                arrived.append(next_job)
                next_job += 1
            self.submitted = next_job
            self.nwaiting += len(arrived)
            if woke or ((self.nwaiting or self.every_event) and (finished or arrived)):
                ctx.freed = finished
                ctx.arrived = arrived
                schedule(ctx)
                passes += 1
                if self.shared is not None:
                    self.shared.check_cpu(self.rate)
            ctx.finished.clear()
            if self.progress is not None and next_job - done_before >= report_every:
                done_before = next_job
                self.progress(next_job, n)
        if self.progress is not None:
            self.progress(n, n)
        never = np.flatnonzero(state != _DONE)
        if never.size:
            raise PolicyViolation(
                f"policy {self.policy.name!r} left {never.size} jobs never run "
                f"(first: job {self._job_id(int(never[0]))}) although no event was left"
            )
        wall = time.perf_counter() - started_at
        return Result(
            jobs=self._job_table(),
            site=self.site,
            policy=self.policy.name,
            params=self.params,
            workload=self.workload,
            wall_seconds=wall,
            passes=passes,
            counters={**self.counters, **self.limits.counters()},
            fairshare_usage=self._usage_log(),
            allocations=self.allocation_log,
        )

    def _usage_log(self) -> pd.DataFrame | None:
        ledger = getattr(self.ordering, "ledger", None)
        return None if ledger is None else ledger.usage_table()

    def _job_table(self) -> pd.DataFrame:
        jobs = self.workload.jobs
        start = self.start_time
        end = self.end_time
        return pd.DataFrame(
            {
                "job_id": jobs["job_id"].to_numpy(),
                "user": jobs["user"].to_numpy(),
                "group": jobs["group"].to_numpy(),
                "queue": jobs["queue"].to_numpy(),
                "submit": self.submit_times,
                "start": start,
                "end": end,
                # a time-shared job "waits" whenever it does not progress at rate 1:
                # its response time less its work (so slowdown = the papers' stretch)
                "wait": np.where(
                    self.time_shared,
                    end - self.submit_times - self.work,
                    start - self.submit_times,
                ),
                # a time-shared job's "runtime" is its work: what it takes at rate 1
                "runtime": np.where(self.time_shared, self.work, end - start),
                "cpus": jobs["cpus"].to_numpy(),
                "estimate": jobs["estimate"].to_numpy(),
                "walltime": jobs["walltime"].to_numpy(),
                "status": np.where(self.killed, "killed", "completed"),
            }
        )
