"""Conservative compression's test of a job that would stay where it is
(:func:`queuesim.core.planning._stays`) agrees with taking the job out and searching."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.core.planning import _stays, new_stretches
from queuesim.core.profile import _earliest, _take, new_profile


@st.composite
def booked_profiles(draw: st.DrawFn) -> tuple[int, list[tuple[float, float, int]]]:
    """A one-pool machine's CPUs and jobs booked on it (start, duration, CPUs), each kept
    only if it fits beside those before it."""
    cpus = draw(st.integers(1, 8))
    jobs = [
        (
            float(draw(st.integers(0, 40))),
            float(draw(st.integers(1, 20))) + draw(st.sampled_from([0.0, 0.1, 1 / 3])),
            draw(st.integers(1, cpus)),
        )
        for _ in range(draw(st.integers(1, 12)))
    ]
    return cpus, jobs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=booked_profiles(), pick=st.integers(0, 11))
def test_a_job_stays_exactly_when_its_earliest_slot_is_its_own(
    case: tuple[int, list[tuple[float, float, int]]], pick: int
) -> None:
    """A job asking only CPUs of one pool is left unsearched exactly when, taken out of
    the profile, its earliest slot is where it is booked (so compression would not move
    it)."""
    cpus, jobs = case
    prof = new_profile(64, 1, 0)
    prof.times[0], prof.cpus[0, 0], prof.mem[0, 0], prof.size[0] = 0.0, cpus, 0, 1
    booked = []
    for start, duration, need in jobs:
        plan = np.array([need], dtype=np.int64)
        _take(prof, start, duration, 0, 0, plan, 1)
        if (prof.cpus[: prof.size[0]] < 0).any():
            _take(prof, start, duration, 0, 0, plan, -1)
        else:
            booked.append((start, duration, need))
    start, duration, need = booked[pick % len(booked)]
    steps = prof.size[0]
    most = np.maximum.accumulate(prof.cpus[:steps, 0]).astype(np.int64)
    most = np.concatenate([most, np.zeros(prof.times.shape[0] - steps, dtype=np.int64)])
    stays = _stays(prof, most, new_stretches(cpus), start, need, duration)
    plan = np.array([need], dtype=np.int64)
    _take(prof, start, duration, 0, 0, plan, -1)
    mask = np.ones(1, dtype=np.bool_)
    room = np.zeros(1, dtype=np.int64)
    i = _earliest(prof, need, 0, 0, 0, mask, duration, False, room)
    assert stays == (prof.times[i] == start)
