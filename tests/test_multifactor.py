"""Slurm's multifactor priority as an ordering (``ordering: slurm-multifactor``,
:mod:`queuesim.core.multifactor`): hand-computed priorities and schedules. That both run
paths give the same schedule under it is part of ``tests/test_batch_run.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, make_workload, run_jobs

from queuesim.common.errors import ConfigError
from queuesim.core.engine import Simulation
from queuesim.core.multifactor import multifactor_keys
from queuesim.core.ordering import SlurmMultifactorOrder
from queuesim.policies.registry import make_policy
from queuesim.site.loading import load_site
from queuesim.site.model import Site


def slurm_site(priority: dict[str, Any], cpus: int = 4, **extra: Any) -> Site:
    return Site.model_validate(
        {
            "name": "mf",
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": cpus}],
            "ordering": "slurm-multifactor",
            "priority": priority,
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("weight_age", "starts"), [(1000, {2: 1000, 3: 1100}), (0, {2: 1100, 3: 1000})]
)
def test_age_lets_an_old_small_job_overtake_a_young_big_one(
    weight_age: int, starts: dict[int, float]
) -> None:
    """At t=1000 (job 1 ends) job 2 (2 of 4 CPUs) has waited 1000 s, job 3 (4 CPUs) 400 s.
    With PriorityWeightAge=1000, PriorityMaxAge=1000 s, PriorityWeightJobSize=1000:
    job 2 = 1000 x 1 + 1000 x 2/4 = 1500, job 3 = 1000 x 0.4 + 1000 x 1 = 1400: job 2
    first. Without the age weight: 500 against 1000, job 3 first (strict order: fcfs)."""
    site = slurm_site({"weight_age": weight_age, "max_age": "1000s", "weight_job_size": 1000})
    jobs = [J(1, 0, 1000, 4), J(2, 0, 100, 2), J(3, 600, 100, 4)]
    run = run_jobs(jobs, site, "fcfs")
    assert run.starts == {1: 0, **starts}


def test_fairshare_factor_is_two_to_the_minus_usage_over_shares() -> None:
    """User 1 used 4 CPUs x 100 s, user 2 3 CPUs x 100 s, both ending at t=100 (the same
    decay for both): U1 = 4/7, U2 = 3/7; shares 2:1 give S1 = 2/3, S2 = 1/3. So
    F1 = 2^(-6/7) = 0.55204, F2 = 2^(-9/7) = 0.41017, and with
    PriorityWeightFairshare=10000 the priorities are 5520 and 4101 (truncated)."""
    site = slurm_site(
        {"weight_fairshare": 10000},
        cpus=8,
        fairshare={"half_life": "1h", "shares": {1: 2.0, 2: 1.0}},
    )
    workload = make_workload([J(1, 0, 100, 4, user=1), J(2, 0, 100, 3, user=2)], site)
    sim = Simulation(site, workload, make_policy("fcfs", {}))
    sim.run()
    ordering = sim.ordering
    assert isinstance(ordering, SlurmMultifactorOrder)
    ledger = ordering.ledger
    usage = ledger.effective_usage(100.0)
    keys = multifactor_keys(
        100.0,
        np.array([0, 1]),
        ordering.submit,
        ordering.static,
        ordering.weights,
        ledger.state.job_account,
        ledger.state.share,
        usage,
    )
    assert keys.tolist() == [5520.0, 4101.0]


def test_the_more_used_user_waits_behind_the_less_used() -> None:
    """One 4-CPU node. User 1's job 1 runs 0..100; at t=50 user 1 submits job 2 and user 2
    job 3 (both 4 CPUs): user 1 has usage, user 2 none, so F(user 2) = 1 > F(user 1):
    job 3 starts at 100, job 2 after it at 150 although it is earlier in the trace."""
    site = slurm_site({"weight_fairshare": 1000})
    jobs = [J(1, 0, 100, 4, user=1), J(2, 50, 50, 4, user=1), J(3, 50, 50, 4, user=2)]
    run = run_jobs(jobs, site, "fcfs")
    assert run.starts == {1: 0, 3: 100, 2: 150}


def test_partition_tier_comes_before_priority_and_job_factor_counts() -> None:
    """Two queues on one node: 'hi' has priority (PriorityTier) 2, 'lo' 1; a job of 'hi'
    goes first whatever its factors. Within a tier the partition factor (PriorityJobFactor
    over the largest) weighs: checked on the static part of the priority."""
    site = Site.model_validate(
        {
            "name": "tiers",
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
            "queues": [
                {"name": "lo", "priority": 1, "trace_queues": [1]},
                {"name": "hi", "priority": 2, "trace_queues": [2]},
            ],
            "routing": "trace",
            "ordering": "slurm-multifactor",
            "priority": {"weight_partition": 1000, "partition_job_factor": {"lo": 4, "hi": 1}},
        }
    )
    jobs = pd.DataFrame(
        {
            "cpus": [1, 1],
            "queue": ["lo", "hi"],
            "user": [1, 1],
            "group": [1, 1],
            "submit": [0.0, 0.0],
        }
    )
    order = SlurmMultifactorOrder(site, jobs, (site.node_cpus(), site.node_memory()))
    assert order.static.tolist() == [1000.0, 250.0]
    assert order.order(0.0, np.array([0, 1])).tolist() == [1, 0]


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        # the priority block names queues; a misspelt one is reported with its key path
        (
            "ordering: slurm-multifactor\npriority: {partition_job_factor: {batch: 2}}\n",
            r"priority\.partition_job_factor: names queue 'batch'",
        ),
        # weights no ordering reads would be dropped silently: the site refuses them
        (
            "ordering: fairshare\npriority: {weight_age: 1000}\n",
            r"priority: the multifactor weights apply only with",
        ),
    ],
)
def test_a_priority_block_that_cannot_apply_is_an_error(
    tmp_path: Any, tail: str, message: str
) -> None:
    """A partition factor for an unknown queue, or weights under another ordering."""
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nclusters: [{name: c, nodes: 1, cpus_per_node: 4}]\n" + tail)
    with pytest.raises(ConfigError, match=message):
        load_site(path)
