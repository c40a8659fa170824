"""Conservative compression's test of a job that would stay where it is
(:func:`queuesim.core.planning._stays`) agrees with taking the job out and searching."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.core.planning import Planning, _compress, _stays, new_pass_plan, new_stretches
from queuesim.core.profile import (
    JobArrays,
    ProfileState,
    _earliest,
    _first_fit,
    _take,
    new_profile,
    no_limits,
)


@st.composite
def booked_profiles(
    draw: st.DrawFn, most_cpus: int = 8, most_jobs: int = 12, latest: int = 40
) -> tuple[int, list[tuple[float, float, int]]]:
    """A one-pool machine's CPUs and jobs booked on it (start, duration, CPUs), each kept
    only if it fits beside those before it."""
    cpus = draw(st.integers(1, most_cpus))
    jobs = [
        (
            float(draw(st.integers(0, latest))),
            float(draw(st.integers(1, 20))) + draw(st.sampled_from([0.0, 0.1, 1 / 3])),
            draw(st.integers(1, cpus)),
        )
        for _ in range(draw(st.integers(1, most_jobs)))
    ]
    return cpus, jobs


def _fitting(cpus: int, jobs: list[tuple[float, float, int]]) -> list[tuple[float, float, int]]:
    """``jobs`` (start, duration, CPUs) each kept only if it fits on ``cpus`` CPUs beside
    those kept before it."""
    prof = new_profile(2 * len(jobs) + 2, 1, 0)
    prof.times[0], prof.cpus[0, 0], prof.mem[0, 0], prof.size[0] = 0.0, cpus, 0, 1
    booked = []
    for start, duration, need in jobs:
        plan = np.array([need], dtype=np.int64)
        _take(prof, start, duration, 0, 0, plan, 1)
        if (prof.cpus[: prof.size[0]] < 0).any():
            _take(prof, start, duration, 0, 0, plan, -1)
        else:
            booked.append((start, duration, need))
    return booked


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=booked_profiles(), pick=st.integers(0, 11))
def test_a_job_stays_exactly_when_its_earliest_slot_is_its_own(
    case: tuple[int, list[tuple[float, float, int]]], pick: int
) -> None:
    """A job asking only CPUs of one pool is left unsearched exactly when, taken out of
    the profile, its earliest slot is where it is booked (so compression would not move
    it)."""
    cpus, jobs = case
    booked = _fitting(cpus, jobs)
    prof = new_profile(64, 1, 0)
    prof.times[0], prof.cpus[0, 0], prof.mem[0, 0], prof.size[0] = 0.0, cpus, 0, 1
    for start, duration, need in booked:
        _take(prof, start, duration, 0, 0, np.array([need], dtype=np.int64), 1)
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


def _planning(
    cpus: int, booked: list[tuple[float, float, int]], order: list[int], mem: bool
) -> Planning:
    """A pass of conservative backfilling on a one-pool machine of ``cpus`` CPUs with
    ``booked`` jobs (start, duration, CPUs) held where they are, waiting in ``order``;
    with ``mem`` the first job asks memory too (so it takes the general search)."""
    n = len(booked)
    prof = new_profile(4 * n + 8, 1, 0)
    prof.times[0], prof.cpus[0, 0], prof.mem[0, 0], prof.size[0] = 0.0, cpus, 10**6, 1
    for start, duration, need in booked:
        _take(prof, start, duration, 0, 0, np.array([need], dtype=np.int64), 1)
    waiting = np.array(order, dtype=np.int64)
    zero = np.zeros(n, dtype=np.int64)
    job_mem = zero.copy()
    if mem:
        job_mem[0] = 1
    state = ProfileState(
        0.0, zero[:1], zero[:1], np.zeros(0), zero[:0], zero, zero, zero, zero, job_mem,
        zero, zero[:1], zero[:1], zero[:0], zero[:0],
    )  # fmt: skip
    jobs = JobArrays(
        np.array([b[2] for b in booked], dtype=np.int64),
        zero,
        np.array([b[1] for b in booked]),
        zero,
        np.ones((1, 1), dtype=np.bool_),
        zero,
    )
    plan = new_pass_plan(n, 1)
    for k, job in enumerate(order):
        plan.starts[k] = booked[job][0]
        plan.plans[k, 0] = booked[job][2]
        plan.booked[k] = True
    counts = no_limits(zero, 1)
    return Planning(prof, state, jobs, counts, waiting, plan)


def _compress_by_definition(pl: Planning) -> None:
    """Mu'alem and Feitelson's compression as defined: each booked job in priority order
    taken out, placed at the earliest slot the full search finds (on whichever of its
    pools, node shapes, memory and GPUs) if that is earlier than its own, and put back
    (where it was, on the pools it had, if not: a job only moves earlier)."""
    prof, state, jobs, _counts, waiting, plan = pl
    for k, job in enumerate(waiting.tolist()):
        duration = jobs.estimate[job]
        per_cpu, gpn = int(state.job_mem[job]), int(state.job_gpn[job])
        _take(prof, plan.starts[k], duration, per_cpu, gpn, plan.plans[k], -1)
        need, ppn = int(jobs.cpus[job]), int(jobs.ppn[job])
        mask = jobs.masks[jobs.mask_of[job]]
        i = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, False, plan.room)
        if prof.times[i] < plan.starts[k]:
            _first_fit(plan.room, need, plan.plans[k])
            plan.starts[k] = prof.times[i]
        _take(prof, plan.starts[k], duration, per_cpu, gpn, plan.plans[k], 1)


def _free_over_time(pl: Planning) -> list[tuple[float, int]]:
    """The profile's free CPUs as (time, CPUs) where they change (whatever the steps)."""
    prof = pl.prof
    points: list[tuple[float, int]] = []
    for s in range(prof.size[0]):
        if not points or points[-1][1] != prof.cpus[s, 0]:
            points.append((float(prof.times[s]), int(prof.cpus[s, 0])))
    return points


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=booked_profiles(6, 40, 120),
    ended=st.lists(st.integers(0, 39), max_size=6),
    shuffle=st.randoms(use_true_random=False),
    mem=st.booleans(),
)
def test_compression_moves_every_job_where_the_definition_does(
    case: tuple[int, list[tuple[float, float, int]]],
    ended: list[int],
    shuffle: random.Random,
    mem: bool,
) -> None:
    """Compression (its shortcuts: the stretches and running maximum kept across moves,
    the slot read from the stretches) gives every job the start and the profile that
    taking each job out and searching from the front gives, in a random priority order,
    after some booked jobs ended early (left the profile)."""
    cpus, jobs = case
    booked = _fitting(cpus, jobs)
    gone = {e % len(booked) for e in ended}
    kept = [b for j, b in enumerate(booked) if j not in gone] or booked[:1]
    order = list(range(len(kept)))
    shuffle.shuffle(order)
    assert_compresses_as_defined(cpus, kept, order, mem)


def assert_compresses_as_defined(
    cpus: int, booked: list[tuple[float, float, int]], order: list[int], mem: bool
) -> None:
    """Compression of ``booked`` (see :func:`_planning`) gives every job the start and
    the profile the definition gives."""
    ours = _planning(cpus, booked, order, mem)
    reference = _planning(cpus, booked, order, mem)
    _compress(ours)
    _compress_by_definition(reference)
    assert ours.plan.starts.tolist() == reference.plan.starts.tolist()
    assert _free_over_time(ours) == _free_over_time(reference)
