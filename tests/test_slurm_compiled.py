"""The ``slurm`` policy in one compiled call (:func:`queuesim.core.batch_run.replay_events`
with Slurm's rules) gives what its pass-by-pass ``schedule`` gives through the Context:
Slurm's main scheduler on events and every ``sched_interval``, its backfill every
``bf_interval`` while jobs wait, on generated sites (queues, limits, memory, GPUs, node
properties, fairshare and multifactor orders) with drawn SchedulerParameters.

Both paths run their kernels interpreted here (the same source numba compiles; see
:mod:`queuesim.core.kernels`), so these tests compile nothing; the benchmark's slurm row
checks the compiled run's start times on a full real trace.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import J, make_trace, make_workload
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from test_batch_run import assert_same_result, scenarios

from queuesim.common.errors import WorkloadError
from queuesim.core.batch_run import RunKind, kernels_for
from queuesim.core.engine import Simulation
from queuesim.core.workload import CleaningOptions, prepare
from queuesim.policies.registry import make_policy
from queuesim.site.enums import Ordering
from queuesim.site.model import Site

SLURM_PARAMS = st.fixed_dictionaries(
    {
        "backfill": st.booleans(),
        "bf_interval": st.sampled_from([7, 30]),
        "sched_interval": st.sampled_from([0, 45]),
        "default_queue_depth": st.sampled_from([1, 3, 100]),
        "bf_max_job_test": st.sampled_from([0, 2, 500]),
        "bf_max_job_user": st.sampled_from([0, 1, 2]),
        "bf_window": st.sampled_from([1, 5, 1440]),
        "bf_resolution": st.sampled_from([1, 13, 60]),
        "record_reservations": st.booleans(),
    }
)


def both_paths(site: Site, workload: Any, params: dict[str, Any]) -> tuple[Any, ...]:
    """The run pass by pass, then in one call, each with its own policy (interpreted)."""
    runs = []
    for compiled in (False, True):
        policy = make_policy("slurm", params)
        sim = Simulation(
            site, workload, policy, params=params, compiled=compiled, kernels="interpreted"
        )
        assert (sim.batch_rules is not None) == compiled
        runs.append((sim.run(), policy))
    return tuple(runs)


def assert_same_slurm_run(site: Site, workload: Any, params: dict[str, Any]) -> None:
    """Jobs, passes, limit counters, usage log, first reservations and the heads the
    backfill cycles reserved for, to the last bit."""
    (slow, slow_policy), (fast, fast_policy) = both_paths(site, workload, params)
    assert_same_result(slow, fast, slow_policy, fast_policy, params)
    assert slow_policy.head_reservations == fast_policy.head_reservations


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), params=SLURM_PARAMS)
def test_compiled_slurm_run_equals_the_pass_by_pass_run(
    scenario: tuple[Site, list[J]], params: dict[str, Any]
) -> None:
    """Generated sites and SchedulerParameters (backfill on or off, both intervals, queue
    depth, jobs tested in all and per user, window, resolution): the one-call run gives
    the pass-by-pass run's schedule and records."""
    site, jobs = scenario
    if site.ordering.value == "pbs":
        reject()  # Slurm's passes under the PBS order run pass by pass only
    try:
        workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    except WorkloadError:
        return  # every job rejected: nothing to compare
    assert_same_slurm_run(site, workload, params)


FOUR_CPUS = Site.model_validate(
    {"name": "four", "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}]}
)


@pytest.mark.parametrize(("interval", "start"), [(30, 30.0), (25, 25.0)])
def test_compiled_backfill_waits_for_the_next_bf_interval_boundary(
    interval: int, start: float
) -> None:
    """test_slurm_sched's first golden case, in one call: J3 (1 CPU, 30 s, at 20) starts at
    the next backfill cycle, t=30 (bf_interval 30) or t=25 (25), beside J2's reservation
    at 100 - the timer's wake-up, not an event, starts it."""
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 30, 1)]
    params = {"bf_resolution": 1, "bf_interval": interval, "record_reservations": True}
    workload = make_workload(jobs, FOUR_CPUS)
    policy: Any = make_policy("slurm", params)
    sim = Simulation(FOUR_CPUS, workload, policy, params=params, kernels="interpreted")
    assert sim.batch_rules is not None
    assert kernels_for(sim.ordering, sim.batch_rules) == (RunKind(False, False, True),)
    starts = sim.run().jobs.set_index("job_id")["start"].to_dict()
    assert starts == {1: 0.0, 2: 100.0, 3: start}
    assert policy.head_reservations[0] == (1, 100.0)  # J2 (job number 1) reserved at 100
    assert_same_slurm_run(FOUR_CPUS, workload, params)


@pytest.mark.parametrize("record", [True, False])
def test_compiled_backfill_starts_a_job_needing_exactly_the_free_cpus(record: bool) -> None:
    """J3 asks exactly the 2 CPUs J1 leaves free: the backfill cycle of t=30 reserves J2
    at 100 and still starts J3 (30 s, ending at 60), whether reservations are recorded
    (full scan) or not (the scan stops only once fewer CPUs are free than any job asks)."""
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 30, 2)]
    params = {"bf_resolution": 1, "record_reservations": record}
    workload = make_workload(jobs, FOUR_CPUS)
    sim = Simulation(FOUR_CPUS, workload, make_policy("slurm", params), kernels="interpreted")
    assert sim.batch_rules is not None
    assert sim.run().jobs["start"].tolist() == [0.0, 100.0, 30.0]


def test_slurm_under_the_pbs_order_runs_pass_by_pass() -> None:
    """The compiled Slurm run knows FCFS, fairshare and multifactor orders; under the PBS
    order the policy runs through its ``schedule``: J3 (1 CPU, 30 s, at 20) starts at the
    backfill cycle of t=30, its 30 s rounded to 60 ending at 90, before J2's reservation
    at J1's end rounded up (100 -> 120; bf_resolution 60)."""
    pbs_site = FOUR_CPUS.model_copy(update={"ordering": Ordering.PBS})
    jobs = [J(1, 0, 100, 2), J(2, 10, 50, 4), J(3, 20, 30, 1)]
    sim = Simulation(pbs_site, make_workload(jobs, pbs_site), make_policy("slurm", {}))
    assert sim.batch_rules is None
    assert sim.run().jobs["start"].tolist() == [0.0, 100.0, 30.0]
