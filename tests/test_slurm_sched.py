"""The ``slurm`` policy (:mod:`queuesim.policies.slurm`): Slurm's main scheduler on events
and its backfill scheduler every ``bf_interval`` seconds, on hand-computed schedules and
on generated workloads (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from builders import J, make_site, make_workload, run_jobs, simulate
from hypothesis import given
from hypothesis import strategies as st
from test_properties import PROPERTY, assert_within_node_capacity, scenarios

from queuesim.common.errors import ConfigError
from queuesim.policies.registry import make_policy
from queuesim.site.model import Site

FOUR_CPUS = make_site(((1, 4),))
#: no rounding and a cycle every 30 s, so that the golden times stay readable
PLAIN = {"bf_resolution": 1, "bf_interval": 30}


@pytest.mark.parametrize(("interval", "start"), [(30, 30.0), (25, 25.0)])
def test_backfill_waits_for_the_next_bf_interval_boundary(interval: int, start: float) -> None:
    """J1 (2 CPUs) runs 0..100; J2 (4 CPUs) waits for it; J3 (1 CPU, 30 s) arrives at 20.
    The main scheduler stops at J2 (its partition is blocked), so J3 starts only at the
    next backfill cycle - t=30 with bf_interval=30, t=25 with 25 - where it ends before
    J2's reservation at 100 (EASY, planning at every event, would start it at 20)."""
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 30, 1)]
    run = run_jobs(jobs, FOUR_CPUS, "slurm", {**PLAIN, "bf_interval": interval})
    assert run.starts == {1: 0, 2: 100, 3: start}
    assert run_jobs(jobs, FOUR_CPUS, "easy").starts[3] == 20


@pytest.mark.parametrize(("resolution", "start"), [(1, 30.0), (60, 150.0)])
def test_bf_resolution_rounds_ends_and_limits_up(resolution: int, start: float) -> None:
    """As above but J3 asks 65 s. To the second it ends at 95, before J2's reservation at
    100: it starts at 30. At bf_resolution=60 J1's end rounds up to 120 and J3's 65 s to
    120 s, so J3 would end at 150 > 120: it waits; J2 starts at 100 (main scheduler, J1
    ends) and runs to 150, when J3 starts."""
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 65, 1)]
    run = run_jobs(jobs, FOUR_CPUS, "slurm", {**PLAIN, "bf_resolution": resolution})
    assert run.starts == {1: 0, 2: 100, 3: start}


@pytest.mark.parametrize(("per_user", "start"), [(0, 30.0), (1, 60.0)])
def test_bf_max_job_user_limits_the_jobs_tested_per_user(per_user: int, start: float) -> None:
    """J2 (4 CPUs, user 2) waits for J1 (2 CPUs, to 100); user 3's J3 and J4 (1 CPU, 30 s)
    both fit beside it. Without a limit both start at the cycle of t=30; with
    bf_max_job_user=1 only J3 is tested then, and J4 at the next cycle, t=60."""
    jobs = [
        J(1, 0, 100, 2, user=1),
        J(2, 1, 50, 4, user=2),
        J(3, 2, 30, 1, user=3),
        J(4, 3, 30, 1, user=3),
    ]
    run = run_jobs(jobs, FOUR_CPUS, "slurm", {**PLAIN, "bf_max_job_user": per_user})
    assert run.starts == {1: 0, 2: 100, 3: 30, 4: start}


TWO_PARTITIONS = Site.model_validate(
    {
        "name": "two",
        "clusters": [
            {"name": "c0", "nodes": 1, "cpus_per_node": 4},
            {"name": "c1", "nodes": 1, "cpus_per_node": 4},
        ],
        "queues": [
            {"name": "short", "max_walltime": "60s", "clusters": ["c0"]},
            {"name": "long", "clusters": ["c1"]},
        ],
    }
)


@pytest.mark.parametrize(
    ("depth", "starts"),
    [(100, {1: 0, 2: 60, 3: 60, 4: 3}), (1, {1: 0, 2: 60, 3: 90, 4: 120})],
)
def test_main_scheduler_stops_a_partition_not_the_queue(
    depth: int, starts: dict[int, float]
) -> None:
    """sched/builtin (no backfill). 'short' runs on c0, 'long' on c1. J1 fills c0 to 60;
    J2 (short) cannot start, which stops 'short': J3 (short, 1 CPU) waits although c0...
    is full anyway, and J4 (long) starts at 3 on c1. With default_queue_depth=1 only the
    first waiting job is tried per pass: J4 waits until J2 and J3 have gone, starting at
    the pass of J3's end (120); J3 starts at J2's end (90)."""
    jobs = [
        J(1, 0, 60, 4, requested=60),
        J(2, 1, 30, 2, requested=60),
        J(3, 2, 30, 1, requested=30),
        J(4, 3, 100, 2, requested=100),
    ]
    params = {"backfill": False, "default_queue_depth": depth}
    run = run_jobs(jobs, TWO_PARTITIONS, "slurm", params)
    assert run.starts == starts


def test_a_blocked_partition_closes_its_nodes_to_later_jobs() -> None:
    """Both queues on both clusters' nodes, 'short' on c0 only: a short job that cannot
    start closes c0 for the pass, so a later long job that would fit on c0 (c1 is full)
    waits, as Slurm removes the failed partition's nodes from the pass."""
    site = Site.model_validate(
        {
            "name": "overlap",
            "clusters": [
                {"name": "c0", "nodes": 1, "cpus_per_node": 4},
                {"name": "c1", "nodes": 1, "cpus_per_node": 4},
            ],
            "queues": [
                {"name": "short", "max_walltime": "60s", "clusters": ["c0"]},
                {"name": "long"},
            ],
        }
    )
    jobs = [
        J(1, 0, 100, 4, requested=100),  # long: fills c0 (first fit)
        J(2, 0, 100, 2, requested=100),  # long: c1, 2 CPUs left there
        J(3, 1, 30, 2, requested=60),  # short: c0 is full -> stops 'short', closes c0
        J(4, 1, 30, 3, requested=100),  # long: 3 CPUs; c1 has 2, c0 closed -> waits
    ]
    run = run_jobs(jobs, site, "slurm", {"backfill": False, "sched_interval": 0})
    assert run.starts == {1: 0, 2: 0, 3: 100, 4: 100}


@pytest.mark.parametrize(("window", "starts"), [(1440, {2: 100, 3: 150}), (1, {2: 230, 3: 30})])
def test_bf_window_bounds_the_reservations(window: int, starts: dict[int, float]) -> None:
    """J2 (4 CPUs) can start at 100, J3 (1 CPU, 200 s) arrives at 20. With the default
    window J2 is reserved at 100 and J3, which would hold a CPU past it, waits for J2 to
    end (150). With bf_window=1 (60 s) the cycle at 30 plans to 90 only: J2 gets no
    reservation and J3 starts at 30, delaying J2 to 230 - as Slurm does."""
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 200, 1)]
    run = run_jobs(jobs, FOUR_CPUS, "slurm", {**PLAIN, "bf_window": window})
    assert run.starts == {1: 0, **starts}


@pytest.mark.parametrize(
    ("interval", "starts"), [(60, {1: 0, 2: 1000, 3: 120}), (0, {1: 0, 2: 1100, 3: 1000})]
)
def test_sched_interval_lets_a_priority_change_start_a_job_between_events(
    interval: int, starts: dict[int, float]
) -> None:
    """Multifactor priority, PriorityWeightAge=1000, PriorityMaxAge=100 s,
    PriorityWeightJobSize=100 with PriorityFavorSmall; sched/builtin. J1 (2 of 4 CPUs)
    runs 0..1000. J2 (4 CPUs, submitted at 10) has size factor 0, J3 (2 CPUs, at 20) 0.5:
    at t=20 J2 = 1000 x 0.1 = 100 > J3 = 50, so J2 is first, cannot start and stops the
    partition. J2's age is capped from t=110; at t=120 J2 = 1000, J3 = 1000 + 50: J3 is
    first and fits. The periodic pass (sched_interval=60) starts it then; without one it
    waits for the next event, J1's end at 1000, and J2 for J3's end at 1100."""
    site = Site.model_validate(
        {
            "name": "aging",
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
            "ordering": "slurm-multifactor",
            "priority": {
                "weight_age": 1000,
                "max_age": "100s",
                "weight_job_size": 100,
                "favor_small": True,
            },
        }
    )
    jobs = [J(1, 0, 1000, 2), J(2, 10, 100, 4), J(3, 20, 100, 2)]
    run = run_jobs(jobs, site, "slurm", {"backfill": False, "sched_interval": interval})
    assert run.starts == starts


def test_bad_parameters_are_refused_with_the_key_named() -> None:
    """bf_interval 0 would never run the backfill; it is an error naming the key."""
    with pytest.raises(ConfigError, match="bf_interval must be at least 1"):
        make_policy("slurm", {"bf_interval": "0"})


SLURM_PARAMS = st.fixed_dictionaries(
    {
        "bf_interval": st.sampled_from([10, 30]),
        "bf_resolution": st.sampled_from([1, 60]),
        "bf_window": st.sampled_from([1, 10, 1440]),
        "bf_max_job_test": st.sampled_from([2, 500]),
        "default_queue_depth": st.sampled_from([1, 100]),
        "sched_interval": st.sampled_from([0, 60]),
    }
)


@PROPERTY
@given(scenario=scenarios(kill=True, max_clusters=2), params=SLURM_PARAMS)
def test_slurm_backfill_never_delays_the_head_reservation(
    scenario: Any, params: dict[str, Any]
) -> None:
    """Generated workloads and SchedulerParameters, one queue, FCFS order, jobs killed at
    their limit: no CPU or memory over-commit, no start before submit, every job runs
    once, and the head of the waiting jobs, when a backfill cycle reserves for it, starts
    no later than that reservation (the jobs the backfill starts around it never delay
    it; later cycles only find it room sooner; the main scheduler tries it first at the
    end that frees its room). With bf_resolution=1 many start exactly then: the bound is
    tight. (A job behind one the window or a test limit left unreserved has no such
    guarantee in Slurm either.)"""
    site, jobs = scenario
    workload = make_workload(jobs, site)
    run = simulate(site, workload, "slurm", {**params, "record_reservations": True})
    assert_within_node_capacity(run, site)
    table = run.table
    assert (table["start"] >= table["submit"]).all()
    assert np.isfinite(table["end"].to_numpy()).all()
    starts = table["start"].to_numpy()
    for job, reserved in run.policy.head_reservations:  # type: ignore[attr-defined]
        assert starts[job] <= reserved, f"job {job} reserved at {reserved}, started later"
