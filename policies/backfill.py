"""FCFS, EASY and conservative backfilling: one backfill loop, three reservation depths.

All three place the waiting jobs, in the site's order, into the availability profile of
the running jobs (:func:`queuesim.core.planning.plan_pass`) and start those planned to start now:

* ``fcfs`` stops at the first job that cannot start (no backfilling);
* ``easy`` gives a reservation to the first job that cannot start and starts later jobs
  only when they do not delay it (Lifka's EASY; Mu'alem and Feitelson's analysis);
* ``conservative`` gives every waiting job a reservation and starts a job early only if it
  delays none of them; reservations are kept from pass to pass and, when a job ends before
  its estimate, each moves forward into the earliest slot it fits (compression) - never
  later than it was promised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from queuesim.core.batch_run import BatchRules
from queuesim.core.context import Context
from queuesim.core.planning import plan_pass
from queuesim.core.profile import PassRules, Promises, no_promises
from queuesim.policies.registry import register


def backfill_pass(
    ctx: Context,
    depth: int,
    backfill: bool,
    reservations: dict[int, float] | None = None,
    promises: np.ndarray | None = None,
    promise_plans: dict[int, np.ndarray] | None = None,
    compress: bool = True,
    greedy: bool = False,
    reserve_limited: bool = False,
    starving_only: bool = False,
) -> bool:
    """One scheduling pass of the shared backfill loop.

    ``promises`` (one entry per job, ``inf`` for none) and ``promise_plans`` (job number ->
    CPUs per pool) carry each job's reservation and where it is from pass to pass, so that
    re-planning never breaks a promise; both are updated in place. With
    ``reservations``, the first reservation each job is given is recorded there (by job
    number), so the promise can be checked against the start it finally got. Without
    ``compress`` the promises are kept where they are (for when nothing ended since they
    were made). With ``greedy`` a reservation blocks every node that could serve its job
    until it starts (see :func:`~queuesim.core.planning.plan_pass`); with ``reserve_limited`` a
    job a queue limit holds back may hold a reservation too; with ``starving_only`` only
    the starving jobs (:meth:`~queuesim.core.context.Context.starving_from`), which lead
    the order, may hold one. Queue limits are checked for
    every start, and the jobs they held back are recorded with the run. Returns whether
    the pass planned at all.
    """
    # jobs already at a limit are set aside (and recorded) at once, unless they may reserve
    order = ctx.waiting() if reserve_limited else ctx.within_limits(ctx.waiting())
    if order.size == 0:
        return False
    free = ctx.free_cpus
    if not backfill and free < ctx.cpus[order[0]]:
        return False  # without backfilling nothing starts before the first job
    if promises is None and free < ctx.cpus[order].min():
        # nothing can start now, and no reservation is carried to later passes (EASY,
        # FCFS): the next pass plans the head's reservation afresh. Conservative
        # backfilling plans at every pass: a job arriving now is given its reservation
        # now, before later arrivals, and compression happens when a job ends.
        return False
    cluster = ctx.cluster
    reserve_before = PassRules._field_defaults["reserve_before"]
    if starving_only:
        reserve_before = int(np.count_nonzero(ctx.starving_from(order) <= ctx.now))
    known_plans = np.zeros((order.size if promises is not None else 0, cluster.pools), np.int64)
    if promise_plans:
        for k, job in enumerate(order.tolist()):
            plan = promise_plans.get(job)
            if plan is not None:
                known_plans[k] = plan
    starts, plans, held = plan_pass(
        ctx.profile_state(),
        ctx.job_arrays(),
        ctx.limit_state(),
        order,
        PassRules(depth, backfill, greedy, compress, reserve_limited, reserve_before),
        Promises(promises[order], known_plans)
        if promises is not None
        else no_promises(cluster.pools),
    )
    ctx.held_back(order, held)
    if promises is not None:
        promises[order] = starts
    if promise_plans is not None:
        promise_plans.clear()
        for k in np.flatnonzero((starts > ctx.now) & (starts < np.inf)).tolist():
            promise_plans[int(order[k])] = plans[k]
    if reservations is not None:
        for job, when in zip(order.tolist(), starts.tolist(), strict=True):
            if ctx.now < when < np.inf:
                reservations.setdefault(job, when)
    for k in np.flatnonzero(starts == ctx.now).tolist():
        ctx.start(int(order[k]), plans[k])
    return True


@register("fcfs")
@dataclass
class FCFS:
    """Strict first come, first served: no job starts before an earlier one."""

    name: str = field(default="fcfs", init=False)
    #: the same pass, for a run in one compiled call
    batch_rules: BatchRules = field(default=BatchRules(0, False), init=False, repr=False)

    def schedule(self, ctx: Context) -> None:
        backfill_pass(ctx, depth=0, backfill=False)


@dataclass
class RecordsReservations:
    """A policy that can record the first reservation each job was given (by job number),
    so that tests and studies can check it against the start the job finally got."""

    record_reservations: bool = False
    reservations: dict[int, float] = field(default_factory=dict, init=False, repr=False)

    @property
    def record(self) -> dict[int, float] | None:
        """Where to record reservations, or None when not asked to."""
        return self.reservations if self.record_reservations else None


@register("easy")
@dataclass
class EASY(RecordsReservations):
    """EASY backfilling: a reservation for the first blocked job only."""

    name: str = field(default="easy", init=False)
    batch_rules: BatchRules = field(default=BatchRules(1, True), init=False, repr=False)

    def schedule(self, ctx: Context) -> None:
        backfill_pass(ctx, depth=1, backfill=True, reservations=self.record)


@register("conservative")
@dataclass
class Conservative(RecordsReservations):
    """Conservative backfilling: every waiting job holds a reservation."""

    name: str = field(default="conservative", init=False)
    batch_rules: BatchRules = field(
        default=BatchRules(np.iinfo(np.int64).max, True, promises=True), init=False, repr=False
    )
    _promises: np.ndarray | None = field(default=None, init=False, repr=False)
    _promise_plans: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _ended_since_planning: bool = field(default=False, init=False, repr=False)

    def schedule(self, ctx: Context) -> None:
        if self._promises is None:
            self._promises = np.full(ctx.cpus.shape[0], np.inf)
        # room for compression appears only when a job ends, possibly at a pass that
        # planned nothing because nothing could start
        self._ended_since_planning |= ctx.freed
        planned = backfill_pass(
            ctx,
            depth=np.iinfo(np.int64).max,
            backfill=True,
            reservations=self.record,
            promises=self._promises,
            promise_plans=self._promise_plans,
            compress=self._ended_since_planning,
        )
        if planned:
            self._ended_since_planning = False


class AntiStarvation(StrEnum):
    """How a reserved job holds its place (Klusáček et al., paper 004)."""

    GREEDY = "greedy"  #: block every node that could run it until it starts (3.1)
    OPTIMIZED = "optimized"  #: only the CPUs expected to free soonest (4.2)


@register("scan")
@dataclass
class Scan(RecordsReservations):
    """A site scheduler as paper 004 describes MetaCentrum's: scan the waiting jobs in the
    site's order (queue priority, fairshare...), start every job that can start now within
    its queue's limits, and give the first ``reserved_jobs`` jobs that cannot a reservation
    by the site's ``anti_starvation`` mode, recomputed at every pass. Later jobs start only
    where they delay no reservation (with ``greedy``, never on a reserved job's nodes).
    ``reserved_jobs: 1`` with ``optimized`` plans as EASY does; ``0`` never reserves.

    With ``starving_only``, of those only the jobs the site's ordering calls starving
    reserve (the PBS scheduler without ``strict_ordering``: jobs that fit start in order,
    and only starving jobs are given a place in its calendar, up to ``backfill_depth`` of
    them; sched_config(5), PBS Professional Administrator's Guide, "Starving jobs" and
    "Using backfilling"). A job's starving is seen at the first pass after it begins
    (as at PBS's next scheduling cycle); reservations are made afresh at every pass, so a
    pass at that very moment would change nothing."""

    name: str = field(default="scan", init=False)
    anti_starvation: str = AntiStarvation.OPTIMIZED.value
    reserved_jobs: int = 1
    #: a job held back by a queue limit also gets a reservation, from when its user's or
    #: queue's running jobs are expected to free enough (paper 004 reserves for starving
    #: jobs whatever keeps them waiting); false: such a job is passed over
    reserve_when_limited: bool = True
    #: only starving jobs reserve (see above)
    starving_only: bool = False

    def __post_init__(self) -> None:
        modes = [m.value for m in AntiStarvation]
        if self.anti_starvation not in modes:
            raise ValueError(
                f"anti_starvation must be one of {', '.join(modes)}, got {self.anti_starvation!r}"
            )
        if self.reserved_jobs < 0:
            raise ValueError(f"reserved_jobs must be 0 or more, got {self.reserved_jobs}")

    @property
    def batch_rules(self) -> BatchRules:
        """The same pass, for a run in one compiled call."""
        greedy = self.anti_starvation == AntiStarvation.GREEDY.value
        return BatchRules(
            self.reserved_jobs,
            True,
            greedy,
            self.reserve_when_limited,
            starving_only=self.starving_only,
        )

    def schedule(self, ctx: Context) -> None:
        greedy = self.anti_starvation == AntiStarvation.GREEDY.value
        backfill_pass(
            ctx,
            depth=self.reserved_jobs,
            backfill=True,
            greedy=greedy,
            reserve_limited=self.reserve_when_limited,
            reservations=self.record,
            starving_only=self.starving_only,
        )
