"""The bookkeeping of one run: every job's arrays, the running jobs, where they run, the
event heap, and the actions a policy may take, each checked before it changes anything.

The engine (:mod:`queuesim.core.engine`) owns one :class:`RunState`, moves its clock and
applies the finishes it pops from the heap; policies reach the actions through the
:class:`~queuesim.core.context.Context`. A refused action raises :class:`PolicyViolation`
naming the job (by its trace job id) and the rule: a start before submit, a second start, a
start that over-commits CPUs or memory or breaks a queue limit, a rate outside [0, 1].

Every running job has a progress rate and an amount of work left. Batch jobs run at rate
1.0; a time-sharing policy changes rates (0 pauses a job), and its finish is re-computed
from the work left. A superseded finish event is recognised by its version number.
"""

from __future__ import annotations

import heapq
from enum import IntEnum

import numpy as np

from queuesim.common.errors import ConfigError, PolicyViolation
from queuesim.core.cluster import Allocation, ClusterState
from queuesim.core.limits import QueueLimits
from queuesim.core.ordering import JobListener
from queuesim.core.shared_nodes import SharedNodes
from queuesim.core.workload import TIME_SHARED_COLUMNS, Workload
from queuesim.site.model import Site


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


class RunState:
    """Every job's state and times, the running jobs and their allocations, the clock and
    the event heap of one run, with the checked actions that change them."""

    def __init__(
        self,
        site: Site,
        workload: Workload,
        cluster: ClusterState,
        listeners: list[JobListener],
        *,
        record_allocations: bool = False,
    ) -> None:
        """``listeners`` are told of every start and finish (a fairshare ordering's ledger)."""
        self.site = site
        self.workload = workload
        self.cluster = cluster
        self.listeners = listeners
        self.allocation_log: dict[int, Allocation] | None = {} if record_allocations else None
        jobs = workload.jobs
        n = len(jobs)
        self.n = n
        # what the compiled kernels read, as writable copies: pandas may hand out read-only
        # views, which numba compiles separately from the warm-up's arrays - inside the clock
        self.estimate = jobs["estimate"].to_numpy(dtype=np.float64, copy=True)
        self.cpus = jobs["cpus"].to_numpy(dtype=np.int64, copy=True)
        self.mem_per_cpu = jobs["mem_per_cpu"].to_numpy(dtype=np.int64, copy=True)
        self.ppn = jobs["ppn"].to_numpy(dtype=np.int64, copy=True)
        self.queue = jobs["queue"].cat.codes.to_numpy().astype(np.int64)
        self.gpn = jobs["gpn"].to_numpy(dtype=np.int64, copy=True)
        #: every job's row of the cluster's pool masks (its queue and its requirements)
        self.mask_of = cluster.mask_row(self.queue, jobs["node_set"].to_numpy(dtype=np.int64))
        self.job_ids = jobs["job_id"].to_numpy()
        self.limits = QueueLimits(site, jobs, workload.queue_names, self.cpus, self.queue)
        self.submit = jobs["submit"].to_numpy()
        runtime = jobs["runtime"].to_numpy()
        walltime = jobs["walltime"].to_numpy()
        self.killed = (runtime > walltime) if site.kill_at_walltime else np.zeros(n, dtype=bool)
        self.work = np.where(self.killed, walltime, runtime)
        self.job_state = np.zeros(n, dtype=np.int8)
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
        self.now = 0.0  #: the clock; only the engine moves it
        self.finished: list[int] = []  #: jobs that ended at this instant
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        self.counters: dict[str, int] = {}
        #: nodes shared by a time-sharing policy, made on its first placement
        self.shared: SharedNodes | None = None
        #: jobs run time-shared: their runtime is their work, not their time on the nodes
        self.time_shared = np.zeros(n, dtype=bool)

    # --- events ------------------------------------------------------------------------

    def push(self, when: float, kind: EventKind, job: int) -> None:
        if not when >= self.now:  # also refuses NaN
            what = f"job {self.job_id(job)}'s finish" if job >= 0 else "a wake-up"
            raise PolicyViolation(f"{what} at {when} lies in the past (now is {self.now})")
        self.seq += 1
        version = int(self.version[job]) if job >= 0 else 0
        heapq.heappush(self.heap, (when, int(kind), self.seq, job, version))

    def finish(self, job: int, version: int) -> bool:
        """Apply a finish event; False if a rate change superseded it."""
        if version != self.version[job] or self.job_state[job] != _RUNNING:
            return False
        now = self.now
        self.job_state[job] = _DONE
        self.end_time[job] = now
        self.finished.append(job)
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

    # --- actions (validated) -----------------------------------------------------------

    def _check_job(self, job: int) -> None:
        if not 0 <= job < self.n:
            raise PolicyViolation(f"job number {job} does not exist (there are {self.n} jobs)")

    def start(self, job: int, plan: np.ndarray | None = None) -> None:
        """Start a waiting job now, where ``plan`` says or first fit (see
        :meth:`ClusterState.allocate <queuesim.core.cluster.ClusterState.allocate>`)."""
        self._check_job(job)
        now = self.now
        state = self.job_state[job]
        if state != _WAITING:
            rule = {
                JobState.PENDING: "it has not been submitted yet (no start before submit)",
                JobState.RUNNING: "it is already running (each job starts once)",
                JobState.DONE: "it has already run (each job starts once)",
            }[JobState(state)]
            raise PolicyViolation(f"job {self.job_id(job)} cannot start at {now}: {rule}")
        cpus = int(self.cpus[job])
        queue = int(self.queue[job])
        limit = self.limits.check(job) if self.limits.any else None
        if limit is not None:
            raise PolicyViolation(
                f"job {self.job_id(job)} cannot start at {now}: it would exceed queue "
                f"{self.workload.queue_names[queue]!r}'s {limit}"
            )
        try:
            alloc = self.cluster.allocate(
                self.job_id(job),
                cpus,
                int(self.mem_per_cpu[job]),
                int(self.mask_of[job]),
                plan,
                int(self.ppn[job]),
                int(self.gpn[job]),
            )
        except PolicyViolation as exc:
            raise PolicyViolation(f"at time {now}: {exc}") from None
        if self.limits.any:
            self.limits.add(job, 1)
        self.allocs[job] = alloc
        self._store_pools(job, alloc)
        for listener in self.listeners:
            listener.job_started(job, int(self.cpus[job]), alloc, now)
        if self.allocation_log is not None:
            self.allocation_log[job] = alloc
        self._mark_running(job)
        self.push(now + self.work_left[job] / self.rate[job], EventKind.FINISH, job)

    def _mark_running(self, job: int) -> None:
        """Book a waiting job as started now (batch or time-shared): its times and its
        place in the list of running jobs."""
        now = self.now
        self.job_state[job] = _RUNNING
        self.start_time[job] = now
        self.est_end[job] = now + self.estimate[job]
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
        """The site's nodes as time-sharing sees them, made on first use."""
        if self.shared is None:
            self.shared = self._make_shared_nodes()
        return self.shared

    def _make_shared_nodes(self) -> SharedNodes:
        workload = self.workload
        if not workload.annotated:
            raise ConfigError(
                f"{workload.source}: time-shared nodes need every job's "
                f"{', '.join(TIME_SHARED_COLUMNS)}, which this workload does not have"
            )
        jobs = workload.jobs
        return SharedNodes(
            self.site.total_nodes,
            jobs["tasks"].to_numpy(dtype=np.int64, copy=True),
            jobs["cpu_need"].to_numpy(dtype=np.float64, copy=True),
            jobs["mem_fraction"].to_numpy(dtype=np.float64, copy=True),
            self.job_ids.astype(np.int64),
        )

    def place(self, job: int, hosts: np.ndarray | None) -> None:
        """Map a time-shared job's tasks on ``hosts``, starting it at rate 0 if it waits;
        ``None`` takes a running one off its nodes and pauses it."""
        self._check_job(job)
        shared = self.shared_nodes()
        state = self.job_state[job]
        now = self.now
        if state == _WAITING:
            if hosts is None:
                raise PolicyViolation(f"job {self.job_id(job)} waits: there is nothing to pause")
            shared.place(job, hosts)
            self.time_shared[job] = True
            self._mark_running(job)
            self.rate[job] = 0.0  # the policy gives it a rate
            self.version[job] += 1
            return
        if state != _RUNNING or job in self.allocs:
            raise PolicyViolation(
                f"job {self.job_id(job)} cannot be placed at {now}: only a waiting job or a "
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
        if self.job_state[job] != JobState.RUNNING:
            raise PolicyViolation(f"job {self.job_id(job)}: only a running job has a rate")
        shared = self.shared
        if (
            rate > 0
            and shared is not None
            and job not in self.allocs
            and shared.mapped(job) is None
        ):
            raise PolicyViolation(
                f"job {self.job_id(job)}: a paused job (on no node) cannot progress"
            )
        if not 0.0 <= rate <= 1.0:
            raise PolicyViolation(f"job {self.job_id(job)}: rate {rate} is outside [0, 1]")
        now = self.now
        self.work_left[job] -= (now - self.last_update[job]) * self.rate[job]
        self.last_update[job] = now
        self.rate[job] = rate
        self.version[job] += 1
        if rate > 0:
            self.push(now + self.work_left[job] / rate, EventKind.FINISH, job)

    # --- queries -----------------------------------------------------------------------

    def waiting_jobs(self) -> np.ndarray:
        """Waiting job numbers in ascending order (submit order), from the state array."""
        state = self.job_state
        lo = self.wait_lo
        while lo < self.submitted and state[lo] != _WAITING:
            lo += 1
        self.wait_lo = lo
        return np.flatnonzero(state[lo : self.submitted] == _WAITING) + lo

    def work_done(self, jobs: np.ndarray) -> np.ndarray:
        """Work each of ``jobs`` has done so far (seconds at rate 1)."""
        left = self.work_left[jobs] - (self.now - self.last_update[jobs]) * self.rate[jobs]
        started = self.job_state[jobs] >= _RUNNING
        done: np.ndarray = np.where(started, self.work[jobs] - left, 0.0)
        return done

    def never_run(self) -> np.ndarray:
        """Jobs that have not ended (after the last event: a policy left them)."""
        return np.flatnonzero(self.job_state != _DONE)

    def job_id(self, job: int) -> int:
        """``job``'s id in the trace (job numbers are rows; messages name the trace id)."""
        return int(self.job_ids[job])
