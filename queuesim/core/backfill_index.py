"""Finding the jobs a backfill pass can start now without walking the whole queue.

Once a pass has given every reservation it may give, the backfill loop
(:func:`~.planning.plan_into`) only asks, job after job in submit order, whether the job
fits *now* for its whole estimate; with a deep queue that is thousands of questions a pass,
nearly all answered no. On a site of one pool (one cluster, memory not modelled, no job
shape, GPUs or node requirements) the answer depends only on the job's CPUs ``c`` and
estimate ``e``: it fits iff every step of the profile that begins before ``now + e`` has
``c`` CPUs free, i.e. iff ``now + e`` is at most the start ``T(c)`` of the first step with
fewer than ``c`` CPUs free.

So the waiting jobs are kept in one segment tree of estimates (minimum per node), its
leaves grouped by CPU count and, within a count, in submit order: the first job after a
given one that fits with ``c`` CPUs is a descent of that group's range, ``O(log n)``, and
the first job that fits at all is the earliest of those over the CPU counts still free.
The pass starts it, the profile shrinks, and the search goes on after it - the same jobs,
in the same order, that the job-by-job loop starts (a test runs both).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from queuesim.common.jit import jit
from queuesim.core.profile import Profile, _lows_upto, _take


class BackfillIndex(NamedTuple):
    """The waiting jobs' estimates by CPU count and submit order."""

    #: a segment tree over :attr:`jobs` (leaves from ``size``): the smallest estimate of a
    #: waiting job below each node, ``inf`` for jobs not waiting
    tree: np.ndarray
    size: int
    #: every job, by CPU count then job number; ``lo[c]:hi[c]`` are those of ``c`` CPUs
    jobs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    #: where each job is in :attr:`jobs`
    position: np.ndarray
    #: the distinct CPU counts, ascending
    counts: np.ndarray


def make_index(cpus: np.ndarray) -> BackfillIndex:
    """An index of jobs asking ``cpus`` each, none waiting yet."""
    n = cpus.shape[0]
    size = 1
    while size < max(n, 1):
        size *= 2
    by_count = np.lexsort((np.arange(n), cpus)).astype(np.int64)
    position = np.empty(n, dtype=np.int64)
    position[by_count] = np.arange(n)
    top = int(cpus.max()) if n else 0
    values = np.arange(top + 2)
    sorted_cpus = cpus[by_count]
    lo = np.searchsorted(sorted_cpus, values, side="left").astype(np.int64)
    hi = np.searchsorted(sorted_cpus, values, side="right").astype(np.int64)
    return BackfillIndex(
        np.full(2 * size, np.inf),
        size,
        by_count,
        lo,
        hi,
        position,
        np.unique(cpus).astype(np.int64),
    )


@jit
def index_set(index: BackfillIndex, job: int, estimate: float) -> None:
    """``job`` waits with ``estimate`` (``inf``: it no longer waits)."""
    tree = index.tree
    node = index.size + index.position[job]
    tree[node] = estimate
    node //= 2
    while node >= 1:
        tree[node] = min(tree[2 * node], tree[2 * node + 1])
        node //= 2


@jit
def _ends_by(estimate: float, now: float, until: float) -> bool:
    """A waiting job (``inf``: none) of ``estimate`` started now ends by ``until``."""
    return bool(estimate < np.inf and now + estimate <= until)


@jit
def _first_fitting(index: BackfillIndex, a: int, b: int, now: float, until: float) -> int:
    """The first leaf in ``[a, b)`` whose job ends by ``until`` (``now + estimate <=
    until``, added as the profile adds them), or -1."""
    tree, size = index.tree, index.size
    left = np.empty(64, dtype=np.int64)
    right = np.empty(64, dtype=np.int64)
    nl = nr = 0
    lo, hi = a + size, b + size
    while lo < hi:
        if lo & 1:
            left[nl] = lo
            nl += 1
            lo += 1
        if hi & 1:
            hi -= 1
            right[nr] = hi
            nr += 1
        lo //= 2
        hi //= 2
    for k in range(nl + nr):
        node = left[k] if k < nl else right[nr - 1 - (k - nl)]
        if not _ends_by(tree[node], now, until):
            continue
        while node < size:
            node = 2 * node if _ends_by(tree[2 * node], now, until) else 2 * node + 1
        return int(node - size)
    return -1


@jit
def start_fitting(
    index: BackfillIndex,
    prof: Profile,
    cpus: np.ndarray,
    estimate: np.ndarray,
    after: int,
    started: np.ndarray,
) -> int:
    """Take into ``prof`` (one pool, its first step now) every waiting job after job number
    ``after`` that fits now for its whole estimate, in submit order, each in the room the
    earlier ones left; their numbers go to ``started``. Returns how many."""
    now = prof.times[0]
    plan = np.zeros(1, dtype=np.int64)
    count = 0
    while True:
        steps = prof.size[0]
        _lows_upto(prof, steps)
        least = prof.low_cpus[:, 0]
        free = least[0]
        best = -1
        for v in range(index.counts.shape[0]):
            c = index.counts[v]
            if c > free:
                break
            lo, hi = index.lo[c], index.hi[c]
            a = lo + np.searchsorted(index.jobs[lo:hi], after, side="right")
            if a >= hi:
                continue
            # the first step with fewer than c CPUs free begins at `until`
            first, last = 0, steps
            while first < last:
                mid = (first + last) // 2
                if least[mid] < c:
                    last = mid
                else:
                    first = mid + 1
            until = prof.times[first] if first < steps else np.inf
            leaf = _first_fitting(index, a, hi, now, until)
            if leaf >= 0 and (best < 0 or index.jobs[leaf] < best):
                best = index.jobs[leaf]
        if best < 0:
            return count
        started[count] = best
        count += 1
        plan[0] = cpus[best]
        _take(prof, now, estimate[best], 0, 0, plan, 1)
        after = best
