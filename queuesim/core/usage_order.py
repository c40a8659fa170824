"""The fairshare order of the waiting jobs (queue priority first, then the account's
fairshare usage, then submit order; paper 004, 2.1) in time linear in the queue.

The compiled run (:mod:`.batch_run`) orders the waiting jobs at every scheduling pass. A
comparison sort of the whole queue costs ``W log W`` a pass, yet the key of a job has few
values: its queue's priority (a handful of queues) and its account's usage (a value per
account, the same for all of an account's jobs). So the accounts are sorted by usage
(``A log A``, A accounts, with equal usages sharing a rank), each waiting job gets the
bucket (priority rank, usage rank), and a stable counting sort over the buckets - the
waiting list being in submit order - gives the same order as the stable sorts by usage
then by priority of :func:`sorted_by_usage`, to the job: ``W + buckets`` a pass.
"""

from __future__ import annotations

import numpy as np

from queuesim.common.jit import jit


@jit
def priority_ranks(priority: np.ndarray) -> tuple[np.ndarray, int]:
    """Every job's rank among the distinct values of ``priority``, the highest first (0),
    and how many distinct values there are."""
    values = np.unique(priority)
    levels = values.shape[0]
    ranks = np.empty(priority.shape[0], dtype=np.int64)
    for j in range(priority.shape[0]):
        ranks[j] = levels - 1 - np.searchsorted(values, priority[j])
    return ranks, levels


@jit
def sorted_by_usage(
    waiting: np.ndarray, usage: np.ndarray, priority: np.ndarray, by_priority: bool
) -> np.ndarray:
    """``waiting`` (ascending) by ``usage`` (one per waiting job), and first by queue
    priority (highest first) when ``by_priority``; ties by place in ``waiting``: the
    comparison sort, for a queue too short for :func:`bucket_order` to pay."""
    by_usage = waiting[np.argsort(usage, kind="mergesort")]
    if not by_priority:
        return by_usage
    keys = np.empty(by_usage.shape[0])
    for k in range(by_usage.shape[0]):
        keys[k] = -priority[by_usage[k]]
    return by_usage[np.argsort(keys, kind="mergesort")]


@jit
def bucket_order(
    waiting: np.ndarray,
    account_usage: np.ndarray,
    job_account: np.ndarray,
    ranks: np.ndarray,
    levels: int,
    priority: np.ndarray,
    count: np.ndarray,
) -> np.ndarray:
    """``waiting`` (ascending job numbers) ordered by ``ranks`` (the job's priority rank,
    :func:`priority_ranks`; all 0 with one level), then its account's usage
    (``account_usage[job_account[job]]``), then job number. ``count``: scratch of at least
    ``levels * accounts + 1`` entries. Falls back to :func:`sorted_by_usage` when a usage
    is NaN (no order between it and others to rank) or the buckets outnumber the jobs
    several times over."""
    accounts = account_usage.shape[0]
    m = waiting.shape[0]
    buckets = levels * accounts
    sortable = buckets <= 4 * m + 64
    for a in range(accounts):
        if np.isnan(account_usage[a]):
            sortable = False
    if not sortable:
        usage = np.empty(m)
        for k in range(m):
            usage[k] = account_usage[job_account[waiting[k]]]
        return sorted_by_usage(waiting, usage, priority, levels > 1)
    # accounts by usage; equal usages (0.0 and -0.0 too) share a rank, as they tie in a sort
    by_usage = np.argsort(account_usage, kind="mergesort")
    rank_of = np.empty(accounts, dtype=np.int64)
    rank = -1
    for k in range(accounts):
        a = by_usage[k]
        if k == 0 or account_usage[a] != account_usage[by_usage[k - 1]]:
            rank += 1
        rank_of[a] = rank
    distinct = rank + 1
    used = levels * distinct
    for b in range(used + 1):
        count[b] = 0
    for k in range(m):
        job = waiting[k]
        count[ranks[job] * distinct + rank_of[job_account[job]] + 1] += 1
    for b in range(used):
        count[b + 1] += count[b]
    order = np.empty(m, dtype=np.int64)
    for k in range(m):
        job = waiting[k]
        b = ranks[job] * distinct + rank_of[job_account[job]]
        order[count[b]] = job
        count[b] += 1
    return order
