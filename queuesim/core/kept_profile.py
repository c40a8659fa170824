"""Conservative backfilling's profile kept from pass to pass instead of rebuilt.

After a pass the profile holds the running jobs (to their expected ends) and every
promise. The next pass would rebuild it from the running jobs and book every promise again
(:func:`~.profile.fill`, then :func:`~.planning._book_promises`); when every promise
still fits where it was made - the common case - that rebuilt profile is the kept one
brought up to date (:func:`bring_up_to_date`): the steps before now dropped, the jobs
that ended since given back, the jobs running past their estimate kept a little longer
(to ``now`` + grace, as the rebuild expects them), a promise whose time has passed
(a job ran past its estimate) moved to now, and the promises of the jobs this pass leaves
out given back (:func:`left_out`: under queue limits a job promised a start may reach a
limit by the starts of jobs after it in that pass, and is then set aside, so the rebuilt
profile does not hold it). The two have the same free resources at
every time; they may differ in step boundaries where nothing changes (the kept one merges
those), which no search can tell apart (a slot starts where resources free up, and a
window covers the same resources whatever the steps it spans). When some promise no
longer fits, the pass rebuilds as before, which books the promises one by one.

What the pass does in the profile is the same kept or rebuilt, queue limits included (it
checks them against the running counts, not the profile). Not kept: a pass with greedy
reservations (paper 004, 3.1) empties every pool that could hold a reserved job until it
starts, which the profile cannot undo; the pass then rebuilds.

So a pass of a deep queue costs the changes since the last, not the queue's length, in
rebuilding its profile (the promises are still marked booked one by one).
"""

from __future__ import annotations

import numpy as np

from queuesim.common.jit import jit
from queuesim.core.profile import (
    Profile,
    ProfileState,
    Promises,
    _copy_step,
    _same_step,
    _take_span,
)


@jit(borrowing=True)
def _drop_past(prof: Profile, now: float) -> None:
    """Make ``now`` the profile's first step (``now`` not before the first step), and
    merge every step into the one before it when nothing changes between them (jobs
    moved and ended leave such boundaries behind; the profile is the same without
    them)."""
    steps = prof.size[0]
    first = int(np.searchsorted(prof.times[:steps], now, side="right")) - 1
    if first > 0:
        _copy_step(prof, first, 0)
    prof.times[0] = now
    kept = 1
    cpus, mem, gpus = prof.cpus, prof.mem, prof.gpus
    for s in range(first + 1, steps):
        if not _same_step(cpus, mem, gpus, s, kept - 1):
            if s != kept:
                _copy_step(prof, s, kept)
            kept += 1
    prof.size[0] = kept
    prof.low_upto[0] = 0


@jit(inline="always")
def _held(state: ProfileState, job: int, plan: np.ndarray) -> None:
    """The CPUs ``job`` holds in every pool, into ``plan``."""
    plan[:] = 0
    start = state.alloc_start[job]
    for e in range(start, start + state.alloc_len[job]):
        plan[state.alloc_pool[e]] += state.alloc_cpus[e]


@jit(borrowing=True)
def _fits(prof: Profile) -> bool:
    """Whether no step of any pool has less than nothing free."""
    for s in range(prof.size[0]):
        for p in range(prof.cpus.shape[1]):
            if prof.cpus[s, p] < 0:
                return False
        for p in range(prof.mem.shape[1]):
            if prof.mem[s, p] < 0:
                return False
        for p in range(prof.gpus.shape[1]):
            if prof.gpus[s, p] < 0:
                return False
    return True


@jit
def left_out(
    last_order: np.ndarray,
    order: np.ndarray,
    promised_in: np.ndarray,
    planning: int,
    promise: np.ndarray,
    promised_row: np.ndarray,
    last_plans: np.ndarray,
    mark: np.ndarray,
) -> tuple[np.ndarray, Promises]:
    """The jobs of ``last_order`` (the order of the last planning, the ``planning``-th)
    promised a later start there (``promised_in[job] == planning``) that ``order`` leaves
    out, with their promises (``promise`` by job; the pools in row ``promised_row[job]`` of
    ``last_plans``). ``mark`` (by job) is scratch, never holding ``-planning - 1`` before."""
    stamp = -planning - 1
    for k in range(order.shape[0]):
        mark[order[k]] = stamp
    gone = np.empty(last_order.shape[0], dtype=np.int64)
    n = 0
    for k in range(last_order.shape[0]):
        job = last_order[k]
        if promised_in[job] == planning and mark[job] != stamp:
            gone[n] = job
            n += 1
    plans = np.zeros((n, last_plans.shape[1]), dtype=np.int64)
    starts = np.empty(n)
    for g in range(n):
        job = gone[g]
        starts[g] = promise[job]
        for p in range(last_plans.shape[1]):
            plans[g, p] = last_plans[promised_row[job], p]
    return gone[:n], Promises(starts, plans)


@jit
def bring_up_to_date(
    prof: Profile,
    state: ProfileState,
    grace: float,
    ended: np.ndarray,
    booked_end: np.ndarray,
    waiting: np.ndarray,
    promises: Promises,
    estimate: np.ndarray,
    gone: np.ndarray,
    gone_promises: Promises,
) -> bool:
    """Bring the profile a pass left (``prof``, for the running jobs and the promises then)
    to ``state.now``: the jobs ``ended`` since then given back, a running job
    (``state.run_jobs``) expected to end before ``now + grace`` held until then, a promise
    (``promises``, a row per job of ``waiting``) whose time has passed moved to ``now``.
    ``booked_end`` (by job) is where ``prof`` holds each running or ended job until; it is
    updated. The promises ``prof`` holds of the jobs ``gone`` (``gone_promises``, a row
    each: promised by the last pass, left out of this one; see :func:`left_out`) are given
    back. Returns whether every promise still fits; if not, ``prof`` is spoilt and the
    pass must rebuild it. ``prof`` must have room for two more steps per job ended,
    running, waiting and gone."""
    now = state.now
    _drop_past(prof, now)
    plan = np.zeros(prof.cpus.shape[1], dtype=np.int64)
    for e in range(ended.shape[0]):
        job = ended[e]
        if booked_end[job] > now:
            _held(state, job, plan)
            mem, gpn = state.job_mem[job], state.job_gpn[job]
            _take_span(prof, now, booked_end[job], mem, gpn, plan, -1)
    until = now + grace
    for r in range(state.run_jobs.shape[0]):
        job = state.run_jobs[r]
        if booked_end[job] < until:
            _held(state, job, plan)
            mem, gpn = state.job_mem[job], state.job_gpn[job]
            _take_span(prof, max(booked_end[job], now), until, mem, gpn, plan, 1)
            booked_end[job] = until
    for k in range(waiting.shape[0]):
        job = waiting[k]
        start = promises.starts[k]
        if start < now:
            mem, gpn = state.job_mem[job], state.job_gpn[job]
            end = start + estimate[job]
            if end > now:
                _take_span(prof, now, end, mem, gpn, promises.plans[k], -1)
            _take_span(prof, now, now + estimate[job], mem, gpn, promises.plans[k], 1)
    for g in range(gone.shape[0]):
        job = gone[g]
        end = gone_promises.starts[g] + estimate[job]
        if end > now:
            mem, gpn = state.job_mem[job], state.job_gpn[job]
            start = max(gone_promises.starts[g], now)
            _take_span(prof, start, end, mem, gpn, gone_promises.plans[g], -1)
    return _fits(prof)
