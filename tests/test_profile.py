"""The availability profile's running minima (:mod:`queuesim.core.profile`): whether a job
fits now, read from the minima, is what the step-by-step scan finds, however the profile
was changed before (steps split, CPUs taken and given back, rebuilt)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.core.kept_profile import _drop_past, _fits
from queuesim.core.planning import _stop_queue
from queuesim.core.profile import (
    Profile,
    _block_move,
    _earliest,
    _first_fit,
    _move_rows,
    _split,
    _split_reclaiming,
    _take,
    _take_all,
    new_profile,
)

#: examples per property (the mutation runner asks fewer)
EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "150"))


@st.composite
def profiles_and_changes(
    draw: st.DrawFn,
) -> tuple[Profile, list[tuple[bool, float, float, list[int]]]]:
    """A profile of 1 to 4 pools (memory, sometimes GPUs) over up to 8 steps, and up to 6
    changes: a step split, or CPUs (and memory) taken or given back over a window."""
    pools = draw(st.integers(1, 4))
    gpu_pools = pools if draw(st.booleans()) else 0
    steps = draw(st.integers(1, 8))
    prof = new_profile(steps + 40, pools, gpu_pools)
    gaps = draw(st.lists(st.integers(1, 50), min_size=steps - 1, max_size=steps - 1))
    prof.times[:steps] = np.concatenate([[0.0], np.cumsum(gaps)]).astype(float)
    for s in range(steps):
        for p in range(pools):
            prof.cpus[s, p] = draw(st.integers(0, 16))
            prof.mem[s, p] = draw(st.integers(0, 64))
        for p in range(gpu_pools):
            prof.gpus[s, p] = draw(st.integers(0, 4))
    prof.size[0] = steps
    prof.low_upto[0] = 0
    changes = []
    for _ in range(draw(st.integers(0, 6))):
        start = float(draw(st.integers(0, 300)))
        duration = float(draw(st.integers(1, 200)))
        plan = [draw(st.integers(-2, 3)) for _ in range(pools)]
        changes.append((draw(st.booleans()), start, duration, plan))
    return prof, changes


def takes_of(memory: list[int]) -> st.SearchStrategy[list[tuple[int, int, int, int, list[int]]]]:
    """Up to 6 takes of CPUs over a window: start, duration, memory per CPU (one of
    ``memory``), GPUs on each pool used, CPUs of each of up to 4 pools."""
    return st.lists(
        st.tuples(
            st.integers(0, 300),
            st.integers(1, 200),
            st.sampled_from(memory),
            st.sampled_from([0, 1]),
            st.lists(st.integers(0, 3), min_size=4, max_size=4),
        ),
        max_size=6,
    )


def _assert_fits_now_as_the_scan_finds(
    prof: Profile, need: int, per_cpu: int, ppn: int, gpn: int, mask: np.ndarray, duration: float
) -> None:
    pools = mask.shape[0]
    fast_room = np.full(pools, -7, dtype=np.int64)
    scan_room = np.full(pools, -7, dtype=np.int64)
    fast = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, True, fast_room)
    # without now_only the scan looks at every start from step 0: it answers 0 exactly
    # when the job fits now, and a first fit takes the job from the same pools
    scan = _earliest(prof, need, per_cpu, ppn, gpn, mask, duration, False, scan_room)
    assert (fast == 0) == (scan == 0)
    assert fast in (0, -1)
    if fast == 0:
        fast_plan, scan_plan = np.zeros(pools, np.int64), np.zeros(pools, np.int64)
        _first_fit(fast_room, need, fast_plan)
        _first_fit(scan_room, need, scan_plan)
        assert fast_plan.tolist() == scan_plan.tolist()


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=profiles_and_changes(),
    jobs=st.lists(
        st.tuples(
            st.integers(1, 20),  # need
            st.sampled_from([0, 0, 1, 4]),  # memory per CPU
            st.sampled_from([0, 0, 1, 2]),  # CPUs per node
            st.sampled_from([0, 0, 1]),  # GPUs per node
            st.integers(1, 400),  # duration
            st.integers(0, 15),  # mask bits
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_fits_now_from_the_running_minima_is_what_the_step_by_step_scan_finds(
    data: tuple[Profile, list[tuple[bool, float, float, list[int]]]],
    jobs: list[tuple[int, int, int, int, int, int]],
) -> None:
    """Asked before and after every change of the profile (so the minima are extended,
    cut back and extended again), the fast answer equals the scan's."""
    prof, changes = data
    pools = prof.cpus.shape[1]
    has_gpus = prof.gpus.shape[1] > 0

    def ask() -> None:
        for need, per_cpu, ppn, gpn, duration, bits in jobs:
            mask = np.array([(bits >> p) & 1 == 1 or p == 0 for p in range(pools)])
            gpus = gpn if has_gpus and ppn else 0
            _assert_fits_now_as_the_scan_finds(
                prof, need, per_cpu, ppn, gpus, mask, float(duration)
            )

    ask()
    for split_only, start, duration, plan in changes:
        if split_only:
            _split(prof, start)
        else:
            taken = np.array(plan, dtype=np.int64)
            _take(prof, start, duration, 1, 0, taken, 1)
            steps = prof.size[0]
            if (prof.cpus[:steps] < 0).any() or (prof.mem[:steps] < 0).any():
                # more than was free: no pass makes such a change (a pool short of
                # CPUs would offer a job less than nothing, in sums over pools only)
                _take(prof, start, duration, 1, 0, taken, -1)
        ask()


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=profiles_and_changes(),
    takes=takes_of(memory=[0, 1, 2]),
)
def test_taking_all_at_once_gives_the_profile_of_taking_each_in_turn(
    data: tuple[Profile, list[tuple[bool, float, float, list[int]]]],
    takes: list[tuple[int, int, int, int, list[int]]],
) -> None:
    """Where every take leaves no CPUs, memory or GPUs below zero, the one sweep gives the
    same steps and free resources as the takes one by one; where one would, it refuses
    and leaves the profile untouched."""
    prof, _ = data
    pools, has_gpus = prof.cpus.shape[1], prof.gpus.shape[1] > 0
    starts = np.array([float(t[0]) for t in takes])
    durations = np.array([float(t[1]) for t in takes])
    per_cpu = np.array([t[2] for t in takes], dtype=np.int64)
    gpn = np.array([t[3] if has_gpus else 0 for t in takes], dtype=np.int64)
    plans = np.array([t[4][:pools] for t in takes], dtype=np.int64).reshape(len(takes), pools)

    def copy(source: Profile) -> Profile:
        return Profile(*(field.copy() for field in source))

    def state(of: Profile) -> tuple[list[float], list[list[int]], list[list[int]], list[list[int]]]:
        n = int(of.size[0])
        return (
            of.times[:n].tolist(),
            of.cpus[:n].tolist(),
            of.mem[:n].tolist(),
            of.gpus[:n].tolist(),
        )

    one_by_one = copy(prof)
    for k in range(len(takes)):
        _take(one_by_one, starts[k], durations[k], per_cpu[k], gpn[k], plans[k], 1)
    below_zero = any(
        (getattr(one_by_one, name)[: one_by_one.size[0]] < 0).any()
        for name in ("cpus", "mem", "gpus")
    )
    before = state(prof)
    at_once = copy(prof)
    took = _take_all(at_once, starts, durations, per_cpu, gpn, plans)
    assert took == (not below_zero)
    assert state(at_once) == (state(one_by_one) if took else before)


def test_closing_pools_for_slurms_stopped_queue_is_seen_by_the_next_fits_now_question() -> None:
    """After a question has filled the running minima, Slurm's main scheduler closes the
    pools of a job that could not start: a job that fitted there no longer fits now."""
    prof = new_profile(8, 2, 0)
    prof.times[:2] = [0.0, 100.0]
    prof.cpus[:2] = [[4, 4], [4, 4]]
    prof.mem[:2] = 0
    prof.size[0] = 2
    room = np.zeros(2, dtype=np.int64)
    first_pool = np.array([True, False])
    assert _earliest(prof, 2, 0, 0, 0, first_pool, 50.0, True, room) == 0
    _stop_queue(prof, first_pool, np.zeros(1, dtype=np.bool_), 0)
    assert _earliest(prof, 2, 0, 0, 0, first_pool, 50.0, True, room) == -1
    assert _earliest(prof, 2, 0, 0, 0, np.array([False, True]), 50.0, True, room) == 0


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=profiles_and_changes(), at=st.lists(st.integers(0, 400), min_size=1, max_size=6))
def test_a_split_inserts_a_copy_of_the_step_it_cuts_and_moves_nothing_else(
    data: tuple[Profile, list[tuple[bool, float, float, list[int]]]], at: list[int]
) -> None:
    """Splitting at a time inside a step gives the profile with that step repeated from the
    time on, every pool's CPUs, memory and GPUs as before (the block move of the later
    steps equals inserting a copy); at a step's start it changes nothing."""
    prof, _ = data
    for t in at:
        steps = prof.size[0]
        times, cpus = prof.times[:steps].copy(), prof.cpus[:steps].copy()
        mem, gpus = prof.mem[:steps].copy(), prof.gpus[:steps].copy()
        k = _split(prof, float(t))
        cut = int(np.searchsorted(times, t, side="right")) - 1
        if times[cut] == t:
            assert k == cut and prof.size[0] == steps
            want_times, want = times, [cpus, mem, gpus]
        else:
            assert k == cut + 1 and prof.size[0] == steps + 1
            want_times = np.insert(times, k, float(t))
            want = [np.insert(a, k, a[cut], axis=0) for a in (cpus, mem, gpus)]
        size = prof.size[0]
        assert (prof.times[:size] == want_times).all()
        for got, expected in zip((prof.cpus, prof.mem, prof.gpus), want, strict=True):
            assert (got[:size] == expected).all()


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=profiles_and_changes(),
    takes=takes_of(memory=[0]),
    asks=st.lists(
        st.tuples(
            st.integers(1, 12),  # CPUs
            st.sampled_from([0, 2]),  # CPUs per node
            st.sampled_from([0, 1]),  # GPUs per node
            st.integers(1, 300),  # duration
            st.booleans(),  # now only
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_profile_without_memory_columns_plans_as_one_whose_memory_no_job_asks(
    data: tuple[Profile, list[tuple[bool, float, float, list[int]]]],
    takes: list[tuple[int, int, int, int, list[int]]],
    asks: list[tuple[int, int, int, int, bool]],
) -> None:
    """The compiled run keeps no memory columns when no job asks memory (a split then
    moves half the bytes). Against a profile holding each pool's memory, the same at
    every step as no job takes any, the same splits, takes (one by one, all at once, and
    given back), merges of equal steps and searches give the same steps, free CPUs and
    GPUs, and the same answers."""
    prof, changes = data
    pools, gpu_pools = prof.cpus.shape[1], prof.gpus.shape[1]
    steps = int(prof.size[0])
    with_mem = Profile(*(field.copy() for field in prof))
    with_mem.mem[:steps] = with_mem.mem[0]  # no job takes memory: the same at every step
    without = new_profile(prof.times.shape[0], pools, gpu_pools, 0)
    assert without.mem.shape == (prof.times.shape[0], 0)
    without.times[:steps] = prof.times[:steps]
    without.cpus[:steps] = prof.cpus[:steps]
    without.gpus[:steps] = prof.gpus[:steps]
    without.size[0] = steps
    without.low_upto[0] = 0

    def seen(of: Profile) -> tuple[list[float], list[list[int]], list[list[int]]]:
        n = int(of.size[0])
        return of.times[:n].tolist(), of.cpus[:n].tolist(), of.gpus[:n].tolist()

    for one in (with_mem, without):
        for split, start, duration, plan in changes:
            if split:
                _split_reclaiming(one, max(start, float(one.times[0])), 0)
            else:
                given = np.array([max(c, 0) for c in plan], dtype=np.int64)
                _take(one, max(start, float(one.times[0])), duration, 0, 0, given, -1)
    assert seen(with_mem) == seen(without)
    first = [max(float(t[0]), float(prof.times[0])) for t in takes]
    starts = np.array(first)
    durations = np.array([float(t[1]) for t in takes])
    gpn = np.array([t[3] if gpu_pools else 0 for t in takes], dtype=np.int64)
    plans = np.array([t[4][:pools] for t in takes], dtype=np.int64).reshape(len(takes), pools)
    no_mem = np.zeros(len(takes), dtype=np.int64)
    took = [_take_all(one, starts, durations, no_mem, gpn, plans) for one in (with_mem, without)]
    assert took[0] == took[1]
    assert seen(with_mem) == seen(without)
    mask = np.ones(pools, dtype=np.bool_)
    for need, ppn, gpn_ask, duration, now_only in asks:
        gpn_ask = gpn_ask if gpu_pools else 0
        rooms = [np.full(pools, -7, dtype=np.int64) for _ in range(2)]
        found = [
            _earliest(one, need, 0, ppn, gpn_ask, mask, float(duration), now_only, room)
            for one, room in zip((with_mem, without), rooms, strict=True)
        ]
        assert found[0] == found[1]
        assert rooms[0].tolist() == rooms[1].tolist()
        if found[0] >= 0:
            taken = np.zeros(pools, dtype=np.int64)
            _first_fit(rooms[0], need, taken)
            for one in (with_mem, without):
                _take(one, float(one.times[found[0]]), float(duration), 0, gpn_ask, taken, 1)
            assert seen(with_mem) == seen(without)
    for one in (with_mem, without):
        _drop_past(one, float(one.times[0]))
    assert seen(with_mem) == seen(without)
    assert _fits(with_mem) == _fits(without)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    capacity=st.integers(1, 12),
    width=st.integers(0, 5),
    flat=st.booleans(),
    cut=st.data(),
)
def test_moving_rows_is_numpys_overlapping_copy_and_touches_nothing_else(
    capacity: int, width: int, flat: bool, cut: st.DataObject
) -> None:
    """A profile's block move of rows (one memmove per array; interpreted, numpy's copy)
    moves ``count`` rows from row ``at`` to row ``to``, up or down, overlapping or not, as
    numpy's copy of the slices does, in 1-D arrays (the step times) and 2-D ones of any
    width, none included (no memory or GPU columns); every other row keeps what it held."""
    count = cut.draw(st.integers(0, capacity))
    at = cut.draw(st.integers(0, capacity - count))
    to = cut.draw(st.integers(0, capacity - count))
    shape = (capacity,) if flat else (capacity, width)
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 7 + 3
    expected = array.copy()
    expected[to : to + count] = array[at : at + count].copy()
    interpreted = array.copy()
    _move_rows(array, to, at, count)
    _move_rows.py_func(interpreted, to, at, count)
    assert array.tolist() == expected.tolist()
    assert interpreted.tolist() == expected.tolist()


def test_a_block_move_in_python_refuses_an_array_it_would_copy_rather_than_view() -> None:
    """Interpreted, the block move works on a flat view of the array; an array that is not
    C-contiguous would be copied and the move lost, so it is refused (as the compiled
    version refuses to compile for one)."""
    strided = np.arange(16, dtype=np.int64).reshape(4, 4)[:, ::2]
    with pytest.raises(TypeError, match="C-contiguous"):
        _block_move(strided, 0, 1, 1)
