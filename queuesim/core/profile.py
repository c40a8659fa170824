"""The availability profile: free resources over future time, and the one backfill loop.

The profile is a step function over time and *pools* of resources. ``times[s]`` is the
start of step ``s``; ``cpus[s, p]`` and ``mem[s, p]`` are the CPUs and memory free in pool
``p`` from ``times[s]`` until ``times[s + 1]`` (the last step lasts for ever). A pool is a
node when the site models memory (a job's share on each node must fit that node), and a
whole cluster otherwise (a job's CPUs may come from any nodes of a cluster, so counting
them per cluster is exact - and a one-cluster site has a single column, which keeps the
common case as fast as a plain CPU count).

The profile is built from the running jobs' *estimated* ends, then waiting jobs are placed
in priority order: each either starts now, gets a reservation at the earliest time its
resources are free for its whole estimate, or is passed over. Every placement names the
pools and CPUs it takes, and a job started now is started exactly there, so what a
reservation was promised is what the nodes keep for it.

One loop serves every batch policy, as in Flux's queue policies and in the backfilling
literature (Mu'alem and Feitelson's analysis of EASY and conservative backfilling):

* ``depth = 0, backfill = False``: strict FCFS, stop at the first job that cannot start;
* ``depth = 1``: EASY, only the first blocked job holds a reservation, later jobs start
  only if they delay it by nothing;
* unlimited depth with promises carried between passes: conservative backfilling with
  compression (see :func:`plan_pass`).

The functions are compiled with numba: a what-if study replays hundreds of thousands of
jobs, and each pass may place a hundred waiting jobs in a profile of a few hundred steps.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

NEVER = np.inf


class ProfileState(NamedTuple):
    """What the profile of the running jobs is built from."""

    now: float
    #: CPUs and memory free now, per pool
    free_cpus: np.ndarray
    free_mem: np.ndarray
    #: the running jobs' estimated ends and their numbers, in the same order
    run_ends: np.ndarray
    run_jobs: np.ndarray
    #: where every started job runs: its entries ``alloc_start[job]`` to
    #: ``alloc_start[job] + alloc_len[job] - 1`` of the pools and CPUs it holds there
    alloc_start: np.ndarray
    alloc_len: np.ndarray
    alloc_pool: np.ndarray
    alloc_cpus: np.ndarray
    #: every job's memory per CPU
    job_mem: np.ndarray
    #: the capacity (CPUs, memory) of every pool when empty
    capacity_cpus: np.ndarray
    capacity_mem: np.ndarray


class JobArrays(NamedTuple):
    """What the kernels know of every job, by job number."""

    cpus: np.ndarray
    queue: np.ndarray
    #: the runtime the scheduler plans with
    estimate: np.ndarray
    #: CPUs on each node it uses (0: any spread)
    ppn: np.ndarray
    #: per queue, the pools its jobs may use (queues x pools, bool)
    queue_masks: np.ndarray


class LimitState(NamedTuple):
    """The queue limits and what counts against them now."""

    #: every job's user, a number from 0
    user: np.ndarray
    #: per queue: the most running jobs and CPUs of one user, and the queue's CPU pool
    user_jobs_cap: np.ndarray
    user_cpus_cap: np.ndarray
    queue_pool: np.ndarray
    #: running jobs and CPUs per (user, queue), and running CPUs per queue
    user_jobs: np.ndarray
    user_cpus: np.ndarray
    queue_cpus: np.ndarray


class PassRules(NamedTuple):
    """How a pass of :func:`plan_pass` plans."""

    #: how many jobs may hold reservations
    depth: int
    #: whether later jobs may start before a job that cannot start now
    backfill: bool
    #: whether a reservation blocks every pool that could hold part of its job (paper 004, 3.1)
    greedy: bool
    #: whether promises move to the earliest slot they fit (room appeared since they were made)
    compress: bool


class Promises(NamedTuple):
    """The reservation each waiting job was given at the previous pass."""

    #: its start (``inf``: none)
    starts: np.ndarray
    #: the CPUs it takes from each pool (a row per job; all zero if unknown)
    plans: np.ndarray


class Profile(NamedTuple):
    """The availability profile being planned: ``size[0]`` steps, step ``s`` from
    ``times[s]`` with ``cpus[s, p]`` and ``mem[s, p]`` free in pool ``p``. The arrays have
    room for the steps a pass may add; ``size`` is a one-element array so that kernels can
    change it in place."""

    times: np.ndarray
    cpus: np.ndarray
    mem: np.ndarray
    size: np.ndarray


@numba.njit(cache=True, inline="always")
def _copy_step(prof: Profile, src: int, dst: int) -> None:
    """Copy step ``src`` to ``dst`` element by element (row slices cost a view each)."""
    prof.times[dst] = prof.times[src]
    for p in range(prof.cpus.shape[1]):
        prof.cpus[dst, p] = prof.cpus[src, p]
        prof.mem[dst, p] = prof.mem[src, p]


@numba.njit(cache=True)
def _build(state: ProfileState, extra: int) -> Profile:
    """The profile of the running jobs, with room for ``extra`` more steps. Every end must
    lie after ``now``."""
    order = np.argsort(state.run_ends, kind="mergesort")
    size = 2 + state.run_ends.shape[0] + extra
    pools = state.free_cpus.shape[0]
    prof = Profile(
        np.empty(size, dtype=np.float64),
        np.empty((size, pools), dtype=np.int64),
        np.empty((size, pools), dtype=np.int64),
        np.ones(1, dtype=np.int64),
    )
    times, cpus, mem = prof.times, prof.cpus, prof.mem
    times[0] = state.now
    for p in range(pools):
        cpus[0, p] = state.free_cpus[p]
        mem[0, p] = state.free_mem[p]
    steps = 1
    for k in range(order.shape[0]):
        r = order[k]
        t = state.run_ends[r]
        if t != times[steps - 1]:
            _copy_step(prof, steps - 1, steps)
            times[steps] = t
            steps += 1
        job = state.run_jobs[r]
        start = state.alloc_start[job]
        for e in range(start, start + state.alloc_len[job]):
            p = state.alloc_pool[e]
            cpus[steps - 1, p] += state.alloc_cpus[e]
            mem[steps - 1, p] += state.alloc_cpus[e] * state.job_mem[job]
    prof.size[0] = steps
    return prof


@numba.njit(cache=True, inline="always")
def fitting_cpus(cpus: int, mem: int, per_cpu: int) -> int:
    """CPUs of a job needing ``per_cpu`` memory each that fit in ``cpus`` and ``mem``."""
    if per_cpu > 0:
        return min(cpus, mem // per_cpu)
    return cpus


@numba.njit(cache=True, inline="always")
def _shaped(room: int, ppn: int) -> int:
    """What a pool (a node) offers a job that takes ``ppn`` CPUs on each node it uses
    (``ppn`` 0: any number): ``ppn`` or nothing."""
    if ppn > 0:
        return ppn if room >= ppn else 0
    return room


@numba.njit(cache=True, inline="always")
def _window_end(prof: Profile, i: int, duration: float) -> int:
    """First step at or after the end of a window starting at step ``i``."""
    end = prof.times[i] + duration
    j = i + 1
    while j < prof.size[0] and prof.times[j] < end:
        j += 1
    return j


@numba.njit(cache=True, inline="always")
def _window_room(
    prof: Profile, i: int, j: int, per_cpu: int, ppn: int, mask: np.ndarray, out: np.ndarray
) -> int:
    """Per pool, the CPUs of the job free over steps ``i`` to ``j - 1`` (into ``out``);
    returns their sum."""
    total = 0
    for p in range(prof.cpus.shape[1]):
        if not mask[p]:
            out[p] = 0
            continue
        best = fitting_cpus(prof.cpus[i, p], prof.mem[i, p], per_cpu)
        for s in range(i + 1, j):
            best = min(best, fitting_cpus(prof.cpus[s, p], prof.mem[s, p], per_cpu))
        out[p] = _shaped(best, ppn)
        total += out[p]
    return total


@numba.njit(cache=True, inline="always")
def _fits_plan(prof: Profile, i: int, j: int, per_cpu: int, plan: np.ndarray) -> bool:
    """Whether every pool keeps ``plan[p]`` CPUs of the job free over steps ``i``..``j-1``."""
    for p in range(plan.shape[0]):
        if plan[p]:
            for s in range(i, j):
                if fitting_cpus(prof.cpus[s, p], prof.mem[s, p], per_cpu) < plan[p]:
                    return False
    return True


@numba.njit(cache=True, inline="always")
def _step_room(prof: Profile, s: int, per_cpu: int, ppn: int, mask: np.ndarray) -> int:
    """The CPUs of the job free at step ``s`` over the pools of ``mask``."""
    total = 0
    for p in range(prof.cpus.shape[1]):
        if mask[p]:
            total += _shaped(fitting_cpus(prof.cpus[s, p], prof.mem[s, p], per_cpu), ppn)
    return total


@numba.njit(cache=True)
def _earliest(
    prof: Profile,
    need: int,
    per_cpu: int,
    ppn: int,
    mask: np.ndarray,
    duration: float,
    now_only: bool,
    room: np.ndarray,
) -> int:
    """First step at whose start a job of ``need`` CPUs (``per_cpu`` memory each, ``ppn``
    on each node or any spread, on the pools of ``mask``) fits for its whole ``duration``
    (its room per pool left in ``room``); -1 if none, or, with ``now_only``, if it does not
    fit at step 0."""
    times, steps = prof.times, prof.size[0]
    i = 0
    while i < steps:
        # a window containing a step whose total room is short cannot fit: skip past it
        j = i
        end = times[i] + duration
        blocked = -1
        while j < steps and (j == i or times[j] < end):
            if _step_room(prof, j, per_cpu, ppn, mask) < need:
                blocked = j
                break
            j += 1
        if blocked < 0:
            if prof.cpus.shape[1] == 1:
                room[0] = need  # one pool: no short step means the whole window fits
                return i
            if _window_room(prof, i, j, per_cpu, ppn, mask, room) >= need:
                return i
        if now_only:
            return -1
        i = blocked + 1 if blocked >= 0 else i + 1
    return -1


@numba.njit(cache=True)
def _split(prof: Profile, t: float) -> int:
    """Make ``t`` the start of a step (copying the step that contains it); returns the
    step's index. ``t`` must not lie before the first step."""
    steps = prof.size[0]
    k = int(np.searchsorted(prof.times[:steps], t))
    if k < steps and prof.times[k] == t:
        return k
    for s in range(steps, k, -1):
        _copy_step(prof, s - 1, s)
    _copy_step(prof, k - 1, k)
    prof.times[k] = t
    prof.size[0] = steps + 1
    return k


@numba.njit(cache=True)
def _take(
    prof: Profile, start: float, duration: float, per_cpu: int, plan: np.ndarray, sign: int
) -> None:
    """Take (sign 1) or give back (sign -1) ``plan[p]`` CPUs of every pool from ``start``
    for ``duration``."""
    i = _split(prof, start)
    j = _split(prof, start + duration)
    for p in range(plan.shape[0]):
        amount = sign * plan[p]
        if amount:
            for s in range(i, j):
                prof.cpus[s, p] -= amount
            if per_cpu:
                for s in range(i, j):
                    prof.mem[s, p] -= amount * per_cpu


@numba.njit(cache=True)
def _first_fit(room: np.ndarray, need: int, plan: np.ndarray) -> None:
    """Spread ``need`` CPUs over the pools in order, as much as each has room for."""
    for p in range(room.shape[0]):
        take = min(room[p], need)
        plan[p] = take
        need -= take


#: limit kinds, as :func:`plan_pass` reports a job held back by one
HELD_BY = ("max_running_per_user", "max_cpus_per_user", "cpu_pool")


@numba.njit(cache=True)
def _held_by(job: int, job_cpus: np.ndarray, job_queue: np.ndarray, limits: LimitState) -> int:
    """Which queue limit starting ``job`` (of ``job_cpus``, in ``job_queue``) now would
    exceed: 1 + its index in :data:`HELD_BY`, or 0 if none."""
    q = job_queue[job]
    u = limits.user[job]
    c = job_cpus[job]
    if limits.user_jobs[u, q] + 1 > limits.user_jobs_cap[q]:
        return 1
    if limits.user_cpus[u, q] + c > limits.user_cpus_cap[q]:
        return 2
    if limits.queue_cpus[q] + c > limits.queue_pool[q]:
        return 3
    return 0


def held_by_each(
    candidates: np.ndarray, job_cpus: np.ndarray, job_queue: np.ndarray, limits: LimitState
) -> np.ndarray:
    """:func:`_held_by` for each of ``candidates`` alone, against the same running counts
    (for the engine's check of a start and for setting aside jobs already at a limit)."""
    held: np.ndarray = _held_by_each_entry(candidates, job_cpus, job_queue, *limits)
    return held


@numba.njit(cache=True)
def _held_by_each_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`held_by_each` in compiled code, its limits flattened."""
    candidates, job_cpus, job_queue = fields[0], fields[1], fields[2]
    limits = LimitState(*fields[3:])
    held = np.zeros(candidates.shape[0], dtype=np.int8)
    for k in range(candidates.shape[0]):
        held[k] = _held_by(candidates[k], job_cpus, job_queue, limits)
    return held


@numba.njit(cache=True)
def _count_start(job: int, jobs: JobArrays, limits: LimitState) -> None:
    """Count ``job`` as running against its user's and queue's limits."""
    q = jobs.queue[job]
    u = limits.user[job]
    limits.user_jobs[u, q] += 1
    limits.user_cpus[u, q] += jobs.cpus[job]
    limits.queue_cpus[q] += jobs.cpus[job]


@numba.njit(cache=True)
def _block_suitable(
    prof: Profile, state: ProfileState, before: float, per_cpu: int, ppn: int, mask: np.ndarray
) -> None:
    """Greedy anti-starvation: nothing else may use, before ``before``, any pool of
    ``mask`` whose empty capacity could hold part of the job (paper 004, 3.1)."""
    for p in range(prof.cpus.shape[1]):
        room = fitting_cpus(state.capacity_cpus[p], state.capacity_mem[p], per_cpu)
        if mask[p] and _shaped(room, ppn) > 0:
            s = 0
            while prof.times[s] < before:
                prof.cpus[s, p] = 0
                prof.mem[s, p] = 0
                s += 1


class PassPlan(NamedTuple):
    """What a pass of :func:`plan_pass` decides for each waiting job (by position)."""

    #: its planned start (``inf``: none)
    starts: np.ndarray
    #: the CPUs it takes from each pool (a row per job)
    plans: np.ndarray
    #: the queue limit that held it back (1 + index in :data:`HELD_BY`; 0: none)
    held: np.ndarray
    #: whether it was booked where it had been promised
    booked: np.ndarray
    #: scratch: the room per pool of the job being placed
    room: np.ndarray


class Planning(NamedTuple):
    """One pass of :func:`plan_pass` at work: the profile it plans in, what it is built
    from, the jobs, the limit counts including the jobs this pass starts, the waiting jobs
    in priority order and what is decided for each."""

    prof: Profile
    state: ProfileState
    jobs: JobArrays
    counts: LimitState
    waiting: np.ndarray
    plan: PassPlan


@numba.njit(cache=True)
def _book_promises(pl: Planning, promises: Promises) -> None:
    """Book the promises that still fit, on the pools promised (any pools of the job's
    queue if a running job outlived its estimate and those pools no longer have room)."""
    prof, state, jobs, _counts, waiting, plan = pl
    for k in range(waiting.shape[0]):
        if promises.starts[k] < NEVER:
            job = waiting[k]
            per_cpu = state.job_mem[job]
            mask = jobs.queue_masks[jobs.queue[job]]
            t = max(promises.starts[k], state.now)
            i = _split(prof, t)
            j = _window_end(prof, i, jobs.estimate[job])
            promised = promises.plans[k]
            if promised.sum() == jobs.cpus[job] and _fits_plan(prof, i, j, per_cpu, promised):
                plan.plans[k] = promised
                fits = True
            else:  # a running job outlived its estimate: any pools will do at that time
                room = _window_room(prof, i, j, per_cpu, jobs.ppn[job], mask, plan.room)
                fits = room >= jobs.cpus[job]
                if fits:
                    _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
            if fits:
                _take(prof, t, jobs.estimate[job], per_cpu, plan.plans[k], 1)
                plan.booked[k] = True
                plan.starts[k] = t


@numba.njit(cache=True)
def _compress(pl: Planning) -> None:
    """Move each booked job, in priority order, to the earliest slot it fits in - never
    later than its own, which is free for it (Mu'alem and Feitelson's compression)."""
    prof, state, jobs, _counts, waiting, plan = pl
    for k in range(waiting.shape[0]):
        if plan.booked[k]:
            job = waiting[k]
            per_cpu = state.job_mem[job]
            duration = jobs.estimate[job]
            _take(prof, plan.starts[k], duration, per_cpu, plan.plans[k], -1)
            mask = jobs.queue_masks[jobs.queue[job]]
            need, ppn = jobs.cpus[job], jobs.ppn[job]
            i = _earliest(prof, need, per_cpu, ppn, mask, duration, False, plan.room)
            _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
            plan.starts[k] = prof.times[i]
            _take(prof, plan.starts[k], duration, per_cpu, plan.plans[k], 1)


@numba.njit(cache=True)
def _start_due_promises(pl: Planning) -> int:
    """A booked job due now starts unless a limit holds it (then it loses its promise);
    returns how many booked jobs hold a reservation for later."""
    prof, state, jobs, counts, waiting, plan = pl
    reserved = 0
    for k in range(waiting.shape[0]):
        if not plan.booked[k]:
            continue
        job = waiting[k]
        if plan.starts[k] > state.now:
            reserved += 1
            continue
        limit = _held_by(job, jobs.cpus, jobs.queue, counts)
        if limit:
            plan.held[k] = limit
            _take(prof, state.now, jobs.estimate[job], state.job_mem[job], plan.plans[k], -1)
            plan.plans[k] = 0
            plan.starts[k] = NEVER
        else:
            _count_start(job, jobs, counts)
    return reserved


@numba.njit(cache=True)
def _place_others(pl: Planning, rules: PassRules, reserved: int) -> None:
    """Place the jobs without a booked promise, in priority order: start now, reserve the
    earliest slot (while fewer than ``rules.depth`` jobs hold one), or pass over."""
    prof, state, jobs, counts, waiting, plan = pl
    for k in range(waiting.shape[0]):
        if plan.booked[k]:
            continue
        job = waiting[k]
        per_cpu = state.job_mem[job]
        mask = jobs.queue_masks[jobs.queue[job]]
        limit = _held_by(job, jobs.cpus, jobs.queue, counts)
        if limit:
            free = 0
            for p in range(prof.cpus.shape[1]):
                if mask[p]:
                    free += prof.cpus[0, p]
            if free >= jobs.cpus[job]:
                plan.held[k] = limit
            continue
        now_only = reserved >= rules.depth
        need, ppn, duration = jobs.cpus[job], jobs.ppn[job], jobs.estimate[job]
        i = _earliest(prof, need, per_cpu, ppn, mask, duration, now_only, plan.room)
        if i < 0 or (i > 0 and not rules.backfill):
            if not rules.backfill:
                break
            continue
        _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
        plan.starts[k] = prof.times[i]
        _take(prof, plan.starts[k], jobs.estimate[job], per_cpu, plan.plans[k], 1)
        if i > 0:
            reserved += 1
            if rules.greedy:
                _block_suitable(prof, state, plan.starts[k], per_cpu, jobs.ppn[job], mask)
        else:
            _count_start(job, jobs, counts)


def plan_pass(
    state: ProfileState,
    jobs: JobArrays,
    limits: LimitState,
    waiting: np.ndarray,
    rules: PassRules,
    promises: Promises,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Place the waiting jobs ``waiting`` (in priority order) into the profile of the
    running jobs.

    Returns each waiting job's planned start (``now``: start at once; later: a reservation;
    ``inf``: neither), for each the CPUs it takes from each pool (a row per job), and for
    each the queue limit that kept it from starting now while its queue's pools had as
    many CPUs free as it asks (1 + the limit's index in :data:`HELD_BY`; 0: none).
    ``rules.depth`` is how many jobs may hold reservations; without ``rules.backfill``
    planning stops at the first job that cannot start now.

    Queue limits (per-user running jobs and CPUs, the queue's CPU pool; see
    :func:`_held_by`) are checked against the running jobs plus those this pass starts. A
    job a limit holds back is passed over: it neither starts nor holds a reservation, since
    its start depends on its own user's or queue's jobs ending, not on the profile.

    A reservation takes the CPUs expected to free soonest (the "optimized" anti-starvation
    of Klusáček et al., paper 004, 4.2); with ``rules.greedy`` it also blocks, until it
    starts, every pool its queue may use that could hold part of it (their "historic"
    mechanism, 3.1), so later jobs cannot backfill there.

    ``promises`` holds the reservation each job was given at the previous pass and its
    pools. Those are booked first, on the very pools promised, then each is moved to the
    earliest slot it fits in - never later than its own, which stays free for it - so a
    promise is never broken (Mu'alem and Feitelson's compression for conservative
    backfilling); only a running job that outlives its estimate can force a promise to move
    later. Jobs without a promise are placed after, in priority order. Without
    ``rules.compress`` (nothing ended since the last pass, so no room can have appeared)
    the booked promises stay where they are.
    """
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = _plan_pass_entry(
        *state, *jobs, *limits, waiting, *rules, *promises
    )
    return result


# Numba types a call's plain arguments much faster than named tuples (about 0.1 against
# 0.3 microseconds a field), and the kernels are called hundreds of thousands of times a
# run: so the structures cross into compiled code flattened, and are named again there.
_STATE = len(ProfileState._fields)
_JOBS = _STATE + len(JobArrays._fields)
_LIMITS = _JOBS + len(LimitState._fields)
_WAITING = _LIMITS
_RULES_FIRST = _WAITING + 1
_RULES = _RULES_FIRST + len(PassRules._fields)


@numba.njit(cache=True)
def _plan_pass_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`plan_pass` in compiled code, its structures flattened."""
    return _plan_pass(
        ProfileState(*fields[:_STATE]),
        JobArrays(*fields[_STATE:_JOBS]),
        LimitState(*fields[_JOBS:_LIMITS]),
        fields[_WAITING],
        PassRules(*fields[_RULES_FIRST:_RULES]),
        Promises(*fields[_RULES:]),
    )


@numba.njit(cache=True)
def _plan_pass(
    state: ProfileState,
    jobs: JobArrays,
    limits: LimitState,
    waiting: np.ndarray,
    rules: PassRules,
    promises: Promises,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = waiting.shape[0]
    pools = state.free_cpus.shape[0]
    plan = PassPlan(
        np.full(n, NEVER),
        np.zeros((n, pools), dtype=np.int64),
        np.zeros(n, dtype=np.int8),
        np.zeros(n, dtype=np.bool_),
        np.zeros(pools, dtype=np.int64),
    )
    counts = LimitState(
        limits.user,
        limits.user_jobs_cap,
        limits.user_cpus_cap,
        limits.queue_pool,
        limits.user_jobs.copy(),
        limits.user_cpus.copy(),
        limits.queue_cpus.copy(),
    )
    pl = Planning(_build(state, 4 * n), state, jobs, counts, waiting, plan)
    _book_promises(pl, promises)
    if rules.compress:
        _compress(pl)
    reserved = _start_due_promises(pl)
    _place_others(pl, rules, reserved)
    return plan.starts, plan.plans, plan.held


def room_beside_plan(
    state: ProfileState,
    jobs: JobArrays,
    planned_jobs: np.ndarray,
    starts: np.ndarray,
    plans: np.ndarray,
    candidates: np.ndarray,
) -> tuple[int, int, np.ndarray]:
    """What is left beside a plan of :func:`plan_pass`, for a search over many jobs at once
    (DPSA's, :mod:`queuesim.policies.dpsa`).

    Books ``planned_jobs`` where ``starts`` and ``plans`` (as :func:`plan_pass` returned
    them; ``inf``: not placed) put them, in the profile of the running jobs. Returns the
    CPUs free now over all pools; the fewest CPUs free over all pools at or after the
    latest booked start (with only a reservation booked later than now: the CPUs its
    holder leaves spare, EASY's "extra" CPUs); and, for each of ``candidates``, whether it
    alone could start now beside the booked jobs, for its whole estimate, on pools its
    queue may use (memory and shape included). Memory is not in the two totals.
    """
    result: tuple[int, int, np.ndarray] = _room_beside_plan_entry(
        *state, *jobs, planned_jobs, starts, plans, candidates
    )
    return result


@numba.njit(cache=True)
def _room_beside_plan_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`room_beside_plan` in compiled code, its structures flattened."""
    return _room_beside_plan(
        ProfileState(*fields[:_STATE]), JobArrays(*fields[_STATE:_JOBS]), *fields[_JOBS:]
    )


@numba.njit(cache=True)
def _room_beside_plan(
    state: ProfileState,
    jobs: JobArrays,
    planned_jobs: np.ndarray,
    starts: np.ndarray,
    plans: np.ndarray,
    candidates: np.ndarray,
) -> tuple[int, int, np.ndarray]:
    n = planned_jobs.shape[0]
    prof = _build(state, 2 * n + 2)
    latest = state.now
    for k in range(n):
        if starts[k] < NEVER:
            job = planned_jobs[k]
            _take(prof, starts[k], jobs.estimate[job], state.job_mem[job], plans[k], 1)
            latest = max(latest, starts[k])
    pools = prof.cpus.shape[1]
    free_now = 0
    for p in range(pools):
        free_now += prof.cpus[0, p]
    spare = -1  # the latest booked start begins a step, so some step counts
    for s in range(prof.size[0]):
        if prof.times[s] >= latest:
            total = 0
            for p in range(pools):
                total += prof.cpus[s, p]
            if spare < 0 or total < spare:
                spare = total
    fits = np.zeros(candidates.shape[0], dtype=np.bool_)
    room = np.zeros(pools, dtype=np.int64)
    for k in range(candidates.shape[0]):
        job = candidates[k]
        need, per_cpu, ppn = jobs.cpus[job], state.job_mem[job], jobs.ppn[job]
        mask = jobs.queue_masks[jobs.queue[job]]
        duration = jobs.estimate[job]
        fits[k] = _earliest(prof, need, per_cpu, ppn, mask, duration, True, room) == 0
    return free_now, spare, fits


def no_promises(waiting: np.ndarray, pools: int) -> Promises:
    """No job has been promised anything (for policies that keep no promises)."""
    return Promises(np.full(waiting.size, NEVER), np.zeros((waiting.size, pools), dtype=np.int64))


def tiny_profile_state() -> ProfileState:
    """A one-pool, one-CPU machine with job 0 running until t=1: input for warm-ups."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return ProfileState(0.0, one, one, np.ones(1), zero, zero, one, zero, one, zero, one, one)


def tiny_job_arrays() -> JobArrays:
    """One job of one CPU in queue 0, for warm-ups with :func:`tiny_profile_state`."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return JobArrays(one, zero, np.ones(1), zero, np.ones((1, 1), dtype=np.bool_))


def no_limits(job_queue: np.ndarray, queues: int) -> LimitState:
    """Limits that never hold a job back (one user), for callers without queue limits."""
    big = np.full(queues, np.iinfo(np.int64).max // 4, dtype=np.int64)
    counts = np.zeros((1, queues), dtype=np.int64)
    users = np.zeros(job_queue.shape[0], dtype=np.int64)
    return LimitState(users, big, big, big, counts, counts, np.zeros(queues, dtype=np.int64))


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny input, so that the first
    real pass is not charged the compilation."""
    zero = np.zeros(1, dtype=np.int64)
    jobs = tiny_job_arrays()
    limits = no_limits(jobs.queue, 1)
    held_by_each(zero, jobs.cpus, jobs.queue, limits)
    rules = PassRules(1, True, True, True)
    plan_pass(tiny_profile_state(), jobs, limits, zero, rules, no_promises(zero, 1))
