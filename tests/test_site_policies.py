"""Site policies of paper 004: queue limits, single-node queues, greedy vs optimized
anti-starvation, and fairshare order, by hand-computed schedules and hypothesis properties.

Hand cases name what each limit must do to a tiny schedule; the properties rebuild, from
the job table alone, what was running at every instant and check it against the limits,
and recompute every user's decayed usage independently of the engine's ledger.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, Run, make_workload, run_jobs, simulate
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from queuesim.common.errors import ConfigError, PolicyViolation, WorkloadError
from queuesim.core.workload import CleaningOptions, prepare
from queuesim.site.loading import site_errors
from queuesim.site.model import Site

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
GIB_KIB = 1024 * 1024


def site_with(
    queues: list[dict[str, Any]],
    clusters: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Site:
    doc: dict[str, Any] = {
        "name": "limits",
        "clusters": clusters or [{"name": "c", "nodes": 1, "cpus_per_node": 8}],
        "queues": queues,
    }
    doc.update(extra)
    return Site.model_validate(doc)


def held(run: Run) -> dict[str, int]:
    return {k: v for k, v in run.result.counters.items() if k.startswith("held")}


# ------------------------------------------------------------------------ each limit


@pytest.mark.parametrize("policy", ["scan", "easy", "conservative", "fcfs", "dpsa"])
def test_max_running_per_user_holds_the_users_second_job_until_the_first_ends(
    policy: str,
) -> None:
    # 8 CPUs, limit 1 running job per user. User 1's jobs 1 and 2 (t=0, 10 s each): job 2
    # waits for job 1 although CPUs are free; user 2's job 3 starts at once.
    site = site_with([{"name": "q", "max_running_per_user": 1}])
    jobs = [J(1, 0, 10, 1, user=1), J(2, 0, 10, 1, user=1), J(3, 0, 10, 1, user=2)]
    run = run_jobs(jobs, site, policy)
    assert run.starts == {1: 0.0, 2: 10.0, 3: 0.0}
    assert held(run) == {"held:max_running_per_user": 1, "held_jobs:max_running_per_user": 1}


def test_max_cpus_per_user_counts_cpus_not_jobs() -> None:
    # limit 3 CPUs per user: user 1's two 2-CPU jobs cannot run together (4 > 3), its
    # 1-CPU job 3 can run beside job 1 (3 CPUs); user 2 is not affected.
    site = site_with([{"name": "q", "max_cpus_per_user": 3}])
    jobs = [
        J(1, 0, 10, 2, user=1),
        J(2, 0, 10, 2, user=1),
        J(3, 0, 10, 1, user=1),
        J(4, 0, 10, 2, user=2),
    ]
    run = run_jobs(jobs, site, "scan")
    assert run.starts == {1: 0.0, 2: 10.0, 3: 0.0, 4: 0.0}
    assert held(run)["held:max_cpus_per_user"] == 1


def test_cpu_pool_caps_the_queues_running_cpus_over_all_users() -> None:
    # pool of 4 CPUs on an 8-CPU node: job 1 (3 CPUs) and job 3 (1 CPU) fill the pool;
    # job 2 (2 CPUs, another user) waits for job 1 although 4 CPUs are idle.
    site = site_with([{"name": "q", "cpu_pool": 4}])
    jobs = [J(1, 0, 10, 3, user=1), J(2, 0, 10, 2, user=2), J(3, 0, 10, 1, user=3)]
    run = run_jobs(jobs, site, "scan")
    assert run.starts == {1: 0.0, 2: 10.0, 3: 0.0}
    assert held(run) == {"held:cpu_pool": 1, "held_jobs:cpu_pool": 1}


def test_cpu_pool_percentage_is_taken_of_the_queues_clusters() -> None:
    # two clusters of 8 CPUs; a queue on cluster b only with a 50% pool holds 4 CPUs
    site = site_with(
        [{"name": "q", "clusters": ["b"], "cpu_pool": "50%"}],
        clusters=[
            {"name": "a", "nodes": 1, "cpus_per_node": 8},
            {"name": "b", "nodes": 1, "cpus_per_node": 8},
        ],
    )
    assert site.pool_cpus(site.queues[0]) == 4
    run = run_jobs([J(1, 0, 10, 4, user=1), J(2, 0, 10, 1, user=2)], site, "scan")
    assert run.starts == {1: 0.0, 2: 10.0}


def test_pools_of_two_queues_are_separate_limits_on_shared_nodes() -> None:
    # queues a (up to 1h, pool 2) and b (pool 6) share one 8-CPU node: a's second job
    # waits for its pool while b's job runs beside it.
    site = site_with(
        [{"name": "a", "max_walltime": "1h", "cpu_pool": 2}, {"name": "b", "cpu_pool": 6}]
    )
    jobs = [
        J(1, 0, 10, 2, requested=60, user=1),
        J(2, 0, 10, 2, requested=60, user=2),
        J(3, 0, 10, 6, requested=7200, user=3),
    ]
    run = run_jobs(jobs, site, "scan")
    assert run.starts == {1: 0.0, 2: 10.0, 3: 0.0}


def test_a_job_larger_than_its_queues_pool_is_rejected_as_over_limit() -> None:
    site = site_with([{"name": "q", "cpu_pool": 4}])
    jobs = [J(1, 0, 10, 6), J(2, 0, 10, 1)]
    with pytest.raises(WorkloadError, match="cpu_pool or max_cpus_per_user"):
        make_workload(jobs, site)
    from builders import make_trace

    workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    assert workload.cleaning.counts["over_limit"] == 1
    assert workload.jobs["job_id"].tolist() == [2]


def test_engine_refuses_a_start_that_breaks_a_limit() -> None:
    # a policy that starts every waiting job at once, ignoring limits
    from queuesim.core.context import Context
    from queuesim.core.engine import Simulation

    class Reckless:
        name = "reckless"

        def schedule(self, ctx: Context) -> None:
            for job in ctx.waiting().tolist():
                ctx.start(job)

    site = site_with([{"name": "q", "max_running_per_user": 1}])
    workload = make_workload([J(1, 0, 10, 1, user=1), J(2, 0, 10, 1, user=1)], site)
    with pytest.raises(PolicyViolation, match="max_running_per_user"):
        Simulation(site, workload, Reckless()).run()


# ------------------------------------------------------------------- single-node queue


def two_nodes(single_node: bool) -> Site:
    return site_with(
        [{"name": "q", "single_node": single_node}],
        clusters=[{"name": "c", "nodes": 2, "cpus_per_node": 4}],
    )


def test_single_node_queue_keeps_a_job_on_one_node() -> None:
    # two nodes of 4. Jobs 1 and 2 (3 CPUs each) take one node each, leaving 1 CPU on
    # each; job 3 (2 CPUs) could spread over both, but a single-node queue makes it wait.
    jobs = [J(1, 0, 10, 3, user=1), J(2, 0, 20, 3, user=2), J(3, 1, 10, 2, user=3)]
    spread = run_jobs(jobs, two_nodes(False), "scan")
    assert spread.starts[3] == 1.0
    single = run_jobs(jobs, two_nodes(True), "scan")
    assert single.starts[3] == 10.0
    allocations = single.result.allocations
    assert allocations is not None
    for job in (1, 2, 3):
        assert allocations[single.number(job)].nodes.size == 1


def test_single_node_queue_does_not_accept_a_job_larger_than_a_node() -> None:
    site = two_nodes(True)
    with pytest.raises(WorkloadError, match="single-node queue"):
        make_workload([J(1, 0, 10, 6)], site)


def test_walltime_routing_skips_a_single_node_queue_for_a_multi_node_job() -> None:
    # 'small' (single node, up to 1h) and 'big' (up to 1d): a 6-CPU job of 10 minutes
    # goes to 'big', a 2-CPU one to 'small'
    site = site_with(
        [
            {"name": "small", "max_walltime": "1h", "single_node": True},
            {"name": "big", "max_walltime": "1d"},
        ],
        clusters=[{"name": "c", "nodes": 2, "cpus_per_node": 4}],
    )
    workload = make_workload([J(1, 0, 600, 6), J(2, 0, 600, 2)], site)
    assert workload.jobs["queue"].tolist() == ["big", "small"]


# ------------------------------------------------------ greedy vs optimized reservations


def reservation_site(mode: str) -> Site:
    # two nodes of 2 CPUs and 8 GiB; memory modelled, so pools are nodes
    return site_with(
        [{"name": "q"}],
        clusters=[{"name": "c", "nodes": 2, "cpus_per_node": 2, "memory_per_node": "8GB"}],
        memory="per-cpu",
        scheduler={"policy": "scan", "params": {"anti_starvation": mode, "reserved_jobs": 1}},
    )


RESERVATION_JOBS = [
    J(1, 0, 100, 2, user=1, mem=GIB_KIB),  # fills node 0 until 100
    J(2, 1, 10, 4, user=2, mem=GIB_KIB),  # needs both nodes: reserved at 100
    J(3, 2, 10, 1, user=3, mem=GIB_KIB),  # short: fits on node 1 before 100
]


def test_optimized_reservation_leaves_the_free_node_to_backfill() -> None:
    site = reservation_site("optimized")
    run = simulate(site, make_workload(RESERVATION_JOBS, site), "scan", dict(site.scheduler.params))
    assert run.starts == {1: 0.0, 2: 100.0, 3: 2.0}


def test_greedy_reservation_blocks_every_node_that_could_run_the_job() -> None:
    # node 1 is idle, but job 2 could use it, so greedy blocks it until job 2 starts at
    # 100; job 3 then waits for job 2 (both nodes) to end at 110
    site = reservation_site("greedy")
    run = simulate(site, make_workload(RESERVATION_JOBS, site), "scan", dict(site.scheduler.params))
    assert run.starts == {1: 0.0, 2: 100.0, 3: 110.0}


def test_greedy_does_not_block_nodes_the_reserved_job_could_never_use() -> None:
    # cluster 'big' (2 x 2 CPUs) serves queue 'wide'; cluster 'other' (1 x 2) only queue
    # 'narrow'. Job 2 of 'wide' holds a greedy reservation; job 3 of 'narrow' still
    # starts on 'other' at once.
    site = Site.model_validate(
        {
            "name": "greedy",
            "clusters": [
                {"name": "big", "nodes": 2, "cpus_per_node": 2},
                {"name": "other", "nodes": 1, "cpus_per_node": 2},
            ],
            "queues": [
                {"name": "narrow", "max_walltime": "1m", "clusters": ["other"]},
                {"name": "wide", "max_walltime": "1d", "clusters": ["big"]},
            ],
            "scheduler": {"policy": "scan", "params": {"anti_starvation": "greedy"}},
        }
    )
    jobs = [
        J(1, 0, 100, 2, requested=1000, user=1),
        J(2, 1, 10, 4, requested=1000, user=2),
        J(3, 2, 10, 1, requested=30, user=3),
    ]
    run = simulate(site, make_workload(jobs, site), "scan", dict(site.scheduler.params))
    assert run.starts == {1: 0.0, 2: 100.0, 3: 2.0}


def test_reserved_jobs_zero_never_reserves_and_lets_small_jobs_overtake() -> None:
    site = reservation_site("optimized")
    jobs = [
        J(1, 0, 100, 2, user=1, mem=GIB_KIB),
        J(2, 1, 10, 4, user=2, mem=GIB_KIB),
        J(3, 2, 200, 2, user=3, mem=GIB_KIB),  # long: would delay job 2's reservation
    ]
    run = simulate(site, make_workload(jobs, site), "scan", {"reserved_jobs": 0})
    assert run.starts[3] == 2.0
    assert run.starts[2] == 202.0
    kept = simulate(site, make_workload(jobs, site), "scan", {"reserved_jobs": 1})
    assert kept.starts == {1: 0.0, 2: 100.0, 3: 110.0}


def test_scan_rejects_an_unknown_anti_starvation_mode() -> None:
    from queuesim.policies.registry import make_policy

    with pytest.raises(ConfigError, match="anti_starvation must be one of greedy, optimized"):
        make_policy("scan", {"anti_starvation": "lazy"})


# -------------------------------------------------------------------------- bad input


def base_doc() -> dict[str, Any]:
    return {
        "name": "bad",
        "clusters": [{"name": "c", "nodes": 2, "cpus_per_node": 4}],
        "queues": [{"name": "short", "max_walltime": "2h"}, {"name": "long"}],
    }


def test_pool_larger_than_the_queues_clusters_is_reported() -> None:
    doc = base_doc()
    doc["queues"][0]["cpu_pool"] = 16
    assert site_errors(doc) == [
        "queues[0].cpu_pool: 16 CPUs is more than the 8 CPUs of the clusters queue 'short' "
        "may use (c)"
    ]


@pytest.mark.parametrize("key", ["max_running_per_user", "max_cpus_per_user", "cpu_pool"])
def test_negative_limit_is_reported_with_its_key(key: str) -> None:
    doc = base_doc()
    doc["queues"][1][key] = -2
    (problem,) = site_errors(doc)
    assert problem.startswith(f"queues[1].{key}: ")
    assert "-2" in problem


def test_queue_map_naming_an_unknown_queue_is_reported() -> None:
    doc = base_doc()
    doc["routing"] = "trace"
    doc["queue_map"] = {"q_2h": "short", "q_1d": "medium", 7: "long"}
    assert site_errors(doc) == [
        "queue_map.q_1d: maps trace queue 'q_1d' to queue 'medium', which does not exist "
        "(queues: short, long)"
    ]


def test_overlapping_walltime_routing_table_is_reported() -> None:
    doc = base_doc()
    doc["queues"].append({"name": "other", "max_walltime": "120m"})
    assert site_errors(doc) == [
        "queues[2].max_walltime: the walltime routing table is ambiguous: queue 'other' and "
        "queue 'short' both have max_walltime 7200 s (give them different limits, or set "
        "route_by_walltime: false on one)"
    ]
    doc["queues"][2]["route_by_walltime"] = False
    assert site_errors(doc) == []


def test_trace_queue_with_no_mapping_names_the_trace_line() -> None:
    from builders import make_trace

    site = Site.model_validate(
        {**base_doc(), "routing": "trace", "queue_map": {1: "short", "q_long": "long"}}
    )
    trace = make_trace([J(1, 0, 10, 1)])
    trace.jobs["queue"] = 5
    with pytest.raises(WorkloadError, match=r"<test>:1: trace queue 5 is not mapped"):
        prepare(trace, site)


# ------------------------------------------------------------------------ properties


@st.composite
def limited_cases(draw: st.DrawFn) -> tuple[Site, list[J], str, dict[str, Any]]:
    nodes = draw(st.integers(1, 3))
    per_node = draw(st.integers(1, 4))
    total = nodes * per_node
    queues: list[dict[str, Any]] = []
    for name, limit in (("short", "100s"), ("long", None)):
        q: dict[str, Any] = {"name": name}
        if limit:
            q["max_walltime"] = limit
        if draw(st.booleans()):
            q["max_running_per_user"] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            q["max_cpus_per_user"] = draw(st.integers(per_node, total))
        if draw(st.booleans()):
            q["cpu_pool"] = draw(st.integers(per_node, total))
        q["single_node"] = draw(st.booleans()) if name == "short" else False
        queues.append(q)
    site = site_with(
        queues,
        clusters=[{"name": "c", "nodes": nodes, "cpus_per_node": per_node}],
        ordering=draw(st.sampled_from(["fcfs", "queue-priority", "fairshare"])),
    )
    jobs = []
    for k in range(draw(st.integers(1, 25))):
        runtime = draw(st.integers(1, 300))
        jobs.append(
            J(
                k + 1,
                draw(st.integers(0, 200)),
                runtime,
                draw(st.integers(1, per_node)),
                requested=runtime + draw(st.integers(0, 100)),
                user=draw(st.integers(1, 3)),
            )
        )
    policy, params = draw(
        st.sampled_from(
            [
                ("scan", {"anti_starvation": "greedy", "reserved_jobs": 1}),
                ("scan", {"anti_starvation": "optimized", "reserved_jobs": 2}),
                ("easy", {}),
                ("conservative", {}),
                ("fcfs", {}),
                ("dpsa", {}),
            ]
        )
    )
    return site, jobs, policy, params


def running_at_every_start(table: pd.DataFrame) -> list[pd.DataFrame]:
    """What runs just after each start instant (ends at an instant come before starts)."""
    return [table[(table["start"] <= t) & (table["end"] > t)] for t in sorted(set(table["start"]))]


@PROPERTY
@given(limited_cases())
def test_no_queue_limit_is_ever_exceeded(case: tuple[Site, list[J], str, dict[str, Any]]) -> None:
    site, jobs, policy, params = case
    try:
        workload = prepare(
            __import__("builders").make_trace(jobs), site, CleaningOptions(reject_unrunnable=True)
        )
    except WorkloadError:
        return  # every job rejected
    run = simulate(site, workload, policy, params)
    table = run.table
    assert table["start"].notna().all()
    for running in running_at_every_start(table):
        for q in site.queues:
            mine = running[running["queue"] == q.name]
            pool = site.pool_cpus(q)
            if pool is not None:
                assert mine["cpus"].sum() <= pool
            per_user = mine.groupby("user")["cpus"].agg(["size", "sum"])
            if q.max_running_per_user is not None:
                assert (per_user["size"] <= q.max_running_per_user).all()
            if q.max_cpus_per_user is not None:
                assert (per_user["sum"] <= q.max_cpus_per_user).all()
    allocations = run.result.allocations
    assert allocations is not None
    single = {q.name for q in site.queues if q.single_node}
    for k, queue in enumerate(workload.jobs["queue"].tolist()):
        if queue in single:
            assert allocations[k].nodes.size == 1


HALF_LIFE = 500.0


def decayed_usage(table: pd.DataFrame, user: int, t: float) -> float:
    """``user``'s usage at ``t`` as the ledger defines it (queuesim.core.fairshare): a finished
    job's CPU-seconds, entered at its end and halved every half-life since; a running
    job's CPU-seconds so far, not yet decayed."""
    total = 0.0
    for row in table[(table["user"] == user) & (table["start"] < t)].itertuples():
        if row.end <= t:
            total += row.cpus * (row.end - row.start) * 0.5 ** ((t - row.end) / HALF_LIFE)
        else:
            total += row.cpus * (t - row.start)
    return total


@PROPERTY
@given(
    st.lists(
        st.tuples(st.integers(0, 300), st.integers(1, 200), st.integers(1, 4), st.integers(1, 4)),
        min_size=2,
        max_size=30,
    )
)
def test_fairshare_never_passes_over_a_lighter_user_whose_job_fits(
    rows: list[tuple[int, int, int, int]],
) -> None:
    # scan without reservations or limits: at every pass each job that fits starts, in
    # fairshare order. So if job B starts at t while job A of a user with less decayed
    # usage waits, A was looked at first and did not fit: A needs more than the CPUs
    # left after the pass plus B's (B's CPUs were still free when A was looked at).
    site = site_with(
        [{"name": "q"}],
        clusters=[{"name": "c", "nodes": 1, "cpus_per_node": 4}],
        ordering="fairshare",
        fairshare={"half_life": HALF_LIFE},
    )
    jobs = [J(k + 1, s, r, c, user=u) for k, (s, r, c, u) in enumerate(rows)]
    run = simulate(site, make_workload(jobs, site), "scan", {"reserved_jobs": 0})
    table = run.table
    for t in sorted(set(table["start"])):
        started = table[table["start"] == t]
        waiting = table[(table["submit"] <= t) & (table["start"] > t)]
        if waiting.empty:
            continue
        busy = int(table[(table["start"] <= t) & (table["end"] > t)]["cpus"].sum())
        left = 4 - busy
        usage = {u: decayed_usage(table, u, t) for u in set(table["user"])}
        for b in started.itertuples():
            for a in waiting.itertuples():
                if usage[a.user] < usage[b.user] - 1e-6 * max(1.0, usage[b.user]):
                    assert a.cpus > left + b.cpus, (t, a.job_id, b.job_id)


def test_limit_counters_are_in_the_run_report_only_for_limits_the_site_sets() -> None:
    site = site_with([{"name": "q", "max_running_per_user": 1}])
    run = run_jobs([J(1, 0, 10, 1)], site, "scan")
    assert set(held(run)) == {"held:max_running_per_user", "held_jobs:max_running_per_user"}
    plain = run_jobs([J(1, 0, 10, 1)], site_with([{"name": "q"}]), "scan")
    assert held(plain) == {}
    assert np.isfinite(plain.table["start"]).all()


# ------------------------------------------------------------- Alea traces and shapes


def alea_line(job: int, submit: int, runtime: int, cpus: int, queue: str, spec: str) -> str:
    # 18 SWF fields (memory in bytes per job, absolute submit time), node ids, queue, spec
    fields = [job, 1_356_996_000 + submit, 0, runtime, cpus, 1, 1024, cpus, 3600, 1 << 30]
    fields += [1, job, 1, 1, -1, 1, 1, 1]
    return " ".join(map(str, fields)) + " {} " + f"{queue} {spec}"


def test_alea_trace_is_routed_by_queue_name_and_keeps_its_nodes_x_ppn_shape(
    tmp_path: Path,
) -> None:
    # two nodes of 4 CPUs. Job 1 asks 2:ppn=2 (two CPUs on each of two nodes), so job 2
    # (1:ppn=3) must wait for it although 4 CPUs are free in all; job 3 (1:ppn=2) fits.
    from queuesim.core.workload import load_workload

    trace = tmp_path / "t.swf"
    trace.write_text(
        "\n".join(
            [
                alea_line(1, 0, 100, 4, "q_1d", "2:ppn=2"),
                alea_line(2, 1, 10, 3, "q_1d", "1:ppn=3:x86_64"),
                alea_line(3, 2, 10, 2, "q_2h", "1:ppn=2"),
            ]
        )
        + "\n"
    )
    site = site_with(
        [{"name": "day"}, {"name": "short"}],
        clusters=[{"name": "c", "nodes": 2, "cpus_per_node": 4, "properties": ["x86_64"]}],
        routing="trace",
        queue_map={"q_1d": "day", "q_2h": "short"},
    )
    workload = load_workload(trace, site)
    assert workload.jobs["queue"].tolist() == ["day", "day", "short"]
    assert workload.jobs["ppn"].tolist() == [2, 3, 2]
    run = simulate(site, workload, "easy")
    assert run.starts == {1: 0.0, 2: 100.0, 3: 2.0}
    allocations = run.result.allocations
    assert allocations is not None
    assert allocations[0].cpus.tolist() == [2, 2]


# ------------------------------------------------------------------ shared cluster files


def test_clusters_from_reads_the_clusters_file_beside_the_site_file(tmp_path: Path) -> None:
    from queuesim.site.loading import load_site

    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "m.yaml").write_text(
        "clusters:\n  - {name: a, nodes: 2, cpus_per_node: 4}\n"
    )
    (tmp_path / "other.yaml").write_text("clusters:\n  - {name: b, nodes: 10, cpus_per_node: 8}\n")
    site_file = tmp_path / "s.yaml"
    site_file.write_text(
        "name: s\nclusters_from: clusters/m.yaml\nqueues:\n  - {name: q, cpu_pool: 50%}\n"
    )
    site = load_site(site_file)
    assert site.total_cpus == 8
    assert site.pool_cpus(site.queues[0]) == 4
    # the same setup on another machine: the percentage pool follows the machine
    moved = load_site(site_file, clusters=tmp_path / "other.yaml")
    assert moved.total_cpus == 80
    assert moved.pool_cpus(moved.queues[0]) == 40


def test_clusters_from_with_clusters_too_is_an_error(tmp_path: Path) -> None:
    from queuesim.site.loading import load_site

    site_file = tmp_path / "s.yaml"
    site_file.write_text(
        "name: s\nclusters_from: x.yaml\nclusters:\n  - {name: a, nodes: 1, cpus_per_node: 1}\n"
    )
    with pytest.raises(ConfigError, match="give either clusters or clusters_from"):
        load_site(site_file)


def test_shipped_metacentrum_setups_differ_only_where_the_paper_says() -> None:
    # historic: 4 queues, greedy; conservative: 9 queues with priorities, greedy;
    # complex: the same queues, equal priority, fairshare, multi-resource, optimized
    from queuesim.site.loading import load_site

    configs = Path(__file__).parent.parent / "site-configs"
    historic = load_site(configs / "metacentrum-historic.yaml")
    conservative = load_site(configs / "metacentrum-conservative.yaml")
    complex_ = load_site(configs / "metacentrum-complex.yaml")
    assert [q.name for q in historic.queues] == ["short", "normal", "long", "backfill"]
    assert [q.priority for q in historic.queues] == [60, 50, 70, 20]
    assert [q.max_running_per_user for q in historic.queues] == [250, 300, 70, 1000]
    assert historic.total_cpus == conservative.total_cpus == complex_.total_cpus == 806
    assert [q.name for q in conservative.queues] == [q.name for q in complex_.queues]
    assert [q.cpu_pool for q in conservative.queues] == [q.cpu_pool for q in complex_.queues]
    assert {q.priority for q in complex_.queues} == {0}
    assert historic.scheduler.params["anti_starvation"] == "greedy"
    assert conservative.scheduler.params["anti_starvation"] == "greedy"
    assert complex_.scheduler.params["anti_starvation"] == "optimized"
    assert complex_.fairshare.charge.value == "multi-resource"
    assert complex_.ordering.value == "fairshare"


def test_compare_clusters_option_runs_every_setup_on_the_other_machine(tmp_path: Path) -> None:
    from queuesim.studies.compare import compare, setups_for

    (tmp_path / "big.yaml").write_text("clusters:\n  - {name: b, nodes: 4, cpus_per_node: 4}\n")
    site_file = tmp_path / "s.yaml"
    site_file.write_text(
        "name: s\nclusters:\n  - {name: a, nodes: 1, cpus_per_node: 4}\n"
        "queues:\n  - {name: q, cpu_pool: 50%}\n"
    )
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    comp = compare(setups_for([site_file], clusters=tmp_path / "big.yaml"), trace, workers=1)
    assert comp.results["s"].site.total_cpus == 16
    assert comp.sources == {"s": "s.yaml"}


# ------------------------------------------------------- reservations for limited jobs


def limited_reservation_site(reserve: bool) -> Site:
    # one node of 4 CPUs; one running job per user
    return site_with(
        [{"name": "q", "max_running_per_user": 1}],
        clusters=[{"name": "c", "nodes": 1, "cpus_per_node": 4}],
        scheduler={"policy": "scan", "params": {"reserve_when_limited": reserve}},
    )


LIMITED_JOBS = [
    J(1, 0, 100, 2, user=1),  # A: user 1's running job, until 100
    J(2, 1, 10, 4, user=1),  # B: user 1's second job, held by the limit until A ends
    J(3, 3, 150, 2, user=3),  # D: fits now, but would hold 2 CPUs until 153
]


def test_a_job_held_by_a_limit_reserves_from_when_the_limit_lets_it_run() -> None:
    """Paper 004 reserves for the first starving jobs whatever keeps them waiting: B is
    reserved for 100 (A's end frees both the limit and the CPUs), so D, which would still
    hold 2 of B's 4 CPUs then, does not backfill and runs after B."""
    site = limited_reservation_site(True)
    run = simulate(site, make_workload(LIMITED_JOBS, site), "scan", dict(site.scheduler.params))
    assert run.starts == {1: 0.0, 2: 100.0, 3: 110.0}


def test_without_reserve_when_limited_a_held_job_is_passed_over() -> None:
    """The previous behaviour, kept as an option: B holds no reservation while the limit
    holds it, D backfills at once, and B waits for D as well."""
    site = limited_reservation_site(False)
    run = simulate(site, make_workload(LIMITED_JOBS, site), "scan", dict(site.scheduler.params))
    assert run.starts == {1: 0.0, 2: 153.0, 3: 3.0}


def limit_allows(
    job: int, at: float, counted: list[tuple[int, float]], jobs: Any, limits: Any
) -> bool:
    """Whether the queue limits let ``job`` run at ``at`` beside the ``counted`` jobs
    (job, estimated end) that still run then."""
    q, u = jobs.queue[job], limits.user[job]
    still = [j for j, end in counted if end > at and jobs.queue[j] == q]
    mine = [j for j in still if limits.user[j] == u]
    return (
        len(mine) + 1 <= limits.user_jobs_cap[q]
        and sum(jobs.cpus[j] for j in mine) + jobs.cpus[job] <= limits.user_cpus_cap[q]
        and sum(jobs.cpus[j] for j in still) + jobs.cpus[job] <= limits.queue_pool[q]
    )


@PROPERTY
@given(limited_cases(), st.integers(1, 3))
def test_a_limited_job_is_never_reserved_where_its_limit_still_forbids_it(
    case: tuple[Site, list[J], str, dict[str, Any]], depth: int
) -> None:
    """At every pass of the scan, a job a limit holds back when its turn comes is reserved
    no earlier than the limit lets it run, given the estimated ends of the jobs running
    and of those the pass started before it."""
    import queuesim.policies.backfill as backfill

    site, jobs, _, _ = case
    try:
        workload = prepare(
            __import__("builders").make_trace(jobs), site, CleaningOptions(reject_unrunnable=True)
        )
    except WorkloadError:
        return
    checked = []
    real = backfill.plan_pass

    def checking(state: Any, arrays: Any, limits: Any, waiting: Any, rules: Any, promises: Any):  # type: ignore[no-untyped-def]
        starts, plans, held_by = real(state, arrays, limits, waiting, rules, promises)
        counted = [(int(j), float(e)) for j, e in zip(state.run_jobs, state.run_ends, strict=True)]
        for k, job in enumerate(waiting.tolist()):
            held_at_its_turn = not limit_allows(job, state.now, counted, arrays, limits)
            if held_at_its_turn and state.now < starts[k] < np.inf:
                assert limit_allows(job, starts[k], counted, arrays, limits), (job, starts[k])
                checked.append(job)
            if starts[k] == state.now:
                counted.append((job, state.now + arrays.estimate[job]))
        return starts, plans, held_by

    params = {"anti_starvation": "optimized", "reserved_jobs": depth, "reserve_when_limited": True}
    backfill.plan_pass = checking
    try:
        simulate(site, workload, "scan", params)
    finally:
        backfill.plan_pass = real
    event(f"limited jobs reserved: {min(len(checked), 3)}{'+' if len(checked) >= 3 else ''}")
