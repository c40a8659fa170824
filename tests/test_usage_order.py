"""The fairshare order by buckets (:mod:`queuesim.core.usage_order`) against the stable
comparison sorts it stands for, and a hand-computed case."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.core.usage_order import bucket_order, priority_ranks, sorted_by_usage

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "60"))


def reference(waiting: np.ndarray, usage_of: np.ndarray, priority: np.ndarray,
              by_priority: bool) -> list[int]:  # fmt: skip
    """By (-priority when asked, usage, place in the list): Python's stable sort."""
    return sorted(
        waiting.tolist(),
        key=lambda j: ((-priority[j] if by_priority else 0.0), usage_of[j]),
    )


@st.composite
def queues(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """Up to 40 jobs of up to 6 accounts whose usages tie often (0.0 and -0.0 among them,
    sometimes NaN), over up to 4 queue priorities; a waiting subset in job order."""
    jobs = draw(st.integers(1, 40))
    accounts = draw(st.integers(1, 6))
    usage = st.sampled_from([0.0, -0.0, 1.0, 2.5, 2.5, 1e-300, 7.0, float("nan")])
    account_usage = np.array(draw(st.lists(usage, min_size=accounts, max_size=accounts)))
    job_account = np.array(
        draw(st.lists(st.integers(0, accounts - 1), min_size=jobs, max_size=jobs)),
        dtype=np.int64,
    )
    priority = np.array(
        draw(st.lists(st.sampled_from([0.0, 20.0, 50.0, 70.0]), min_size=jobs, max_size=jobs))
    )
    waiting = np.array(
        [j for j in range(jobs) if draw(st.booleans())] or [jobs - 1], dtype=np.int64
    )
    return waiting, account_usage, job_account, priority, draw(st.booleans())


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=queues())
def test_the_bucket_order_is_the_stable_sort_by_priority_then_usage(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool],
) -> None:
    """By buckets or by its fallback, the order is that of the stable comparison sorts by
    usage then by queue priority (or by usage alone), ties by job number."""
    waiting, account_usage, job_account, priority, by_priority = case
    if by_priority:
        ranks, levels = priority_ranks(priority)
    else:
        ranks, levels = np.zeros(priority.shape[0], dtype=np.int64), 1
    count = np.empty(levels * account_usage.shape[0] + 1, dtype=np.int64)
    usage = account_usage[job_account[waiting]]
    got = bucket_order(waiting, account_usage, job_account, ranks, levels, priority, count)
    sorts = sorted_by_usage(waiting, usage, priority, by_priority)
    assert got.tolist() == sorts.tolist()
    if not np.isnan(account_usage).any():  # NaN compares false both ways: no Python twin
        assert got.tolist() == reference(waiting, account_usage[job_account], priority,
                                         by_priority)  # fmt: skip


def test_jobs_of_a_higher_queue_priority_then_of_less_used_accounts_come_first() -> None:
    """Jobs 0-4 of accounts [1, 0, 1, 0, 2], account usages [5, 3, 3] (accounts 1 and 2
    tie), queue priorities [50, 50, 70, 50, 50]: job 2 (priority 70) first, then the jobs
    of usage 3 in job order (0 of account 1, 4 of account 2), then account 0's (1, 3)."""
    account_usage = np.array([5.0, 3.0, 3.0])
    job_account = np.array([1, 0, 1, 0, 2], dtype=np.int64)
    priority = np.array([50.0, 50.0, 70.0, 50.0, 50.0])
    ranks, levels = priority_ranks(priority)
    assert ranks.tolist() == [1, 1, 0, 1, 1] and levels == 2
    count = np.empty(levels * 3 + 1, dtype=np.int64)
    waiting = np.arange(5, dtype=np.int64)
    got = bucket_order(waiting, account_usage, job_account, ranks, levels, priority, count)
    assert got.tolist() == [2, 0, 4, 1, 3]
