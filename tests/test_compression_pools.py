"""Conservative compression on many pools (:func:`queuesim.core.planning._compress`)
against the written-out definition: each booked job taken out, placed at the earliest
slot the full search finds, and put back - the guard for any shortcut of the many-pool
path (none is in place yet: see docs/performance-notes.md)."""

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

    def __init__(self, rng: random.Random, jobs: int) -> None:
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
        for k in range(n):
            self.mask_of[k] = rng.randrange(3)
            self.duration[k] = rng.randint(1, 30) + rng.choice([0.0, 0.5, 1 / 3])
            kind = rng.random()
            if kind < 0.5:
                self.need[k] = rng.randint(1, 3)
            elif kind < 0.7:
                self.need[k] = rng.randint(1, 3)
                self.per_cpu[k] = rng.randint(1, 2)
            else:
                self.ppn[k] = rng.randint(1, 2)
                self.need[k] = self.ppn[k] * rng.randint(1, 2)
                if rng.random() < 0.4:
                    self.gpn[k] = 1
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
    for _ in range(120):
        case = _Case(rng, rng.randint(4, 16))
        booked = [k for k in range(case.need.shape[0]) if case.starts[k] < np.inf]
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
    assert moved > 50  # the sweep moves jobs, not only leaves them
