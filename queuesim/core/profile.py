"""The availability profile: free resources over future time, the structures the compiled
kernels read, and the operations on a profile they share.

The profile is a step function over time and *pools* of resources. ``times[s]`` is the
start of step ``s``; ``cpus[s, p]`` and ``mem[s, p]`` are the CPUs and memory free in pool
``p`` from ``times[s]`` until ``times[s + 1]`` (the last step lasts for ever). A pool is a
node when the site models memory (a job's share on each node must fit that node), and a
whole cluster otherwise (a job's CPUs may come from any nodes of a cluster, so counting
them per cluster is exact - and a one-cluster site has a single column, which keeps the
common case as fast as a plain CPU count).

The profile is built from the running jobs' *estimated* ends; :mod:`.planning` places the
waiting jobs into it.

The functions are compiled with numba: a what-if study replays hundreds of thousands of
jobs, and each pass may place a hundred waiting jobs in a profile of a few hundred steps.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

from queuesim.common.jit import jit

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
    #: every job's memory per CPU, and GPUs on each node it uses (0: none; a job with
    #: GPUs always has a ``ppn``)
    job_mem: np.ndarray
    job_gpn: np.ndarray
    #: the capacity (CPUs, memory) of every pool when empty
    capacity_cpus: np.ndarray
    capacity_mem: np.ndarray
    #: GPUs free now and when empty, per pool (empty arrays when the site has no GPUs)
    free_gpus: np.ndarray
    capacity_gpus: np.ndarray


class JobArrays(NamedTuple):
    """What the kernels know of every job, by job number."""

    cpus: np.ndarray
    queue: np.ndarray
    #: the runtime the scheduler plans with
    estimate: np.ndarray
    #: CPUs on each node it uses (0: any spread)
    ppn: np.ndarray
    #: the pools a job may use: row ``mask_of[job]`` of ``masks`` (its queue's clusters
    #: and those with the node properties and GPUs it requires; rows x pools, bool)
    masks: np.ndarray
    mask_of: np.ndarray


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
    #: whether a job a queue limit holds back may hold a reservation, from the time its
    #: user's or queue's running jobs are expected to have freed enough (paper 004's
    #: anti-starvation, whatever keeps the job waiting)
    reserve_limited: bool = False
    #: only jobs at places before this one in the order may hold a reservation (the PBS
    #: scheduler without strict_ordering reserves only for the starving jobs, which lead
    #: its order); later jobs start now or are passed over
    reserve_before: int = 2**62
    #: Slurm's main scheduler: a job that cannot start now stops its queue for the rest of
    #: the pass, and the pools it could use are closed to later jobs (job_scheduler.c)
    stop_queue: bool = False
    #: reservations only within this many seconds of now (Slurm's bf_window); a job that
    #: cannot start sooner neither starts nor reserves
    horizon: float = np.inf
    #: only the pass's starts (and holds) are read, not the reservations it gives: the scan
    #: stops once no waiting job can start now, whatever reservations are left to give
    starts_only: bool = False


class Promises(NamedTuple):
    """The reservation each waiting job was given at the previous pass."""

    #: its start (``inf``: none)
    starts: np.ndarray
    #: the CPUs it takes from each pool (a row per job; all zero if unknown)
    plans: np.ndarray


class Profile(NamedTuple):
    """The availability profile being planned: ``size[0]`` steps, step ``s`` from
    ``times[s]`` with ``cpus[s, p]``, ``mem[s, p]`` and ``gpus[s, p]`` free in pool ``p``
    (``gpus`` has no columns when the site has no GPUs, ``mem`` none when no job of the
    run asks memory: the compiled run's profile then moves and copies half the bytes at
    every split and step, as a site of 210 pools feels). The arrays have
    room for the steps a pass may add; ``size`` is a one-element array so that kernels can
    change it in place.

    ``low_cpus[s, p]`` (and ``low_mem``, ``low_gpus``) is the least free in pool ``p`` over
    steps 0 to ``s``: what a job starting now can count on until step ``s`` ends. These
    running minima are kept lazily: valid for the first ``low_upto[0]`` steps, extended
    on demand (:func:`_lows_upto`), cut back by every change (:func:`_changed_from`)."""

    times: np.ndarray
    cpus: np.ndarray
    mem: np.ndarray
    gpus: np.ndarray
    size: np.ndarray
    low_cpus: np.ndarray
    low_mem: np.ndarray
    low_gpus: np.ndarray
    low_upto: np.ndarray


@jit(inline="always")
def _copy_step(prof: Profile, src: int, dst: int) -> None:
    """Copy step ``src`` to ``dst`` element by element (row slices cost a view each)."""
    prof.times[dst] = prof.times[src]
    for p in range(prof.cpus.shape[1]):
        prof.cpus[dst, p] = prof.cpus[src, p]
    for p in range(prof.mem.shape[1]):
        prof.mem[dst, p] = prof.mem[src, p]
    for p in range(prof.gpus.shape[1]):
        prof.gpus[dst, p] = prof.gpus[src, p]


@jit
def new_profile(steps: int, pools: int, gpu_pools: int, mem_pools: int = -1) -> Profile:
    """An empty profile with room for ``steps`` steps; ``mem_pools`` 0 keeps no memory
    (no job of the run asks any: see :class:`Profile`), -1 a column per pool."""
    mem_pools = pools if mem_pools < 0 else mem_pools
    return Profile(
        np.empty(steps, dtype=np.float64),
        np.empty((steps, pools), dtype=np.int64),
        np.empty((steps, mem_pools), dtype=np.int64),
        np.empty((steps, gpu_pools), dtype=np.int64),
        np.ones(1, dtype=np.int64),
        np.empty((steps, pools), dtype=np.int64),
        np.empty((steps, mem_pools), dtype=np.int64),
        np.empty((steps, gpu_pools), dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


@jit(inline="always")
def _changed_from(prof: Profile, s: int) -> None:
    """Step ``s`` and those after it changed: their running minima are no longer valid."""
    if prof.low_upto[0] > s:
        prof.low_upto[0] = s


@jit(borrowing=True)
def _lows_upto(prof: Profile, j: int) -> None:
    """Make the running minima valid for the first ``j`` steps (``j`` <= the steps)."""
    k = prof.low_upto[0]
    if k >= j:
        return
    cpus, mem, gpus = prof.cpus, prof.mem, prof.gpus
    low_cpus, low_mem, low_gpus = prof.low_cpus, prof.low_mem, prof.low_gpus
    if k == 0:
        for p in range(cpus.shape[1]):
            low_cpus[0, p] = cpus[0, p]
        for p in range(mem.shape[1]):
            low_mem[0, p] = mem[0, p]
        for p in range(gpus.shape[1]):
            low_gpus[0, p] = gpus[0, p]
        k = 1
    for s in range(k, j):
        for p in range(cpus.shape[1]):
            low_cpus[s, p] = min(low_cpus[s - 1, p], cpus[s, p])
        for p in range(mem.shape[1]):
            low_mem[s, p] = min(low_mem[s - 1, p], mem[s, p])
        for p in range(gpus.shape[1]):
            low_gpus[s, p] = min(low_gpus[s - 1, p], gpus[s, p])
    prof.low_upto[0] = j


@jit
def _build(state: ProfileState, extra: int) -> Profile:
    """The profile of the running jobs, with room for ``extra`` more steps. Every end must
    lie after ``now``."""
    size = 2 + state.run_ends.shape[0] + extra
    prof = new_profile(size, state.free_cpus.shape[0], state.free_gpus.shape[0])
    fill(prof, state)
    return prof


@jit(inline="always")
def _ascending(values: np.ndarray) -> bool:
    """Whether ``values`` never decrease (the running jobs' ends, as the compiled run
    keeps them)."""
    ascending = True
    for r in range(1, values.shape[0]):
        if values[r] < values[r - 1]:
            ascending = False
            break
    return ascending


@jit(inline="always")
def _close_step(prof: Profile, s: int, p: int) -> None:
    """Leave nothing free in pool ``p`` at step ``s``: no CPUs, memory or GPUs."""
    prof.cpus[s, p] = 0
    if prof.mem.shape[1]:
        prof.mem[s, p] = 0
    if prof.gpus.shape[1]:
        prof.gpus[s, p] = 0


@jit
def fill(prof: Profile, state: ProfileState) -> None:
    """Make ``prof`` (room for 2 steps more than there are running jobs) the profile of the
    running jobs. Every end must lie after ``now``. The running jobs are taken in order of
    their ends (sorted here unless they come in that order, as the compiled run keeps
    them: it calls :func:`fill_in_order`; jobs ending together add to one step, in any
    order)."""
    ends = state.run_ends
    order = np.empty(0, dtype=np.int64) if _ascending(ends) else np.argsort(ends, kind="mergesort")
    fill_in_order(prof, state, order)


@jit(borrowing=True)
def fill_in_order(prof: Profile, state: ProfileState, order: np.ndarray) -> None:
    """:func:`fill`, the running jobs taken in ``order`` (empty: as they come, in order of
    their ends)."""
    ends = state.run_ends
    in_order = order.shape[0] == 0
    pools = state.free_cpus.shape[0]
    prof.low_upto[0] = 0
    times, cpus, mem, gpus = prof.times, prof.cpus, prof.mem, prof.gpus
    times[0] = state.now
    for p in range(pools):
        cpus[0, p] = state.free_cpus[p]
    for p in range(mem.shape[1]):
        mem[0, p] = state.free_mem[p]
    for p in range(gpus.shape[1]):
        gpus[0, p] = state.free_gpus[p]
    steps = 1
    for k in range(ends.shape[0]):
        r = k if in_order else order[k]
        t = ends[r]
        if t != times[steps - 1]:
            _copy_step(prof, steps - 1, steps)
            times[steps] = t
            steps += 1
        job = state.run_jobs[r]
        start = state.alloc_start[job]
        for e in range(start, start + state.alloc_len[job]):
            p = state.alloc_pool[e]
            cpus[steps - 1, p] += state.alloc_cpus[e]
            if mem.shape[1]:
                mem[steps - 1, p] += state.alloc_cpus[e] * state.job_mem[job]
            if gpus.shape[1]:
                gpus[steps - 1, p] += state.job_gpn[job]
    prof.size[0] = steps


@jit(inline="always")
def fitting_cpus(cpus: int, mem: int, per_cpu: int) -> int:
    """CPUs of a job needing ``per_cpu`` memory each that fit in ``cpus`` and ``mem``."""
    if per_cpu > 0:
        return min(cpus, mem // per_cpu)
    return cpus


@jit(inline="always")
def _shaped(room: int, ppn: int) -> int:
    """What a pool (a node) offers a job that takes ``ppn`` CPUs on each node it uses
    (``ppn`` 0: any number): ``ppn`` or nothing."""
    if ppn > 0:
        return ppn if room >= ppn else 0
    return room


@jit(inline="always")
def _pool_room(prof: Profile, s: int, p: int, per_cpu: int, gpn: int) -> int:
    """CPUs of a job (``per_cpu`` memory each, ``gpn`` GPUs on each node) free in pool
    ``p`` at step ``s``: none when the pool lacks the GPUs."""
    if gpn > 0 and prof.gpus[s, p] < gpn:
        return 0
    if per_cpu > 0:
        return fitting_cpus(prof.cpus[s, p], prof.mem[s, p], per_cpu)
    return int(prof.cpus[s, p])


@jit(inline="always")
def _window_end(prof: Profile, i: int, duration: float) -> int:
    """First step at or after the end of a window starting at step ``i``."""
    end = prof.times[i] + duration
    j = i + 1
    while j < prof.size[0] and prof.times[j] < end:
        j += 1
    return j


@jit(inline="always")
def _window_room(
    prof: Profile,
    i: int,
    j: int,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
    out: np.ndarray,
) -> int:
    """Per pool, the CPUs of the job free over steps ``i`` to ``j - 1`` (into ``out``);
    returns their sum."""
    total = 0
    for p in range(prof.cpus.shape[1]):
        if not mask[p]:
            out[p] = 0
            continue
        best = _pool_room(prof, i, p, per_cpu, gpn)
        for s in range(i + 1, j):
            best = min(best, _pool_room(prof, s, p, per_cpu, gpn))
        out[p] = _shaped(best, ppn)
        total += out[p]
    return total


@jit(inline="always")
def _fits_plan(prof: Profile, i: int, j: int, per_cpu: int, gpn: int, plan: np.ndarray) -> bool:
    """Whether every pool keeps ``plan[p]`` CPUs of the job free over steps ``i``..``j-1``."""
    for p in range(plan.shape[0]):
        if plan[p]:
            for s in range(i, j):
                if _pool_room(prof, s, p, per_cpu, gpn) < plan[p]:
                    return False
    return True


@jit(inline="always")
def _step_room(prof: Profile, s: int, per_cpu: int, ppn: int, gpn: int, mask: np.ndarray) -> int:
    """The CPUs of the job free at step ``s`` over the pools of ``mask``."""
    total = 0
    for p in range(prof.cpus.shape[1]):
        if mask[p]:
            total += _shaped(_pool_room(prof, s, p, per_cpu, gpn), ppn)
    return total


@jit(borrowing=True)
def _earliest(
    prof: Profile,
    need: int,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
    duration: float,
    now_only: bool,
    room: np.ndarray,
    first: int = 0,
) -> int:
    """First step from step ``first`` at whose start a job of ``need`` CPUs (``per_cpu``
    memory each, ``ppn`` on each node or any spread, ``gpn`` GPUs on each node, on the pools
    of ``mask``) fits for its whole ``duration``; -1 if none, or, with ``now_only``, if it
    does not fit at step ``first``. ``room`` is left with what the job may take from each
    pool there, for :func:`_first_fit`: its room per pool, or, for a job one pool holds
    whole searched on several pools, its need in the first pool that holds it."""
    if now_only and first == 0:
        return _fits_now(prof, need, per_cpu, ppn, gpn, mask, duration, room)
    if not now_only and prof.cpus.shape[1] > 1:
        return _earliest_on_pools(prof, need, per_cpu, ppn, gpn, mask, duration, room, first)
    times, steps = prof.times, prof.size[0]
    i = first
    while i < steps:
        # a window containing a step whose total room is short cannot fit: skip past it
        j = i
        end = times[i] + duration
        blocked = -1
        while j < steps and (j == i or times[j] < end):
            if _step_room(prof, j, per_cpu, ppn, gpn, mask) < need:
                blocked = j
                break
            j += 1
        if blocked < 0:
            if prof.cpus.shape[1] == 1:
                room[0] = need  # one pool: no short step means the whole window fits
                return i
            if _window_room(prof, i, j, per_cpu, ppn, gpn, mask, room) >= need:
                return i
        if now_only:
            return -1
        i = blocked + 1 if blocked >= 0 else i + 1
    return -1


@jit(borrowing=True)
def _earliest_on_pools(
    prof: Profile,
    need: int,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
    duration: float,
    room: np.ndarray,
    first: int,
    until: int = 2**62,
) -> int:
    """:func:`_earliest` from step ``first`` on several pools (not ``now_only``), only
    windows starting before step ``until`` (-1 if none of them fits): by pool for a job
    that one pool must hold whole (:func:`_earliest_in_one_pool`), else sliding
    (:func:`_earliest_sliding`)."""
    if need == max(ppn, 1):
        return _earliest_in_one_pool(prof, need, per_cpu, gpn, mask, duration, room, first, until)
    return _earliest_sliding(prof, need, per_cpu, ppn, gpn, mask, duration, room, first, until)


@jit
def _earliest_in_one_pool(
    prof: Profile,
    need: int,
    per_cpu: int,
    gpn: int,
    mask: np.ndarray,
    duration: float,
    room: np.ndarray,
    first: int,
    until: int,
) -> int:
    """:func:`_earliest_on_pools` for a job one pool must hold whole: one CPU, or the
    ``need`` CPUs of one node (``ppn`` = ``need``). It fits a window exactly when one of
    its pools offers ``need`` at every step of the window, so each pool is followed on
    its own: the steps from which it offers ``need`` without a break, read once, as far
    as the window being tried asks. A pool that breaks off at a step cannot hold a window
    over it and is not read again before the step after; a long window over many pools
    costs the steps each pool offers the job before it breaks off, not the window's
    length in every pool, as the sliding search pays.

    ``room`` is left with ``need`` in the first pool the job fits (the pool a first fit
    takes it from: :func:`_first_fit`) and 0 in every other."""
    times, steps = prof.times, prof.size[0]
    pools = prof.cpus.shape[1]
    used = np.flatnonzero(mask[:pools])
    width = used.shape[0]
    # per pool: no window starting before step ``start`` fits; steps ``start`` to
    # ``reach - 1`` all offer ``need``
    start = np.full(width, first, dtype=np.int64)
    reach = np.full(width, first, dtype=np.int64)
    for i in range(first, min(steps, until)):
        end = times[i] + duration
        for q in range(width):
            if start[q] > i:
                continue
            p = used[q]
            j = max(reach[q], i)
            fits = True
            while j < steps and (j == i or times[j] < end):
                if _pool_room(prof, j, p, per_cpu, gpn) < need:
                    fits = False
                    break
                j += 1
            if fits:
                for r in range(pools):
                    room[r] = 0
                room[p] = need
                return i
            # every window over step j, short here, starts after it
            start[q] = j + 1
            reach[q] = j + 1
    return -1


@jit
def _earliest_sliding(
    prof: Profile,
    need: int,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
    duration: float,
    room: np.ndarray,
    first: int,
    until: int,
) -> int:
    """:func:`_earliest` from step ``first`` on several pools (not ``now_only``), in one
    pass over the steps; only windows starting before step ``until`` are tried (-1 if
    none of them fits).

    Where the job fits is the first step ``i`` whose window (steps ``i`` to
    :func:`_window_end`) leaves the job, summed over the pools of ``mask``, at least
    ``need`` CPUs, each pool offering its least room over the window. Scanning each window
    anew costs the window's length for every step it slides by; a long job among many
    pools, where free CPUs move from pool to pool, slides over thousands of steps. Both
    ends of the window only move forward as ``i`` does, so each pool's least room is kept
    in a queue of the steps that may yet be its minimum (increasing room; van Herk's
    sliding minimum), each step entering and leaving once. A step too short in total ends
    every window over it, as in :func:`_earliest`: the queues restart after it."""
    times, steps = prof.times, prof.size[0]
    pools = prof.cpus.shape[1]
    used = np.flatnonzero(mask[:pools])
    width = used.shape[0]
    span = max(steps - first, 1)
    # row t: the t-th entry of every pool's queue (few rows are used: rows, not pools, apart)
    queue = np.empty((span, width), dtype=np.int64)  # step - first
    value = np.empty((span, width), dtype=np.int64)
    head = np.zeros(width, dtype=np.int64)
    tail = np.zeros(width, dtype=np.int64)
    i = first
    j = first  # the next step to enter the window
    last = min(steps, until)
    while i < last:
        end = times[i] + duration
        blocked = -1
        while j < steps and (j == i or times[j] < end):
            total = 0
            for q in range(width):
                v = _pool_room(prof, j, used[q], per_cpu, gpn)
                total += _shaped(v, ppn)
                t = tail[q]
                while t > head[q] and value[t - 1, q] >= v:
                    t -= 1
                queue[t, q] = j - first
                value[t, q] = v
                tail[q] = t + 1
            j += 1
            if total < need:
                blocked = j - 1
                break
        if blocked >= 0:
            i = blocked + 1
            j = i
            head[:] = 0
            tail[:] = 0
            continue
        total = 0
        for q in range(width):
            h = head[q]
            while queue[h, q] < i - first:
                h += 1
            head[q] = h
            total += _shaped(value[h, q], ppn)
        if total >= need:
            for p in range(pools):
                room[p] = 0
            for q in range(width):
                room[used[q]] = _shaped(value[head[q], q], ppn)
            return i
        i += 1
    return -1


@jit(borrowing=True)
def _fits_now(
    prof: Profile,
    need: int,
    per_cpu: int,
    ppn: int,
    gpn: int,
    mask: np.ndarray,
    duration: float,
    room: np.ndarray,
) -> int:
    """:func:`_earliest` asked whether the job fits at step 0 (0) or not (-1), from the
    running minima: over a window starting now, a pool offers the job what its least
    free CPUs, memory and GPUs offer (the room is monotone in each), so one look at the
    minima up to the window's last step stands for the scan of every step."""
    steps = prof.size[0]
    j = max(1, int(np.searchsorted(prof.times[:steps], prof.times[0] + duration)))
    _lows_upto(prof, j)
    last = j - 1
    total = 0
    for p in range(prof.cpus.shape[1]):
        if not mask[p]:
            room[p] = 0
            continue
        if gpn > 0 and prof.low_gpus[last, p] < gpn:
            best = 0
        elif per_cpu > 0:
            best = fitting_cpus(prof.low_cpus[last, p], prof.low_mem[last, p], per_cpu)
        else:
            best = prof.low_cpus[last, p]
        room[p] = _shaped(best, ppn)
        total += room[p]
    if total < need:
        return -1
    if prof.cpus.shape[1] == 1:
        room[0] = need  # as the step-by-step scan leaves it
    return 0


def _block_move(array: np.ndarray, to: int, at: int, count: int) -> None:
    """Move ``count`` elements of a C-contiguous ``array``, in the order of its elements,
    from element ``at`` to element ``to`` (the two runs may overlap). Compiled, one
    ``memmove`` (:func:`_memmove`); run as Python (``--kernels interpreted``), numpy's
    copy of the slices.

    A loop moving them one by one is what numba makes of the same copy written in Python,
    an element at a time: its indices may be negative (numba wraps them), which keeps
    LLVM from seeing a block move; a split of a profile 210 pools wide moves some 90
    rows of them."""
    if not array.flags.c_contiguous:  # as the compiled version refuses it
        raise TypeError("_block_move needs a C-contiguous array")
    flat = array.reshape(-1)  # a view of a C-contiguous array
    flat[to : to + count] = flat[at : at + count].copy()


@overload(_block_move)
def _block_move_compiled(array, to, at, count):  # type: ignore[no-untyped-def]
    """:func:`_block_move` in compiled code."""
    if not isinstance(array, types.Array) or array.layout != "C":
        return None

    def move(array, to, at, count):  # type: ignore[no-untyped-def]
        _memmove(array, to, at, count)  # type: ignore[call-arg]  # typingctx is numba's

    return move


@intrinsic
def _memmove(typingctx, array, to, at, count):  # type: ignore[no-untyped-def]
    """LLVM's ``memmove`` of ``count`` elements of the C-contiguous ``array`` from element
    ``at`` to element ``to``."""
    sig = types.none(array, types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        size = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        dst, src = builder.gep(data, [args[1]]), builder.gep(data, [args[2]])
        cgutils.raw_memmove(builder, dst, src, args[3], size)  # type: ignore[no-untyped-call]
        return context.get_dummy_value()

    return sig, codegen


@jit(inline="always")
def _move_rows(rows_of: np.ndarray, to: int, at: int, count: int) -> None:
    """Move ``count`` rows of a C-contiguous array (1-D: its elements) from row ``at`` to
    row ``to``, in one block move (the two runs may overlap)."""
    if count > 0:
        width = rows_of.size // rows_of.shape[0] if rows_of.shape[0] else 0
        _block_move(rows_of, to * width, at * width, count * width)


@jit(inline="always")
def _move_steps(prof: Profile, to: int, at: int, count: int) -> None:
    """Move ``count`` steps of the profile (their times and free resources) from step
    ``at`` to step ``to``, array by array in one block move each."""
    _move_rows(prof.times, to, at, count)
    _move_rows(prof.cpus, to, at, count)
    _move_rows(prof.mem, to, at, count)
    _move_rows(prof.gpus, to, at, count)


@jit(borrowing=True)
def _split(prof: Profile, t: float) -> int:
    """Make ``t`` the start of a step (copying the step that contains it); returns the
    step's index. ``t`` must not lie before the first step."""
    steps = prof.size[0]
    k = int(np.searchsorted(prof.times[:steps], t))
    if k < steps and prof.times[k] == t:
        return k
    # steps k - 1 on move one down (k - 1 stays too: the new step is its copy), array by
    # array as one block move rather than a step at a time (a deep queue's compression
    # inserts steps near the front of thousands)
    _move_steps(prof, k, k - 1, steps - k + 1)
    prof.times[k] = t
    prof.size[0] = steps + 1
    _changed_from(prof, k)
    return k


@jit(inline="always")
def _take(
    prof: Profile,
    start: float,
    duration: float,
    per_cpu: int,
    gpn: int,
    plan: np.ndarray,
    sign: int,
) -> None:
    """Take (sign 1) or give back (sign -1) ``plan[p]`` CPUs of every pool from ``start``
    for ``duration`` (and ``gpn`` GPUs of every pool it uses)."""
    _take_span(prof, start, start + duration, per_cpu, gpn, plan, sign)


@jit(borrowing=True)
def _take_span(
    prof: Profile,
    start: float,
    end: float,
    per_cpu: int,
    gpn: int,
    plan: np.ndarray,
    sign: int,
) -> None:
    """:func:`_take` from ``start`` until ``end``."""
    i = _split(prof, start)
    j = _split(prof, end)
    _changed_from(prof, i)
    for p in range(plan.shape[0]):
        amount = sign * plan[p]
        if amount:
            for s in range(i, j):
                prof.cpus[s, p] -= amount
            if per_cpu:
                for s in range(i, j):
                    prof.mem[s, p] -= amount * per_cpu
            if gpn:
                for s in range(i, j):
                    prof.gpus[s, p] -= sign * gpn


#: how many steps on either side of a new step's place :func:`_split_reclaiming` looks at
#: for a step to reclaim
_RECLAIM_REACH = 64


@jit(inline="always")
def _same_step(cpus: np.ndarray, mem: np.ndarray, gpus: np.ndarray, a: int, b: int) -> bool:
    """Whether steps ``a`` and ``b`` of a profile's ``cpus``, ``mem`` and ``gpus`` have
    the same free resources in every pool (the arrays, not the profile, are passed: a
    call, even inlined, costs the references of every array it is given)."""
    for p in range(cpus.shape[1]):
        if cpus[a, p] != cpus[b, p]:
            return False
    for p in range(mem.shape[1]):
        if mem[a, p] != mem[b, p]:
            return False
    same = True
    for p in range(gpus.shape[1]):
        same = same and gpus[a, p] == gpus[b, p]
    return same


@jit(borrowing=True)
def _split_reclaiming(prof: Profile, t: float, after: int) -> int:
    """:func:`_split` (``t`` not before step ``after``), with the room for the new step
    taken, when it can be, from a step that starts where nothing changes (the same free
    resources as the step before it: a boundary a job moved out of or given back left
    behind), within :data:`_RECLAIM_REACH` steps of the new one's place and after step
    ``after``: that step merges into the one before it and only the steps between the two
    move by one, not every later step. The free resources at every time are what
    :func:`_split` leaves (a search cannot tell the two apart: no window starts at a step
    with the same free as the one before, as it fits from that one's start too); the
    steps before the returned one and before the reclaimed one keep their indices and
    running minima. Returns the new step's index."""
    steps = prof.size[0]
    times, cpus, mem, gpus = prof.times, prof.cpus, prof.mem, prof.gpus
    k = int(np.searchsorted(times[:steps], t))
    if k < steps and times[k] == t:
        return k
    # a step at or after the new one's place: the steps from the new place to it move
    # one down (the step holding ``t``, k - 1, is copied into the new place)
    for r in range(k, min(steps, k + _RECLAIM_REACH)):
        if _same_step(cpus, mem, gpus, r, r - 1):
            _move_steps(prof, k, k - 1, r - k + 1)
            times[k] = t
            _changed_from(prof, k)
            return k
    # one before it (after ``after``): the steps after it up to the one holding ``t``
    # move one up, and the new step is the copy of that one left behind
    for r in range(k - 1, max(after, k - _RECLAIM_REACH), -1):
        if _same_step(cpus, mem, gpus, r, r - 1):
            _move_steps(prof, r, r + 1, k - 1 - r)
            times[k - 1] = t
            _changed_from(prof, r)
            return k - 1
    return _split(prof, t)


@jit
def _take_all(
    prof: Profile,
    starts: np.ndarray,
    durations: np.ndarray,
    per_cpu: np.ndarray,
    gpn: np.ndarray,
    plans: np.ndarray,
) -> bool:
    """Take ``plans[k, p]`` CPUs of every pool from ``starts[k]`` for ``durations[k]``
    (with ``per_cpu[k]`` memory each and ``gpn[k]`` GPUs on every pool used), for every
    ``k`` at once, if the profile has room for all of them: no step of any pool left
    with fewer than zero CPUs, memory or GPUs. Returns false, leaving ``prof`` as it was,
    otherwise. Every start must lie at or after the first step.

    The result is the profile that :func:`_take` of each in turn makes (the same steps,
    split at every start and end, and the same free resources), in one sweep: the new
    step times merged, the takes added up as differences at their first and last step."""
    steps, pools, gpu_pools = prof.size[0], prof.cpus.shape[1], prof.gpus.shape[1]
    mem_pools = prof.mem.shape[1]
    m = starts.shape[0]
    if m == 0:
        return True
    points = np.empty(steps + 2 * m)
    points[:steps] = prof.times[:steps]
    for k in range(m):
        points[steps + 2 * k] = starts[k]
        points[steps + 2 * k + 1] = starts[k] + durations[k]
    times = np.unique(points)
    n = times.shape[0]
    if n > prof.times.shape[0]:
        return False
    d_cpus = np.zeros((n + 1, pools), dtype=np.int64)
    d_mem = np.zeros((n + 1, mem_pools), dtype=np.int64)
    d_gpus = np.zeros((n + 1, gpu_pools), dtype=np.int64)
    for k in range(m):
        i = np.searchsorted(times, starts[k])
        j = np.searchsorted(times, starts[k] + durations[k])
        for p in range(pools):
            amount = plans[k, p]
            if amount:
                d_cpus[i, p] -= amount
                d_cpus[j, p] += amount
                if per_cpu[k]:
                    d_mem[i, p] -= amount * per_cpu[k]
                    d_mem[j, p] += amount * per_cpu[k]
                if gpn[k]:
                    d_gpus[i, p] -= gpn[k]
                    d_gpus[j, p] += gpn[k]
    cpus = np.empty((n, pools), dtype=np.int64)
    mem = np.empty((n, mem_pools), dtype=np.int64)
    gpus = np.empty((n, gpu_pools), dtype=np.int64)
    run_cpus = np.zeros(pools, dtype=np.int64)
    run_mem = np.zeros(mem_pools, dtype=np.int64)
    run_gpus = np.zeros(gpu_pools, dtype=np.int64)
    base = 0
    for s in range(n):
        while base + 1 < steps and prof.times[base + 1] <= times[s]:
            base += 1
        for p in range(pools):
            run_cpus[p] += d_cpus[s, p]
            cpus[s, p] = prof.cpus[base, p] + run_cpus[p]
            if cpus[s, p] < 0:
                return False
        for p in range(mem_pools):
            run_mem[p] += d_mem[s, p]
            mem[s, p] = prof.mem[base, p] + run_mem[p]
            if mem[s, p] < 0:
                return False
        for p in range(gpu_pools):
            run_gpus[p] += d_gpus[s, p]
            gpus[s, p] = prof.gpus[base, p] + run_gpus[p]
            if gpus[s, p] < 0:
                return False
    for s in range(n):
        prof.times[s] = times[s]
        for p in range(pools):
            prof.cpus[s, p] = cpus[s, p]
        for p in range(mem_pools):
            prof.mem[s, p] = mem[s, p]
        for p in range(gpu_pools):
            prof.gpus[s, p] = gpus[s, p]
    prof.size[0] = n
    _changed_from(prof, 0)
    return True


@jit(borrowing=True)
def _first_fit(room: np.ndarray, need: int, plan: np.ndarray) -> None:
    """Spread ``need`` CPUs over the pools in order, as much as each has room for."""
    for p in range(room.shape[0]):
        take = min(room[p], need)
        plan[p] = take
        need -= take


def no_promises(pools: int) -> Promises:
    """No job has been promised anything (for policies that keep no promises)."""
    return Promises(np.zeros(0), np.zeros((0, pools), dtype=np.int64))


def tiny_profile_state() -> ProfileState:
    """A one-pool, one-CPU machine with job 0 running until t=1: input for warm-ups."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    return ProfileState(
        0.0, one, one, np.ones(1), zero, zero, one, zero, one, zero, zero, one, one, none, none
    )


def tiny_job_arrays() -> JobArrays:
    """One job of one CPU in queue 0, for warm-ups with :func:`tiny_profile_state`."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return JobArrays(one, zero, np.ones(1), zero, np.ones((1, 1), dtype=np.bool_), zero)


def no_limits(job_queue: np.ndarray, queues: int) -> LimitState:
    """Limits that never hold a job back (one user), for callers without queue limits."""
    big = np.full(queues, np.iinfo(np.int64).max // 4, dtype=np.int64)
    counts = np.zeros((1, queues), dtype=np.int64)
    users = np.zeros(job_queue.shape[0], dtype=np.int64)
    return LimitState(users, big, big, big, counts, counts, np.zeros(queues, dtype=np.int64))
