"""Conservative compression on many pools (:func:`queuesim.core.planning._compress`)
against the written-out definition: each booked job taken out, placed at the earliest
slot the full search finds if earlier than its own, and put back - the guard for the
shortcuts of the many-pool path (a job that cannot start earlier is left alone, and a
shape's search is reused until the profile changes)."""

from __future__ import annotations

import random

import numpy as np
from test_compression import _compress_by_definition

from queuesim.core.planning import Planning, _compress, new_pass_plan
from queuesim.core.profile import (
    JobArrays,
    Profile,
    ProfileState,
    _earliest,
    _first_fit,
    _take,
    new_profile,
    no_limits,
)


class _Case:
    """A many-pool machine (CPUs, memory and GPUs per pool) and jobs booked on it, each at
    the first slot from a random time where it fits beside those booked before it."""

    def __init__(self, rng: random.Random, jobs: int, shapes: int = 0) -> None:
        self.pools = rng.randint(2, 6)
        self.cpus = [rng.randint(1, 4) for _ in range(self.pools)]
        self.mem = [rng.randint(2, 8) for _ in range(self.pools)]
        self.gpus = [rng.randint(0, 2) for _ in range(self.pools)]
        masks = [[rng.random() < 0.7 for _ in range(self.pools)] for _ in range(3)]
        for row in masks:
            row[rng.randrange(self.pools)] = True
        self.masks = np.array(masks, dtype=np.bool_)
        n = jobs
        self.need = np.zeros(n, dtype=np.int64)
        self.ppn = np.zeros(n, dtype=np.int64)
        self.per_cpu = np.zeros(n, dtype=np.int64)
        self.gpn = np.zeros(n, dtype=np.int64)
        self.mask_of = np.zeros(n, dtype=np.int64)
        self.duration = np.zeros(n)
        # with ``shapes``, the jobs are of that many shapes only, as in a burst of the
        # same job submitted many times (what compression learns per shape is reused)
        templates = [_shape(rng) for _ in range(shapes)]
        for k in range(n):
            shape = rng.choice(templates) if templates else _shape(rng)
            self.mask_of[k], self.duration[k], self.need[k] = shape[:3]
            self.per_cpu[k], self.ppn[k], self.gpn[k] = shape[3:]
        self.prof = new_profile(4 * n + 8, self.pools, self.pools)
        prof = self.prof
        prof.times[0], prof.size[0] = 0.0, 1
        for p in range(self.pools):
            prof.cpus[0, p], prof.mem[0, p], prof.gpus[0, p] = (
                self.cpus[p],
                self.mem[p],
                self.gpus[p],
            )
        self.starts = np.full(n, np.inf)
        self.plans = np.zeros((n, self.pools), dtype=np.int64)
        room = np.zeros(self.pools, dtype=np.int64)
        for k in range(n):
            mask = self.masks[self.mask_of[k]]
            first = int(np.searchsorted(prof.times[: prof.size[0]], rng.randint(0, 40)))
            first = min(first, prof.size[0] - 1)
            i = _earliest(prof, *self._job(k), mask, self.duration[k], False, room, first)
            if i < 0:
                continue
            _first_fit(room, int(self.need[k]), self.plans[k])
            self.starts[k] = prof.times[i]
            self.take(k, 1)

    def _job(self, k: int) -> tuple[int, int, int, int]:
        return int(self.need[k]), int(self.per_cpu[k]), int(self.ppn[k]), int(self.gpn[k])

    def take(self, k: int, sign: int) -> None:
        """Take (1) or give back (-1) job ``k``'s booking."""
        per_cpu, gpn = int(self.per_cpu[k]), int(self.gpn[k])
        _take(self.prof, self.starts[k], self.duration[k], per_cpu, gpn, self.plans[k], sign)

    def planning(self, order: list[int]) -> Planning:
        """A pass with the booked jobs of ``order`` (in that priority order) held where
        they are, in a copy of the profile."""
        prof = self.prof
        copy = Profile(*(a.copy() for a in prof))
        n = self.need.shape[0]
        zero = np.zeros(n, dtype=np.int64)
        one = zero[:1]
        none = zero[:0]
        state = ProfileState(
            0.0, one, one, np.zeros(0), none, zero, zero, zero, zero, self.per_cpu,
            self.gpn, one, one, none, none,
        )  # fmt: skip
        jobs = JobArrays(self.need, zero, self.duration, self.ppn, self.masks, self.mask_of)
        plan = new_pass_plan(len(order), self.pools)
        for pos, k in enumerate(order):
            plan.starts[pos] = self.starts[k]
            plan.plans[pos] = self.plans[k]
            plan.booked[pos] = True
        waiting = np.array(order, dtype=np.int64)
        return Planning(copy, state, jobs, no_limits(zero, 1), waiting, plan)


def _shape(rng: random.Random) -> tuple[int, float, int, int, int, int]:
    """A job's mask row, estimate, CPUs, memory per CPU, CPUs per node and GPUs per node."""
    mask_of = rng.randrange(3)
    duration = rng.randint(1, 30) + rng.choice([0.0, 0.5, 1 / 3])
    per_cpu = ppn = gpn = 0
    kind = rng.random()
    if kind < 0.5:
        need = rng.randint(1, 3)
    elif kind < 0.7:
        need = rng.randint(1, 3)
        per_cpu = rng.randint(1, 2)
    else:
        ppn = rng.randint(1, 2)
        need = ppn * rng.randint(1, 2)
        if rng.random() < 0.4:
            gpn = 1
    return mask_of, duration, need, per_cpu, ppn, gpn


def _free_over_time(prof: Profile) -> list[tuple[float, tuple[int, ...]]]:
    """The profile's free CPUs, memory and GPUs per pool where they change (whatever the
    steps)."""
    points: list[tuple[float, tuple[int, ...]]] = []
    for s in range(prof.size[0]):
        row = tuple(prof.cpus[s].tolist() + prof.mem[s].tolist() + prof.gpus[s].tolist())
        if not points or points[-1][1] != row:
            points.append((float(prof.times[s]), row))
    return points


def test_compression_on_many_pools_moves_every_job_where_the_definition_does() -> None:
    """Compression on many pools gives every booked job the start and plan, and leaves
    the profile, that taking each job out and searching from the front gives, in a random
    priority order after some booked jobs ended early (seeded sweep)."""
    rng = random.Random(16)
    moved = 0
    for c in range(240):
        # half the cases of a few shapes only: a shape's search is reused between moves
        few = c >= 120
        case = _Case(
            rng, rng.randint(12, 30) if few else rng.randint(4, 16), few * rng.randint(1, 2)
        )
        booked = [k for k in range(case.need.shape[0]) if case.starts[k] < np.inf]
        if not booked:
            continue  # its shapes fit none of its pools
        for k in rng.sample(booked, min(len(booked) - 1, rng.randint(0, 4))):
            case.take(k, -1)
            booked.remove(k)
        rng.shuffle(booked)
        ours, reference = case.planning(booked), case.planning(booked)
        _compress(ours)
        _compress_by_definition(reference)
        assert ours.plan.starts.tolist() == reference.plan.starts.tolist()
        assert ours.plan.plans.tolist() == reference.plan.plans.tolist()
        assert _free_over_time(ours.prof) == _free_over_time(reference.prof)
        moved += int((ours.plan.starts < case.starts[booked]).sum())
    assert moved > 100  # the sweep moves jobs, not only leaves them


def _by_hand(
    rows: list[tuple[float, list[int]]], booked: list[tuple[float, float, int]]
) -> Planning:
    """A pass over one-CPU pools: the running jobs' profile ``rows`` (time, free CPUs per
    pool) and one-CPU jobs booked as (start, estimate, pool), in that priority order."""
    pools, n = len(rows[0][1]), len(booked)
    prof = new_profile(4 * n + len(rows) + 4, pools, 0)
    for s, (t, free) in enumerate(rows):
        prof.times[s] = t
        prof.cpus[s] = free
        prof.mem[s] = 100
    prof.size[0] = len(rows)
    zero = np.zeros(n, dtype=np.int64)
    one, none = zero[:1], zero[:0]
    state = ProfileState(
        0.0, one, one, np.zeros(0), none, zero, zero, zero, zero, zero, zero, one, one,
        none, none,
    )  # fmt: skip
    estimate = np.array([d for _, d, _ in booked])
    masks = np.ones((1, pools), dtype=np.bool_)
    jobs = JobArrays(np.ones(n, dtype=np.int64), zero, estimate, zero, masks, zero)
    plan = new_pass_plan(n, pools)
    for k, (start, duration, pool) in enumerate(booked):
        plan.starts[k] = start
        plan.plans[k, pool] = 1
        plan.booked[k] = True
        _take(prof, start, duration, 0, 0, plan.plans[k], 1)
    return Planning(prof, state, jobs, no_limits(zero, 1), np.arange(n), plan)


def _placed(pl: Planning) -> list[tuple[float, int]]:
    """Each booked job's start and pool."""
    starts, plans = pl.plan.starts.tolist(), pl.plan.plans.argmax(axis=1).tolist()
    return list(zip(starts, plans, strict=True))


def test_a_shape_that_fits_nowhere_earlier_is_searched_on_from_there() -> None:
    """What compression learnt of a shape (no window before 5 fits) is only where the next
    job of that shape searches from: a window after it still moves that job (hand-worked:
    pool 2 frees at 6, before the second job's 8)."""
    rows = [(0.0, [0, 0, 0]), (5.0, [1, 0, 0]), (6.0, [1, 0, 1]), (8.0, [1, 1, 1])]
    pl = _by_hand(rows, [(5.0, 10.0, 0), (8.0, 10.0, 1)])
    _compress(pl)
    assert _placed(pl) == [(5.0, 0), (6.0, 2)]


def test_a_move_makes_compression_search_a_shape_again() -> None:
    """After a job moves, what compression learnt of a shape no longer holds: the job
    that moved frees room a later job of that shape fits in (hand-worked: the 3-second
    job moves from 4 to 0 on pool 1, which lets the last job start at 3, not 5)."""
    rows = [(0.0, [0, 1, 0]), (5.0, [1, 1, 1])]
    pl = _by_hand(rows, [(5.0, 10.0, 0), (4.0, 3.0, 1), (5.0, 10.0, 2)])
    _compress(pl)
    assert _placed(pl) == [(5.0, 0), (0.0, 1), (3.0, 1)]
