"""The PBS scheduler's rules in the core (sched_config(5), PBS Professional Administrator's
Guide): ``strict_ordering`` with ``backfill_depth`` (scan with N reservations),
``help_starving_jobs`` with ``max_starve`` (scan with ``starving_only`` and the PBS order),
``by_queue`` and ``round_robin``, ``job_sort_key``, and fairshare by the ``resource_group``
tree. Golden schedules are computed by hand in each test's docstring."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, make_trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.core.batch_run import RunKind, kernels_for
from queuesim.core.engine import Simulation
from queuesim.core.fairshare_tree import FairshareTree
from queuesim.core.workload import Workload, prepare
from queuesim.policies.registry import make_policy
from queuesim.site.model import Fairshare, Site


def pbs_site(
    cpus: int = 4,
    *,
    pbs_order: dict[str, Any] | None = None,
    queues: list[dict[str, Any]] | None = None,
    fairshare: dict[str, Any] | None = None,
    ordering: str = "pbs",
    estimate: str = "requested",
) -> Site:
    """One node of ``cpus`` CPUs; queues routed by the trace's queue number."""
    doc: dict[str, Any] = {
        "name": "pbs-test",
        "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": cpus}],
        "queues": queues or [{"name": "q1", "trace_queues": [1]}],
        "routing": "trace",
        "ordering": ordering,
        "estimate": estimate,
    }
    if pbs_order is not None:
        doc["pbs_order"] = pbs_order
    if fairshare is not None:
        doc["fairshare"] = fairshare
    return Site.model_validate(doc)


def workload(site: Site, jobs: list[J], queue_of: dict[int, int] | None = None) -> Workload:
    """The jobs, each in trace queue ``queue_of[id]`` (default 1)."""
    trace = make_trace(jobs)
    if queue_of:
        trace.jobs["queue"] = [queue_of.get(j.id, 1) for j in jobs]
    return prepare(trace, site)


def starts(
    site: Site, jobs: list[J], policy: str, params: dict[str, Any], **kw: Any
) -> dict[int, float]:
    """Start time per job id, the run pass by pass and, where it may, compiled: both must
    agree."""
    load = workload(site, jobs, **kw)
    runs = []
    for compiled in (False, True):
        sim = Simulation(site, load, make_policy(policy, params), compiled=compiled)
        runs.append(sim.run().jobs)
    pd.testing.assert_frame_equal(runs[0], runs[1], check_exact=True)
    table = runs[0]
    return dict(zip(table["job_id"].tolist(), table["start"].tolist(), strict=True))


# --------------------------------------------------------------------------- starving


STARVING_JOBS = [
    J(1, 0, 100, 3),
    J(2, 1, 50, 4),  # the big job that small ones keep overtaking
    J(3, 2, 100, 1),
    J(4, 50, 100, 3),
    J(5, 101, 100, 1),
    J(6, 190, 10, 3),
]
NOT_STRICT = {"reserved_jobs": 1, "reserve_when_limited": False, "starving_only": True}


def test_a_starving_job_jumps_ahead_and_reserves_after_max_starve() -> None:
    """4 CPUs, no strict_ordering. Job 2 (4 CPUs) never fits while small jobs start in
    order around it: 3 at 2, 4 at 100, 5 at 102. With max_starve 150 it starves from 151;
    at 190 (job 6 arrives) it is first and reserves 202 (jobs 4 and 5 end at 200 and
    202), so job 6 (3 CPUs, 10 s) may not start at 200: job 2 starts 202, job 6 at 252.
    Without help_starving_jobs, job 6 starts at 200 and job 2 waits until 210."""
    site = pbs_site(pbs_order={"max_starve": "150s"})
    got = starts(site, STARVING_JOBS, "scan", NOT_STRICT)
    assert got == {1: 0, 2: 202, 3: 2, 4: 100, 5: 102, 6: 252}
    never = pbs_site(pbs_order={})
    got = starts(never, STARVING_JOBS, "scan", NOT_STRICT)
    assert got == {1: 0, 2: 210, 3: 2, 4: 100, 5: 102, 6: 200}


def test_without_strict_ordering_jobs_that_are_not_starving_never_reserve() -> None:
    """Before job 2 starves (max_starve 10 000 s), nothing reserves: jobs start in order
    as they fit, the same schedule as scan with no reservation at all."""
    site = pbs_site(pbs_order={"max_starve": "10000s"})
    assert starts(site, STARVING_JOBS, "scan", NOT_STRICT) == starts(
        site, STARVING_JOBS, "scan", {"reserved_jobs": 0}
    )


def test_a_starving_job_goes_before_a_higher_priority_queue() -> None:
    """1 CPU busy until 100 (job 1). Job 2 (queue low, submitted 0) and job 3 (queue
    high, priority 10, submitted 60) wait; at 100 job 2 has waited 100 >= max_starve 50:
    it starves and goes first (start 100, then job 3 at 110). Without max_starve the
    queue priority wins: job 3 at 100, job 2 at 110."""
    queues = [
        {"name": "high", "priority": 10, "trace_queues": [2]},
        {"name": "low", "trace_queues": [1]},
    ]
    jobs = [J(1, 0, 100, 1), J(2, 0, 10, 1), J(3, 60, 10, 1)]
    kw = {"queue_of": {3: 2}}
    site = pbs_site(1, queues=queues, pbs_order={"max_starve": "50s"})
    assert starts(site, jobs, "fcfs", {}, **kw) == {1: 0, 2: 100, 3: 110}
    site = pbs_site(1, queues=queues, pbs_order={})
    assert starts(site, jobs, "fcfs", {}, **kw) == {1: 0, 2: 110, 3: 100}


# --------------------------------------------------------------------------- backfill_depth

DEPTH_JOBS = [J(1, 0, 100, 3), J(2, 1, 100, 2), J(3, 2, 10, 4), J(4, 3, 300, 1)]


@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        # job 4 (1 CPU, 300 s) backfills at 3: it delays only job 3, which has no
        # reservation; job 3 waits until job 4 ends at 303
        (1, {1: 0, 2: 100, 3: 303, 4: 3}),
        # jobs 2 (at 100) and 3 (at 200, all 4 CPUs) both reserve: job 4 would delay
        # job 3, so it waits until job 3 ends at 210
        (2, {1: 0, 2: 100, 3: 200, 4: 210}),
    ],
)
def test_backfill_depth_two_protects_two_reservations(
    depth: int, expected: dict[int, float]
) -> None:
    """strict_ordering, 4 CPUs: job 1 holds 3 until 100; job 2 (2 CPUs) reserves 100."""
    site = pbs_site(ordering="fcfs")
    params = {"reserved_jobs": depth, "reserve_when_limited": False}
    assert starts(site, DEPTH_JOBS, "scan", params) == expected


# --------------------------------------------------------------------------- queues

RR_QUEUES = [
    {"name": "a", "trace_queues": [1]},
    {"name": "b", "trace_queues": [2]},
    {"name": "top", "priority": 5, "trace_queues": [3]},
]
#: all submitted at 0 on three CPUs, 10 s each: a1 a2 a3 in queue a, b1 b2 in b, t1 in top
RR_JOBS = [J(i, 0, 10, 1) for i in range(1, 7)]
RR_QUEUE_OF = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3}


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        # the higher priority queue first; then a and b of equal priority one job each:
        # t1 a1 b1 | a2 b2 a3
        ({"round_robin": True}, {6: 0, 1: 0, 4: 0, 2: 10, 5: 10, 3: 10}),
        # by_queue: all of queue a (file order) before queue b: t1 a1 a2 | a3 b1 b2
        ({"by_queue": True}, {6: 0, 1: 0, 2: 0, 3: 10, 4: 10, 5: 10}),
        # neither: one big queue in submit order: a1 a2 a3 | b1 b2 t1
        ({"by_queue": False}, {1: 0, 2: 0, 3: 0, 4: 10, 5: 10, 6: 10}),
    ],
)
def test_round_robin_alternates_queues_of_equal_priority(
    order: dict[str, bool], expected: dict[int, float]
) -> None:
    """Strict order on 3 CPUs: the first three of the order start at 0, the rest at 10.
    As in PBS, the rotation starts again from the first queue at every pass (cycle)."""
    site = pbs_site(3, queues=RR_QUEUES, pbs_order=order)
    assert starts(site, RR_JOBS, "fcfs", {}, queue_of=RR_QUEUE_OF) == expected


# --------------------------------------------------------------------------- job_sort_key


def test_job_sort_keys_break_ties_in_turn() -> None:
    """4 CPUs full until 100 (job 1). "ncpus HIGH" then "walltime LOW": the 2-CPU jobs
    first, shortest walltime first, submit order between jobs 3 and 5 (both 30 s); the
    1-CPU job 4 last. Strict order: 3 and 5 at 100, then 2 and 4 at 130 (FCFS would
    give 2 and 3 at 100, 4 at 130 and 5 at 140, when job 4 ends)."""
    jobs = [J(1, 0, 100, 4), J(2, 1, 50, 2), J(3, 2, 30, 2), J(4, 3, 10, 1), J(5, 4, 30, 2)]
    site = pbs_site(pbs_order={"sort_keys": ["ncpus HIGH", "walltime LOW"]})
    assert starts(site, jobs, "fcfs", {}) == {1: 0, 3: 100, 5: 100, 2: 130, 4: 130}
    fcfs = pbs_site(ordering="fcfs")
    assert starts(fcfs, jobs, "fcfs", {}) == {1: 0, 2: 100, 3: 100, 4: 130, 5: 140}


def test_a_sort_key_is_read_as_sched_config_writes_it() -> None:
    site = pbs_site(pbs_order={"sort_keys": ['"fair_share_perc HIGH"', "mem LOW"]})
    assert [str(k) for k in site.pbs_order.sort_keys] == ["fairshare_perc HIGH", "mem LOW"]
    with pytest.raises(ValueError, match="expected 'RESOURCE HIGH' or 'RESOURCE LOW'"):
        pbs_site(pbs_order={"sort_keys": ["ncpus UP"]})
    with pytest.raises(ValueError, match="resource"):
        pbs_site(pbs_order={"sort_keys": ["cput HIGH"]})


# --------------------------------------------------------------------------- the tree

TREE = {
    "groups": [{"name": "g1", "shares": 50}, {"name": "g2", "shares": 50}],
    "members": {1: "g1", 2: "g1", 3: "g2"},
}
#: user 1 (group g1) runs 0-100; user 3 (g2) runs 100-130; at 110 users 2 (g1, no usage
#: yet) and 3 submit 10 s jobs
TREE_JOBS = [
    J(1, 0, 100, 1, user=1),
    J(2, 1, 30, 1, user=3),
    J(3, 110, 10, 1, user=2),
    J(4, 110, 10, 1, user=3),
]


def test_the_tree_compares_groups_before_users_where_flat_shares_would_not() -> None:
    """At 130 users 2 and 3 wait. Top-down: g1 has used 100 CPU-s, g2 30, equal shares:
    g2 first, so user 3's job 4 starts at 130 and job 3 at 140. Flattened (users 1 and 2
    25 % each, user 3 50 %) user 2 has used nothing: job 3 would go first."""
    tree = pbs_site(1, pbs_order={"fair_share": True}, fairshare=TREE)
    assert starts(tree, TREE_JOBS, "fcfs", {}) == {1: 0, 2: 100, 3: 140, 4: 130}
    flat = pbs_site(1, ordering="fairshare", fairshare={"shares": {1: 25, 2: 25, 3: 50}})
    assert starts(flat, TREE_JOBS, "fcfs", {}) == {1: 0, 2: 100, 3: 130, 4: 140}


def test_tree_ranks_and_percentages_follow_the_resource_group_shares() -> None:
    """physics 60 (alice 1, bob 3), chem 40 (carol): bob has 45 % of the machine. With
    usage alice 10, bob 0, carol 50: physics 10/60 < chem 50/40, so alice and bob come
    first (bob's 0/3 before alice's 10/1), then carol."""
    config = Fairshare.model_validate(
        {
            "groups": [{"name": "physics", "shares": 60}, {"name": "chem", "shares": 40}],
            "members": {1: "physics", 2: "physics", 3: "chem"},
            "shares": {1: 1, 2: 3, 3: 1},
        }
    )
    tree = FairshareTree(config, np.array([1, 2, 3]))
    assert tree.percent.tolist() == pytest.approx([15.0, 45.0, 40.0])
    assert tree.ranks(np.array([10.0, 0.0, 50.0])).tolist() == [1, 0, 2]
    assert tree.ranks(np.zeros(3)).tolist() == [0, 0, 0]  # ties fall to the job's keys


def test_accounts_missing_from_the_tree_share_the_unknown_group() -> None:
    """PBS's unknown group (unknown_shares 50 beside g1 50): users 8 and 9 are not
    listed, so both sit in it - each has 25 % of the machine, and user 8's usage counts
    against user 9 at the top level (unknown 40/50 > g1 30/50)."""
    config = Fairshare.model_validate(
        {
            "groups": [{"name": "g1", "shares": 50}, {"name": "unknown", "shares": 50}],
            "members": {1: "g1"},
            "unknown_group": "unknown",
        }
    )
    tree = FairshareTree(config, np.array([1, 8, 9]))
    assert tree.percent.tolist() == pytest.approx([50.0, 25.0, 25.0])
    assert tree.ranks(np.array([30.0, 40.0, 0.0])).tolist() == [0, 2, 1]


def test_a_tree_with_a_loop_or_a_missing_group_is_refused() -> None:
    with pytest.raises(ValueError, match="loop"):
        Fairshare.model_validate(
            {
                "groups": [
                    {"name": "a", "parent": "b", "shares": 1},
                    {"name": "b", "parent": "a", "shares": 1},
                ]
            }
        )
    with pytest.raises(ValueError, match=r"fairshare.members.7: no group 'x'"):
        Fairshare.model_validate({"members": {7: "x"}})
    with pytest.raises(ValueError, match="only with 'ordering: pbs'"):
        pbs_site(ordering="fairshare", fairshare=TREE)


# --------------------------------------------------------------------------- run paths


def test_the_pbs_order_and_starving_only_run_in_one_compiled_call() -> None:
    """The PBS order is one of the compiled run's orders, and scan's starving_only one of
    its rules: a PBS-ordered site under any of the PBS scheduler's mappings runs in one
    call (a compile of its own), unless asked to run pass by pass."""
    jobs = [J(1, 0, 10, 1)]
    pbs = pbs_site(pbs_order={"max_starve": "1h"})
    for params in ({"reserved_jobs": 2}, NOT_STRICT):
        sim = Simulation(pbs, workload(pbs, jobs), make_policy("scan", params))
        assert sim.batch_rules is not None
        assert sim.batch_rules.starving_only == ("starving_only" in params)
        assert kernels_for(sim.ordering) == (RunKind(False, True, False),)
    slow = Simulation(pbs, workload(pbs, jobs), make_policy("scan", NOT_STRICT), compiled=False)
    assert slow.batch_rules is None
    fcfs = pbs_site(ordering="fcfs")
    sim = Simulation(fcfs, workload(fcfs, jobs), make_policy("scan", NOT_STRICT))
    assert sim.batch_rules is not None
    assert kernels_for(sim.ordering) == (RunKind(False, False, False),)


# --------------------------------------------------------------------------- properties


@st.composite
def pbs_scenarios(draw: st.DrawFn) -> tuple[Site, list[J], dict[int, int], str, dict[str, Any]]:
    order: dict[str, Any] = {
        "by_queue": draw(st.booleans()),
        "round_robin": draw(st.booleans()),
        "fair_share": draw(st.booleans()),
        "sort_keys": draw(
            st.lists(
                st.sampled_from(["ncpus HIGH", "ncpus LOW", "walltime LOW", "fairshare_perc HIGH"]),
                max_size=2,
            )
        ),
    }
    if draw(st.booleans()):
        order["max_starve"] = draw(st.integers(1, 2000))
    fairshare = TREE if order["fair_share"] and draw(st.booleans()) else None
    queues = [
        {"name": "a", "priority": draw(st.integers(0, 1)), "trace_queues": [1]},
        {"name": "b", "priority": draw(st.integers(0, 1)), "trace_queues": [2]},
    ]
    site = pbs_site(draw(st.integers(2, 8)), queues=queues, pbs_order=order, fairshare=fairshare)
    jobs, queue_of, t = [], {}, 0
    for i in range(draw(st.integers(1, 30))):
        t += draw(st.integers(0, 300))
        runtime = draw(st.integers(1, 600))
        jobs.append(
            J(
                i + 1,
                t,
                runtime,
                draw(st.integers(1, site.total_cpus)),
                requested=runtime + draw(st.integers(0, 600)),
                user=draw(st.integers(1, 3)),
            )
        )
        queue_of[i + 1] = draw(st.integers(1, 2))
    policy, params = draw(
        st.sampled_from(
            [
                ("scan", NOT_STRICT | {"reserved_jobs": 2}),
                ("scan", {"reserved_jobs": 2, "reserve_when_limited": False}),
                ("easy", {}),
                ("fcfs", {}),
            ]
        )
    )
    return site, jobs, queue_of, policy, params


def _never_over_committed(table: pd.DataFrame, cpus: int) -> bool:
    events = sorted(
        [(s, c) for s, c in zip(table["start"], table["cpus"], strict=True)]
        + [(e, -c) for e, c in zip(table["end"], table["cpus"], strict=True)],
        key=lambda ev: (ev[0], ev[1]),  # ends before starts at one instant
    )
    held = 0
    for _, c in events:
        held += c
        if held > cpus:
            return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=pbs_scenarios())
def test_pbs_runs_never_over_commit_nor_start_before_submit(
    scenario: tuple[Site, list[J], dict[int, int], str, dict[str, Any]],
) -> None:
    """Any PBS order with any of the PBS scheduler's mappings: every job runs once,
    never before its submission, the CPUs are never over-committed, and the run is the
    same whichever path is asked for."""
    site, jobs, queue_of, policy, params = scenario
    got = []
    for compiled in (False, True):
        load = workload(site, jobs, queue_of)
        got.append(Simulation(site, load, make_policy(policy, params), compiled=compiled).run())
    pd.testing.assert_frame_equal(got[0].jobs, got[1].jobs, check_exact=True)
    table = got[0].jobs
    assert table["start"].notna().all() and len(table) == len(jobs)
    assert (table["start"] >= table["submit"]).all()
    assert _never_over_committed(table, site.total_cpus)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=pbs_scenarios(), depth=st.integers(1, 3))
def test_reserved_jobs_are_never_delayed_by_backfill(
    scenario: tuple[Site, list[J], dict[int, int], str, dict[str, Any]], depth: int
) -> None:
    """strict_ordering with backfill_depth N (scan, N reservations) in submit order with
    exact estimates: no job starts later than the first reservation it was given, on
    either run path (which agree)."""
    site, jobs, _, _, _ = scenario
    site = pbs_site(site.total_cpus, ordering="fcfs", estimate="exact")
    params = {"reserved_jobs": depth, "reserve_when_limited": False, "record_reservations": True}
    runs = []
    for compiled in (False, True):
        policy = make_policy("scan", params)
        result = Simulation(site, workload(site, jobs), policy, compiled=compiled).run()
        runs.append((result.jobs, policy.reservations))  # type: ignore[attr-defined]
    pd.testing.assert_frame_equal(runs[0][0], runs[1][0], check_exact=True)
    assert runs[0][1] == runs[1][1]
    table, reserved = runs[0]
    start = table["start"].to_numpy()
    for job, when in reserved.items():
        assert start[job] <= when, (job, when, start[job])
