"""Hand-computed passes of the reservation rules (:mod:`queuesim.core.planning`): promises
booked where they were made, or moved when a running job outlived its estimate;
compression moving booked jobs forward; greedy blocking of the pools a reservation could
use. Guards the mutation check's survivors of those rules (``.ci/maintain mutation``,
issue 20). Each case calls :func:`~queuesim.core.planning.plan_pass` directly on a
profile small enough to draw (compiled, or as Python under the mutation runner).

Jobs are numbered running first, then waiting; a pool is a node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from queuesim.core.planning import plan_pass
from queuesim.core.profile import NEVER, JobArrays, PassRules, ProfileState, Promises, no_limits

#: conservative backfilling: every job may reserve, with compression
CONSERVATIVE = PassRules(depth=1 << 30, backfill=True, greedy=False, compress=True)


@dataclass
class Machine:
    """Pools of ``cpus`` CPUs (and ``mem`` memory units, ``gpus`` GPUs) each."""

    cpus: Sequence[int]
    mem: Sequence[int] | None = None
    gpus: Sequence[int] | None = None


@dataclass
class Job:
    """A job: CPUs, the runtime the scheduler plans with, memory per CPU, CPUs and GPUs
    per node, the pools it may use (None: all)."""

    cpus: int
    estimate: float
    per_cpu: int = 0
    ppn: int = 0
    gpn: int = 0
    pools: Sequence[bool] | None = None


@dataclass
class Running:
    """A running job: its job, its expected end and its CPUs per pool."""

    job: Job
    end: float
    on: Sequence[int]


@dataclass
class Waiting:
    """A waiting job and the promise it was given at the last pass (start, CPUs per pool)."""

    job: Job
    promise: float = NEVER
    plan: Sequence[int] = field(default_factory=list)


def plan(
    machine: Machine,
    now: float,
    running: Sequence[Running],
    waiting: Sequence[Waiting],
    rules: PassRules = CONSERVATIVE,
    promises: bool = True,
) -> tuple[list[float], list[list[int]]]:
    """One pass: each waiting job's planned start and CPUs per pool."""
    pools = len(machine.cpus)
    jobs = [r.job for r in running] + [w.job for w in waiting]
    n = len(jobs)
    caps = np.array(machine.cpus, dtype=np.int64)
    mem_caps = np.array(machine.mem if machine.mem else [1 << 40] * pools, dtype=np.int64)
    gpu_caps = np.array(machine.gpus if machine.gpus else [], dtype=np.int64)
    free, free_mem, free_gpus = caps.copy(), mem_caps.copy(), gpu_caps.copy()
    alloc_start = np.zeros(n, dtype=np.int64)
    alloc_len = np.zeros(n, dtype=np.int64)
    alloc_pool: list[int] = []
    alloc_cpus: list[int] = []
    for number, r in enumerate(running):
        alloc_start[number] = len(alloc_pool)
        for p, cpus in enumerate(r.on):
            if cpus:
                alloc_pool.append(p)
                alloc_cpus.append(cpus)
                free[p] -= cpus
                free_mem[p] -= cpus * r.job.per_cpu
                if free_gpus.size:
                    free_gpus[p] -= r.job.gpn
        alloc_len[number] = len(alloc_pool) - alloc_start[number]
    state = ProfileState(
        float(now),
        free,
        free_mem,
        np.array([r.end for r in running], dtype=np.float64),
        np.arange(len(running), dtype=np.int64),
        alloc_start,
        alloc_len,
        np.array(alloc_pool, dtype=np.int64),
        np.array(alloc_cpus, dtype=np.int64),
        np.array([j.per_cpu for j in jobs], dtype=np.int64),
        np.array([j.gpn for j in jobs], dtype=np.int64),
        caps,
        mem_caps,
        free_gpus,
        gpu_caps,
    )
    masks = np.array([j.pools if j.pools else [True] * pools for j in jobs], dtype=np.bool_)
    arrays = JobArrays(
        np.array([j.cpus for j in jobs], dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.array([j.estimate for j in jobs], dtype=np.float64),
        np.array([j.ppn for j in jobs], dtype=np.int64),
        masks,
        np.arange(n, dtype=np.int64),
    )
    given = Promises(
        np.array([w.promise for w in waiting], dtype=np.float64),
        np.array([w.plan or [0] * pools for w in waiting], dtype=np.int64).reshape(-1, pools),
    )
    if not promises:
        given = Promises(np.zeros(0), np.zeros((0, pools), dtype=np.int64))
    order = np.arange(len(running), n, dtype=np.int64)
    starts, plans, _held = plan_pass(state, arrays, no_limits(arrays.queue, 1), order, rules, given)
    return starts.tolist(), plans.tolist()


NO_COMPRESSION = CONSERVATIVE._replace(compress=False)


def test_a_promise_whose_pool_is_still_busy_moves_to_a_free_pool_at_its_time() -> None:
    """Two nodes of 2 CPUs; W was promised node 0 at t=10 for 10 s, but the job there now
    runs until 15 (it outlived its estimate): W is booked at 10 on node 1, which is free
    (without compression it stays at 10; with it, it moves to now on node 1)."""
    machine = Machine([2, 2])
    busy = Running(Job(2, 10.0), end=15.0, on=[2, 0])
    w = Waiting(Job(2, 10.0), promise=10.0, plan=[2, 0])
    assert plan(machine, 5.0, [busy], [w], NO_COMPRESSION) == ([10.0], [[0, 2]])
    assert plan(machine, 5.0, [busy], [w]) == ([5.0], [[0, 2]])


def test_a_moved_promise_takes_its_cpus_once_and_jobs_without_one_are_placed_after() -> None:
    """Two nodes of 2 CPUs at t=5; R holds node 0 until 15 (it outlived its estimate). W1
    (2 CPUs, 10 s) was promised node 0 at 10: node 1 holds it exactly then, so it is
    booked there (10-20). W2 (2 CPUs, 10 s, no promise) then reserves node 0 at 15, when
    R ends: node 1 is W1's until 20."""
    machine = Machine([2, 2])
    busy = Running(Job(2, 10.0), end=15.0, on=[2, 0])
    w1 = Waiting(Job(2, 10.0), promise=10.0, plan=[2, 0])
    w2 = Waiting(Job(2, 10.0))
    assert plan(machine, 5.0, [busy], [w1, w2], NO_COMPRESSION) == (
        [10.0, 15.0],
        [[0, 2], [2, 0]],
    )
    # with compression W1 moves to now on node 1 (5-15); W2 still waits for 15
    assert plan(machine, 5.0, [busy], [w1, w2]) == ([5.0, 15.0], [[0, 2], [2, 0]])


def test_a_promise_without_its_pools_is_booked_on_the_pools_free_at_its_time() -> None:
    """One node of 4 CPUs at t=0, R holds 2 until 10. W was promised t=10 but not where
    (its plan is all zero, unknown): it is booked at 10 on the node, 2 CPUs; compression
    then moves it to now, beside R."""
    machine = Machine([4])
    busy = Running(Job(2, 10.0), end=10.0, on=[2])
    w = Waiting(Job(2, 5.0), promise=10.0, plan=[0])
    assert plan(machine, 0.0, [busy], [w], NO_COMPRESSION) == ([10.0], [[2]])
    assert plan(machine, 0.0, [busy], [w]) == ([0.0], [[2]])


def test_a_promise_that_fits_nowhere_at_its_time_is_placed_afresh() -> None:
    """One node of 4 CPUs at t=5; R holds all 4 until 20 (it outlived its estimate of 10).
    W (4 CPUs) was promised t=10: nothing is free then, so it gets the first slot again,
    20, when R ends; W2 (1 CPU, no promise) reserves after it, at 30."""
    machine = Machine([4])
    busy = Running(Job(4, 5.0), end=20.0, on=[4])
    w = Waiting(Job(4, 10.0), promise=10.0, plan=[4])
    w2 = Waiting(Job(1, 10.0))
    assert plan(machine, 5.0, [busy], [w, w2], NO_COMPRESSION) == ([20.0, 30.0], [[4], [1]])
    assert plan(machine, 5.0, [busy], [w, w2]) == ([20.0, 30.0], [[4], [1]])


def test_compression_on_two_nodes_moves_a_job_to_the_other_node() -> None:
    """Two nodes of 2 CPUs at t=5; R holds node 0 until 20. W was promised node 1 at 20
    (room appeared there since): compression moves it to now on node 1 - node 0 alone,
    busy until W's slot, would have kept it at 20."""
    machine = Machine([2, 2])
    busy = Running(Job(2, 20.0), end=20.0, on=[2, 0])
    w = Waiting(Job(2, 10.0), promise=20.0, plan=[0, 2])
    assert plan(machine, 5.0, [busy], [w], NO_COMPRESSION) == ([20.0], [[0, 2]])
    assert plan(machine, 5.0, [busy], [w]) == ([5.0], [[0, 2]])


def test_compression_moves_a_job_into_a_window_before_a_busier_step() -> None:
    """One node of 4 CPUs at t=0, nothing running. X (2 CPUs, 5 s) was promised 20, Y (4
    CPUs, 10 s) 10: the step before X's slot (10-20, Y's) has no CPU free, but 0-10 has
    4, so compression moves X to now (0-5); Y then moves to 5, when X ends."""
    machine = Machine([4])
    x = Waiting(Job(2, 5.0), promise=20.0, plan=[2])
    y = Waiting(Job(4, 10.0), promise=10.0, plan=[4])
    assert plan(machine, 0.0, [], [x, y], NO_COMPRESSION) == ([20.0, 10.0], [[2], [4]])
    assert plan(machine, 0.0, [], [x, y]) == ([0.0, 5.0], [[2], [4]])


def test_compression_after_a_job_moved_sees_the_room_it_left() -> None:
    """One node of 4 CPUs at t=0; R holds 2 until 10. X (2 CPUs, 10 s) was promised 10,
    Y (4 CPUs, 5 s) 20, W (2 CPUs, 5 s) 15. Compression moves X to now beside R, which
    frees 10-15 entirely: Y moves there (the step before its slot, 15-20, holds W); W
    then stays at 15 (nothing before it has 2 CPUs free)."""
    machine = Machine([4])
    busy = Running(Job(2, 10.0), end=10.0, on=[2])
    x = Waiting(Job(2, 10.0), promise=10.0, plan=[2])
    y = Waiting(Job(4, 5.0), promise=20.0, plan=[4])
    w = Waiting(Job(2, 5.0), promise=15.0, plan=[2])
    assert plan(machine, 0.0, [busy], [x, y, w], NO_COMPRESSION)[0] == [10.0, 20.0, 15.0]
    assert plan(machine, 0.0, [busy], [x, y, w]) == ([0.0, 10.0, 15.0], [[2], [4], [2]])


#: EASY with greedy blocking (paper 004, 3.1); and conservative with it
GREEDY_EASY = PassRules(depth=1, backfill=True, greedy=True, compress=False)
GREEDY_CONSERVATIVE = CONSERVATIVE._replace(greedy=True)


def test_greedy_blocking_closes_every_node_the_reserved_job_could_use_until_it_starts() -> None:
    """Two nodes of 4 CPUs at t=0; R1 holds node 0 until 10, R2 2 CPUs of node 1 until
    20. H (6 CPUs) reserves t=10 on 4 + 2 CPUs. B (1 CPU) would start now on node 1; with
    greedy blocking both nodes are H's until 10, so B cannot start (and EASY gives it no
    reservation)."""
    machine = Machine([4, 4])
    running = [Running(Job(4, 10.0), 10.0, [4, 0]), Running(Job(2, 20.0), 20.0, [0, 2])]
    waiting = [Waiting(Job(6, 10.0)), Waiting(Job(1, 5.0))]
    easy = GREEDY_EASY._replace(greedy=False)
    assert plan(machine, 0.0, running, waiting, easy) == ([10.0, 0.0], [[4, 2], [0, 1]])
    assert plan(machine, 0.0, running, waiting, GREEDY_EASY, False) == (
        [10.0, NEVER],
        [[4, 2], [0, 0]],
    )


def test_greedy_blocking_covers_every_step_before_the_reservation_and_only_those() -> None:
    """Two nodes of 4 CPUs at t=0. Node 0: R1 (2 CPUs) until 15, R3 (2) until 5; node 1:
    R2 (4) until 20. H (4 CPUs, node 0 only) reserves 15 on node 0, which is blocked over
    0-5 and 5-15: C (2 CPUs) cannot take node 0's 2 free CPUs at 5 and waits for node 1,
    at 20 (node 1, outside H's nodes, is not blocked)."""
    machine = Machine([4, 4])
    running = [
        Running(Job(2, 15.0), 15.0, [2, 0]),
        Running(Job(4, 20.0), 20.0, [0, 4]),
        Running(Job(2, 5.0), 5.0, [2, 0]),
    ]
    waiting = [Waiting(Job(4, 10.0, pools=[True, False])), Waiting(Job(2, 5.0))]
    assert plan(machine, 0.0, running, waiting, CONSERVATIVE, False) == (
        [15.0, 5.0],
        [[4, 0], [2, 0]],
    )
    assert plan(machine, 0.0, running, waiting, GREEDY_CONSERVATIVE, False) == (
        [15.0, 20.0],
        [[4, 0], [0, 2]],
    )


def test_greedy_blocking_leaves_the_reservation_s_own_step_open() -> None:
    """One node of 4 CPUs at t=0, R holds all until 10. H (2 CPUs) reserves 10; C (2
    CPUs) reserves 10 too, beside it: blocking stops where H starts."""
    machine = Machine([4])
    running = [Running(Job(4, 10.0), 10.0, [4])]
    waiting = [Waiting(Job(2, 10.0)), Waiting(Job(2, 5.0))]
    assert plan(machine, 0.0, running, waiting, GREEDY_CONSERVATIVE, False) == (
        [10.0, 10.0],
        [[2], [2]],
    )


def test_greedy_blocking_spares_nodes_without_the_gpus_the_job_needs() -> None:
    """Two nodes of 2 CPUs, node 1 with a GPU (held by R until 10), node 0 without. H (1
    CPU and 1 GPU per node) reserves node 1 at 10: node 1 is blocked until then, so B
    (node 1 only) cannot start; node 0 could hold no part of H and stays open to B2."""
    machine = Machine([2, 2], gpus=[0, 1])
    running = [Running(Job(1, 10.0, ppn=1, gpn=1), 10.0, [0, 1])]
    h = Waiting(Job(1, 10.0, ppn=1, gpn=1))
    b = Waiting(Job(1, 5.0, pools=[False, True]))
    b2 = Waiting(Job(1, 5.0))
    assert plan(machine, 0.0, running, [h, b, b2], GREEDY_EASY._replace(greedy=False), False) == (
        [10.0, 0.0, 0.0],
        [[0, 1], [0, 1], [1, 0]],
    )
    assert plan(machine, 0.0, running, [h, b, b2], GREEDY_EASY, False) == (
        [10.0, NEVER, 0.0],
        [[0, 1], [0, 0], [1, 0]],
    )
