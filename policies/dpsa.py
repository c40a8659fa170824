"""DPSA: EASY's reservation for the head job, then the subset of the other waiting jobs that
fills the most of the free CPUs now (paper ``001``, "time bounded scheduling algorithm based
on dynamic programming").

One scheduling pass follows the paper's Fig. 2:

1. start the waiting jobs in priority order (the order :meth:`Context.waiting` gives: the
   site's ordering) while each fits (lines 3-7);
2. give the first job that does not fit a reservation, as EASY does (line 8): its shadow
   time, and the CPUs it leaves spare then (the "extra" CPUs);
3. among the later waiting jobs, keep those that could each start now without delaying that
   reservation (line 10, the eligible jobs), and search their subsets for the one that uses
   the most CPUs free now (lines 11 and 15-29, :func:`best_subset`); start it (line 12).

Both plannings use the one availability profile and backfill loop of
:mod:`queuesim.core.profile`; nothing here places a job by itself:

* steps 1 and 2 are :func:`~queuesim.core.planning.plan_pass` with reservation depth 1 (EASY);
  of its plan DPSA keeps the jobs before the head and the head's reservation, and ignores
  EASY's own backfilling choices;
* step 3's capacities and eligibility come from
  :func:`~queuesim.core.planning.room_beside_plan`, which books that plan and asks the profile,
  job by job, whether each could start now beside it (memory and queue node sets included);
* the chosen subset is then planned by ``plan_pass`` again - the jobs before the head, the
  head, then the chosen jobs with depth 1 - so every start is checked against the head's
  reservation on each pool, and each job starts where the profile placed it.

The search works on totals over the pools: CPUs free now, and extra CPUs at the shadow
time. On one pool of CPUs (one cluster, memory not modelled: every shipped PWA machine) the
totals are exact and every chosen job starts. On several pools (nodes with memory, or
several clusters) a chosen job may not fit where the others left room; it is skipped and
counted as ``dpsa_pool_misfit``.

The paper's line 23 gives each chosen job the feasible resources of *least availability*
(the CPUs whose next reservation comes soonest), keeping the long-available ones for jobs
that need them. On one pool that choice is implicit: CPUs are counted, not named, and the
two capacities (all free CPUs for jobs that end before the shadow time, only the extra CPUs
for those that run past it) are exactly what remains when short jobs use the CPUs the head
will need. On several pools, the chosen jobs are planned long ones first (those running
past the shadow time, which may only use the pools with spare CPUs at the reservation),
then short ones, each group in priority order, so that the short jobs take the CPUs of
least availability that remain - within a job, ``plan_pass`` fills pools first fit.

Variants (section III.C): among subsets that use as many CPUs, ``p`` prefers the one whose
best job has the higher priority, then the second best, and so on; ``n`` searches the jobs
smallest first (fewest CPUs; ties by priority), so it prefers, in that order, subsets that
hold smaller jobs, and finds them first when bounded; ``w`` searches largest first and
prefers subsets that hold the larger jobs. As the paper does, the variants differ only in
the order of the search, which the depth-first search turns into the tie-break.

Bounds: ``bound_nodes`` caps the subsets one search forms and ``bound_ms`` its wall time
(0: no bound). A bounded search starts the best subset found so far and counts
``dpsa_bound_hit``; every search counts ``dpsa_searches``. A node bound keeps runs
deterministic; a time bound makes them depend on the machine's speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from queuesim.core.context import Context
from queuesim.core.planning import plan_pass, room_beside_plan
from queuesim.core.profile import PassRules, no_promises, tiny_job_arrays, tiny_profile_state
from queuesim.policies.backfill import RecordsReservations
from queuesim.policies.dpsa_search import best_subset, search_order
from queuesim.policies.dpsa_search import warm_up as warm_up_search
from queuesim.policies.registry import register

VARIANTS = ("p", "n", "w")
#: EASY's planning: one reservation, backfilling, no blocking, no promises kept
EASY_RULES = PassRules(depth=1, backfill=True, greedy=False, compress=False)


@register("dpsa")
@dataclass
class DPSA(RecordsReservations):
    """DPSA (paper 001): EASY's head reservation, then the subset that fills most CPUs now.

    Variants (ties between equally full subsets): p priority, n small jobs, w wide jobs."""

    name: str = field(default="dpsa", init=False)
    variant: str = "p"
    #: wall-time bound of one search in milliseconds (0: none; makes runs machine-dependent)
    bound_ms: float = 0.0
    #: subsets one search may form (0: none)
    bound_nodes: int = 100_000

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(
                f"parameter 'variant' must be one of {', '.join(VARIANTS)}; got {self.variant!r}"
            )
        if not self.bound_ms >= 0 or self.bound_ms == float("inf"):
            raise ValueError(f"parameter 'bound_ms' must be a number >= 0, got {self.bound_ms}")
        if self.bound_nodes < 0:
            raise ValueError(f"parameter 'bound_nodes' must be >= 0, got {self.bound_nodes}")
        warm_up()  # compile before the simulation clock starts

    def schedule(self, ctx: Context) -> None:
        order = ctx.within_limits(ctx.waiting())
        if order.size == 0:
            return
        free = ctx.free_cpus
        if free < ctx.cpus[order].min():
            return  # nothing can start now; the reservation is re-planned at the next pass
        now = ctx.now
        starts, plans, held = _plan(ctx, order)
        ctx.held_back(order, held)
        reserved = np.flatnonzero((starts > now) & (starts < np.inf))
        if reserved.size == 0:
            _start_planned(ctx, order, starts, plans)  # no reservation: all that fits started
            return
        head = int(reserved[0])
        shadow = float(starts[head])
        if self.record is not None:
            self.record.setdefault(int(order[head]), shadow)
        booked = order[: head + 1]
        rest = order[head + 1 :]
        left = free - int(ctx.cpus[booked[starts[: head + 1] == now]].sum())
        candidates = rest[ctx.cpus[rest] <= left]
        if candidates.size == 0:
            _start_planned(ctx, booked, starts, plans)
            return
        free_now, extra, fits = room_beside_plan(
            ctx.profile_state(),
            ctx.job_arrays(),
            booked,
            starts[: head + 1],
            plans[: head + 1],
            candidates,
        )
        eligible = candidates[fits]
        if eligible.size == 0:
            _start_planned(ctx, booked, starts, plans)
            return
        sizes = ctx.cpus[eligible]
        long = now + ctx.estimate[eligible] > shadow
        searched = search_order(sizes, self.variant)
        found = best_subset(
            sizes[searched],
            long[searched],
            free_now,
            extra,
            bound_nodes=self.bound_nodes,
            bound_ms=self.bound_ms,
        )
        ctx.count("dpsa_searches")
        if found.bound_hit:
            ctx.count("dpsa_bound_hit")
        picked = np.sort(searched[found.chosen])  # back to priority order
        chosen = np.concatenate([eligible[picked[long[picked]]], eligible[picked[~long[picked]]]])
        jobs = np.concatenate([booked, chosen])
        starts, plans, _ = _plan(ctx, jobs)
        _start_planned(ctx, jobs, starts, plans)
        misfits = int(np.count_nonzero(starts[head + 1 :] != now))
        if misfits:
            ctx.count("dpsa_pool_misfit", misfits)


def _plan(ctx: Context, jobs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EASY's plan of ``jobs`` in the given order: those before the first that cannot start
    start now, that one holds the reservation, later ones start now only beside it (queue
    limits respected; the third array says which limit held a job back)."""
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = plan_pass(
        ctx.profile_state(),
        ctx.job_arrays(),
        ctx.limit_state(),
        jobs,
        EASY_RULES,
        no_promises(ctx.cluster.pools),
    )
    return result


def _start_planned(ctx: Context, jobs: np.ndarray, starts: np.ndarray, plans: np.ndarray) -> None:
    """Start those of ``jobs`` (the first ``starts.size``) planned to start now, where
    planned."""
    for k in np.flatnonzero(starts[: jobs.size] == ctx.now).tolist():
        ctx.start(int(jobs[k]), plans[k])


def warm_up() -> None:
    """Compile (or load from numba's cache) DPSA's kernels on a tiny input, so that the
    first real pass is not charged the compilation."""
    warm_up_search()
    zero = np.zeros(1, dtype=np.int64)
    room_beside_plan(
        tiny_profile_state(),
        tiny_job_arrays(),
        zero,
        np.full(1, np.inf),
        np.zeros((1, 1), dtype=np.int64),
        zero,
    )
