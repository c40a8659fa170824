"""Hand-computed cases for the core rules whose mutants the targeted tests let survive
(`.ci/maintain mutation`, issue 20): fairshare decay and the queue limits' check. Each
case is small enough to compute by hand; the kernels are called directly (compiled, or as
Python when the mutation runner turns numba's JIT off): the limits rule itself
(``_held_by``, ``count_job``) too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from queuesim.core.fairshare import LedgerState, decay_to
from queuesim.core.limits import QueueLimits
from queuesim.core.planning import HELD_BY, _held_by, count_job
from queuesim.core.profile import JobArrays, LimitState
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


# --- the compiled limits rule itself: _held_by and count_job, called directly -------------


def _state(user_jobs: int, user_cpus: int, queue_cpus: int) -> LimitState:
    """One user (0) in one queue (0) with caps of 2 running jobs, 10 CPUs per user and a
    pool of 20 CPUs, and the given running counts."""
    return LimitState(
        user=np.zeros(1, dtype=np.int64),
        user_jobs_cap=np.array([2], dtype=np.int64),
        user_cpus_cap=np.array([10], dtype=np.int64),
        queue_pool=np.array([20], dtype=np.int64),
        user_jobs=np.array([[user_jobs]], dtype=np.int64),
        user_cpus=np.array([[user_cpus]], dtype=np.int64),
        queue_cpus=np.array([queue_cpus], dtype=np.int64),
    )


@pytest.mark.parametrize(
    ("user_jobs", "user_cpus", "queue_cpus", "held"),
    [
        (1, 7, 17, 0),  # a 3-CPU start reaches every cap exactly: allowed
        (2, 7, 17, 1),  # a third running job: max_running_per_user
        (1, 8, 17, 2),  # 8 + 3 > 10: max_cpus_per_user
        (1, 7, 18, 3),  # 18 + 3 > 20: cpu_pool
        (2, 8, 18, 1),  # all three passed: the first in HELD_BY's order is named
        (1, 8, 18, 2),
    ],
)
def test_a_start_exactly_at_a_cap_is_allowed_and_one_past_is_held_by_that_cap(
    user_jobs: int, user_cpus: int, queue_cpus: int, held: int
) -> None:
    """_held_by compares count + the job's own share strictly above each cap and returns
    1 + the index in HELD_BY of the first cap passed (0: none), computed by hand for a
    3-CPU job."""
    assert HELD_BY == ("max_running_per_user", "max_cpus_per_user", "cpu_pool")
    cpus = np.array([3], dtype=np.int64)
    queue = np.zeros(1, dtype=np.int64)
    assert _held_by(0, cpus, queue, _state(user_jobs, user_cpus, queue_cpus)) == held


def test_count_job_adds_and_removes_exactly_one_job_and_its_cpus() -> None:
    """count_job with sign 1 adds the job (1) and its CPUs (5) to its user's counts in its
    queue and to the queue's CPUs, nowhere else; sign -1 takes exactly that back."""
    jobs = JobArrays(
        cpus=np.array([3, 5], dtype=np.int64),
        queue=np.array([0, 1], dtype=np.int64),
        estimate=np.ones(2),
        ppn=np.zeros(2, dtype=np.int64),
        masks=np.ones((1, 1), dtype=np.bool_),
        mask_of=np.zeros(2, dtype=np.int64),
    )
    zeros = np.zeros((2, 2), dtype=np.int64)
    limits = LimitState(
        user=np.array([0, 1], dtype=np.int64),
        user_jobs_cap=np.full(2, 9, dtype=np.int64),
        user_cpus_cap=np.full(2, 99, dtype=np.int64),
        queue_pool=np.full(2, 99, dtype=np.int64),
        user_jobs=zeros.copy(),
        user_cpus=zeros.copy(),
        queue_cpus=np.zeros(2, dtype=np.int64),
    )
    count_job(1, jobs, limits, 1)
    count_job(1, jobs, limits, 1)
    assert limits.user_jobs.tolist() == [[0, 0], [0, 2]]
    assert limits.user_cpus.tolist() == [[0, 0], [0, 10]]
    assert limits.queue_cpus.tolist() == [0, 10]
    count_job(1, jobs, limits, -1)
    assert limits.user_jobs.tolist() == [[0, 0], [0, 1]]
    assert limits.user_cpus.tolist() == [[0, 0], [0, 5]]
    assert limits.queue_cpus.tolist() == [0, 5]
