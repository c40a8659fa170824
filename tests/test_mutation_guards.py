"""Hand-computed cases for the core rules whose mutants the targeted tests let survive
(`.ci/maintain mutation`, issue 20): fairshare decay and the queue limits' check. Each
case is small enough to compute by hand; the kernels are called directly (compiled, or as
Python when the mutation runner turns numba's JIT off)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from queuesim.core.fairshare import LedgerState, decay_to
from queuesim.core.limits import QueueLimits
from queuesim.site.model import Site


def _ledger(
    usage: list[float], clock: float, factor: float, interval: float, step: bool
) -> LedgerState:
    n = len(usage)
    zeros = np.zeros(n)
    return LedgerState(
        usage=np.array(usage, dtype=np.float64),
        share=np.ones(n),
        running_rate=zeros.copy(),
        running_since=zeros.copy(),
        job_account=np.zeros(0, dtype=np.int64),
        rate=np.zeros(0),
        started=np.zeros(0),
        node_cpus=np.ones(1),
        node_mem=np.ones(1),
        node_gpus=np.zeros(1),
        clock=np.array([clock, np.inf]),
        params=np.array([factor, interval, 1.0 if step else 0.0, np.inf, 0.0, 0.0]),
    )


def test_continuous_decay_halves_usage_per_interval_and_moves_the_clock() -> None:
    """factor 0.5 per 100 s, from t=50 to t=250: two intervals, usage x 0.25."""
    ledger = _ledger([8.0, 2.0], clock=50.0, factor=0.5, interval=100.0, step=False)
    decay_to(ledger, 250.0)
    assert ledger.usage.tolist() == [2.0, 0.5]
    assert ledger.clock.tolist() == [250.0, np.inf]


def test_continuous_decay_over_part_of_an_interval() -> None:
    """From t=0 to t=50 at 0.25 per 100 s: x 0.25^0.5 = 0.5."""
    ledger = _ledger([4.0], clock=0.0, factor=0.25, interval=100.0, step=False)
    decay_to(ledger, 50.0)
    assert ledger.usage.tolist() == pytest.approx([2.0])


@pytest.mark.parametrize(
    ("before", "now", "expected"),
    [
        (50.0, 250.0, 2.0),  # boundaries 100 and 200 crossed: x 0.25
        (50.0, 99.0, 8.0),  # no boundary crossed: unchanged
        (99.0, 100.0, 4.0),  # the boundary itself counts: x 0.5
        (100.0, 199.0, 8.0),  # from a boundary to before the next: unchanged
        (0.0, 300.0, 1.0),  # three boundaries: x 0.125
    ],
)
def test_stepwise_decay_counts_the_interval_boundaries_crossed(
    before: float, now: float, expected: float
) -> None:
    ledger = _ledger([8.0], clock=before, factor=0.5, interval=100.0, step=True)
    decay_to(ledger, now)
    assert ledger.usage.tolist() == [expected]
    assert ledger.clock.tolist() == [now, np.inf]


@pytest.mark.parametrize("step", [False, True])
def test_decay_to_an_earlier_time_changes_nothing(step: bool) -> None:
    ledger = _ledger([8.0, 3.0], clock=500.0, factor=0.5, interval=100.0, step=step)
    decay_to(ledger, 400.0)
    assert ledger.usage.tolist() == [8.0, 3.0]
    assert ledger.clock.tolist() == [500.0, np.inf]


# --- queue limits: which limit a start would break, named with its cap ------------------------


def _limits(queue_yaml: str) -> QueueLimits:
    """Two queues (q0 without limits, q1 with ``queue_yaml``) on 16 one-CPU nodes; jobs 0-3
    of user 7 and job 4 of user 8 in q1 with 2 CPUs each, job 5 of user 7 in q0."""
    site = Site.model_validate(
        yaml.safe_load(
            "name: s\nclusters: [{name: c, nodes: 16, cpus_per_node: 1}]\n"
            f"queues: [{{name: q0, max_walltime: 1h}}, {{name: q1, {queue_yaml}}}]\n"
        )
    )
    jobs = pd.DataFrame({"user": [7, 7, 7, 7, 8, 7]})
    cpus = np.array([2, 2, 2, 2, 2, 2], dtype=np.int64)
    queue = np.array([1, 1, 1, 1, 1, 0], dtype=np.int64)
    return QueueLimits(site, jobs, ["q0", "q1"], cpus, queue)


def test_running_jobs_per_user_limit_is_named_with_its_cap() -> None:
    limits = _limits("max_running_per_user: 2")
    assert limits.check(0) is None
    limits.add(0, 1)
    assert limits.check(1) is None
    limits.add(1, 1)
    assert limits.check(2) == "max_running_per_user (2)"
    assert limits.check(4) is None  # another user
    assert limits.check(5) is None  # another queue
    limits.add(1, -1)  # job 1 ends
    assert limits.check(2) is None


def test_cpus_per_user_and_pool_limits_are_named_with_their_caps() -> None:
    limits = _limits("max_cpus_per_user: 5, cpu_pool: 5")
    limits.add(0, 1)
    limits.add(1, 1)
    assert limits.check(2) == "max_cpus_per_user (5)"  # 4 + 2 > 5
    limits.add(4, 1)  # user 8: the queue holds 6 CPUs
    assert limits.check(2) == "max_cpus_per_user (5)"
    limits.add(0, -1)
    assert limits.check(2) == "cpu_pool (5)"  # user 7 at 2 + 2 <= 5; the pool at 4 + 2 > 5
    assert limits.check(5) is None
