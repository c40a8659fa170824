"""The one backfill loop: waiting jobs placed in priority order into the availability
profile (:mod:`.profile`).

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

import numpy as np

from queuesim.common.jit import jit
from queuesim.core.profile import (
    NEVER,
    JobArrays,
    LimitState,
    PassRules,
    Profile,
    ProfileState,
    Promises,
    _ascending,
    _build,
    _changed_from,
    _close_step,
    _earliest,
    _earliest_on_pools,
    _first_fit,
    _fits_plan,
    _pool_room,
    _shaped,
    _split,
    _split_reclaiming,
    _take,
    _take_all,
    _window_end,
    _window_room,
    fitting_cpus,
    no_limits,
    no_promises,
    tiny_job_arrays,
    tiny_profile_state,
)

HELD_BY = ("max_running_per_user", "max_cpus_per_user", "cpu_pool")


@jit(borrowing=True)
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


@jit
def _held_by_each_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`held_by_each` in compiled code, its limits flattened."""
    candidates, job_cpus, job_queue = fields[0], fields[1], fields[2]
    limits = LimitState(*fields[3:])
    held = np.zeros(candidates.shape[0], dtype=np.int8)
    for k in range(candidates.shape[0]):
        held[k] = _held_by(candidates[k], job_cpus, job_queue, limits)
    return held


@jit(borrowing=True)
def record_held(
    held_times: np.ndarray, held_jobs: np.ndarray, jobs: np.ndarray, held: np.ndarray
) -> None:
    """Record that queue limits kept ``jobs`` from starting although they fit (``held``:
    1 + the limit's index in :data:`HELD_BY`, 0: not held): per limit, the times it did
    (``held_times``) and the jobs it held at least once (``held_jobs``, limits x jobs)."""
    for k in range(jobs.shape[0]):
        if held[k]:
            held_times[held[k] - 1] += 1
            held_jobs[held[k] - 1, jobs[k]] = True


@jit
def set_aside_held(
    order: np.ndarray,
    jobs: JobArrays,
    limits: LimitState,
    pool_free: np.ndarray,
    held_times: np.ndarray,
    held_jobs: np.ndarray,
) -> np.ndarray:
    """``order`` without the jobs a queue limit holds back already (their user's or queue's
    running jobs are at the limit); those whose pools have as many CPUs free
    (``pool_free``) as they ask are recorded as held (:func:`record_held`). Limits only
    tighten within a pass, so nothing set aside could have started."""
    kept = np.empty(order.shape[0], dtype=np.int64)
    held = np.zeros(order.shape[0], dtype=np.int8)
    n = 0
    for k in range(order.shape[0]):
        job = order[k]
        limit = _held_by(job, jobs.cpus, jobs.queue, limits)
        if limit == 0:
            kept[n] = job
            n += 1
            continue
        free = 0
        for p in range(pool_free.shape[0]):
            if jobs.masks[jobs.mask_of[job], p]:
                free += pool_free[p]
        if jobs.cpus[job] <= free:
            held[k] = limit
    record_held(held_times, held_jobs, order, held)
    return kept[:n]


@jit
def first_per_user(order: np.ndarray, user: np.ndarray, most: int, seen: np.ndarray) -> np.ndarray:
    """``order`` (jobs in priority order) keeping each user's first ``most`` jobs only
    (Slurm's bf_max_job_user); ``user``: every job's user number, ``seen``: zeros, one
    per user (left zero)."""
    kept = np.empty(order.shape[0], dtype=np.int64)
    n = 0
    for k in range(order.shape[0]):
        u = user[order[k]]
        if seen[u] < most:
            seen[u] += 1
            kept[n] = order[k]
            n += 1
    for k in range(order.shape[0]):
        seen[user[order[k]]] = 0
    return kept[:n]


@jit(borrowing=True)
def count_job(job: int, jobs: JobArrays, limits: LimitState, sign: int) -> None:
    """Count ``job`` as started (``sign`` 1) or ended (-1) against its user's and queue's
    limits."""
    q = jobs.queue[job]
    u = limits.user[job]
    limits.user_jobs[u, q] += sign
    limits.user_cpus[u, q] += sign * jobs.cpus[job]
    limits.queue_cpus[q] += sign * jobs.cpus[job]


@jit(borrowing=True)
def _block_suitable(
    prof: Profile,
    state: ProfileState,
    before: float,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
) -> None:
    """Greedy anti-starvation: nothing else may use, before ``before``, any pool of
    ``mask`` whose empty capacity could hold part of the job (paper 004, 3.1)."""
    for p in range(prof.cpus.shape[1]):
        room = fitting_cpus(state.capacity_cpus[p], state.capacity_mem[p], per_cpu)
        if gpn > 0 and state.capacity_gpus[p] < gpn:
            room = 0
        if mask[p] and _shaped(room, ppn) > 0:
            _changed_from(prof, 0)
            s = 0
            while prof.times[s] < before:
                _close_step(prof, s, p)
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


@jit
def _book_as_promised(pl: Planning, promises: Promises) -> int:
    """The common case of :func:`_book_promises`: every promise still fits where it was
    made (the profile lost only what ended since), so all are booked in one sweep
    (:func:`~.profile._take_all`) rather than one step split at a time - the same
    bookings, as a job fits the room its predecessors left whenever all fit together.
    Returns how many were booked, or -1, booking nothing, when some promise does not fit
    as made."""
    prof, state, jobs, _counts, waiting, _plan = pl
    promised = np.flatnonzero(promises.starts[: waiting.shape[0]] < NEVER)
    m = promised.shape[0]
    starts = np.empty(m)
    durations = np.empty(m)
    per_cpu = np.empty(m, dtype=np.int64)
    gpn = np.empty(m, dtype=np.int64)
    for e in range(m):
        k = promised[e]
        job = waiting[k]
        if promises.plans[k].sum() != jobs.cpus[job]:
            return -1
        starts[e] = max(promises.starts[k], state.now)
        durations[e] = jobs.estimate[job]
        per_cpu[e] = state.job_mem[job]
        gpn[e] = state.job_gpn[job]
    if not _take_all(prof, starts, durations, per_cpu, gpn, promises.plans[promised]):
        return -1
    return _mark_booked(waiting.shape[0], state.now, promises, pl.plan)


@jit(borrowing=True)
def _mark_booked(n: int, now: float, promises: Promises, plan: PassPlan) -> int:
    """Mark every promise of the first ``n`` waiting jobs as booked where it was made
    (from ``now`` if that has passed), the profile holding them already; returns how
    many there are. (Passed only what it reads: a call costs the references of every
    array it is given, and a conservative pass makes it every time.)"""
    m = 0
    for k in range(n):
        if promises.starts[k] < NEVER:
            for p in range(plan.plans.shape[1]):
                plan.plans[k, p] = promises.plans[k, p]
            plan.booked[k] = True
            plan.starts[k] = max(promises.starts[k], now)
            m += 1
    return m


@jit(borrowing=True)
def _book_promises(pl: Planning, promises: Promises) -> int:
    """Book the promises that still fit, on the pools promised (any pools of the job's
    queue if a running job outlived its estimate and those pools no longer have room);
    returns how many were booked. ``promises`` is empty when none was ever made."""
    prof, state, jobs, _counts, waiting, plan = pl
    booked = 0
    if promises.starts.shape[0] == 0:
        return booked
    at_once = _book_as_promised(pl, promises)
    if at_once >= 0:
        return at_once
    for k in range(waiting.shape[0]):
        if promises.starts[k] < NEVER:
            job = waiting[k]
            per_cpu = state.job_mem[job]
            mask = jobs.masks[jobs.mask_of[job]]
            t = max(promises.starts[k], state.now)
            i = _split(prof, t)
            j = _window_end(prof, i, jobs.estimate[job])
            promised = promises.plans[k]
            gpn = state.job_gpn[job]
            fits_promise = _fits_plan(prof, i, j, per_cpu, gpn, promised)
            if promised.sum() == jobs.cpus[job] and fits_promise:
                for p in range(promised.shape[0]):
                    plan.plans[k, p] = promised[p]
                fits = True
            else:  # a running job outlived its estimate: any pools will do at that time
                room = _window_room(prof, i, j, per_cpu, jobs.ppn[job], gpn, mask, plan.room)
                fits = room >= jobs.cpus[job]
                if fits:
                    _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
            if fits:
                _take(prof, t, jobs.estimate[job], per_cpu, gpn, plan.plans[k], 1)
                plan.booked[k] = True
                plan.starts[k] = t
                booked += 1
    return booked


#: how many of the longest-so-far stretches :class:`Stretches` keeps per CPU count
_STRETCHES = 32


class Stretches(NamedTuple):
    """What :func:`_compress` has learnt of a one-pool profile: per CPU count ``c``, the
    stretches of consecutive steps with at least ``c`` CPUs free that are longer than every
    stretch before them (first step, start and end times, and the step that ends each:
    the first with fewer free, or the number of steps), found by a scan that has reached
    step ``upto[c]``; ``number[c]`` -1: too many to keep, so not kept.

    A move of a job changes no step before some step (its new start, or its old one):
    ``changed[v]`` is that step for the ``v``-th change (``version[0]`` changes so far),
    and what is known for ``c`` holds for the profile as it was after change ``seen[c]``
    (-1: nothing known). Brought up to date (:func:`_refresh`), only the stretches that
    end before every step changed since are kept, and the scan resumes after them."""

    first: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    stop: np.ndarray
    number: np.ndarray
    upto: np.ndarray
    seen: np.ndarray
    version: np.ndarray
    changed: np.ndarray


@jit
def new_stretches(top: int, changes: int = 1) -> Stretches:
    """Room for CPU counts up to ``top`` and ``changes`` changes, nothing known yet."""
    return Stretches(
        np.empty((top + 1, _STRETCHES), dtype=np.int64),
        np.empty((top + 1, _STRETCHES)),
        np.empty((top + 1, _STRETCHES)),
        np.empty((top + 1, _STRETCHES), dtype=np.int64),
        np.zeros(top + 1, dtype=np.int64),
        np.zeros(top + 1, dtype=np.int64),
        np.full(top + 1, -1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.zeros(changes + 1, dtype=np.int64),
    )


@jit(borrowing=True)
def _changed(known: Stretches, step: int) -> None:
    """Record a change of the profile that leaves every step before ``step`` as it was
    (the same index, the same free CPUs)."""
    v = known.version[0] + 1
    if v >= known.changed.shape[0]:  # out of room: forget everything known
        known.seen[:] = -1
        v = 0
    known.changed[v] = step
    known.version[0] = v


@jit(inline="always")
def _refresh(cpus: np.ndarray, known: Stretches, need: int) -> None:
    """Bring what ``known`` holds for ``need`` CPUs to the profile as it is now: the
    stretches ending at or after the first step changed since are dropped, and the scan
    resumes at the start of the stretch that holds the step before that one (or at that
    step if it is in none): every stretch starting before there ends before it."""
    seen, now = known.seen[need], known.version[0]
    if seen == now:
        return
    known.seen[need] = now
    if seen < 0 or seen > now or known.number[need] < 0:
        known.number[need] = 0
        known.upto[need] = 0
        return
    low = known.changed[seen + 1]
    for v in range(seen + 2, now + 1):
        low = min(low, known.changed[v])
    if low > known.upto[need]:
        return  # the scan read no step at or after ``low``
    n = known.number[need]
    while n > 0 and known.stop[need, n - 1] >= low:
        n -= 1
    known.number[need] = n
    while low > 0 and cpus[low - 1, 0] >= need:
        low -= 1
    known.upto[need] = low


@jit(inline="always")
def _scan_stretches(
    times: np.ndarray, cpus: np.ndarray, steps: int, known: Stretches, need: int, at: int
) -> None:
    """Extend what ``known`` holds for ``need`` CPUs to every stretch starting before step
    ``at``, in the profile of ``steps`` steps at ``times`` with ``cpus`` free (its arrays
    passed rather than the profile: a call costs the references of every array given)."""
    _refresh(cpus, known, need)
    i = known.upto[need]
    while i < at and known.number[need] >= 0:
        if cpus[i, 0] < need:
            i += 1
            continue
        j = i + 1
        while j < steps and cpus[j, 0] >= need:
            j += 1
        end = times[j] if j < steps else NEVER
        n = known.number[need]
        if n == 0 or end - times[i] > known.end[need, n - 1] - known.begin[need, n - 1]:
            if n == _STRETCHES:
                known.number[need] = -1
                break
            known.first[need, n] = i
            known.begin[need, n] = times[i]
            known.end[need, n] = end
            known.stop[need, n] = j
            known.number[need] = n + 1
        i = j
    known.upto[need] = i


@jit(borrowing=True)
def _fits_before(prof: Profile, known: Stretches, need: int, duration: float, at: int) -> bool:
    """Whether a window of ``duration`` with ``need`` CPUs free throughout (one pool) lies
    wholly among the steps before step ``at``, where step ``at - 1`` has fewer free (so
    every stretch starting before ``at`` ends before it). A window ends where
    :func:`~.profile._earliest`'s does (it covers the steps starting before its end).

    The stretches longer than all before them stand for the rest (a window fits in a
    stretch only if it fits in the longest before it); each is tried as the scan does."""
    _scan_stretches(prof.times, prof.cpus, prof.size[0], known, need, at)
    n = known.number[need]
    if n >= 0:
        for r in range(n):
            if known.first[need, r] >= at:
                break
            if known.end[need, r] >= known.begin[need, r] + duration:
                return True
        # a stretch that is not the longest so far, yet fits where the longer does not,
        # takes a rounding of the sums: only then is the scan repeated in full
        if n == 0 or known.first[need, 0] >= at:
            return False
        r = 0
        while r + 1 < n and known.first[need, r + 1] < at:
            r += 1
        length = known.end[need, r] - known.begin[need, r]
        if length < duration * (1.0 - 1e-12) - 1e-9:
            return False
    times, cpus = prof.times, prof.cpus
    i = 0
    while i < at:
        if cpus[i, 0] < need:
            i += 1
            continue
        j = i + 1
        while j < at and cpus[j, 0] >= need:
            j += 1
        if times[j] >= times[i] + duration:
            return True
        i = j + 1
    return False


@jit(borrowing=True)
def _stays(
    prof: Profile, most: np.ndarray, known: Stretches, start: float, need: int, duration: float
) -> bool:
    """Whether a job asking only ``need`` CPUs of a one-pool profile, booked from ``start``
    for ``duration``, would stay there if taken out and placed at its earliest.

    It moves exactly when it fits somewhere earlier: a window reaching into its own slot
    fits just when the step before ``start`` has ``need`` CPUs free (the rest of the window
    is its own), and a window wholly before it (:func:`_fits_before`) only if one of the
    steps before it (``most``: the running maximum) has as many free."""
    at = int(np.searchsorted(prof.times[: prof.size[0]], start))
    if at == 0:
        return True
    if prof.cpus[at - 1, 0] >= need:
        return False
    if most[at - 1] < need:
        return True
    return not _fits_before(prof, known, need, duration, at)


@jit(borrowing=True)
def _most_upto(prof: Profile, most: np.ndarray, valid: int, at: int) -> int:
    """Make ``most`` (the running maximum of the free CPUs of a one-pool profile, valid
    for its first ``valid`` steps) valid for its first ``at``; returns how many are."""
    for s in range(valid, at):
        most[s] = prof.cpus[s, 0] if s == 0 else max(most[s - 1], prof.cpus[s, 0])
    return max(valid, at)


@jit(inline="always")
def _slot_before(
    times: np.ndarray,
    cpus: np.ndarray,
    steps: int,
    known: Stretches,
    at: int,
    need: int,
    duration: float,
) -> int:
    """Where a job asking only ``need`` CPUs of a one-pool profile, booked from step
    ``at`` for ``duration``, would go if taken out and placed at its earliest
    (:func:`~.profile._earliest`): -1 where it is (see :func:`_stays`); -2 not known here
    (too many stretches, or a sum whose rounding decides); else the step it would start
    at, which lies before ``at`` (so taking the job out leaves it where it is).

    The earliest window wholly before the job starts its first stretch (of consecutive
    steps with ``need`` free) long enough, which is a stretch longer than all before it
    (:class:`Stretches`); a window reaching into the job's own slot fits just from the
    start of the stretch that holds step ``at - 1``. Asked only where the job might move:
    ``at`` > 0 and ``need`` CPUs free at step ``at - 1`` or at some step before it (the
    running maximum: :func:`_compress` tells the other stays itself)."""
    reach = cpus[at - 1, 0] >= need
    _scan_stretches(times, cpus, steps, known, need, at)
    n = known.number[need]
    if n < 0:
        return -2
    band = duration * (1.0 - 1e-12) - 1e-9
    best = -1
    longest = -1.0  # the longest stretch before the one that fits (or before ``at``)
    for r in range(n):
        if known.first[need, r] >= at:
            break
        if known.end[need, r] >= known.begin[need, r] + duration:
            best = known.first[need, r]
            break
        longest = known.end[need, r] - known.begin[need, r]
    # a stretch that is not the longest so far, yet fits where the longer does not, takes
    # a rounding of the sums: the search decides then
    if longest >= band:
        return -2
    if reach:
        b = at - 1
        while b > 0 and cpus[b - 1, 0] >= need:
            b -= 1
        if best < 0 or b < best:
            best = b
    return best


#: how many job shapes :class:`ShapeFits` keeps at once
_SHAPES = 8


class ShapeFits(NamedTuple):
    """What :func:`_compress` has learnt, on many pools, of where a job of each of a few
    shapes (CPUs, memory per CPU, CPUs per node, GPUs per node, pools, estimate) fits in
    the profile as it stands, every booked job in it. Row ``r`` holds for the profile's
    version ``version[r]`` (``version[-1]`` counts the changes of the profile; ``slot[0]``
    is the row to reuse next): no window starting before time ``clear[r]`` fits, and the
    first that does starts at ``fit[r]`` (``inf``: none found yet). Times rather than
    steps, as a job taken out and put back where it was splits steps without changing
    what is free."""

    shape: np.ndarray
    duration: np.ndarray
    clear: np.ndarray
    fit: np.ndarray
    version: np.ndarray
    slot: np.ndarray


@jit
def new_shape_fits() -> ShapeFits:
    """Nothing learnt, for the profile's version 0."""
    version = np.full(_SHAPES + 1, -1, dtype=np.int64)
    version[_SHAPES] = 0
    return ShapeFits(
        np.zeros((_SHAPES, 5), dtype=np.int64),
        np.zeros(_SHAPES),
        np.zeros(_SHAPES),
        np.full(_SHAPES, NEVER),
        version,
        np.zeros(1, dtype=np.int64),
    )


@jit
def _fits_earlier_as_is(
    prof: Profile, fits: ShapeFits, shape: np.ndarray, duration: float, mask: np.ndarray, at: int
) -> bool:
    """Whether a job of ``shape`` (need, memory per CPU, CPUs per node, GPUs per node,
    mask row; see :class:`ShapeFits`) for ``duration`` fits on the pools of ``mask`` in a
    window of the profile as it stands that starts before step ``at``. Searches only the
    windows no job of the same shape had searched since the profile last changed."""
    version = fits.version[_SHAPES]
    r = -1
    for q in range(_SHAPES):
        if fits.duration[q] == duration and fits.version[q] >= 0:
            same = True
            for f in range(5):
                if fits.shape[q, f] != shape[f]:
                    same = False
                    break
            if same:
                r = q
                break
    if r < 0:
        r = fits.slot[0]
        fits.slot[0] = (r + 1) % _SHAPES
        fits.shape[r, :] = shape
        fits.duration[r] = duration
        fits.version[r] = -1
    if fits.version[r] != version:
        fits.version[r] = version
        fits.clear[r] = prof.times[0]
        fits.fit[r] = NEVER
    before = prof.times[at] if at < prof.size[0] else NEVER
    if fits.fit[r] < NEVER:
        return bool(fits.fit[r] < before)
    if fits.clear[r] >= before:
        return False
    first = _step_of(prof.times, prof.size[0], fits.clear[r])
    room = np.empty(prof.cpus.shape[1], dtype=np.int64)
    need, per_cpu, ppn, gpn = shape[0], shape[1], shape[2], shape[3]
    i = _earliest_on_pools(prof, need, per_cpu, ppn, gpn, mask, duration, room, first, at)
    if i >= 0:
        fits.fit[r] = prof.times[i]
        return True
    fits.clear[r] = before
    return False


@jit
def _may_start_earlier(
    prof: Profile,
    fits: ShapeFits,
    shape: np.ndarray,
    duration: float,
    mask: np.ndarray,
    plan: np.ndarray,
    at: int,
) -> bool:
    """Whether a booked job on many pools (``shape`` as :class:`ShapeFits` has it, taking
    ``plan[p]`` CPUs of pool ``p`` from step ``at`` > 0, the step at or after its start)
    might start earlier if taken out: False only where it could not.

    A window starting before the job's slot either ends before it, where taking the job
    out changes nothing, or overlaps it and so covers the instant before it, in step
    ``at - 1``, which taking the job out does not change either. In the first case the
    window fits the profile as it stands (:func:`_fits_earlier_as_is`); in the second,
    unless it fits as it stands, the job's own pools must give it something at step
    ``at - 1``: with none of them offering a CPU of the job there, every window over it
    offers no more than as it stands."""
    per_cpu, ppn, gpn = shape[1], shape[2], shape[3]
    for p in range(plan.shape[0]):
        if plan[p] > 0 and _shaped(_pool_room(prof, at - 1, p, per_cpu, gpn), ppn) > 0:
            return True
    return _fits_earlier_as_is(prof, fits, shape, duration, mask, at)


@jit(inline="always")
def _step_of(times: np.ndarray, steps: int, t: float) -> int:
    """The first of the first ``steps`` steps (``times`` ascending) starting at or after
    ``t`` (``steps`` if none): ``np.searchsorted`` without the view of a slice."""
    lo, hi = 0, steps
    while lo < hi:
        mid = (lo + hi) >> 1
        if times[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _compress(pl: Planning) -> None:
    """Move each booked job, in priority order, to the earliest slot it fits in if that
    is earlier than its own (Mu'alem and Feitelson's compression): a job that cannot start
    earlier keeps its slot and its pools.

    On many pools, a job is taken out and searched for only where it might start earlier
    (:func:`_may_start_earlier`): where its own pools offer it nothing just before its
    start, only a window that fits the profile as it stands could take it earlier, and
    what the search for one shape of job learns is kept for the next job of that shape
    until a move changes the profile (:class:`ShapeFits`). In a burst of the same job
    submitted hundreds of times, most booked jobs stay, and each used to cost a search
    over its whole window on every pool.

    On one pool, a job asking only CPUs is placed from what the running maximum of the
    free CPUs and the stretches of free CPUs say (:func:`_slot_before`), without a search
    from the front: left where it is if it would stay there, else moved to the start of
    the first stretch it fits in. A move changes no step before its new start (or its old
    one), so both are kept for the steps before it and learnt again after it only as far
    as a later job's start asks: in a deep queue jobs move a little, in priority order,
    so each learns the few steps between the last move and its own start. Such a move's
    new end takes its step from a boundary left behind nearby where it can
    (:func:`~.profile._split_reclaiming`) rather than moving every later step."""
    prof, state, jobs, _counts, waiting, plan = pl
    one_pool = prof.cpus.shape[1] == 1
    most = np.empty(prof.times.shape[0], dtype=np.int64)  # valid up to most_valid
    widest = 0
    booked = 0
    for k in range(waiting.shape[0]):
        if plan.booked[k]:
            widest = max(widest, jobs.cpus[waiting[k]])
            booked += 1
    known = new_stretches(widest if one_pool else 0, booked)
    fits = new_shape_fits()
    shape = np.empty(5, dtype=np.int64)
    _compress_booked(prof, state, jobs, waiting, plan, most, known, fits, shape)


@jit(borrowing=True)
def _compress_booked(
    prof: Profile,
    state: ProfileState,
    jobs: JobArrays,
    waiting: np.ndarray,
    plan: PassPlan,
    most: np.ndarray,
    known: Stretches,
    fits: ShapeFits,
    shape: np.ndarray,
) -> None:
    """:func:`_compress`'s sweep of the booked jobs, in the scratch it made (``most``, the
    running maximum of the free CPUs; ``known``, ``fits``, ``shape``)."""
    one_pool = prof.cpus.shape[1] == 1
    most_valid = 0
    for k in range(waiting.shape[0]):
        if plan.booked[k]:
            job = waiting[k]
            per_cpu = state.job_mem[job]
            duration = jobs.estimate[job]
            gpn = state.job_gpn[job]
            need, ppn = jobs.cpus[job], jobs.ppn[job]
            before = plan.starts[k]
            at = _step_of(prof.times, prof.size[0], before)
            slot = -2
            on_pool = jobs.masks[jobs.mask_of[job], 0]
            simple = one_pool and per_cpu == 0 and gpn == 0 and ppn == 0 and on_pool
            if simple:
                most_valid = _most_upto(prof, most, most_valid, at)
                # the common stay, told by the step before and the running maximum, is
                # tested here: a call costs the references of every array it is passed
                if at == 0 or (prof.cpus[at - 1, 0] < need and most[at - 1] < need):
                    continue
                slot = _slot_before(prof.times, prof.cpus, prof.size[0], known, at, need, duration)
                if slot == -1 or (slot == -2 and _stays(prof, most, known, before, need, duration)):
                    continue
            elif not one_pool:
                if at == 0:
                    continue  # nothing is earlier: it keeps its slot and its pools
                shape[0], shape[1], shape[2], shape[3] = need, per_cpu, ppn, gpn
                shape[4] = jobs.mask_of[job]
                mask = jobs.masks[shape[4]]
                if not _may_start_earlier(prof, fits, shape, duration, mask, plan.plans[k], at):
                    continue
            if simple:
                # taken out: a boundary of its slot the last pass's merge dropped (a job
                # of the same CPUs starting where it ends) is made again from one left
                # behind nearby, no step before ``at`` moving
                i = _split_reclaiming(prof, before, at - 1)
                j = _split_reclaiming(prof, before + duration, i)
                for s in range(i, j):
                    prof.cpus[s, 0] += plan.plans[k, 0]
                _changed_from(prof, i)
            else:
                _take(prof, before, duration, per_cpu, gpn, plan.plans[k], -1)
            if slot >= 0:
                # at the start of a step, and only CPUs of the one pool: the step its end
                # needs is taken, where it can be, from a boundary left behind nearby
                i = slot
                plan.plans[k, 0] = need
                plan.starts[k] = prof.times[i]
                j = _split_reclaiming(prof, plan.starts[k] + duration, i)
                for s in range(i, j):
                    prof.cpus[s, 0] -= need
                _changed_from(prof, i)
            else:
                mask = jobs.masks[jobs.mask_of[job]]
                i = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, False, plan.room)
                if prof.times[i] < before:
                    _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
                    plan.starts[k] = prof.times[i]
                    fits.version[_SHAPES] += 1
                # else back where it was, on the pools it had: a job moves only earlier
                _take(prof, plan.starts[k], duration, per_cpu, gpn, plan.plans[k], 1)
            # taken out and back in (even where it stays, steps may split): no step before
            # the earlier of its two starts changed
            low = min(at, i)
            most_valid = min(most_valid, low)
            if one_pool:
                _changed(known, low)


@jit(borrowing=True)
def _due_now(n: int, now: float, plan: PassPlan) -> int:
    """How many of the first ``n`` waiting jobs are booked for later than ``now`` (what
    :func:`_start_due_promises` returns when no booked job is due now, without its call
    on the whole pass)."""
    later = 0
    for k in range(n):
        if plan.booked[k] and plan.starts[k] > now:
            later += 1
    return later


@jit(borrowing=True)
def _start_due_promises(pl: Planning, booked: int) -> int:
    """A booked job due now starts unless a limit holds it (then it loses its promise);
    returns how many booked jobs hold a reservation for later."""
    prof, state, jobs, counts, waiting, plan = pl
    reserved = 0
    for k in range(waiting.shape[0] if booked else 0):
        if not plan.booked[k]:
            continue
        job = waiting[k]
        if plan.starts[k] > state.now:
            reserved += 1
            continue
        limit = _held_by(job, jobs.cpus, jobs.queue, counts)
        if limit:
            plan.held[k] = limit
            per_cpu, gpn = state.job_mem[job], state.job_gpn[job]
            _take(prof, state.now, jobs.estimate[job], per_cpu, gpn, plan.plans[k], -1)
            for p in range(plan.plans.shape[1]):
                plan.plans[k, p] = 0
            plan.starts[k] = NEVER
        else:
            count_job(job, jobs, counts, 1)
    return reserved


@jit
def _limits_allow_from(pl: Planning, job: int) -> float:
    """The earliest time the queue limits let ``job`` start, as its user's and its queue's
    jobs running now (and those this pass starts) are expected to end; ``NEVER`` if their
    ends never free enough. Jobs reserved for later are not counted."""
    _, state, jobs, counts, waiting, plan = pl
    q, u, c = jobs.queue[job], counts.user[job], jobs.cpus[job]
    # how many jobs, CPUs of the user's and CPUs of the queue's must end first
    user_jobs = counts.user_jobs[u, q] + 1 - counts.user_jobs_cap[q]
    user_cpus = counts.user_cpus[u, q] + c - counts.user_cpus_cap[q]
    queue_cpus = counts.queue_cpus[q] + c - counts.queue_pool[q]
    run_ends, run_jobs = state.run_ends, state.run_jobs
    n_run = run_jobs.shape[0]
    in_order = _ascending(run_ends)
    # the jobs of the queue this pass starts (few), in order of their ends, walked beside
    # the running jobs (in that order already in the compiled run: no sort of them all);
    # jobs ending together are taken in any order, which returns the same time
    n = 0
    for k in range(waiting.shape[0]):
        if plan.starts[k] == state.now and jobs.queue[waiting[k]] == q:
            n += 1
    if not in_order:
        n += n_run
    ends = np.empty(n, dtype=np.float64)
    others = np.empty(n, dtype=np.int64)
    n = 0
    for k in range(waiting.shape[0]):
        other = waiting[k]
        if plan.starts[k] == state.now and jobs.queue[other] == q:
            ends[n], others[n] = state.now + jobs.estimate[other], other
            n += 1
    for r in range(0 if in_order else n_run):
        if jobs.queue[run_jobs[r]] == q:
            ends[n], others[n] = run_ends[r], run_jobs[r]
            n += 1
    order = np.argsort(ends[:n], kind="mergesort")
    r = 0  # the next running job (in order)
    m = 0  # the next of ``order``
    while m < n or (in_order and r < n_run):
        if in_order and r < n_run and (m == n or run_ends[r] <= ends[order[m]]):
            other, end = run_jobs[r], run_ends[r]
            r += 1
            if jobs.queue[other] != q:
                continue
        else:
            other, end = others[order[m]], ends[order[m]]
            m += 1
        if counts.user[other] == u:
            user_jobs -= 1
            user_cpus -= jobs.cpus[other]
        queue_cpus -= jobs.cpus[other]
        if user_jobs <= 0 and user_cpus <= 0 and queue_cpus <= 0:
            return float(end)
    return NEVER


@jit(borrowing=True)
def _free_now(prof: Profile) -> int:
    """CPUs free now (the profile's first step) over all pools."""
    free = 0
    for p in range(prof.cpus.shape[1]):
        free += prof.cpus[0, p]
    return free


@jit(borrowing=True)
def _stop_queue(prof: Profile, mask: np.ndarray, stopped: np.ndarray, queue: int) -> None:
    """Slurm's main scheduler after a job of ``queue`` could not start: no later job of
    the queue is tried, and no later job may use the pools of ``mask`` (the nodes the
    job could use: its partition's, less those its requirements exclude)."""
    stopped[queue] = True
    _changed_from(prof, 0)
    for p in range(prof.cpus.shape[1]):
        if mask[p]:
            for s in range(prof.size[0]):
                _close_step(prof, s, p)


# inlined into :func:`plan_with`, its one caller
@jit(inline="always")
def _place_others(
    pl: Planning, rules: PassRules, reserved: int, min_cpus: int, stopped: np.ndarray
) -> int:
    """Place the jobs without a booked promise, in priority order: start now, reserve the
    earliest slot (while fewer than ``rules.depth`` jobs hold one), or pass over.

    Once every reservation the pass may give is given and fewer CPUs are free now than
    ``min_cpus`` (no waiting job asks for fewer), no later job can start, be held back
    while it fits, or reserve: the scan stops there, so a pass over a deep queue costs
    the jobs it can place, not the queue's length. Returns how many jobs were scanned."""
    prof, state, jobs, counts, waiting, plan = pl
    free_now = _free_now(prof)
    for k in range(waiting.shape[0]):
        may_reserve = reserved < rules.depth and k < rules.reserve_before
        if (not may_reserve or rules.starts_only) and free_now < min_cpus:
            return k
        if plan.booked[k]:
            continue
        job = waiting[k]
        if rules.stop_queue and stopped[jobs.queue[job]]:
            continue
        per_cpu = state.job_mem[job]
        mask = jobs.masks[jobs.mask_of[job]]
        first = 0
        limit = _held_by(job, jobs.cpus, jobs.queue, counts)
        if limit:
            free = 0
            for p in range(prof.cpus.shape[1]):
                if mask[p]:
                    free += prof.cpus[0, p]
            if free >= jobs.cpus[job]:
                plan.held[k] = limit
            if not rules.reserve_limited or not may_reserve:
                continue
            allowed = _limits_allow_from(pl, job)
            if allowed == NEVER:
                continue
            first = _split(prof, allowed)
        now_only = not may_reserve
        need, ppn, duration = jobs.cpus[job], jobs.ppn[job], jobs.estimate[job]
        gpn = state.job_gpn[job]
        i = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, now_only, plan.room, first)
        if i > 0 and prof.times[i] > state.now + rules.horizon:
            i = -1  # beyond the planning window: no reservation
        if i < 0 or (i > 0 and not rules.backfill):
            if not rules.backfill:
                return k + 1  # FCFS: no job after the first that cannot start is looked at
            if rules.stop_queue:
                _stop_queue(prof, mask, stopped, jobs.queue[job])
                free_now = _free_now(prof)
            continue
        _first_fit(plan.room, jobs.cpus[job], plan.plans[k])
        plan.starts[k] = prof.times[i]
        _take(prof, plan.starts[k], duration, per_cpu, gpn, plan.plans[k], 1)
        if i > 0:
            reserved += 1
            if rules.greedy:
                _block_suitable(prof, state, plan.starts[k], per_cpu, ppn, gpn, mask)
        else:
            count_job(job, jobs, counts, 1)
        free_now = _free_now(prof)
    return int(waiting.shape[0])


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
    backfilling; a job that cannot start earlier keeps its slot and its pools); only a
    running job that outlives its estimate can force a promise to move later. Jobs
    without a promise are placed after, in priority order. Without ``rules.compress``
    (nothing ended since the last pass, so no room can have appeared) the booked promises
    stay where they are.
    """
    min_cpus = int(jobs.cpus[waiting].min()) if waiting.size else 0
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = _plan_pass_entry(
        *state, *jobs, *limits, waiting, *rules, *promises, min_cpus
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
_PROMISES = _RULES + len(Promises._fields)


@jit
def _plan_pass_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`plan_pass` in compiled code, its structures flattened."""
    state = ProfileState(*fields[:_STATE])
    jobs = JobArrays(*fields[_STATE:_JOBS])
    limits = LimitState(*fields[_JOBS:_LIMITS])
    waiting = fields[_WAITING]
    rules = PassRules(*fields[_RULES_FIRST:_RULES])
    promises = Promises(*fields[_RULES:_PROMISES])
    min_cpus = fields[_PROMISES]
    plan = new_pass_plan(waiting.shape[0], state.free_cpus.shape[0])
    prof = _build(state, 4 * waiting.shape[0])
    plan_into(prof, state, jobs, limits, waiting, rules, promises, plan, min_cpus)
    return plan.starts, plan.plans, plan.held


@jit
def new_pass_plan(n: int, pools: int) -> PassPlan:
    """What a pass decides for ``n`` waiting jobs, nothing decided yet."""
    return PassPlan(
        np.full(n, NEVER),
        np.zeros((n, pools), dtype=np.int64),
        np.zeros(n, dtype=np.int8),
        np.zeros(n, dtype=np.bool_),
        np.zeros(pools, dtype=np.int64),
    )


@jit
def plan_into(
    prof: Profile,
    state: ProfileState,
    jobs: JobArrays,
    limits: LimitState,
    waiting: np.ndarray,
    rules: PassRules,
    promises: Promises | None,
    plan: PassPlan,
    min_cpus: int,
    booked_already: bool = False,
) -> int:
    """The pass of :func:`plan_pass` in the profile ``prof`` of the running jobs (made by
    :func:`~.profile._build` or :func:`~.profile.fill`, with room for 4 more steps per
    waiting job), into ``plan`` (nothing decided in its first ``waiting.shape[0]`` rows).
    ``min_cpus``: no waiting job asks for fewer CPUs (the scan stops once fewer are free
    and no reservation is left to give). With ``booked_already``, ``prof`` holds every
    promise too, where it was made (:mod:`.kept_profile`: all of them fit). Returns how
    many waiting jobs it decided for; the rest neither start nor reserve."""
    counts = new_pass_counts(limits)
    copy_counts(limits, counts)
    stopped = np.empty(limits.user_jobs_cap.shape[0] if rules.stop_queue else 0, np.bool_)
    return plan_with(
        prof, state, jobs, counts, waiting, rules, promises, plan, min_cpus, booked_already, stopped
    )


@jit(borrowing=True)
def plan_with(
    prof: Profile,
    state: ProfileState,
    jobs: JobArrays,
    counts: LimitState,
    waiting: np.ndarray,
    rules: PassRules,
    promises: Promises | None,
    plan: PassPlan,
    min_cpus: int,
    booked_already: bool,
    stopped: np.ndarray,
) -> int:
    """:func:`plan_into` in the limit counts ``counts`` (those of the running jobs; the
    pass adds the jobs it starts) and the scratch ``stopped`` (by queue; empty unless
    ``rules.stop_queue``; cleared here), made by the caller: the compiled run makes them
    once, not at every pass (:func:`copy_counts`)."""
    if rules.stop_queue:
        for q in range(stopped.shape[0]):
            stopped[q] = False
    pl = Planning(prof, state, jobs, counts, waiting, plan)
    # without promises (every policy but conservative) nothing is booked or due: the
    # calls are skipped, each costing the reference counts of every array of ``pl``; and
    # when ``promises`` is None they are not even compiled
    reserved = 0
    if promises is not None:
        booked = 0
        if booked_already:
            booked = _mark_booked(waiting.shape[0], state.now, promises, plan)
        elif promises.starts.shape[0]:
            booked = _book_promises(pl, promises)
        if rules.compress and booked:
            _compress(pl)
        if booked:
            reserved = _due_now(waiting.shape[0], state.now, plan)
            if reserved < booked:  # a promise is due now: it starts unless a limit holds it
                reserved = _start_due_promises(pl, booked)
    return _place_others(pl, rules, reserved, min_cpus, stopped)


@jit
def new_pass_counts(limits: LimitState) -> LimitState:
    """Room for what a pass counts against ``limits``: their users and caps, and arrays of
    its own (not filled: :func:`copy_counts`) for the running jobs and CPUs it counts."""
    return LimitState(
        limits.user,
        limits.user_jobs_cap,
        limits.user_cpus_cap,
        limits.queue_pool,
        np.empty_like(limits.user_jobs),
        np.empty_like(limits.user_cpus),
        np.empty_like(limits.queue_cpus),
    )


@jit(borrowing=True)
def copy_counts(limits: LimitState, counts: LimitState) -> None:
    """Copy what counts against the limits now (``limits``' running jobs and CPUs per
    user and queue, CPUs per queue) into ``counts``, of the same shapes."""
    _copy_flat(limits.user_jobs.reshape(-1), counts.user_jobs.reshape(-1))
    _copy_flat(limits.user_cpus.reshape(-1), counts.user_cpus.reshape(-1))
    _copy_flat(limits.queue_cpus, counts.queue_cpus)


@jit(inline="always")
def _copy_flat(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[:] = src`` for two one-dimensional arrays of one length, as a plain loop
    (one the compiler vectorises; numba's slice assignment may allocate a copy)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


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


@jit
def _room_beside_plan_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`room_beside_plan` in compiled code, its structures flattened."""
    state = ProfileState(*fields[:_STATE])
    jobs = JobArrays(*fields[_STATE:_JOBS])
    planned_jobs, starts, plans, candidates = fields[_JOBS:]
    n = planned_jobs.shape[0]
    prof = _build(state, 2 * n + 2)
    latest = state.now
    for k in range(n):
        if starts[k] < NEVER:
            job = planned_jobs[k]
            per_cpu, gpn = state.job_mem[job], state.job_gpn[job]
            _take(prof, starts[k], jobs.estimate[job], per_cpu, gpn, plans[k], 1)
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
        mask = jobs.masks[jobs.mask_of[job]]
        duration = jobs.estimate[job]
        gpn = state.job_gpn[job]
        fits[k] = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, True, room) == 0
    return free_now, spare, fits


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny input, so that the first
    real pass is not charged the compilation."""
    zero = np.zeros(1, dtype=np.int64)
    jobs = tiny_job_arrays()
    limits = no_limits(jobs.queue, 1)
    held_by_each(zero, jobs.cpus, jobs.queue, limits)
    first_per_user(zero, zero, 1, zero.copy())
    rules = PassRules(1, True, True, True, False, 1)
    plan_pass(tiny_profile_state(), jobs, limits, zero, rules, no_promises(1))


#: the kernels a pass-by-pass run enters from Python (see :mod:`.kernels`)
KERNELS = (_plan_pass_entry, _held_by_each_entry, _room_beside_plan_entry, first_per_user)
