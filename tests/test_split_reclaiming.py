"""A split that reclaims a step where nothing changes (:func:`queuesim.core.profile.
_split_reclaiming`, used by conservative compression's one-pool moves) leaves the same free
resources at every time as the plain split, and compression with it still moves every job
where the definition does on deep queues of few job shapes (chains of same-shaped jobs,
some ending early)."""

from __future__ import annotations

import os
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compression import _fitting, assert_compresses_as_defined

from queuesim.core.profile import Profile, _split, _split_reclaiming, new_profile

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "60"))


def profile(times: list[float], cpus: list[int]) -> Profile:
    """A one-pool profile of the given steps, the spare rows holding stale plenty."""
    steps = len(times)
    prof = new_profile(steps + 4, 1, 0)
    prof.times[:] = times[-1] + 1.0 + np.arange(steps + 4)
    prof.cpus[:] = 1 << 20
    prof.mem[:] = 1 << 20
    prof.times[:steps] = times
    prof.cpus[:steps, 0] = cpus
    prof.mem[:steps, 0] = 0
    prof.size[0] = steps
    prof.low_upto[0] = 0
    return prof


def free_at(prof: Profile) -> list[tuple[float, int]]:
    """The free CPUs as (time, CPUs) where they change, whatever the steps."""
    points: list[tuple[float, int]] = []
    for s in range(int(prof.size[0])):
        if not points or points[-1][1] != prof.cpus[s, 0]:
            points.append((float(prof.times[s]), int(prof.cpus[s, 0])))
    return points


def test_a_step_equal_to_the_one_before_after_the_new_place_is_reclaimed() -> None:
    """Steps at 0, 5, 10, 20 with 4, 2, 1, 1 free: a split at 7 drops the boundary at 20
    (the same 1 free as at 10) and moves only steps 1-2: steps 0, 5, 7, 10 with 4, 2, 2, 1."""
    prof = profile([0.0, 5.0, 10.0, 20.0], [4, 2, 1, 1])
    assert _split_reclaiming(prof, 7.0, 0) == 2
    assert int(prof.size[0]) == 4
    assert prof.times[:4].tolist() == [0.0, 5.0, 7.0, 10.0]
    assert prof.cpus[:4, 0].tolist() == [4, 2, 2, 1]


def test_a_step_equal_to_the_one_before_before_the_new_place_is_reclaimed() -> None:
    """Steps at 0, 5, 10, 20 with 4, 2, 2, 1 free: a split at 15 moves the boundary at 10
    (the same 2 free as at 5) to 15: steps 0, 5, 15, 20 with 4, 2, 2, 1; a split at a step
    start changes nothing."""
    prof = profile([0.0, 5.0, 10.0, 20.0], [4, 2, 2, 1])
    assert _split_reclaiming(prof, 15.0, 0) == 2
    assert prof.times[:4].tolist() == [0.0, 5.0, 15.0, 20.0]
    assert prof.cpus[:4, 0].tolist() == [4, 2, 2, 1]
    assert _split_reclaiming(prof, 5.0, 0) == 1
    assert int(prof.size[0]) == 4


def test_no_step_at_or_before_the_floor_is_reclaimed() -> None:
    """Steps at 0, 5, 10 with 4, 2, 2 free and the floor at step 2: the equal step 2 is
    not after the floor, so a split at 15 inserts a step as the plain split does."""
    prof = profile([0.0, 5.0, 10.0], [4, 2, 2])
    assert _split_reclaiming(prof, 15.0, 2) == 3
    assert prof.times[:4].tolist() == [0.0, 5.0, 10.0, 15.0]
    assert prof.cpus[:4, 0].tolist() == [4, 2, 2, 2]


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    cpus=st.lists(st.integers(0, 2), min_size=1, max_size=12),
    gaps=st.lists(st.integers(1, 3), min_size=12, max_size=12),
    at=st.integers(0, 40),
    frac=st.sampled_from([0.0, 0.5]),
    floor=st.integers(0, 11),
)
def test_a_reclaiming_split_leaves_the_free_cpus_of_the_plain_split(
    cpus: list[int], gaps: list[int], at: int, frac: float, floor: int
) -> None:
    """Whatever the steps (neighbours often equal), the reclaiming split makes ``t`` a
    step start, leaves the free CPUs at every time and every step up to the floor as the
    plain split does, and never has more steps."""
    times = [0.0, *np.cumsum(gaps[: len(cpus) - 1]).astype(float).tolist()]
    t = float(at) + frac
    after = min(floor, int(np.searchsorted(times, t, side="right")) - 1)
    plain, ours = profile(times, cpus), profile(times, cpus)
    i = _split(plain, t)
    j = _split_reclaiming(ours, t, after)
    assert ours.times[j] == t
    assert free_at(ours) == free_at(plain)
    assert int(ours.size[0]) <= int(plain.size[0])
    assert ours.times[: after + 1].tolist() == plain.times[: after + 1].tolist()
    assert j <= i


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cpus=st.integers(2, 6),
    shapes=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 12)), min_size=1, max_size=3),
    picks=st.lists(st.integers(0, 2), min_size=4, max_size=40),
    ended=st.lists(st.integers(0, 39), max_size=6),
    shuffle=st.randoms(use_true_random=False),
)
def test_compression_of_chains_of_same_shaped_jobs_moves_them_where_the_definition_does(
    cpus: int,
    shapes: list[tuple[int, int]],
    picks: list[int],
    ended: list[int],
    shuffle: random.Random,
) -> None:
    """A deep queue of few shapes (CPUs, estimate), booked back to back as conservative
    backfilling books a burst, some ending early (left the profile): compression - its
    moves now taking the step their end needs from a boundary left behind - gives every
    job the start and the profile that taking each out and searching from the front
    gives, in priority order or shuffled."""
    jobs = []
    end = 0.0
    for pick in picks:
        need, length = shapes[pick % len(shapes)]
        jobs.append((end * 0.5, float(length), min(need, cpus)))
        end += length
    booked = _fitting(cpus, jobs)
    gone = {e % len(booked) for e in ended}
    kept = [b for j, b in enumerate(booked) if j not in gone] or booked[:1]
    order = list(range(len(kept)))
    if shuffle.random() < 0.5:
        shuffle.shuffle(order)
    assert_compresses_as_defined(cpus, kept, order, False)
