"""The compiled run of the built-in batch policies (:mod:`queuesim.core.batch_run`) gives
exactly what the pass-by-pass engine gives through each policy's ``schedule``.

The pass-by-pass path is the one the invariant and golden tests check (they record
allocations, which only it does); these tests carry those guarantees over to the compiled
path by demanding the same result to the last bit: starts, ends, passes, the queue-limit
counters, the fairshare usage log and the first reservation of every job, on generated
sites with several queues, limits, memory, GPUs, node properties, fairshare orderings
and decay kinds.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, make_workload
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from queuesim.core.batch_run import ORDER_FCFS, _run_insert, _run_remove, indexable, replay
from queuesim.core.engine import Simulation
from queuesim.core.workload import load_workload
from queuesim.policies.registry import make_policy
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.studies.bench import REFERENCE_STARTS, start_digest

POLICIES: list[tuple[str, dict[str, Any]]] = [
    ("fcfs", {}),
    ("easy", {"record_reservations": True}),
    ("conservative", {"record_reservations": True}),
    ("scan", {"anti_starvation": "greedy", "reserved_jobs": 2}),
    ("scan", {"anti_starvation": "optimized", "reserve_when_limited": False}),
    ("scan", {"reserved_jobs": 0}),
    ("scan", {"reserved_jobs": 2, "reserve_when_limited": False, "starving_only": True}),
]


@st.composite
def sites(draw: st.DrawFn) -> Site:
    """Two or three clusters (memory per node, GPUs, a property), two queues by walltime
    with limits and priorities, one of the five orderings (Slurm's multifactor with
    drawn weights; the PBS order with drawn keys, starving and a fairshare tree or
    not), fairshare of either charge and decay kind."""
    memory = draw(st.booleans())
    clusters = []
    for k in range(draw(st.integers(2, 3))):
        doc: dict[str, Any] = {
            "name": f"c{k}",
            "nodes": draw(st.integers(1, 4)),
            "cpus_per_node": draw(st.integers(2, 8)),
        }
        if memory:
            doc["memory_per_node"] = draw(st.integers(8, 64)) * 1024 * 1024
        if k == 0:
            doc["properties"] = ["fast"]
        if draw(st.booleans()) and memory:
            doc["gpus_per_node"] = draw(st.integers(1, 4))
        clusters.append(doc)

    def limit(low: int, high: int) -> int | None:
        return draw(st.none() | st.integers(low, high))

    queues = []
    for name, longest, priority in (("short", "10m", 5), ("long", None, 1)):
        queue: dict[str, Any] = {"name": name, "priority": draw(st.sampled_from([0, priority]))}
        if longest:
            queue["max_walltime"] = longest
        for key, low, high in (("max_running_per_user", 1, 3), ("max_cpus_per_user", 2, 12)):
            value = limit(low, high)
            if value is not None:
                queue[key] = value
        if draw(st.booleans()):
            queue["cpu_pool"] = "75%"
        if name == "long" and draw(st.booleans()):
            queue["clusters"] = ["c0", "c1"]
        queues.append(queue)
    fairshare: dict[str, Any] = {
        "charge": draw(st.sampled_from(["cpu", "multi-resource"])),
        "usage_log": "30m",
    }
    if draw(st.booleans()):
        fairshare.update(decay_factor=0.5, decay_interval="20m")
    else:
        fairshare["half_life"] = draw(st.sampled_from(["10m", "1d"]))
    if draw(st.booleans()):
        fairshare["charge_gpus"] = True
    if draw(st.booleans()):
        fairshare["shares"] = {1: 2.0, 3: 0.5}
    ordering = draw(
        st.sampled_from(["fcfs", "fairshare", "queue-priority", "slurm-multifactor", "pbs"])
    )
    priority: dict[str, Any] = {}
    if ordering == "pbs":
        priority["pbs_order"] = draw(pbs_orders())
        if draw(st.booleans()):
            fairshare["groups"] = [{"name": "g1", "shares": 50}, {"name": "g2", "shares": 20}]
            fairshare["members"] = {1: "g1", 2: "g1", 3: "g2"}
    if ordering == "slurm-multifactor":
        priority["priority"] = {
            "weight_age": draw(st.sampled_from([0, 1000, 10000])),
            "max_age": draw(st.sampled_from(["30m", "7d"])),
            "weight_fairshare": draw(st.sampled_from([0, 1000, 10000])),
            "weight_job_size": draw(st.sampled_from([0, 500])),
            "favor_small": draw(st.booleans()),
            "weight_partition": draw(st.sampled_from([0, 2000])),
            "partition_job_factor": {"short": draw(st.sampled_from([1, 3]))},
        }
    try:
        return Site.model_validate(
            {
                "name": "generated",
                "clusters": clusters,
                "queues": queues,
                "memory": "per-cpu" if memory else "ignore",
                "ordering": ordering,
                "fairshare": fairshare,
                **priority,
                "kill_at_walltime": draw(st.booleans()),
                "estimate": draw(st.sampled_from(["requested", "exact"])),
            }
        )
    except ValueError:  # a limit larger than its queue's clusters: the site refuses it
        reject()


def pbs_orders() -> st.SearchStrategy[dict[str, Any]]:
    """A PBS order: queues by priority or in turn or not, the fairshare tree or not, up to
    two sort keys, starving after a drawn wait or never."""
    keys = ["ncpus HIGH", "ncpus LOW", "walltime LOW", "mem HIGH", "fairshare_perc HIGH"]
    return st.fixed_dictionaries(
        {
            "by_queue": st.booleans(),
            "round_robin": st.booleans(),
            "fair_share": st.booleans(),
            "sort_keys": st.lists(st.sampled_from(keys), max_size=2),
        },
        optional={"max_starve": st.integers(1, 3000)},
    )


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Site, list[J]]:
    site = draw(sites())
    gpus = bool(site.node_gpus().any())
    smallest_mem_kib = int(site.node_memory().min() // 1024) if site.memory.value != "ignore" else 0
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 60))):
        t += draw(st.just(0) | st.integers(0, 400))
        runtime = draw(st.integers(1, 1200))
        ppn = draw(st.integers(1, 2))
        nodes = draw(st.integers(1, 2))
        shaped = draw(st.booleans())
        jobs.append(
            J(
                id=i + 1,
                submit=t,
                runtime=runtime,
                cpus=ppn * nodes if shaped else draw(st.integers(1, 10)),
                nodes=nodes if shaped else 0,
                requested=draw(st.integers(1, 2400)),
                user=draw(st.integers(1, 4)),
                mem=draw(st.none() | st.integers(1, max(1, smallest_mem_kib // 4)))
                if smallest_mem_kib
                else None,
                properties=draw(st.sampled_from(["", "", "fast", "^fast"])),
                gpus=nodes * draw(st.integers(1, 2))
                if gpus and shaped and draw(st.booleans())
                else 0,
            )
        )
    return site, jobs


def _both(site: Site, workload: Any, policy: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """The run pass by pass and in one call, with each one's policy (kernels compiled)."""
    runs = []
    for compiled in (False, True):
        pol = make_policy(policy, params)
        sim = Simulation(site, workload, pol, params=params, compiled=compiled, kernels="compiled")
        assert (sim.batch_rules is not None) == compiled
        runs.append((sim.run(), pol))
    return tuple(runs)


@contextlib.contextmanager
def no_kernel_memory_left() -> Iterator[None]:
    """Every array the compiled kernels allocate inside the block is freed by its end
    (numba's allocation counters): a kernel compiled without reference counting
    (``jit(borrowing=True)``) that kept an array a callee returned would leave one a
    call."""
    from numba.core.runtime import _nrt_python as nrt

    def held() -> int:
        return int(nrt.memsys_get_stats_mi_alloc() - nrt.memsys_get_stats_mi_free())

    counting = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        before = held()
        yield
        left = held() - before
        if left > 0:  # arrays in reference cycles are freed only by a collection (~0.1 s)
            gc.collect()
            left = held() - before
    finally:
        if not counting:
            nrt.memsys_disable_stats()
    assert left <= 0, f"{left} arrays the kernels allocated were never freed"


def assert_same_run(site: Site, workload: Any, policy: str, params: dict[str, Any]) -> None:
    with no_kernel_memory_left():
        (slow, slow_policy), (fast, fast_policy) = _both(site, workload, policy, params)
        assert_same_result(slow, fast, slow_policy, fast_policy, params)
        del slow, slow_policy, fast, fast_policy


def assert_same_result(
    slow: Any, fast: Any, slow_policy: Any, fast_policy: Any, params: Any
) -> None:
    """Two runs' results agree to the last bit: jobs, passes, limit counters, fairshare
    usage log and (when recorded) every first reservation."""
    pd.testing.assert_frame_equal(slow.jobs, fast.jobs, check_exact=True)
    assert slow.passes == fast.passes
    assert slow.counters == fast.counters
    if slow.fairshare_usage is None:
        assert fast.fairshare_usage is None
    else:
        pd.testing.assert_frame_equal(slow.fairshare_usage, fast.fairshare_usage, check_exact=True)
    if params.get("record_reservations"):
        assert slow_policy.reservations == fast_policy.reservations


@pytest.mark.parametrize(("policy", "params"), POLICIES, ids=lambda p: str(p))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_compiled_run_equals_the_pass_by_pass_run(
    policy: str, params: dict[str, Any], scenario: tuple[Site, list[J]]
) -> None:
    site, jobs = scenario
    from builders import make_trace

    from queuesim.common.errors import WorkloadError
    from queuesim.core.workload import CleaningOptions, prepare

    try:
        workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    except WorkloadError:
        return  # every job rejected: nothing to compare
    assert_same_run(site, workload, policy, params)


def test_a_deep_queue_is_scanned_only_as_far_as_jobs_can_start() -> None:
    """2,000 one-CPU jobs submitted at once on a 4-CPU site: the compiled EASY run ends
    with every job run in submit order, as the pass-by-pass run does."""
    site = Site.model_validate(
        {"name": "deep", "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}]}
    )
    jobs = [J(id=i + 1, submit=0, runtime=10 + i % 7, cpus=1 + i % 3) for i in range(2000)]
    workload = make_workload(jobs, site)
    sim = Simulation(site, workload, make_policy("easy", {}))
    assert sim.batch_rules is not None and indexable(sim.state, ORDER_FCFS, sim.batch_rules)
    assert_same_run(site, workload, "easy", {})


def test_with_the_backfill_index_a_pass_looks_at_the_jobs_it_starts_not_the_whole_queue() -> None:
    """The same deep queue run with and without the index: the job-by-job loop decides for
    hundreds of waiting jobs a pass, the index for a handful, and both start the same jobs
    at the same times."""
    site = Site.model_validate(
        {"name": "deep", "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}]}
    )
    jobs = [J(id=i + 1, submit=0, runtime=10 + i % 7, cpus=1 + i % 3) for i in range(2000)]
    workload = make_workload(jobs, site)
    per_pass, starts = {}, {}
    for index in (False, True):
        sim = Simulation(site, workload, make_policy("easy", {}))
        assert sim.batch_rules is not None
        passes, scanned = replay(sim.state, sim.ordering, sim.batch_rules, index=index)
        per_pass[index] = scanned / passes
        starts[index] = sim.state.start_time.copy()
    np.testing.assert_array_equal(starts[False], starts[True])
    assert per_pass[False] > 200
    assert per_pass[True] < 5


def test_kth_sample_runs_compiled_for_the_built_in_batch_policies() -> None:
    """The README's sample: each built-in batch policy runs compiled and equals its
    pass-by-pass run."""
    site = load_site("site-configs/kth-sp2.yaml")
    for policy in ("fcfs", "easy", "conservative", "scan"):
        ran = site.with_scheduler(policy)
        assert_same_run(ran, load_workload("workloads/kth-sp2-sample.swf", ran), policy, {})


@pytest.mark.parametrize("kernels", ["compiled", "interpreted"])
def test_a_run_in_one_call_reports_its_progress_as_jobs_come(kernels: str) -> None:
    """The compiled run tells its progress callback (through the object-mode block of its
    own small kernel) as the jobs come, in order, about every 200th of them, first at the
    start and last at the end, and the same interpreted."""
    site = load_site("site-configs/kth-sp2.yaml").with_scheduler("easy")
    workload = load_workload("workloads/kth-sp2-sample.swf", site)
    reports: list[tuple[int, int]] = []
    sim = Simulation(
        site,
        workload,
        make_policy("easy"),
        kernels=kernels,
        progress=lambda done, total: reports.append((done, total)),
    )
    assert sim.batch_rules is not None
    sim.run()
    done = [d for d, _ in reports]
    assert {t for _, t in reports} == {2000}
    assert done[0] == 0 and done == sorted(done)
    assert len(done) > 150  # a report once 10 more jobs (2000 // 200) have come
    assert all(b - a <= 20 for a, b in itertools.pairwise(done))  # none skipped here


def test_a_python_policy_and_recorded_allocations_run_pass_by_pass() -> None:
    """Only a policy that declares batch rules runs compiled, and only without allocation
    recording (which the compiled run does not keep)."""
    site = load_site("site-configs/kth-sp2.yaml")
    workload = load_workload("workloads/kth-sp2-sample.swf", site)
    assert Simulation(site, workload, make_policy("easy", {})).batch_rules is not None
    recorded = Simulation(site, workload, make_policy("easy", {}), record_allocations=True)
    assert recorded.batch_rules is None
    assert Simulation(site, workload, make_policy("dpsa", {})).batch_rules is None
    assert np.isfinite(recorded.run().jobs["start"]).all()


KTH_SP2 = Path(__file__).parent / "data" / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_full_kth_sp2_starts_equal_the_previous_implementation(policy: str) -> None:
    """On the whole KTH-SP2 trace (28,476 jobs, shipped in tests/data), every start time
    is, to the last bit, what the pass-by-pass implementation gave before the compiled run
    (the digests the benchmark checks on the bigger traces too)."""
    site = load_site("site-configs/kth-sp2.yaml").with_scheduler(policy)
    result = Simulation(site, load_workload(KTH_SP2, site), make_policy(policy, {})).run()
    digest = start_digest(result.jobs["start"].to_numpy())
    assert digest == REFERENCE_STARTS[(KTH_SP2.name, "kth-sp2.yaml", policy)]


@st.composite
def one_pool_scenarios(draw: st.DrawFn) -> tuple[Site, list[J]]:
    """One cluster, no memory, no limits, FCFS order: where the backfill index finds the
    jobs that start (many small jobs with long and short estimates, bursts of arrivals)."""
    site = Site.model_validate(
        {
            "name": "one-pool",
            "clusters": [
                {
                    "name": "c",
                    "nodes": draw(st.integers(1, 6)),
                    "cpus_per_node": draw(st.integers(1, 8)),
                }
            ],
            "kill_at_walltime": draw(st.booleans()),
            "estimate": draw(st.sampled_from(["requested", "exact"])),
        }
    )
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 80))):
        t += draw(st.just(0) | st.integers(0, 200))
        jobs.append(
            J(
                id=i + 1,
                submit=t,
                runtime=draw(st.integers(1, 1500)),
                cpus=draw(
                    st.integers(1, min(3, site.total_cpus)) | st.integers(1, site.total_cpus)
                ),
                requested=draw(st.integers(1, 3000)),
                user=draw(st.integers(1, 3)),
            )
        )
    return site, jobs


@pytest.mark.parametrize(
    ("policy", "params"),
    [
        ("easy", {"record_reservations": True}),
        ("scan", {"reserved_jobs": 0}),
        ("scan", {"reserved_jobs": 3}),
    ],
    ids=str,
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=one_pool_scenarios())
def test_the_backfill_index_starts_what_the_job_by_job_loop_starts(
    policy: str, params: dict[str, Any], scenario: tuple[Site, list[J]]
) -> None:
    site, jobs = scenario
    workload = make_workload(jobs, site)
    sim = Simulation(site, workload, make_policy(policy, params), compiled=True)
    assert sim.batch_rules is not None
    assert indexable(sim.state, ORDER_FCFS, sim.batch_rules)
    assert_same_run(site, workload, policy, params)


@settings(max_examples=40, deadline=None)
@given(
    ends=st.lists(st.integers(0, 6), min_size=1, max_size=12),
    removals=st.lists(st.integers(0, 11), max_size=12),
)
def test_the_running_jobs_stay_in_order_of_their_expected_ends(
    ends: list[int], removals: list[int]
) -> None:
    """Jobs put among the running ones and taken out again (ties included) leave exactly
    the others, in order of their expected ends, as the profile reads them unsorted."""
    est_end = np.array(ends, dtype=np.float64)
    run_ids = np.zeros(len(ends), dtype=np.int64)
    running: list[int] = []
    for job in range(len(ends)):
        _run_insert(run_ids, len(running), est_end, job)
        running.append(job)
    for job in removals:
        if job in running:
            _run_remove(run_ids, len(running), est_end, job)
            running.remove(job)
    kept = run_ids[: len(running)]
    assert sorted(kept.tolist()) == sorted(running)
    assert np.all(np.diff(est_end[kept]) >= 0)


def _called_after_pruning(kernel: Any, none: set[str]) -> set[str]:
    """The globals ``kernel``'s source refers to once numba has dropped the branches its
    arguments named in ``none`` decide when they are None (the others of any other type),
    as it does before typing: what numba then compiles of it."""
    from inspect import signature

    from numba.core import compiler, ir, types
    from numba.core.analysis import dead_branch_prune

    code = compiler.run_frontend(kernel.py_func)
    names = signature(kernel.py_func).parameters
    dead_branch_prune(code, [types.none if name in none else types.int64 for name in names])
    return {
        statement.value.name
        for block in code.blocks.values()
        for statement in block.body
        if isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Global | ir.FreeVar)
    }


def test_a_run_without_promises_does_not_compile_their_code() -> None:
    """FCFS, EASY and the MetaCentrum scan make no promises: their run (``book`` None)
    and its pass (``promises`` None) leave out the code of promises - keeping, bringing
    up to date, booking, compressing and starting them - so that a first run compiles
    less; a run with promises keeps all of it."""
    from queuesim.core import batch_run, planning

    kept_profile = {"left_out", "bring_up_to_date"}
    booking = {"_mark_booked", "_book_promises", "_compress", "_due_now", "_start_due_promises"}
    without = _called_after_pruning(batch_run.replay_events, {"book", "pbs", "slurm"})
    assert not without & kept_profile
    assert kept_profile <= _called_after_pruning(batch_run.replay_events, {"pbs", "slurm"})
    assert not _called_after_pruning(planning.plan_with, {"promises"}) & booking
    assert booking <= _called_after_pruning(planning.plan_with, set())
