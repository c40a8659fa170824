"""The discrete-event engine: one clock, one heap, one scheduling pass per instant.

Events are kept in a heap of ``(time, kind, sequence, job, version)`` tuples; the sequence
number makes the order of simultaneous events deterministic, as in SimPy's core. Submits
are not pushed on the heap: jobs arrive from the workload, already sorted by submit time.
At each instant the engine applies every finish first, then every submit, then gives the
policy one scheduling pass (skipped when nothing waits or nothing has changed).

What the events and the policy's actions change, and the checks on those actions, live in
the run's bookkeeping (:mod:`queuesim.core.state`); the policy sees it through a
:class:`~queuesim.core.context.Context`. The engine only drives the clock and turns the
bookkeeping into a :class:`~queuesim.core.result.Result` at the end.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.errors import PolicyViolation
from queuesim.common.text_arrays import coded_text
from queuesim.core import kernels as kernel_modes
from queuesim.core.batch_run import BatchRules, compiles, kernels_for, replay
from queuesim.core.batch_run import warm_up as warm_up_run
from queuesim.core.cluster import KERNELS as PLACEMENT_KERNELS
from queuesim.core.cluster import ClusterState
from queuesim.core.cluster import warm_up as warm_up_placement
from queuesim.core.context import Context
from queuesim.core.kernels import KernelMode
from queuesim.core.ordering import JobListener, make_ordering
from queuesim.core.planning import HELD_BY
from queuesim.core.planning import KERNELS as PLANNING_KERNELS
from queuesim.core.planning import warm_up as warm_up_profile
from queuesim.core.policy import Policy
from queuesim.core.result import Result
from queuesim.core.state import EventKind, JobState, RunState
from queuesim.core.workload import Workload
from queuesim.site.model import Site


def _woken(job: int, version: int) -> bool:
    """A wake-up event: nothing to apply, but the policy gets its pass."""
    return True


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
        compiled: bool = True,
        kernels: KernelMode = "auto",
        on_compile: Callable[[], None] | None = None,
    ) -> None:
        """``compiled``: run a built-in batch policy (one that declares its
        ``batch_rules``) in one compiled call (:mod:`.batch_run`) unless allocations are
        recorded or the site's ordering is one the compiled run does not know; false:
        pass by pass through its ``schedule`` (the same schedule, slower).
        ``kernels``: whether the kernels run compiled or as Python (:mod:`.kernels`; the
        same schedule either way). ``on_compile`` is called before the run when its
        compiled kernels are not in numba's cache yet, i.e. are about to be compiled."""
        self.site = site
        self.workload = workload
        self.policy = policy
        self.params = dict(params or {})
        self.progress = progress
        self.kernels: KernelMode = kernels
        self.on_compile = on_compile
        cluster = ClusterState(
            site, workload.queue_names, per_node=workload.shaped, node_sets=workload.node_sets
        )
        self.ordering = make_ordering(
            site, workload.jobs, (cluster.capacity_cpus, cluster.capacity_mem)
        )
        listeners: list[JobListener] = (
            [self.ordering] if isinstance(self.ordering, JobListener) else []
        )
        self.state = RunState(
            site, workload, cluster, listeners, record_allocations=record_allocations
        )
        #: the policy wants a pass at every finish, even when no job waits
        self.every_event = bool(getattr(policy, "every_event", False))
        self.ctx = Context(self.state, self.ordering)
        rules = getattr(policy, "batch_rules", None)
        #: the rules of a run in one compiled call, or None to run pass by pass
        self.batch_rules: BatchRules | None = (
            rules
            if compiled
            and isinstance(rules, BatchRules)
            and not record_allocations
            and compiles(self.ordering, rules)
            else None
        )

    def set_rate(self, job: int, rate: float) -> None:
        """Change a running job's progress rate from outside a pass (as a policy would)."""
        self.state.set_rate(job, rate)

    def run(self) -> Result:
        one_call = self.batch_rules is not None
        needed: tuple[object, ...] = ()
        if one_call:
            needed = kernels_for(self.ordering, self.batch_rules)
        elif getattr(self.policy, "uses_kernels", True):
            needed = PLANNING_KERNELS + PLACEMENT_KERNELS
        run = kernel_modes.Run(self.state.n, self.state.cluster.pools, one_call)
        mode = kernel_modes.choose(self.kernels, run, needed)
        if mode == "interpreted":
            with kernel_modes.interpreted():
                return self._run(mode, False, needed)
        compiling = not kernel_modes.ready(needed)
        if compiling and self.on_compile is not None:
            self.on_compile()
        return self._run(mode, compiling, needed)

    def _run(self, mode: KernelMode, compiling: bool, needed: tuple[object, ...]) -> Result:
        """The run with its kernels ``mode`` (the ``needed`` compiled ones are warmed up
        first; compiled in this process when ``compiling``)."""
        compile_seconds = 0.0
        if mode == "compiled" and needed:
            started_at = time.perf_counter()
            with kernel_modes.loading():
                if self.batch_rules is not None:
                    warm_up_run(self.ordering, self.batch_rules)
                else:
                    warm_up_placement()
                    warm_up_profile()
            compile_seconds = time.perf_counter() - started_at
        if self.progress is not None:
            self.progress(0, self.state.n)  # the kernels are ready: the run begins
        started_at = time.perf_counter()
        scanned = 0
        if self.batch_rules is not None:
            # the progress reports' object-mode block compiles in this process, leanly
            with kernel_modes.object_mode_lean():
                passes, scanned = replay(
                    self.state,
                    self.ordering,
                    self.batch_rules,
                    record=getattr(self.policy, "record", None),
                    heads=getattr(self.policy, "head_reservations", None),
                    progress=self.progress,
                )
        else:
            passes = self._run_passes()
        wall = time.perf_counter() - started_at
        return self._result(passes, wall, compile_seconds, scanned, mode, compiling)

    def _run_passes(self) -> int:
        """The run pass by pass, through the policy's ``schedule``; returns the passes."""
        state = self.state
        ctx = self.ctx
        heap = state.heap
        submit = state.submit
        n = state.n
        job_state = state.job_state
        waiting = int(JobState.WAITING)
        handlers = {EventKind.FINISH: state.finish, EventKind.WAKE: _woken}
        handler_by_value = {int(kind): handler for kind, handler in handlers.items()}
        schedule = self.policy.schedule
        finish_kind = int(EventKind.FINISH)
        finished_now = state.finished
        every_event = self.every_event
        progress = self.progress
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
            state.now = float(now)
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
                job_state[next_job] = waiting
                arrived.append(next_job)
                next_job += 1
            state.submitted = next_job
            state.nwaiting += len(arrived)
            if woke or ((state.nwaiting or every_event) and (finished or arrived)):
                ctx.freed = finished
                ctx.arrived = arrived
                schedule(ctx)
                passes += 1
                if state.shared is not None:
                    state.shared.check_cpu(state.rate)
            finished_now.clear()
            if progress is not None and next_job - done_before >= report_every:
                done_before = next_job
                progress(next_job, n)
        if progress is not None:
            progress(n, n)
        return passes

    def _result(
        self,
        passes: int,
        wall: float,
        compile_seconds: float,
        scanned: int,
        mode: KernelMode,
        compiled_now: bool,
    ) -> Result:
        """The run's Result: ``wall`` seconds simulating after ``compile_seconds`` of
        kernels run ``mode``; ``scanned``: jobs the compiled passes decided for one by one."""
        state = self.state
        never = state.never_run()
        if never.size:
            raise PolicyViolation(
                f"policy {self.policy.name!r} left {never.size} jobs never run "
                f"(first: job {state.job_id(int(never[0]))}) although no event was left"
            )
        return Result(
            jobs=self._job_table(),
            site=self.site,
            policy=self.policy.name,
            params=self.params,
            workload=self.workload,
            wall_seconds=wall,
            compile_seconds=compile_seconds,
            kernels=mode,
            compiled_now=compiled_now,
            jobs_scanned=scanned,
            passes=passes,
            counters={**state.counters, **state.limits.counters()},
            fairshare_usage=self._usage_log(),
            allocations=state.allocation_log,
        )

    def _usage_log(self) -> pd.DataFrame | None:
        ledger = getattr(self.ordering, "ledger", None)
        return None if ledger is None else ledger.usage_table()

    def _job_table(self) -> pd.DataFrame:
        jobs = self.workload.jobs
        state = self.state
        start = state.start_time
        end = state.end_time
        submit = state.submit
        time_shared = state.time_shared
        return pd.DataFrame(
            {
                "job_id": jobs["job_id"].to_numpy(),
                "user": jobs["user"].to_numpy(),
                "group": jobs["group"].to_numpy(),
                "queue": _text(jobs["queue"]),
                "submit": submit,
                "start": start,
                "end": end,
                # a time-shared job "waits" whenever it does not progress at rate 1:
                # its response time less its work (so slowdown = the papers' stretch)
                "wait": np.where(time_shared, end - submit - state.work, start - submit),
                # a time-shared job's "runtime" is its work: what it takes at rate 1
                "runtime": np.where(time_shared, state.work, end - start),
                "cpus": jobs["cpus"].to_numpy(),
                "estimate": jobs["estimate"].to_numpy(),
                "walltime": jobs["walltime"].to_numpy(),
                "status": coded_text(state.killed.astype(np.int8), STATUS_NAMES),
                "held_by": _held_by(state.limits.held_jobs),
            }
        )


#: a job's ``status`` in the job table, by whether it was killed at its walltime
STATUS_NAMES = ("completed", "killed")


def _text(column: pd.Series) -> Any:
    """A text column of the workload as the job table holds it (what pandas makes of its
    values): from a categorical's codes without a string per row (:func:`coded_text`)."""
    if isinstance(column.dtype, pd.CategoricalDtype) and len(column):
        codes = column.cat.codes.to_numpy()
        names = list(column.cat.categories)
        if (codes >= 0).all() and all(isinstance(name, str) for name in names):
            return coded_text(codes, names)
    return column.to_numpy()


def _held_by(held_jobs: np.ndarray) -> np.ndarray:
    """Per job, the queue limits (names of :data:`~queuesim.core.planning.HELD_BY`) that
    held it back at least once, comma-joined in that order; ``""`` when none did.

    Not written to the run's job files (:data:`queuesim.results.output.JOB_CSV_COLUMNS`):
    it explains a single run's waits, e.g. in ``queuesim fidelity``."""
    names = np.full(held_jobs.shape[1], "", dtype=object)
    for k, name in enumerate(HELD_BY):
        hit = held_jobs[k]
        if hit.any():
            before = names[hit]
            names[hit] = np.where(before == "", name, before + "," + name)
    return names
