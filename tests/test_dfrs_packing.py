"""VCSched resource allocation (paper 003): instances, MCB packing, yield steps, heuristics.

Hand-made instances pin down the behaviour the papers describe; hypothesis checks the
properties on tiny random instances small enough for the exact MILP and brute force.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from queuesim.common.errors import ConfigError
from queuesim.policies.dfrs.instance import (
    Allocation,
    Instance,
    InstanceError,
    NoAllocationError,
    allocation_problems,
    instance_to_dict,
    load_instance,
)
from queuesim.policies.dfrs.offline import (
    backtracking_mapping,
    greedy_mapping,
    known_algorithms,
    lp_bound,
    milp_mapping,
    relaxation,
    solve,
)
from queuesim.policies.dfrs.packing import mcb_mapping, mcb_online, warm_up
from queuesim.policies.dfrs.yields import (
    YieldStep,
    average_yields,
    host_loads,
    max_min_yield,
    max_min_yields,
    step_yields,
)

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
HEURISTICS = [name for name in known_algorithms() if name != "MILP"]


def make(hosts: int, jobs: list[tuple[int, float, float]]) -> Instance:
    """An instance from (tasks, cpu_need, memory) per job."""
    tasks, cpu, mem = zip(*jobs, strict=True)
    return Instance(hosts, np.array(tasks), np.array(cpu), np.array(mem))


@st.composite
def instances(draw: st.DrawFn, max_hosts: int = 3, max_jobs: int = 4) -> Instance:
    """1-3 hosts, 1-4 jobs of 1-2 tasks; needs and memory on a 0.05 grid (ties happen)."""
    hosts = draw(st.integers(1, max_hosts))
    n = draw(st.integers(1, max_jobs))
    grid = [k / 20 for k in range(1, 21)]
    jobs = [
        (
            draw(st.integers(1, 2)),
            draw(st.sampled_from(grid)),
            draw(st.sampled_from([0.0, *grid[:14]])),
        )
        for _ in range(n)
    ]
    return make(hosts, jobs)


@st.composite
def mapped_instances(draw: st.DrawFn) -> tuple[Instance, np.ndarray]:
    """An instance without memory and any task-to-host mapping (yields only see CPU); half
    the time every job's tasks share one host, the case of 003's greedy step."""
    drawn = draw(instances(max_hosts=4, max_jobs=6))
    instance = Instance(drawn.hosts, drawn.tasks, drawn.cpu_need, np.zeros(drawn.n_jobs))
    if draw(st.booleans()):
        job_host = draw(
            st.lists(
                st.integers(0, instance.hosts - 1),
                min_size=instance.n_jobs,
                max_size=instance.n_jobs,
            )
        )
        host = np.array(job_host)[instance.task_job]
    else:
        host = np.array(
            draw(
                st.lists(
                    st.integers(0, instance.hosts - 1),
                    min_size=instance.n_tasks,
                    max_size=instance.n_tasks,
                )
            )
        )
    return instance, host


def brute_force_best_yield(instance: Instance) -> float | None:
    """Largest min yield over every memory-feasible mapping (None when there is none)."""
    best = None
    mem = instance.task_memory
    for combo in itertools.product(range(instance.hosts), repeat=instance.n_tasks):
        host = np.array(combo)
        if np.bincount(host, weights=mem, minlength=instance.hosts).max() > 1 + 1e-9:
            continue
        y = max_min_yield(instance, host)
        best = y if best is None else max(best, y)
    return best


def first_fit_decreasing_yield(instance: Instance, dimension: str) -> float | None:
    """Naive baseline: one list, sorted by decreasing CPU or memory requirement, first fit,
    tried on a 0.01 yield grid; the best min yield of the mappings it finds."""
    best = None
    for y in np.arange(1, 101) / 100:
        cpu, mem = instance.task_cpu * y, instance.task_memory
        order = np.argsort(-(cpu if dimension == "cpu" else mem), kind="stable")
        free_cpu, free_mem = np.ones(instance.hosts), np.ones(instance.hosts)
        host = np.full(instance.n_tasks, -1)
        for t in order:
            fits = np.flatnonzero((free_cpu >= cpu[t] - 1e-12) & (free_mem >= mem[t] - 1e-12))
            if fits.size == 0:
                break
            host[t] = fits[0]
            free_cpu[fits[0]] -= cpu[t]
            free_mem[fits[0]] -= mem[t]
        if (host >= 0).all():
            found = max_min_yield(instance, host)
            best = found if best is None else max(best, found)
    return best


# ------------------------------------------------------------------------------ MCB


# two CPU-heavy tasks (0.8 CPU, 0.1 memory) and two memory-heavy ones (0.2 CPU, 0.5 memory)
CPU_AND_MEMORY_HEAVY = make(2, [(1, 0.2, 0.5), (1, 0.2, 0.5), (1, 0.8, 0.1), (1, 0.8, 0.1)])
# two CPU-heavy tasks (0.5 CPU, 0.2 memory) and two memory-heavy ones (0.1 CPU, 0.8 memory)
MEMORY_TRAP = make(2, [(1, 0.5, 0.2), (1, 0.5, 0.2), (1, 0.1, 0.8), (1, 0.1, 0.8)])


def test_mcb8_pairs_cpu_heavy_with_memory_heavy_tasks_for_a_higher_yield() -> None:
    """Sorting by memory alone puts both memory-heavy tasks on one host and both CPU-heavy
    ones on the other (yield 1/1.6 = 0.625); MCB8 pairs one of each per host (yield 1)."""
    assert first_fit_decreasing_yield(CPU_AND_MEMORY_HEAVY, "memory") == pytest.approx(0.625)
    host = mcb_mapping(CPU_AND_MEMORY_HEAVY, 8)
    assert host is not None
    assert host[0] != host[1] and host[2] != host[3]
    assert max_min_yield(CPU_AND_MEMORY_HEAVY, host) == 1.0


def test_mcb8_packs_an_instance_first_fit_by_cpu_cannot() -> None:
    """First fit by decreasing CPU stacks both CPU-heavy tasks on host 0, after which the two
    0.8-memory tasks cannot share host 1: no yield works. Balancing the lists packs it."""
    assert first_fit_decreasing_yield(MEMORY_TRAP, "cpu") is None
    allocation = solve(MEMORY_TRAP, "MCB8")
    assert allocation.min_yield == 1.0
    assert allocation.problems() == []


def test_mcb8_reaches_the_optimum_of_the_three_tasks_two_hosts_example() -> None:
    """003 section 2.3: three tasks of need 0.6 on two hosts; without migration the best min
    yield is 0.5 / 0.6 (two tasks share a host)."""
    instance = make(2, [(1, 0.6, 0.1)] * 3)
    allocation = solve(instance, "MCB8")
    assert allocation.min_yield == pytest.approx(0.5 / 0.6)
    # OPT=AVG then gives the task alone on its host its full need
    assert sorted(allocation.yields) == pytest.approx([0.5 / 0.6, 0.5 / 0.6, 1.0])


def test_mcb_binary_search_ends_within_accuracy_of_a_sharp_threshold() -> None:
    """On one host every task must share it, so the yield is exactly 1 / total need; the
    search must find a mapping, and the mapping's yield is that optimum."""
    instance = make(1, [(2, 0.7, 0.1), (1, 0.9, 0.2)])
    for variant in range(1, 9):
        host = mcb_mapping(instance, variant)
        assert host is not None
        assert max_min_yield(instance, host) == pytest.approx(1 / 2.3)


def test_mcb_falls_back_to_a_memory_only_packing_when_no_tried_yield_packs() -> None:
    """Memory-tight instance: any memory-feasible mapping has a positive yield, so MCB8 must
    not report failure because the CPU made the trial yields fail."""
    instance = make(2, [(1, 1.0, 0.5), (1, 1.0, 0.5), (1, 1.0, 0.5), (1, 1.0, 0.5)])
    allocation = solve(instance, "MCB8")
    assert allocation.min_yield == pytest.approx(0.5)


def test_mcb8_500_tasks_on_64_hosts_takes_well_under_a_second() -> None:
    """003 reports under half a second for 500 tasks; the compiled packing is far faster."""
    warm_up()
    rng = np.random.default_rng(7)
    instance = Instance(
        64,
        np.ones(500, dtype=np.int64),
        np.clip(rng.normal(0.5, 0.375, 500), 0.01, 1.0),
        np.clip(rng.normal(64 * 0.5 / 500, 64 * 0.375 / 500, 500), 0.0, 1.0),
    )
    start = time.perf_counter()
    allocation = solve(instance, "MCB8")
    elapsed = time.perf_counter() - start
    assert allocation.problems() == []
    assert allocation.min_yield > 0.9 * lp_bound(instance)
    assert elapsed < 1.0


def test_mcb_online_drops_the_lowest_priority_job_until_the_rest_fit() -> None:
    """000 / 002 (DYNMCB8): memory 0.6 + 0.5 + 0.3 on one host cannot all fit; the job of
    priority 1 goes, the other two run. Equal priorities drop the later job."""
    instance = make(1, [(1, 0.5, 0.6), (1, 0.5, 0.5), (1, 0.5, 0.3)])
    result = mcb_online(instance, np.array([3.0, 1.0, 2.0]))
    assert result.kept.tolist() == [0, 2]
    assert result.removed.tolist() == [1]
    assert result.allocation is not None
    assert result.allocation.instance.names == ("job0", "job2")
    assert result.allocation.min_yield == 1.0
    tie = mcb_online(instance, np.array([np.inf, np.inf, np.inf]))
    assert tie.removed.tolist() == [1, 2]  # job 2 first, then job 1: 0.6 + 0.5 > 1
    alone = mcb_online(make(1, [(3, 0.5, 0.5)]), np.array([1.0]))
    assert alone.allocation is None and alone.removed.tolist() == [0]


# ------------------------------------------------------------------------------ yield steps


def _lp_best_average(instance: Instance, host: np.ndarray, floor: float) -> float:
    """Independent LP of 003 sections 3.5 and 5: one CPU variable per task plus one yield
    per job, each task's CPU tied to its job's yield; maximise the mean yield."""
    n_t, n_j = instance.n_tasks, instance.n_jobs
    c = np.concatenate([np.zeros(n_t), -np.ones(n_j) / n_j])
    a_eq = np.zeros((n_t, n_t + n_j))
    for t in range(n_t):
        a_eq[t, t] = 1.0
        a_eq[t, n_t + instance.task_job[t]] = -instance.task_cpu[t]
    a_ub = np.zeros((instance.hosts, n_t + n_j))
    for t in range(n_t):
        a_ub[host[t], t] = 1.0
    bounds = [(0.0, 1.0)] * n_t + [(floor, 1.0)] * n_j
    result = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.ones(instance.hosts),
        A_eq=a_eq,
        b_eq=np.zeros(n_t),
        bounds=bounds,
        method="highs",
    )
    assert result.status == 0
    return float(-result.fun)


@PROPERTY
@given(mapped_instances(), st.sampled_from([1.0, 0.7, 0.0]))
def test_average_yield_step_matches_the_lp_optimum(
    case: tuple[Instance, np.ndarray], fraction: float
) -> None:
    """OPT=AVG on any fixed mapping reaches the LP's best average yield while keeping every
    job at or above the requested minimum (003 section 3.5)."""
    instance, host = case
    floor = fraction * max_min_yield(instance, host)
    yields = average_yields(instance, host, floor)
    assert (yields >= floor - 1e-12).all()
    assert allocation_problems(instance, host, yields) == []
    assert yields.mean() == pytest.approx(_lp_best_average(instance, host, floor), abs=1e-7)


@PROPERTY
@given(mapped_instances())
def test_max_min_step_is_max_min_fair(case: tuple[Instance, np.ndarray]) -> None:
    """OPT=MIN (002 section 4.6): the minimum is 1 / max load (capped at 1), and every job
    below 1 sits on a full host where no job has a larger yield (it cannot be raised
    without lowering a job that is not better off)."""
    instance, host = case
    yields = max_min_yields(instance, host)
    assert allocation_problems(instance, host, yields) == []
    assert yields.min() == pytest.approx(max_min_yield(instance, host))
    cpu = np.bincount(
        host, weights=instance.task_cpu * yields[instance.task_job], minlength=instance.hosts
    )
    for job in np.flatnonzero(yields < 1 - 1e-9):
        hosts = np.unique(host[instance.task_job == job])
        assert any(
            cpu[h] >= 1 - 1e-9 and yields[job] >= yields[instance.task_job[host == h]].max() - 1e-9
            for h in hosts
        ), f"job {job} could be raised"


def test_average_step_fills_the_cheapest_job_first() -> None:
    """003 section 3.5: after the minimum, leftover CPU goes to the job of smallest need."""
    # host 0: two tasks of need 0.8 set the minimum 1 / 1.6; host 1: needs 0.2, 0.5, 0.6
    instance = make(2, [(2, 0.8, 0.0), (1, 0.2, 0.0), (1, 0.5, 0.0), (1, 0.6, 0.0)])
    host = np.array([0, 0, 1, 1, 1])
    yields = average_yields(instance, host)
    floor = 1 / 1.6
    left = 1 - 1.3 * floor - 0.2 * (1 - floor)  # after the 0.2 job is raised to 1
    assert yields.tolist() == pytest.approx([floor, 1.0, floor + left / 0.5, floor])
    with pytest.raises(ValueError, match="not achievable"):
        average_yields(instance, host, 0.7)


def test_yield_steps_never_lower_the_minimum() -> None:
    """EQUAL, AVG and MIN share the maximised minimum; AVG and MIN only add to it."""
    instance = make(3, [(2, 0.9, 0.2), (1, 0.3, 0.3), (3, 0.4, 0.1), (1, 1.0, 0.5)])
    host = np.array([0, 1, 1, 2, 0, 1, 2])
    equal = np.full(instance.n_jobs, max_min_yield(instance, host))
    for step in (YieldStep.AVG, YieldStep.MIN):
        yields = step_yields(instance, host, step)
        assert yields.min() == pytest.approx(equal.min())
        assert (yields >= equal - 1e-12).all()
    assert host_loads(instance, host).tolist() == pytest.approx([1.3, 1.6, 1.4])


# ------------------------------------------------------------------------------ heuristics


@PROPERTY
@given(instances())
def test_heuristics_never_beat_the_milp_optimum(instance: Instance) -> None:
    """No heuristic's min yield exceeds the exact MILP's, which never exceeds the LP bound;
    a heuristic can only succeed on instances the MILP solves."""
    exact = milp_mapping(instance)
    best = None if exact is None else max_min_yield(instance, exact)
    for name in HEURISTICS:
        try:
            allocation = solve(instance, name, rng=np.random.default_rng(1))
        except NoAllocationError:
            continue
        assert best is not None, f"{name} solved an instance the MILP calls infeasible"
        assert allocation.min_yield <= best + 1e-7, name
    if best is not None:
        assert best <= lp_bound(instance) + 1e-9


@PROPERTY
@given(instances(max_hosts=3, max_jobs=3))
def test_milp_optimum_equals_brute_force(instance: Instance) -> None:
    """The MILP (with its host-symmetry cut) finds the best mapping of all H^T."""
    exact = milp_mapping(instance)
    best = brute_force_best_yield(instance)
    if best is None:
        assert exact is None
    else:
        assert exact is not None
        assert max_min_yield(instance, exact) == pytest.approx(best, abs=1e-7)


@PROPERTY
@given(instances(), st.sampled_from(list(YieldStep)))
def test_every_returned_allocation_is_feasible(instance: Instance, step: YieldStep) -> None:
    """Whatever the algorithm and yield step, memory and CPU stay within every host and
    yields within [0, 1]; the min yield is that of the mapping."""
    for name in known_algorithms():
        try:
            allocation = solve(instance, name, step=step, rng=np.random.default_rng(2))
        except NoAllocationError:
            continue
        assert allocation.problems() == [], name
        assert allocation.host_memory().max() <= 1 + 1e-9
        assert allocation.host_cpu().max() <= 1 + 1e-9
        assert allocation.min_yield == pytest.approx(max_min_yield(instance, allocation.host))


@PROPERTY
@given(instances())
def test_lp_bound_is_the_optimum_of_the_relaxation(instance: Instance) -> None:
    """003 section 3.1: the rational LP optimum is min(1, H / total need) when memory fits."""
    solved = relaxation(instance)
    if solved is None:
        assert lp_bound(instance) == 0.0
    else:
        assert solved[0] == pytest.approx(lp_bound(instance), abs=1e-7)
        assert solved[1].sum(axis=1) == pytest.approx(np.ones(instance.n_tasks))


def test_greedy_takes_the_least_loaded_host_with_room() -> None:
    """GR: the third task would go to the least loaded host 1 but its memory only fits on 0."""
    instance = make(2, [(1, 0.9, 0.3), (1, 0.1, 0.6), (1, 0.5, 0.5)])
    host = greedy_mapping(instance)
    assert host is not None
    assert host.tolist() == [0, 1, 0]


# memory 0.4, 0.4, 0.3, 0.3, 0.5 on two hosts: sorted greedy (SG) strands a 0.3 task
SG_TRAP = make(2, [(1, 0.4, 0.4), (1, 0.4, 0.4), (1, 0.4, 0.3), (1, 0.6, 0.3), (1, 0.6, 0.5)])


def test_sorted_greedy_with_backtracking_solves_what_sorted_greedy_cannot() -> None:
    """SG fails on SG_TRAP (after {0.5, 0.3} / {0.4, 0.4} the last 0.3 fits nowhere); SGB
    backtracks to a packing such as {0.5, 0.4} / {0.4, 0.3, 0.3}."""
    with pytest.raises(NoAllocationError, match="SG found no allocation"):
        solve(SG_TRAP, "SG")
    allocation = solve(SG_TRAP, "SGB")
    assert allocation.problems() == []


def test_backtracking_stops_at_the_placement_attempt_bound() -> None:
    """With no attempts to spare beyond SG's own four placements, SGB gives up like SG."""
    order = np.argsort(-SG_TRAP.task_memory, kind="stable")
    assert backtracking_mapping(SG_TRAP, order, max_attempts=4) is None
    assert backtracking_mapping(SG_TRAP, order, max_attempts=100) is not None


def test_backtracking_returns_the_greedy_mapping_when_greedy_succeeds() -> None:
    """GB explores GR's choices first, so where GR succeeds both agree."""
    instance = make(3, [(2, 0.5, 0.3), (1, 0.8, 0.6), (2, 0.3, 0.2)])
    greedy = greedy_mapping(instance)
    backtracked = backtracking_mapping(instance)
    assert greedy is not None and backtracked is not None
    assert np.array_equal(backtracked, greedy)


def test_randomised_rounding_is_reproducible_with_a_seeded_generator() -> None:
    """RRND / RRNZ draw only from the generator passed in."""
    instance = make(4, [(2, 0.5, 0.3), (1, 0.8, 0.6), (2, 0.3, 0.2), (1, 0.9, 0.4)])
    for name in ("RRND", "RRNZ"):
        first = solve(instance, name, rng=np.random.default_rng(11))
        again = solve(instance, name, rng=np.random.default_rng(11))
        assert (first.host == again.host).all()


def test_rrnz_gives_every_host_a_chance() -> None:
    """RRNZ turns zero LP weights into 0.01, so it succeeds wherever a host has room."""
    instance = make(3, [(1, 1.0, 0.9)] * 3)
    for seed in range(5):
        assert solve(instance, "RRNZ", rng=np.random.default_rng(seed)).problems() == []


def test_infeasible_memory_makes_every_algorithm_fail_clearly() -> None:
    """Three tasks of memory 0.6 cannot share two hosts, though the LP relaxation (which
    splits tasks) can; the error says which algorithm failed and why."""
    instance = make(2, [(3, 0.5, 0.6)])
    assert lp_bound(instance) == 1.0
    assert lp_bound(make(2, [(3, 0.5, 0.7)])) == 0.0
    for name in known_algorithms():
        with pytest.raises(NoAllocationError, match=f"^{name} found no allocation"):
            solve(instance, name)


# ------------------------------------------------------------------------------ input errors


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"memory": [0.5, 1.2]}, r"job 1: memory must be in \[0, 1\].*1\.2"),
        ({"cpu_need": [0.0, 0.5]}, r"job 0: cpu_need must be in \(0, 1\].*got 0"),
        ({"cpu_need": [0.5, 1.5]}, r"job 1: cpu_need must be in \(0, 1\].*1\.5"),
        ({"memory": [np.nan, 0.1]}, r"job 0: memory"),
        ({"tasks": [0, 1]}, r"job 0: tasks must be an integer >= 1"),
        ({"tasks": [1.5, 1]}, r"job 0: tasks must be an integer"),
        ({"hosts": 0}, r"hosts must be a positive integer"),
        ({"memory": [0.5]}, r"one value per job"),
    ],
)
def test_bad_instances_raise_value_errors_naming_the_job(
    kwargs: dict[str, object], message: str
) -> None:
    """Instance checks every job and says which rule it breaks."""
    args: dict[str, object] = {
        "hosts": 2,
        "tasks": [1, 1],
        "cpu_need": [0.5, 0.5],
        "memory": [0.5, 0.5],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        Instance(**args)  # type: ignore[arg-type]


def test_unknown_algorithm_lists_the_known_names() -> None:
    with pytest.raises(ConfigError, match=r"unknown algorithm 'MCB9'.*MCB8.*MILP"):
        solve(make(1, [(1, 0.5, 0.5)]), "MCB9")
    assert solve(make(1, [(1, 0.5, 0.5)]), "mcb8").algorithm == "MCB8"


def test_allocation_check_names_the_overfull_host() -> None:
    instance = make(2, [(1, 0.8, 0.7), (1, 0.8, 0.7)])
    allocation = Allocation(instance, np.array([1, 1]), np.array([1.0, 0.5]))
    problems = allocation.problems()
    assert any("host 1 holds 1.4 of memory" in p for p in problems)
    assert any("host 1 hands out 1.2 of CPU" in p for p in problems)
    assert allocation_problems(instance, np.array([0, 2]), np.ones(2)) == [
        "task 1 is on host 2, not one of 0..1"
    ]
    with pytest.raises(ValueError, match="one host per task"):
        Allocation(instance, np.array([0]), np.ones(2))


def test_instance_file_round_trip(tmp_path: Path) -> None:
    """JSON and YAML instance files load to the same instance they were written from."""
    instance = make(3, [(2, 0.5, 0.25), (1, 1.0, 0.75)])
    data = instance_to_dict(instance)
    (tmp_path / "i.json").write_text(json.dumps(data))
    (tmp_path / "i.yaml").write_text(
        "hosts: 3\njobs:\n  - {tasks: 2, cpu_need: 0.5, memory: 0.25}\n"
        "  - {cpu_need: 1.0, memory: 0.75}\n"
    )
    for name in ("i.json", "i.yaml"):
        loaded = load_instance(tmp_path / name)
        assert instance_to_dict(loaded) == data


@pytest.mark.parametrize(
    ("text", "messages"),
    [
        (
            "hosts: 2\njobs:\n  - {tasks: 1, cpu_need: 1.5, memory: 0.2}\n"
            "  - {tasks: 1, cpu_need: 0.5, memory: 2}\n",
            [
                r"jobs\[0\]\.cpu_need: expected a number in \(0, 1\], got 1\.5",
                r"jobs\[1\]\.memory: expected a number in \[0, 1\], got 2",
            ],
        ),
        ("hosts: two\njobs: []\n", [r"hosts: expected a positive integer", r"jobs: expected a"]),
        (
            "jobs:\n  - {cpu: 0.5, memory: 0.1}\n",
            [r"hosts: missing", r"jobs\[0\]\.cpu: unknown key", r"jobs\[0\]\.cpu_need: missing"],
        ),
        (
            "hosts: 1\njobs:\n  - {tasks: 0, cpu_need: 0.5, memory: yes}\n",
            [
                r"jobs\[0\]\.tasks: expected an integer >= 1",
                r"jobs\[0\]\.memory: expected a number",
            ],
        ),
        ("hosts: 1\njobs: [\n", [r"not valid YAML at line"]),
    ],
)
def test_instance_file_errors_name_the_file_and_key(
    tmp_path: Path, text: str, messages: list[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InstanceError) as caught:
        load_instance(path)
    assert str(path) in str(caught.value)
    for message in messages:
        assert caught.match(message)


def test_instance_file_json_syntax_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hosts": 1,\n "jobs": [}')
    with pytest.raises(InstanceError, match=r"bad\.json: not valid JSON at line 2"):
        load_instance(bad)
    with pytest.raises(InstanceError, match="cannot read the instance file"):
        load_instance(tmp_path / "absent.json")
