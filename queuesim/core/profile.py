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

import numba
import numpy as np

NEVER = np.inf


@numba.njit(cache=True)
def _copy_step(times: np.ndarray, cpus: np.ndarray, mem: np.ndarray, src: int, dst: int) -> None:
    """Copy step ``src`` to ``dst`` element by element (row slices cost a view each)."""
    times[dst] = times[src]
    for p in range(cpus.shape[1]):
        cpus[dst, p] = cpus[src, p]
        mem[dst, p] = mem[src, p]


@numba.njit(cache=True)
def _build(
    now: float,
    free_cpus: np.ndarray,
    free_mem: np.ndarray,
    run_ends: np.ndarray,
    run_jobs: np.ndarray,
    alloc_start: np.ndarray,
    alloc_len: np.ndarray,
    alloc_pool: np.ndarray,
    alloc_cpus: np.ndarray,
    job_mem: np.ndarray,
    extra: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The profile of the running jobs, with room for ``extra`` more steps. Every end must
    lie after ``now``."""
    order = np.argsort(run_ends, kind="mergesort")
    size = 2 + run_ends.shape[0] + extra
    pools = free_cpus.shape[0]
    times = np.empty(size, dtype=np.float64)
    cpus = np.empty((size, pools), dtype=np.int64)
    mem = np.empty((size, pools), dtype=np.int64)
    times[0] = now
    for p in range(pools):
        cpus[0, p] = free_cpus[p]
        mem[0, p] = free_mem[p]
    steps = 1
    for k in range(order.shape[0]):
        r = order[k]
        t = run_ends[r]
        if t != times[steps - 1]:
            _copy_step(times, cpus, mem, steps - 1, steps)
            times[steps] = t
            steps += 1
        job = run_jobs[r]
        for e in range(alloc_start[job], alloc_start[job] + alloc_len[job]):
            p = alloc_pool[e]
            cpus[steps - 1, p] += alloc_cpus[e]
            mem[steps - 1, p] += alloc_cpus[e] * job_mem[job]
    return times, cpus, mem, steps


@numba.njit(cache=True)
def _room(cpus: int, mem: int, per_cpu: int) -> int:
    """CPUs of a job needing ``per_cpu`` memory each that fit in ``cpus`` and ``mem``."""
    if per_cpu > 0:
        return min(cpus, mem // per_cpu)
    return cpus


@numba.njit(cache=True)
def _shaped(room: int, ppn: int) -> int:
    """What a pool (a node) offers a job that takes ``ppn`` CPUs on each node it uses
    (``ppn`` 0: any number): ``ppn`` or nothing."""
    if ppn > 0:
        return ppn if room >= ppn else 0
    return room


@numba.njit(cache=True)
def _window_end(times: np.ndarray, steps: int, i: int, duration: float) -> int:
    """First step at or after the end of a window starting at step ``i``."""
    end = times[i] + duration
    j = i + 1
    while j < steps and times[j] < end:
        j += 1
    return j


@numba.njit(cache=True)
def _window_room(
    cpus: np.ndarray,
    mem: np.ndarray,
    i: int,
    j: int,
    per_cpu: int,
    ppn: int,
    mask: np.ndarray,
    out: np.ndarray,
) -> int:
    """Per pool, the CPUs of the job free over steps ``i`` to ``j - 1`` (into ``out``);
    returns their sum."""
    total = 0
    for p in range(cpus.shape[1]):
        if not mask[p]:
            out[p] = 0
            continue
        best = _room(cpus[i, p], mem[i, p], per_cpu)
        for s in range(i + 1, j):
            best = min(best, _room(cpus[s, p], mem[s, p], per_cpu))
        out[p] = _shaped(best, ppn)
        total += out[p]
    return total


@numba.njit(cache=True)
def _fits_plan(
    cpus: np.ndarray, mem: np.ndarray, i: int, j: int, per_cpu: int, plan: np.ndarray
) -> bool:
    """Whether every pool keeps ``plan[p]`` CPUs of the job free over steps ``i``..``j-1``."""
    for p in range(plan.shape[0]):
        if plan[p]:
            for s in range(i, j):
                if _room(cpus[s, p], mem[s, p], per_cpu) < plan[p]:
                    return False
    return True


@numba.njit(cache=True)
def _step_room(
    cpus: np.ndarray, mem: np.ndarray, s: int, per_cpu: int, ppn: int, mask: np.ndarray
) -> int:
    total = 0
    for p in range(cpus.shape[1]):
        if mask[p]:
            total += _shaped(_room(cpus[s, p], mem[s, p], per_cpu), ppn)
    return total


@numba.njit(cache=True)
def _earliest(
    times: np.ndarray,
    cpus: np.ndarray,
    mem: np.ndarray,
    steps: int,
    need: int,
    per_cpu: int,
    ppn: int,
    mask: np.ndarray,
    duration: float,
    now_only: bool,
    room: np.ndarray,
) -> int:
    """First step at whose start the job fits for its whole ``duration`` (its room per pool
    left in ``room``); -1 if none, or, with ``now_only``, if it does not fit at step 0."""
    i = 0
    while i < steps:
        # a window containing a step whose total room is short cannot fit: skip past it
        j = i
        end = times[i] + duration
        blocked = -1
        while j < steps and (j == i or times[j] < end):
            if _step_room(cpus, mem, j, per_cpu, ppn, mask) < need:
                blocked = j
                break
            j += 1
        if blocked < 0:
            if cpus.shape[1] == 1:
                room[0] = need  # one pool: no short step means the whole window fits
                return i
            if _window_room(cpus, mem, i, j, per_cpu, ppn, mask, room) >= need:
                return i
        if now_only:
            return -1
        i = blocked + 1 if blocked >= 0 else i + 1
    return -1


@numba.njit(cache=True)
def _split(
    times: np.ndarray, cpus: np.ndarray, mem: np.ndarray, steps: int, t: float
) -> tuple[int, int]:
    """Make ``t`` the start of a step (copying the step that contains it). Returns the
    step's index and the new number of steps. ``t`` must not lie before the first step."""
    k = int(np.searchsorted(times[:steps], t))
    if k < steps and times[k] == t:
        return k, steps
    for s in range(steps, k, -1):
        _copy_step(times, cpus, mem, s - 1, s)
    _copy_step(times, cpus, mem, k - 1, k)
    times[k] = t
    return k, steps + 1


@numba.njit(cache=True)
def _take(
    times: np.ndarray,
    cpus: np.ndarray,
    mem: np.ndarray,
    steps: int,
    start: float,
    duration: float,
    per_cpu: int,
    plan: np.ndarray,
    sign: int,
) -> int:
    """Take (sign 1) or give back (sign -1) ``plan[p]`` CPUs of every pool from ``start``
    for ``duration``; returns the new number of steps."""
    i, steps = _split(times, cpus, mem, steps, start)
    j, steps = _split(times, cpus, mem, steps, start + duration)
    for p in range(plan.shape[0]):
        amount = sign * plan[p]
        if amount:
            for s in range(i, j):
                cpus[s, p] -= amount
            if per_cpu:
                for s in range(i, j):
                    mem[s, p] -= amount * per_cpu
    return steps


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
def _held_by(
    job: int,
    job_cpus: np.ndarray,
    job_queue: np.ndarray,
    job_user: np.ndarray,
    queue_user_jobs: np.ndarray,
    queue_user_cpus: np.ndarray,
    queue_pool: np.ndarray,
    user_jobs: np.ndarray,
    user_cpus: np.ndarray,
    queue_cpus: np.ndarray,
) -> int:
    """Which queue limit starting ``job`` now would exceed: 1 + its index in
    :data:`HELD_BY`, or 0 if none."""
    q = job_queue[job]
    u = job_user[job]
    c = job_cpus[job]
    if user_jobs[u, q] + 1 > queue_user_jobs[q]:
        return 1
    if user_cpus[u, q] + c > queue_user_cpus[q]:
        return 2
    if queue_cpus[q] + c > queue_pool[q]:
        return 3
    return 0


@numba.njit(cache=True)
def held_by_each(
    jobs: np.ndarray,
    job_cpus: np.ndarray,
    job_queue: np.ndarray,
    job_user: np.ndarray,
    queue_user_jobs: np.ndarray,
    queue_user_cpus: np.ndarray,
    queue_pool: np.ndarray,
    user_jobs: np.ndarray,
    user_cpus: np.ndarray,
    queue_cpus: np.ndarray,
) -> np.ndarray:
    """:func:`_held_by` for each of ``jobs`` alone, against the same running counts (for
    the engine's check of a start and for setting aside jobs already at a limit)."""
    held = np.zeros(jobs.shape[0], dtype=np.int8)
    for k in range(jobs.shape[0]):
        held[k] = _held_by(
            jobs[k],
            job_cpus,
            job_queue,
            job_user,
            queue_user_jobs,
            queue_user_cpus,
            queue_pool,
            user_jobs,
            user_cpus,
            queue_cpus,
        )
    return held


@numba.njit(cache=True)
def _count_start(
    job: int,
    job_cpus: np.ndarray,
    job_queue: np.ndarray,
    job_user: np.ndarray,
    user_jobs: np.ndarray,
    user_cpus: np.ndarray,
    queue_cpus: np.ndarray,
) -> None:
    q = job_queue[job]
    u = job_user[job]
    user_jobs[u, q] += 1
    user_cpus[u, q] += job_cpus[job]
    queue_cpus[q] += job_cpus[job]


@numba.njit(cache=True)
def _block_suitable(
    cpus: np.ndarray,
    mem: np.ndarray,
    times: np.ndarray,
    before: float,
    per_cpu: int,
    ppn: int,
    mask: np.ndarray,
    cap_cpus: np.ndarray,
    cap_mem: np.ndarray,
) -> None:
    """Greedy anti-starvation: nothing else may use, before ``before``, any pool of
    ``mask`` whose empty capacity could hold part of the job (paper 004, 3.1)."""
    for p in range(cpus.shape[1]):
        if mask[p] and _shaped(_room(cap_cpus[p], cap_mem[p], per_cpu), ppn) > 0:
            s = 0
            while times[s] < before:
                cpus[s, p] = 0
                mem[s, p] = 0
                s += 1


@numba.njit(cache=True)
def plan_pass(
    now: float,
    free_cpus: np.ndarray,
    free_mem: np.ndarray,
    run_ends: np.ndarray,
    run_jobs: np.ndarray,
    alloc_start: np.ndarray,
    alloc_len: np.ndarray,
    alloc_pool: np.ndarray,
    alloc_cpus: np.ndarray,
    job_mem: np.ndarray,
    job_cpus: np.ndarray,
    job_queue: np.ndarray,
    job_estimate: np.ndarray,
    job_ppn: np.ndarray,
    queue_masks: np.ndarray,
    job_user: np.ndarray,
    queue_user_jobs: np.ndarray,
    queue_user_cpus: np.ndarray,
    queue_pool: np.ndarray,
    running_user_jobs: np.ndarray,
    running_user_cpus: np.ndarray,
    running_queue_cpus: np.ndarray,
    pool_cap_cpus: np.ndarray,
    pool_cap_mem: np.ndarray,
    wait_jobs: np.ndarray,
    depth: int,
    backfill: bool,
    greedy: bool,
    promised: np.ndarray,
    promised_plans: np.ndarray,
    compress: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Place the waiting jobs ``wait_jobs`` (in priority order) into the profile of the
    running jobs ``run_jobs``.

    Returns each waiting job's planned start (``now``: start at once; later: a reservation;
    ``inf``: neither), for each the CPUs it takes from each pool (a row per job), and for
    each the queue limit that kept it from starting now while its queue's pools had as
    many CPUs free as it asks (1 + the limit's index in :data:`HELD_BY`; 0: none).
    ``depth`` is how many jobs may hold reservations; without ``backfill`` planning stops
    at the first job that cannot start now.

    Queue limits (per-user running jobs and CPUs, the queue's CPU pool; see
    :func:`_held_by`) are checked against the running jobs plus those this pass starts. A
    job a limit holds back is passed over: it neither starts nor holds a reservation, since
    its start depends on its own user's or queue's jobs ending, not on the profile.

    A reservation takes the CPUs expected to free soonest (the "optimized" anti-starvation
    of Klusáček et al., paper 004, 4.2); with ``greedy`` it also blocks, until it starts,
    every pool its queue may use that could hold part of it (their "historic" mechanism,
    3.1), so later jobs cannot backfill there.

    ``promised`` holds the reservation each job was given at the previous pass (``inf``:
    none) and ``promised_plans`` its pools (a row per job, all zero if unknown). Those are
    booked first, on the very pools promised, then each is moved to the earliest slot it fits in -
    never later than its own, which stays free for it - so a promise is never broken
    (Mu'alem and Feitelson's compression for conservative backfilling); only a running job
    that outlives its estimate can force a promise to move later. Jobs without a promise
    are placed after, in priority order. Without ``compress`` (nothing ended since the last
    pass, so no room can have appeared) the booked promises stay where they are.
    """
    n = wait_jobs.shape[0]
    pools = free_cpus.shape[0]
    starts = np.full(n, NEVER)
    plans = np.zeros((n, pools), dtype=np.int64)
    held = np.zeros(n, dtype=np.int8)
    user_jobs = running_user_jobs.copy()
    user_cpus = running_user_cpus.copy()
    queue_cpus = running_queue_cpus.copy()
    times, cpus, mem, steps = _build(
        now,
        free_cpus,
        free_mem,
        run_ends,
        run_jobs,
        alloc_start,
        alloc_len,
        alloc_pool,
        alloc_cpus,
        job_mem,
        4 * n,
    )
    room = np.zeros(pools, dtype=np.int64)
    reserved = 0
    # book the promises that still fit, where they were
    booked = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        if promised[k] < NEVER:
            job = wait_jobs[k]
            per_cpu = job_mem[job]
            mask = queue_masks[job_queue[job]]
            t = max(promised[k], now)
            i, steps = _split(times, cpus, mem, steps, t)
            j = _window_end(times, steps, i, job_estimate[job])
            if promised_plans[k].sum() == job_cpus[job] and _fits_plan(
                cpus, mem, i, j, per_cpu, promised_plans[k]
            ):
                plans[k] = promised_plans[k]
                fits = True
            else:  # a running job outlived its estimate: any pools will do at that time
                fits = (
                    _window_room(cpus, mem, i, j, per_cpu, job_ppn[job], mask, room)
                    >= job_cpus[job]
                )
                if fits:
                    _first_fit(room, job_cpus[job], plans[k])
            if fits:
                steps = _take(times, cpus, mem, steps, t, job_estimate[job], per_cpu, plans[k], 1)
                booked[k] = True
                starts[k] = t
    # compress: move each booked job to the earliest slot it fits, in priority order
    for k in range(n):
        if booked[k] and compress:
            job = wait_jobs[k]
            per_cpu = job_mem[job]
            duration = job_estimate[job]
            steps = _take(times, cpus, mem, steps, starts[k], duration, per_cpu, plans[k], -1)
            i = _earliest(
                times,
                cpus,
                mem,
                steps,
                job_cpus[job],
                per_cpu,
                job_ppn[job],
                queue_masks[job_queue[job]],
                duration,
                False,
                room,
            )
            _first_fit(room, job_cpus[job], plans[k])
            starts[k] = times[i]
            steps = _take(times, cpus, mem, steps, starts[k], duration, per_cpu, plans[k], 1)
    # a booked job due now starts unless a limit holds it (then it loses its promise)
    for k in range(n):
        if not booked[k]:
            continue
        job = wait_jobs[k]
        if starts[k] > now:
            reserved += 1
            continue
        limit = _held_by(
            job,
            job_cpus,
            job_queue,
            job_user,
            queue_user_jobs,
            queue_user_cpus,
            queue_pool,
            user_jobs,
            user_cpus,
            queue_cpus,
        )
        if limit:
            held[k] = limit
            steps = _take(
                times, cpus, mem, steps, now, job_estimate[job], job_mem[job], plans[k], -1
            )
            plans[k] = 0
            starts[k] = NEVER
        else:
            _count_start(job, job_cpus, job_queue, job_user, user_jobs, user_cpus, queue_cpus)
    # place the others
    for k in range(n):
        if booked[k]:
            continue
        job = wait_jobs[k]
        per_cpu = job_mem[job]
        ppn = job_ppn[job]
        mask = queue_masks[job_queue[job]]
        duration = job_estimate[job]
        limit = _held_by(
            job,
            job_cpus,
            job_queue,
            job_user,
            queue_user_jobs,
            queue_user_cpus,
            queue_pool,
            user_jobs,
            user_cpus,
            queue_cpus,
        )
        if limit:
            free = 0
            for p in range(pools):
                if mask[p]:
                    free += cpus[0, p]
            if free >= job_cpus[job]:
                held[k] = limit
            continue
        now_only = reserved >= depth
        i = _earliest(
            times, cpus, mem, steps, job_cpus[job], per_cpu, ppn, mask, duration, now_only, room
        )
        if i < 0 or (i > 0 and not backfill):
            if not backfill:
                break
            continue
        _first_fit(room, job_cpus[job], plans[k])
        starts[k] = times[i]
        steps = _take(times, cpus, mem, steps, starts[k], duration, per_cpu, plans[k], 1)
        if i > 0:
            reserved += 1
            if greedy:
                _block_suitable(
                    cpus, mem, times, starts[k], per_cpu, ppn, mask, pool_cap_cpus, pool_cap_mem
                )
        else:
            _count_start(job, job_cpus, job_queue, job_user, user_jobs, user_cpus, queue_cpus)
    return starts, plans, held


#: the leading arguments of the profile kernels: now, free CPUs and memory per pool, the
#: running jobs' estimated ends and numbers, where every started job runs (start and length
#: of its entries, their pools and CPUs), and every job's memory per CPU
ProfileState = tuple[
    float,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
]

#: what the kernels know of every job, after :data:`ProfileState`: CPUs, queue, runtime
#: estimate, CPUs per node (0: any spread) and, per queue, the pools it may use
JobArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: the queue limits, after :data:`JobArrays` in :func:`plan_pass`: every job's user (a
#: number from 0), per queue the most running jobs and CPUs of one user and the queue's CPU
#: pool, what is running per (user, queue) - jobs and CPUs - and CPUs per queue, then the
#: empty capacity (CPUs, memory) of every pool
LimitState = tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
]


def tiny_profile_state() -> ProfileState:
    """A one-pool, one-CPU machine with job 0 running until t=1: input for warm-ups."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return (0.0, one, one, np.ones(1), zero, zero, one, zero, one, zero)


def tiny_job_arrays() -> JobArrays:
    """One job of one CPU in queue 0, for warm-ups with :func:`tiny_profile_state`."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return (one, zero, np.ones(1), zero, np.ones((1, 1), dtype=np.bool_))


def no_limits(job_queue: np.ndarray, queues: int, pools: int) -> LimitState:
    """Limits that never hold a job back (one user), for callers without queue limits."""
    big = np.full(queues, np.iinfo(np.int64).max // 4, dtype=np.int64)
    counts = np.zeros((1, queues), dtype=np.int64)
    cap = np.full(pools, np.iinfo(np.int64).max // 4, dtype=np.int64)
    users = np.zeros(job_queue.shape[0], dtype=np.int64)
    return (users, big, big, big, counts, counts, np.zeros(queues, dtype=np.int64), cap, cap)


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny input, so that the first
    real pass is not charged the compilation."""
    zero = np.zeros(1, dtype=np.int64)
    jobs = tiny_job_arrays()
    limits = no_limits(jobs[1], 1, 1)
    held_by_each(zero, jobs[0], jobs[1], *limits[:7])
    plan_pass(
        *tiny_profile_state(),
        *jobs,
        *limits,
        zero,
        1,
        True,
        True,
        np.full(1, NEVER),
        np.zeros((1, 1), dtype=np.int64),
        True,
    )


@numba.njit(cache=True)
def room_beside_plan(
    now: float,
    free_cpus: np.ndarray,
    free_mem: np.ndarray,
    run_ends: np.ndarray,
    run_jobs: np.ndarray,
    alloc_start: np.ndarray,
    alloc_len: np.ndarray,
    alloc_pool: np.ndarray,
    alloc_cpus: np.ndarray,
    job_mem: np.ndarray,
    job_cpus: np.ndarray,
    job_queue: np.ndarray,
    job_estimate: np.ndarray,
    job_ppn: np.ndarray,
    queue_masks: np.ndarray,
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
    n = planned_jobs.shape[0]
    times, cpus, mem, steps = _build(
        now,
        free_cpus,
        free_mem,
        run_ends,
        run_jobs,
        alloc_start,
        alloc_len,
        alloc_pool,
        alloc_cpus,
        job_mem,
        2 * n + 2,
    )
    latest = now
    for k in range(n):
        if starts[k] < NEVER:
            job = planned_jobs[k]
            steps = _take(
                times, cpus, mem, steps, starts[k], job_estimate[job], job_mem[job], plans[k], 1
            )
            latest = max(latest, starts[k])
    free_now = 0
    for p in range(cpus.shape[1]):
        free_now += cpus[0, p]
    spare = -1  # the latest booked start begins a step, so some step counts
    for s in range(steps):
        if times[s] >= latest:
            total = 0
            for p in range(cpus.shape[1]):
                total += cpus[s, p]
            if spare < 0 or total < spare:
                spare = total
    fits = np.zeros(candidates.shape[0], dtype=np.bool_)
    room = np.zeros(cpus.shape[1], dtype=np.int64)
    for k in range(candidates.shape[0]):
        job = candidates[k]
        fits[k] = (
            _earliest(
                times,
                cpus,
                mem,
                steps,
                job_cpus[job],
                job_mem[job],
                job_ppn[job],
                queue_masks[job_queue[job]],
                job_estimate[job],
                True,
                room,
            )
            == 0
        )
    return free_now, spare, fits
