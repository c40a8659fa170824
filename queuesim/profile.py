"""The availability profile: free CPUs over future time, and the one backfill loop.

The profile is a step function kept in two arrays: ``times[i]`` is the start of step ``i``
and ``free[i]`` the CPUs free from ``times[i]`` until ``times[i + 1]`` (the last step lasts
for ever). It is built from the running jobs' *estimated* ends, then jobs are placed in it
in priority order: each either starts now, gets a reservation at the earliest time its
CPUs are free for its whole estimate, or is passed over.

One loop serves every batch policy, as in Flux's queue policies and in the backfilling
literature (Mu'alem and Feitelson's EASY and conservative backfilling):

* ``depth = 0, backfill = False``: strict FCFS, stop at the first job that cannot start;
* ``depth = 1``: EASY, only the first blocked job holds a reservation, later jobs start
  only if they delay it by nothing;
* ``depth = Q``: conservative, every waiting job holds a reservation, and because the
  profile is rebuilt from the running jobs at every pass, a job that ended earlier than
  estimated lets every later reservation move forward (compression).

The functions here are compiled with numba: a what-if study replays hundreds of thousands
of jobs, and each scheduling pass may place a hundred waiting jobs in a profile of a few
hundred steps.

The profile counts CPUs over the whole machine (or the part a policy passes in). That is
exact for jobs whose CPUs may come from any nodes, the Parallel Workloads Archive's model;
node-level constraints (memory, node subsets) are checked by the cluster state when a job
starts.
"""

from __future__ import annotations

import numba
import numpy as np

NEVER = np.inf


@numba.njit(cache=True)
def _build(
    now: float, free_now: int, ends: np.ndarray, cpus: np.ndarray, extra: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Profile from running jobs' estimated ``ends`` and ``cpus``, with room to grow by
    ``extra`` steps. Ends must all lie after ``now``."""
    order = np.argsort(ends, kind="mergesort")
    size = 1 + ends.shape[0] + extra + 1
    times = np.empty(size, dtype=np.float64)
    free = np.empty(size, dtype=np.int64)
    times[0] = now
    free[0] = free_now
    steps = 1
    for k in range(order.shape[0]):
        j = order[k]
        t = ends[j]
        if t == times[steps - 1]:
            free[steps - 1] += cpus[j]
        else:
            times[steps] = t
            free[steps] = free[steps - 1] + cpus[j]
            steps += 1
    return times, free, steps


@numba.njit(cache=True)
def _earliest(
    times: np.ndarray, free: np.ndarray, steps: int, cpus: int, duration: float, now_only: bool
) -> int:
    """Index of the first step at whose start ``cpus`` stay free for ``duration``; -1 if
    none (or, with ``now_only``, if the job cannot start at the first step)."""
    i = 0
    while i < steps:
        if free[i] < cpus:
            if now_only:
                return -1
            i += 1
            continue
        end = times[i] + duration
        j = i + 1
        while j < steps and times[j] < end:
            if free[j] < cpus:
                break
            j += 1
        if j >= steps or times[j] >= end:
            return i
        if now_only:
            return -1
        i = j + 1  # every start before the blocking step j would overlap it
    return -1


@numba.njit(cache=True)
def _occupy(
    times: np.ndarray, free: np.ndarray, steps: int, i: int, cpus: int, duration: float
) -> int:
    """Take ``cpus`` from step ``i`` for ``duration``, splitting a step at the end if
    needed. Returns the new number of steps."""
    end = times[i] + duration
    j = i
    while j < steps and times[j] < end:
        free[j] -= cpus
        j += 1
    if j < steps and times[j] == end:
        return steps
    # split: a new step at `end` with the free CPUs the step before it had originally
    for k in range(steps, j, -1):
        times[k] = times[k - 1]
        free[k] = free[k - 1]
    times[j] = end
    free[j] = free[j - 1] + cpus
    return steps + 1


@numba.njit(cache=True)
def _step_at(times: np.ndarray, free: np.ndarray, steps: int, t: float) -> tuple[int, int]:
    """Index of the step starting at ``t``, splitting the step that contains it if needed.
    Returns (index, new number of steps)."""
    i = int(np.searchsorted(times[:steps], t, side="right")) - 1
    if times[i] == t:
        return i, steps
    for k in range(steps, i + 1, -1):
        times[k] = times[k - 1]
        free[k] = free[k - 1]
    times[i + 1] = t
    free[i + 1] = free[i]
    return i + 1, steps + 1


@numba.njit(cache=True)
def _fits_from(
    times: np.ndarray, free: np.ndarray, steps: int, i: int, cpus: int, duration: float
) -> bool:
    end = times[i] + duration
    j = i
    while j < steps and times[j] < end:
        if free[j] < cpus:
            return False
        j += 1
    return True


@numba.njit(cache=True)
def _release(
    times: np.ndarray, free: np.ndarray, steps: int, i: int, cpus: int, duration: float
) -> None:
    end = times[i] + duration
    j = i
    while j < steps and times[j] < end:
        free[j] += cpus
        j += 1


@numba.njit(cache=True)
def plan_pass(
    now: float,
    free_now: int,
    run_ends: np.ndarray,
    run_cpus: np.ndarray,
    wait_cpus: np.ndarray,
    wait_estimates: np.ndarray,
    depth: int,
    backfill: bool,
    promised: np.ndarray,
) -> np.ndarray:
    """Place waiting jobs (in priority order) into the profile of the running jobs.

    Returns each waiting job's planned start: ``now`` to start at once, a later time for a
    reservation, ``inf`` for neither. ``depth`` is how many jobs may hold reservations;
    without ``backfill``, planning stops at the first job that cannot start now.

    ``promised`` holds the reservation each job was given at the previous pass (``inf``:
    none). Those are booked first, then each is moved to the earliest slot it fits in -
    never later than its own, which stays free for it - so a promise is never broken
    (Mu'alem and Feitelson's compression for conservative backfilling); only a running job
    that outlives its estimate can force a promise to move later. Jobs without a promise
    are placed after, in priority order.
    """
    n = wait_cpus.shape[0]
    starts = np.full(n, NEVER)
    times, free, steps = _build(now, free_now, run_ends, run_cpus, 3 * n)
    reserved = 0
    # book the promises that still fit
    booked = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        if promised[k] < NEVER:
            t = max(promised[k], now)
            i, steps = _step_at(times, free, steps, t)
            if _fits_from(times, free, steps, i, wait_cpus[k], wait_estimates[k]):
                steps = _occupy(times, free, steps, i, wait_cpus[k], wait_estimates[k])
                booked[k] = True
                starts[k] = t
    # compress: move each booked job to its earliest slot, in priority order
    for k in range(n):
        if booked[k]:
            i = np.searchsorted(times[:steps], starts[k])
            _release(times, free, steps, i, wait_cpus[k], wait_estimates[k])
            i = _earliest(times, free, steps, wait_cpus[k], wait_estimates[k], False)
            starts[k] = times[i]
            steps = _occupy(times, free, steps, i, wait_cpus[k], wait_estimates[k])
            if starts[k] > now:
                reserved += 1
    # place the others
    for k in range(n):
        if booked[k]:
            continue
        cpus = wait_cpus[k]
        now_only = reserved >= depth
        if now_only and free[0] < cpus:
            if not backfill:
                break
            continue
        i = _earliest(times, free, steps, cpus, wait_estimates[k], now_only)
        if i < 0:
            if not backfill:
                break
            continue
        if i > 0:
            if not backfill:
                break
            reserved += 1
        starts[k] = times[i]
        steps = _occupy(times, free, steps, i, cpus, wait_estimates[k])
    return starts


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny input, so that the first
    real pass is not charged the compilation."""
    one = np.ones(1, dtype=np.int64)
    plan_pass(0.0, 1, np.ones(1), one, one, np.ones(1), 1, True, np.full(1, NEVER))
