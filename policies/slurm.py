"""Slurm's scheduler: the main scheduler on events, the backfill scheduler on a timer.

Following slurm.conf(5) (``SchedulerType``, ``SchedulerParameters``) and Slurm's
sched/backfill documentation, with the semantics of slurmctld's ``_schedule`` and the
backfill plugin's ``_attempt_backfill``:

* **main scheduler** - at every job submit and end (and every ``sched_interval`` seconds,
  as slurmctld's periodic run; 0: never), the first ``default_queue_depth`` waiting jobs
  in priority order are tried: a job starts if it fits now; a job held by a limit is
  skipped; a job that does not fit stops its partition (queue) for the rest of the pass,
  and no later job may use the nodes it could use (Slurm removes the failed partition's
  nodes from the pass). No reservation is made.
* **backfill scheduler** (``backfill``, i.e. ``sched/backfill``; false is
  ``sched/builtin``) - at every multiple of ``bf_interval`` seconds of simulated time while
  jobs wait, the waiting jobs in priority order, at most ``bf_max_job_user`` per user
  (0: no limit) and ``bf_max_job_test`` in all, are placed into the availability profile:
  each starts now if it delays no job placed before it, else it reserves the earliest slot
  it fits within ``bf_window`` minutes (beyond: no reservation). Times are planned at
  ``bf_resolution`` seconds: the running jobs' expected ends are rounded up to a multiple
  of it and the jobs' time limits up to a multiple of it. Reservations are not kept from
  one cycle to the next, as in Slurm.

Both passes are the one backfill loop of :mod:`queuesim.core.planning`: the main
scheduler with no reservations and the queue stop (``PassRules.stop_queue``), the backfill
with unlimited reservations within a horizon (``PassRules.horizon``). A run under FCFS,
fairshare or multifactor order goes in one compiled call (:mod:`queuesim.core.batch_run`
keeps the timer: the policy's ``batch_rules`` carry its :class:`SlurmRules`);
``schedule`` below is the same run pass by pass through the Context (under the PBS order,
when allocations are recorded, or asked for), tested to give the same schedule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from queuesim.core.batch_run import BatchRules, SlurmRules
from queuesim.core.context import Context
from queuesim.core.planning import first_per_user, plan_pass
from queuesim.core.profile import JobArrays, PassRules, no_promises
from queuesim.policies.backfill import RecordsReservations
from queuesim.policies.registry import register

_UNLIMITED = int(np.iinfo(np.int64).max)


@register("slurm")
@dataclass
class Slurm(RecordsReservations):
    """Slurm's main scheduler plus (with ``backfill``) its backfill scheduler; the
    parameters are SchedulerParameters' (times in seconds, ``bf_window`` in minutes)."""

    name: str = field(default="slurm", init=False)
    backfill: bool = True
    default_queue_depth: int = 100
    sched_interval: int = 60
    bf_interval: int = 30
    bf_window: int = 1440
    bf_resolution: int = 60
    bf_max_job_test: int = 500
    bf_max_job_user: int = 0
    #: with ``record_reservations``: (job, reserved start) of the head of the waiting
    #: jobs at each backfill cycle that reserved for it, in cycle order
    head_reservations: list[tuple[int, float]] = field(default_factory=list, init=False)
    _next_wake: float = field(default=-math.inf, init=False, repr=False)
    _rounded: tuple[Context, JobArrays] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        for key in ("default_queue_depth", "bf_interval", "bf_window", "bf_resolution"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        for key in ("sched_interval", "bf_max_job_test", "bf_max_job_user"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be 0 or more, got {getattr(self, key)}")

    @property
    def batch_rules(self) -> BatchRules:
        """The same passes on the same timer, for a run in one compiled call."""
        slurm = SlurmRules(
            self.backfill,
            self.default_queue_depth,
            self.sched_interval,
            self.bf_interval,
            self.bf_window * 60.0,
            self.bf_resolution,
            self.bf_max_job_test,
            self.bf_max_job_user,
        )
        return BatchRules(0, True, slurm=slurm)

    def schedule(self, ctx: Context) -> None:
        now = ctx.now
        left = -1
        event = bool(ctx.arrived) or ctx.freed
        if event or (self.sched_interval and now % self.sched_interval == 0):
            left = self._main(ctx)
        if self.backfill and now % self.bf_interval == 0 and left != 0:
            left = self._backfill(ctx)
        if left != 0:
            self._wake(ctx)

    def _main(self, ctx: Context) -> int:
        """The main scheduler's pass; returns how many jobs still wait."""
        waiting = ctx.waiting()
        order = ctx.within_limits(waiting[: self.default_queue_depth])
        if order.size == 0 or ctx.free_cpus < ctx.cpus[order].min():
            return int(waiting.size)
        rules = PassRules(0, True, False, False, stop_queue=True)
        starts, plans, held = plan_pass(
            ctx.profile_state(),
            ctx.job_arrays(),
            ctx.limit_state(),
            order,
            rules,
            no_promises(ctx.cluster.pools),
        )
        ctx.held_back(order, held)
        now_jobs = np.flatnonzero(starts == ctx.now).tolist()
        for k in now_jobs:
            ctx.start(int(order[k]), plans[k])
        return int(waiting.size) - len(now_jobs)

    def _backfill(self, ctx: Context) -> int:
        """One backfill cycle; returns how many jobs still wait."""
        waiting = ctx.waiting()
        order = ctx.within_limits(waiting)
        if self.bf_max_job_user:
            users = ctx.limit_state().user
            seen = np.zeros(int(users.max(initial=0)) + 1, dtype=np.int64)
            order = first_per_user(order, users, self.bf_max_job_user, seen)
        if self.bf_max_job_test:
            order = order[: self.bf_max_job_test]
        if order.size == 0:
            return int(waiting.size)
        resolution = float(self.bf_resolution)
        state = ctx.profile_state()
        state = state._replace(run_ends=np.ceil(state.run_ends / resolution) * resolution)
        rules = PassRules(_UNLIMITED, True, False, False, horizon=self.bf_window * 60.0)
        starts, plans, held = plan_pass(
            state,
            self._rounded_jobs(ctx),
            ctx.limit_state(),
            order,
            rules,
            no_promises(ctx.cluster.pools),
        )
        ctx.held_back(order, held)
        reserved = np.flatnonzero((starts > ctx.now) & (starts < np.inf))
        if self.record_reservations and reserved.size:
            if reserved[0] == 0:
                self.head_reservations.append((int(order[0]), float(starts[0])))
            for k in reserved.tolist():
                self.reservations.setdefault(int(order[k]), float(starts[k]))
        now_jobs = np.flatnonzero(starts == ctx.now).tolist()
        for k in now_jobs:
            ctx.start(int(order[k]), plans[k])
        return int(waiting.size) - len(now_jobs)

    def _rounded_jobs(self, ctx: Context) -> JobArrays:
        """The jobs with their time limits rounded up to ``bf_resolution`` (made once)."""
        if self._rounded is None or self._rounded[0] is not ctx:
            jobs = ctx.job_arrays()
            res = float(self.bf_resolution)
            self._rounded = (ctx, jobs._replace(estimate=np.ceil(jobs.estimate / res) * res))
        return self._rounded[1]

    def _wake(self, ctx: Context) -> None:
        """Ask for a pass at the next backfill cycle or periodic main run, unless one is
        asked for already."""
        now = ctx.now
        times = [math.inf]
        if self.backfill:
            times.append((math.floor(now / self.bf_interval) + 1) * self.bf_interval)
        if self.sched_interval:
            times.append((math.floor(now / self.sched_interval) + 1) * self.sched_interval)
        when = float(min(times))
        if when < math.inf and not (now < self._next_wake <= when):
            ctx.wake_at(when)
            self._next_wake = when
