"""The backfill fit test of the availability profile (:mod:`queuesim.core.profile`)
against a reference written here from its definition, with no shared code: a job of
``need`` CPUs fits from step ``i`` when, over every step its window touches (from step
``i`` up to the last step that starts before ``times[i] + duration``), the pools of its
mask together offer ``need`` CPUs - a pool offering what its least free CPUs, memory
(``// per_cpu``) and GPUs (none below ``gpn``) allow, and with ``ppn`` exactly ``ppn`` or
nothing. Guards the mutation check's survivors of the fit test (``.ci/maintain mutation``,
issue 20): comparisons off by one at a window's end, at an exact fit, at an exact GPU
count. The kernels are called directly, compiled or (under the mutation runner) as Python.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.core.profile import (
    Profile,
    _earliest,
    _fits_now,
    _fits_plan,
    _split,
    _take,
    _window_end,
    new_profile,
)

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "60"))


def profile(times: list[float], cpus: list[list[int]], mem: list[list[int]] | None = None,
            gpus: list[list[int]] | None = None) -> Profile:  # fmt: skip
    """A profile of the given steps (rows) and pools (columns); the spare rows beyond them
    hold stale plenty (as a reused profile's do), which no kernel may read."""
    steps, pools = len(times), len(cpus[0])
    prof = new_profile(steps + 8, pools, len(gpus[0]) if gpus else 0)
    prof.times[:] = times[-1] + 1.0 + np.arange(steps + 8)
    for stale in (prof.cpus, prof.mem, prof.gpus, prof.low_cpus, prof.low_mem, prof.low_gpus):
        stale[:] = 1 << 20
    prof.times[:steps] = times
    prof.cpus[:steps] = cpus
    prof.mem[:steps] = mem if mem is not None else [[1 << 40] * pools] * steps
    if gpus:
        prof.gpus[:steps] = gpus
    prof.size[0] = steps
    prof.low_upto[0] = 0
    return prof


def offered(prof: Profile, s: int, p: int, per_cpu: int, ppn: int, gpn: int) -> int:
    """What pool ``p`` offers the job at step ``s`` alone (the reference)."""
    if gpn > 0 and int(prof.gpus[s, p]) < gpn:
        return 0
    room = int(prof.cpus[s, p])
    if per_cpu > 0:
        room = min(room, int(prof.mem[s, p]) // per_cpu)
    if ppn > 0:
        return ppn if room >= ppn else 0
    return room


def room_left(want: list[int], need: int, ppn: int) -> list[int]:
    """What :func:`_earliest` leaves in ``room`` on several pools where the definition
    offers ``want`` per pool: that, or, for a job one pool holds whole (one CPU, or one
    node's ``ppn``), its need in the first pool offering it and nothing elsewhere (the
    first fit's choice either way)."""
    if need != max(ppn, 1):
        return want
    first = next(p for p, w in enumerate(want) if w >= need)
    return [need if p == first else 0 for p in range(len(want))]


def reference_earliest(
    prof: Profile, need: int, per_cpu: int, ppn: int, gpn: int, mask: Sequence[bool] | np.ndarray,
    duration: float, first: int = 0,
) -> int:  # fmt: skip
    """The first step from ``first`` the job fits from, by the definition; -1 if none."""
    steps = int(prof.size[0])
    for i in range(first, steps):
        window = [s for s in range(i, steps) if s == i or prof.times[s] < prof.times[i] + duration]
        total = sum(
            min(offered(prof, s, p, per_cpu, 0, gpn) for s in window)
            if ppn == 0
            else (ppn if min(offered(prof, s, p, per_cpu, 0, gpn) for s in window) >= ppn else 0)
            for p in range(len(mask))
            if mask[p]
        )
        if total >= need:
            return i
    return -1


@st.composite
def cases(draw: st.DrawFn) -> tuple[Profile, int, int, int, int, list[bool], float, int]:
    """A profile of 1 to 3 pools over 1 to 5 steps at whole times (so windows often end
    exactly at a step), with memory and sometimes GPUs, and a job asking near what is free."""
    pools = draw(st.integers(1, 3))
    steps = draw(st.integers(1, 5))
    has_gpus = draw(st.booleans())
    gaps = draw(st.lists(st.integers(1, 4), min_size=steps - 1, max_size=steps - 1))
    times = [0.0, *np.cumsum(gaps).astype(float).tolist()]
    cell = st.integers(0, 4)
    grid = st.lists(st.lists(cell, min_size=pools, max_size=pools), min_size=steps, max_size=steps)
    mem = draw(st.lists(st.lists(st.integers(0, 9), min_size=pools, max_size=pools),
                        min_size=steps, max_size=steps))  # fmt: skip
    prof = profile(times, draw(grid), mem, draw(grid) if has_gpus else None)
    need = draw(st.integers(1, 8))
    per_cpu = draw(st.sampled_from([0, 0, 1, 2]))
    ppn = draw(st.sampled_from([0, 0, 1, 2, 3]))
    gpn = draw(st.sampled_from([0, 1, 2])) if has_gpus and ppn else 0
    mask = [p == 0 or draw(st.booleans()) for p in range(pools)]
    duration = float(draw(st.integers(1, 10)))
    first = draw(st.integers(0, steps - 1))
    return prof, need, per_cpu, ppn, gpn, mask, duration, first


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases())
def test_earliest_start_is_the_first_step_the_definition_lets_the_job_fit(
    case: tuple[Profile, int, int, int, int, list[bool], float, int],
) -> None:
    """The scan's first fitting step (from step 0 and from a later one), the now-only
    answer and the running minima's answer equal the definition's; the room left per pool
    is what the window offers (one pool: the need)."""
    prof, need, per_cpu, ppn, gpn, mask_list, duration, first = case
    mask = np.array(mask_list)
    pools = mask.shape[0]
    args = (need, per_cpu, ppn, gpn, mask, duration)
    room = np.full(pools, -7, dtype=np.int64)
    expected = reference_earliest(prof, *args)
    assert _earliest(prof, *args, False, room) == expected
    if expected >= 0:
        steps = int(prof.size[0])
        end = prof.times[expected] + duration
        window = [s for s in range(expected, steps) if s == expected or prof.times[s] < end]
        want = [
            min(offered(prof, s, p, per_cpu, ppn, gpn) for s in window)
            if ppn == 0
            else (ppn if min(offered(prof, s, p, per_cpu, 0, gpn) for s in window) >= ppn else 0)
            for p in range(pools)
        ]
        want = [w if mask[p] else 0 for p, w in enumerate(want)]
        assert room.tolist() == ([need] if pools == 1 else room_left(want, need, ppn))
    later = reference_earliest(prof, *args, first=first)
    assert _earliest(prof, *args, False, room, first) == later
    # now only, from a later step: that step or nothing (not step 0's answer)
    assert _earliest(prof, *args, True, room, first) == (first if later == first else -1)
    now = 0 if expected == 0 else -1
    assert _earliest(prof, *args, True, room) == now
    assert _fits_now(prof, *args, room) == now


def test_earliest_over_many_pools_and_steps_slides_to_the_definitions_first_fit() -> None:
    """Where no pool stays free over a window while no step is short in total (the scan
    then slides each pool's least room along the steps; about one case in five here), the
    first fitting step and the room left per pool are still the definition's: 600 seeded
    profiles of 2 to 4 pools over 6 to 24 steps whose 0 to 2 free CPUs move from pool to
    pool, jobs of 1 to 3 CPUs for up to 20 s."""
    rng = np.random.default_rng(20)
    for _ in range(600):
        pools, steps = int(rng.integers(2, 5)), int(rng.integers(6, 25))
        times = [0.0, *np.cumsum(rng.integers(1, 4, steps - 1)).astype(float).tolist()]
        prof = profile(times, rng.integers(0, 3, (steps, pools)).tolist())
        mask = np.array([p == 0 or bool(rng.integers(0, 2)) for p in range(pools)])
        need, ppn = int(rng.integers(1, 4)), int(rng.choice([0, 0, 1, 2]))
        duration = float(rng.integers(1, 21))
        room = np.full(pools, -7, dtype=np.int64)
        expected = reference_earliest(prof, need, 0, ppn, 0, mask, duration)
        assert _earliest(prof, need, 0, ppn, 0, mask, duration, False, room) == expected
        if expected >= 0:
            end = prof.times[expected] + duration
            window = [s for s in range(expected, steps) if s == expected or prof.times[s] < end]
            least = [min(int(prof.cpus[s, p]) for s in window) for p in range(pools)]
            want = [
                0 if not mask[p] else (w if ppn == 0 else (ppn if w >= ppn else 0))
                for p, w in enumerate(least)
            ]
            assert room.tolist() == room_left(want, need, ppn)


def test_a_window_ending_exactly_where_a_step_starts_does_not_need_that_step() -> None:
    """4 CPUs free until t=10, none after: a 10 s job fits now, an 11 s job never."""
    prof = profile([0.0, 10.0], [[4], [0]])
    room = np.zeros(1, dtype=np.int64)
    mask = np.array([True])
    assert _earliest(prof, 4, 0, 0, 0, mask, 10.0, False, room) == 0
    assert _fits_now(prof, 4, 0, 0, 0, mask, 10.0, room) == 0
    assert _earliest(prof, 4, 0, 0, 0, mask, 11.0, False, room) == -1
    assert _fits_now(prof, 4, 0, 0, 0, mask, 11.0, room) == -1


def test_a_job_asking_exactly_the_free_cpus_memory_and_gpus_fits() -> None:
    """Two pools of 2 CPUs, 4 memory units, 1 GPU: 4 CPUs of 2 units each with ppn 2 and
    1 GPU per node fit now; one memory unit, a GPU or a CPU more does not."""
    mask = np.array([True, True])
    room = np.zeros(2, dtype=np.int64)

    def fits(cpus: int, mem: int, gpus: int, per_cpu: int, ppn: int, gpn: int) -> int:
        prof = profile([0.0], [[cpus, cpus]], [[mem, mem]], [[gpus, gpus]])
        assert _fits_now(prof, 4, per_cpu, ppn, gpn, mask, 5.0, room) == _earliest(
            prof, 4, per_cpu, ppn, gpn, mask, 5.0, True, room
        )
        return _earliest(prof, 4, per_cpu, ppn, gpn, mask, 5.0, False, room)

    assert fits(2, 4, 1, 2, 2, 1) == 0
    assert room.tolist() == [2, 2]
    assert fits(2, 3, 1, 2, 2, 1) == -1  # memory for one CPU less on each node
    assert fits(2, 4, 1, 2, 2, 2) == -1  # two GPUs per node asked, one there
    assert fits(2, 4, 0, 2, 2, 1) == -1  # one GPU per node asked, none there
    assert fits(2, 1, 1, 1, 0, 0) == -1  # one memory unit a CPU, one unit on each node
    assert fits(1, 4, 1, 0, 0, 0) == -1  # 2 CPUs free, 4 asked


def test_a_node_without_the_gpus_asked_offers_no_cpu() -> None:
    """Two nodes of 2 CPUs, only the first with a GPU: a job of 2 CPUs, 1 per node, 1 GPU
    per node does not fit (now or later); it fits when both nodes have their GPU."""
    mask = np.array([True, True])
    room = np.zeros(2, dtype=np.int64)
    for gpus, expected in (([1, 0], -1), ([1, 1], 0)):
        prof = profile([0.0], [[2, 2]], [[8, 8]], [gpus])
        assert _fits_now(prof, 2, 0, 1, 1, mask, 5.0, room) == expected
        assert room.tolist() == ([1, 0] if expected < 0 else [1, 1])
        assert _earliest(prof, 2, 0, 1, 1, mask, 5.0, False, room) == expected


def test_taking_and_giving_back_changes_exactly_the_window_taken() -> None:
    """4 CPUs, memory 8: taking 3 CPUs at 2 units from t=5 for 10 s splits steps at 5 and
    15 and leaves 1 CPU and 2 units there; giving them back restores the free amounts."""
    prof = profile([0.0, 20.0], [[4], [4]], [[8], [8]])
    plan = np.array([3], dtype=np.int64)
    _take(prof, 5.0, 10.0, 2, 0, plan, 1)
    steps = int(prof.size[0])
    assert prof.times[:steps].tolist() == [0.0, 5.0, 15.0, 20.0]
    assert prof.cpus[:steps, 0].tolist() == [4, 1, 4, 4]
    assert prof.mem[:steps, 0].tolist() == [8, 2, 8, 8]
    _take(prof, 5.0, 10.0, 2, 0, plan, -1)
    assert prof.cpus[: int(prof.size[0]), 0].tolist() == [4, 4, 4, 4]
    assert prof.mem[: int(prof.size[0]), 0].tolist() == [8, 8, 8, 8]


def test_splitting_at_a_step_start_adds_no_step_and_inside_a_step_copies_it() -> None:
    """Steps at 0 and 10: a split at 10 returns step 1 and adds none; at 4 it inserts a
    copy of step 0 at index 1."""
    prof = profile([0.0, 10.0], [[4], [1]])
    assert _split(prof, 10.0) == 1
    assert int(prof.size[0]) == 2
    assert _split(prof, 4.0) == 1
    assert prof.times[:3].tolist() == [0.0, 4.0, 10.0]
    assert prof.cpus[:3, 0].tolist() == [4, 4, 1]


def test_a_promise_still_fits_when_every_pool_keeps_exactly_its_cpus_over_the_window() -> None:
    """Pools of 2 and 1 CPUs free over steps 0-1 (the second empty at step 2, outside the
    window): a plan of [2, 1] fits exactly, [2, 2] or [3, 1] do not; a pool the plan does
    not use may have nothing free; memory and GPUs count per CPU and per pool used."""
    prof = profile([0.0, 5.0, 10.0], [[2, 1], [3, 1], [0, 0]], [[4, 2], [6, 2], [0, 0]],
                   [[1, 1], [1, 0], [0, 0]])  # fmt: skip

    def fits(plan: list[int], per_cpu: int = 0, gpn: int = 0) -> bool:
        return bool(_fits_plan(prof, 0, 2, per_cpu, gpn, np.array(plan, dtype=np.int64)))

    assert fits([2, 1])
    assert not fits([2, 2])
    assert not fits([3, 1])
    assert fits([0, 0])
    prof.cpus[0, 1] = 0
    assert fits([2, 0])  # the second pool, empty now, is not used
    assert fits([2, 0], per_cpu=2)  # 4 memory units for 2 CPUs of 2
    assert not fits([2, 0], per_cpu=3)
    assert fits([2, 0], gpn=1)  # the first pool has its GPU over the window
    assert not fits([2, 0], gpn=2)


def test_a_window_ends_at_the_first_step_at_or_after_its_end() -> None:
    """Steps at 0, 5 and 10: from step 0, a 5 s window ends at step 1 (it starts at 5), a
    6 s one at step 2, a 100 s one past the last step (3); from step 1, 4 s: step 2."""
    prof = profile([0.0, 5.0, 10.0], [[1], [1], [1]])
    assert _window_end(prof, 0, 5.0) == 1
    assert _window_end(prof, 0, 6.0) == 2
    assert _window_end(prof, 0, 100.0) == 3
    assert _window_end(prof, 1, 4.0) == 2
    assert _window_end(prof, 2, 0.5) == 3


def test_after_a_window_its_pools_could_not_hold_the_scan_tries_the_very_next_step() -> None:
    """Two pools, 2 CPUs free in the first at t=0 and in the second from t=10, both from
    t=20: a 15 s job of 2 CPUs finds 2 free at every step from 0 but no pool free over
    0-15; over 10-25 the second pool is: it starts at step 1 (t=10), not later."""
    prof = profile([0.0, 10.0, 20.0], [[2, 0], [0, 2], [2, 2]])
    room = np.zeros(2, dtype=np.int64)
    mask = np.array([True, True])
    assert _earliest(prof, 2, 0, 0, 0, mask, 15.0, False, room) == 1
    assert room.tolist() == [0, 2]


@st.composite
def long_cases(draw: st.DrawFn) -> tuple[Profile, int, int, list[bool], float, int]:
    """A profile of 2 to 4 pools over up to 14 steps whose free CPUs rise and fall, and a
    job whose window spans several steps: the sliding per-pool minima of the scan slide,
    restart after a short step, and meet windows that end exactly at a step."""
    pools = draw(st.integers(2, 4))
    steps = draw(st.integers(2, 14))
    gaps = draw(st.lists(st.integers(1, 3), min_size=steps - 1, max_size=steps - 1))
    times = [0.0, *np.cumsum(gaps).astype(float).tolist()]
    cell = st.integers(0, 3)
    grid = st.lists(st.lists(cell, min_size=pools, max_size=pools), min_size=steps, max_size=steps)
    prof = profile(times, draw(grid))
    need = draw(st.integers(1, 3 * pools))
    ppn = draw(st.sampled_from([0, 0, 0, 1, 2]))
    mask = [p == 0 or draw(st.booleans()) for p in range(pools)]
    duration = float(draw(st.integers(1, 3 * steps)))
    first = draw(st.integers(0, steps - 1))
    return prof, need, ppn, mask, duration, first


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=long_cases())
def test_the_scan_over_long_windows_of_several_pools_finds_the_definitions_step(
    case: tuple[Profile, int, int, list[bool], float, int],
) -> None:
    """Over long profiles of several pools, the scan's first fitting step from step 0 and
    from a later one, and the room it leaves per pool, equal the definition's (guards the
    scan's sliding per-pool minima against the plain minimum over each window)."""
    prof, need, ppn, mask_list, duration, first = case
    mask = np.array(mask_list)
    args = (need, 0, ppn, 0, mask, duration)
    room = np.full(mask.shape[0], -7, dtype=np.int64)
    for start in (0, first):
        expected = reference_earliest(prof, *args, first=start)
        assert _earliest(prof, *args, False, room, start) == expected
        if expected >= 0:
            steps = int(prof.size[0])
            end = prof.times[expected] + duration
            window = [s for s in range(expected, steps) if s == expected or prof.times[s] < end]
            want = [
                (lambda least: least if ppn == 0 else (ppn if least >= ppn else 0))(
                    min(offered(prof, s, p, 0, 0, 0) for s in window)
                )
                if mask[p]
                else 0
                for p in range(mask.shape[0])
            ]
            assert room.tolist() == room_left(want, need, ppn)
