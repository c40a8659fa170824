"""Job requirements honoured or counted: node properties (and a pinned cluster), exclusive
nodes, GPUs (:mod:`queuesim.core.requirements`).

Hand-computed schedules show each rule changing what a plain CPU count would do; property
tests check on generated sites and workloads that a job never runs on a node lacking a
required property, never shares an exclusive node, and that no node ever gives more GPUs
than it has.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from builders import J, make_site, make_trace, simulate
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from queuesim.common.errors import WorkloadError
from queuesim.core.requirements import parse_properties
from queuesim.core.workload import CleaningOptions, Workload, prepare
from queuesim.site.model import Site

REJECT = CleaningOptions(reject_unrunnable=True)


def _prepare(jobs: list[J], site: Site, options: CleaningOptions | None = None) -> Workload:
    return prepare(make_trace(jobs), site, options)


def _counted(workload: Workload) -> dict[str, int]:
    return {k: v for k, v in workload.cleaning.counts.items() if v}


# ------------------------------------------------------------------------ properties


def _two_groups() -> Site:
    return make_site([(1, 4), (1, 4)], properties=[("fast", "x86_64"), ("x86_64",)])


def test_a_properties_string_allows_the_groups_that_have_every_property() -> None:
    site = _two_groups()
    assert parse_properties("fast", site).allowed == frozenset({"c0"})
    assert parse_properties("x86_64", site).allowed is None  # every group: no restriction
    assert parse_properties("^fast", site).allowed == frozenset({"c1"})
    assert parse_properties("c1", site).allowed == frozenset({"c1"})  # its name pins it
    assert parse_properties("fast:^c0", site).allowed == frozenset()
    assert parse_properties("gpu", site).allowed == frozenset()


def test_host_names_and_resources_are_recognised_not_taken_for_properties() -> None:
    site = _two_groups()
    for host in ("c0.example.org", "host=c07", "^c12", "c03"):
        spec = parse_properties(f"x86_64:{host}", site)
        assert spec.hosts and spec.allowed is None, host
    spec = parse_properties("fast:mem=3gb", site)
    assert spec.resources and not spec.hosts and spec.allowed == frozenset({"c0"})


def test_a_job_waits_for_the_group_with_its_property_while_another_is_free() -> None:
    # c0 (fast) and c1: one node of 4 CPUs each; EASY
    jobs = [
        J(1, 0, 100, 4, properties="fast"),  # c0 from 0 to 100
        J(2, 1, 50, 2, properties="fast"),  # only c0 will do: 100, though c1 is free
        J(3, 2, 10, 2),  # anywhere: c1 at once (backfilled, 2..12)
        J(4, 3, 10, 4, properties="^fast"),  # c1 only: after job 3, at 12
        J(5, 4, 5, 1, properties="c1"),  # pinned to c1, which has 2 free: at once, 4..9
    ]
    site = _two_groups()
    run = simulate(site, _prepare(jobs, site), "easy")
    assert run.starts == {1: 0, 2: 100, 3: 2, 4: 12, 5: 4}
    allocations = run.result.allocations
    assert allocations is not None
    c0_nodes = {0}
    assert set(allocations[run.number(2)].nodes.tolist()) <= c0_nodes
    assert not set(allocations[run.number(4)].nodes.tolist()) & c0_nodes


def test_a_property_no_group_has_is_a_rejection_or_an_error() -> None:
    site = _two_groups()
    jobs = [J(1, 0, 10, 1), J(2, 0, 10, 1, properties="infiniband")]
    with pytest.raises(WorkloadError, match=r"no_node_with_properties.*line 2"):
        _prepare(jobs, site)
    workload = _prepare(jobs, site, REJECT)
    assert _counted(workload) == {"no_node_with_properties": 1}
    assert workload.cleaning.rejected == 1
    assert workload.jobs["job_id"].tolist() == [1]


def test_host_and_resource_requirements_are_counted_warnings_and_the_job_runs() -> None:
    site = _two_groups()
    jobs = [J(1, 0, 10, 1, properties="c0.example.org"), J(2, 0, 10, 1, properties="mem=2gb")]
    workload = _prepare(jobs, site)
    assert _counted(workload) == {
        "host_requirement_not_modelled": 1,
        "resource_not_modelled": 1,
    }
    assert workload.cleaning.warned == 2
    assert len(workload.jobs) == 2


# ------------------------------------------------------------------------ exclusive


def test_an_exclusive_job_holds_its_node_whole() -> None:
    site = make_site([(2, 4)])
    jobs = [
        J(1, 0, 100, 1, exclusive=True, nodes=1),  # holds node 0 whole: 4 CPUs
        J(2, 1, 100, 4),  # node 1
        J(3, 2, 10, 1),  # would fit beside job 1 if it were not exclusive: waits to 100
    ]
    workload = _prepare(jobs, site)
    assert _counted(workload) == {"exclusive_whole_nodes": 1}
    assert workload.jobs.set_index("job_id").loc[1, ["cpus", "ppn"]].tolist() == [4, 4]
    run = simulate(site, workload, "easy")
    assert run.starts == {1: 0, 2: 1, 3: 100}


def test_an_exclusive_job_is_kept_to_one_node_size() -> None:
    # two groups of 4- and 8-CPU nodes: a 3-CPU exclusive job takes a whole 4-CPU node
    site = make_site([(1, 8), (1, 4)])
    workload = _prepare([J(1, 0, 10, 3, exclusive=True, nodes=1)], site)
    assert _counted(workload) == {"exclusive_one_node_size": 1, "exclusive_whole_nodes": 1}
    assert workload.jobs["cpus"].tolist() == [4]
    assert workload.node_sets[int(workload.jobs["node_set"].iloc[0])] == frozenset({"c1"})


# ------------------------------------------------------------------------ GPUs


def _gpu_site() -> Site:
    return make_site([(1, 8), (1, 8)], gpus=[0, 2])


def test_a_gpu_job_waits_for_gpus_though_cpus_are_free() -> None:
    jobs = [
        J(1, 0, 100, 1, gpus=2),  # c1's node, both its GPUs
        J(2, 1, 50, 1, gpus=1),  # c1 has 7 CPUs free but no GPU: at 100
        J(3, 2, 10, 8),  # no GPU: c0 at once
    ]
    site = _gpu_site()
    workload = _prepare(jobs, site)
    assert workload.jobs.set_index("job_id")["gpn"].to_dict() == {1: 2, 2: 1, 3: 0}
    run = simulate(site, workload, "easy")
    assert run.starts == {1: 0, 2: 100, 3: 2}
    allocations = run.result.allocations
    assert allocations is not None
    assert allocations[run.number(1)].nodes.tolist() == [1]
    assert allocations[run.number(1)].gpus_per_node == 2


def test_more_gpus_per_node_than_any_node_has_is_a_rejection() -> None:
    site = _gpu_site()
    jobs = [J(1, 0, 10, 1), J(2, 0, 10, 1, gpus=3)]
    with pytest.raises(WorkloadError, match="no_node_with_gpus"):
        _prepare(jobs, site)
    assert _counted(_prepare(jobs, site, REJECT)) == {"no_node_with_gpus": 1}


def test_gpus_spread_over_nodes_round_up_and_are_counted() -> None:
    site = make_site([(2, 8)], gpus=[2])
    workload = _prepare([J(1, 0, 10, 3, gpus=3, nodes=2)], site)
    assert _counted(workload) == {"gpus_rounded_up": 1, "gpu_job_shape_rounded": 1}
    assert workload.jobs[["cpus", "ppn", "gpn"]].values.tolist() == [[4, 2, 2]]


# ------------------------------------------------------------------------ properties tests

PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Site, list[J], str]:
    groups = draw(st.integers(1, 3))
    shapes = [(draw(st.integers(1, 4)), draw(st.integers(1, 8))) for _ in range(groups)]
    props = [tuple(draw(st.sets(st.sampled_from(["a", "b"])))) for _ in range(groups)]
    gpus = [draw(st.integers(0, 2)) for _ in range(groups)]
    site = make_site(shapes, properties=props, gpus=gpus)
    jobs = []
    for k in range(draw(st.integers(1, 25))):
        jobs.append(
            J(
                k + 1,
                draw(st.integers(0, 50)),
                draw(st.integers(1, 100)),
                draw(st.integers(1, 8)),
                properties=draw(st.sampled_from(["", "a", "b", "a:b", "^a", "c0", "^b:c1"])),
                exclusive=draw(st.booleans()),
                gpus=draw(st.sampled_from([0, 0, 1, 2])),
                nodes=draw(st.integers(1, 2)),
            )
        )
    return site, jobs, draw(st.sampled_from(["fcfs", "easy", "conservative"]))


def _run(scenario: tuple[Site, list[J], str]) -> Any:
    site, jobs, policy = scenario
    try:
        workload = _prepare(jobs, site, REJECT)
    except WorkloadError:
        assume(False)  # every job rejected
    return site, workload, simulate(site, workload, policy)


def _node_clusters(site: Site) -> list[str]:
    return [c.name for c in site.clusters for _ in range(c.nodes)]


@PROPERTY
@given(scenario=scenarios())
def test_a_job_never_runs_on_a_node_lacking_a_required_property(scenario: Any) -> None:
    site, workload, run = _run(scenario)
    clusters = {c.name: c for c in site.clusters}
    node_cluster = _node_clusters(site)
    allocations = run.result.allocations
    assert allocations is not None
    texts = {j.id: j.properties for j in scenario[1]}
    for k, job_id in enumerate(workload.jobs["job_id"].tolist()):
        tokens = [t for t in texts[job_id].split(":") if t]
        for node in allocations[k].nodes.tolist():
            group = clusters[node_cluster[node]]
            for token in tokens:
                if token.startswith("^"):
                    assert not group.has(token[1:]), (job_id, token, group.name)
                else:
                    assert group.has(token), (job_id, token, group.name)


@PROPERTY
@given(scenario=scenarios())
def test_an_exclusive_node_is_never_shared_and_gpus_never_exceed_a_node(scenario: Any) -> None:
    site, workload, run = _run(scenario)
    jobs = {j.id: j for j in scenario[1]}
    allocations = run.result.allocations
    assert allocations is not None
    table = run.table.set_index("job_id")
    ids = workload.jobs["job_id"].tolist()
    start = np.array([table.loc[i, "start"] for i in ids])
    end = np.array([table.loc[i, "end"] for i in ids])
    capacity = site.node_gpus()
    for t in np.unique(start):
        running = np.flatnonzero((start <= t) & (t < end))
        gpus = np.zeros_like(capacity)
        users: dict[int, list[int]] = {}
        for k in running.tolist():
            alloc = allocations[k]
            np.add.at(gpus, alloc.nodes, alloc.gpus_per_node)
            for node in alloc.nodes.tolist():
                users.setdefault(node, []).append(ids[k])
        assert (gpus <= capacity).all(), f"t={t}: GPUs {gpus} over {capacity}"
        for node, holders in users.items():
            if any(jobs[h].exclusive for h in holders):
                assert len(holders) == 1, f"t={t}: exclusive node {node} shared by {holders}"
    for k, job_id in enumerate(ids):
        if jobs[job_id].gpus:
            assert allocations[k].gpus_per_node >= 1
            assert (capacity[allocations[k].nodes] >= allocations[k].gpus_per_node).all()


# ------------------------------------------------------------------------ fairshare


def _ledger(charge_gpus: bool) -> Any:
    from queuesim.core.fairshare import FairshareLedger
    from queuesim.site.model import Fairshare

    config = Fairshare(charge="multi-resource", charge_gpus=charge_gpus)
    cpus = np.array([8, 8], dtype=np.int64)
    mem = np.array([8 * 2**30, 8 * 2**30], dtype=np.int64)
    gpus = np.array([0, 4], dtype=np.int64)
    return FairshareLedger(config, np.zeros(1, dtype=np.int64), cpus, mem, True, gpus)


def test_gpu_charge_counts_the_gpus_a_job_holds_in_cpus_of_its_node() -> None:
    from queuesim.core.cluster import Allocation

    # one CPU with 1 GiB on the GPU node (8 CPUs, 8 GiB, 4 GPUs), holding 2 GPUs: half a
    # node's GPUs is 4 CPUs' worth; memory is 1 CPU's worth
    alloc = Allocation(
        nodes=np.array([1]),
        cpus=np.array([1]),
        mem_per_cpu=2**30,
        pools=np.array([1]),
        pool_cpus=np.array([1]),
        gpus_per_node=2,
    )
    assert _ledger(charge_gpus=True).rate_of(1, alloc) == 4.0
    assert _ledger(charge_gpus=False).rate_of(1, alloc) == 1.0
