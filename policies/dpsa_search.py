"""DPSA's search: the subset of eligible jobs that uses the most CPUs free now.

This is procedure ``OptimizeUtilization`` of Fig. 2 of paper ``001`` ("dynamic
programming" in the paper's words; in fact a depth-first exhaustive search of the
subsets), compiled with numba and made resumable, so that a wall-time bound can be looked
at between chunks of work.

The problem, once the head job holds its reservation at the shadow time (see
:mod:`queuesim.policies.dpsa`): each eligible job ``i`` asks ``c[i]`` CPUs; a *long* job
(one whose estimate runs past the shadow time) may only use the CPUs the head leaves
spare at its reservation, the ``extra`` CPUs. Choose a subset ``S`` that maximises
``sum(c[S])`` subject to

* ``sum(c[S]) <= free`` (the CPUs free now), and
* ``sum(c[S and long]) <= extra``.

These two capacities are the paper's line 21-23 on one pool of CPUs: a short job's feasible
resources are all free CPUs, a long job's only those whose next reservation is after its
end; and because a short job is given the CPUs of *least* availability first (line 23,
the CPUs the head will need), what is left for the long jobs is exactly ``extra``.

The subsets are visited depth first, adding one job per level in the order given
(``OptimizeUtilization``'s loop over ``jobIndex``): that is the lexicographic order of the
subsets' sorted index lists, a subset before its extensions. A subset replaces the best so
far only if it uses strictly more CPUs, so among subsets of equal use the search keeps the
first in that order. Given the jobs in priority order this is DPSAp's tie-break (compare
the subsets' best jobs, then the second best, ...); given them sorted by size it is DPSAn's
and DPSAw's (section III.C), which is why the paper presorts rather than compares at line 16.

Pruning never changes which subset is returned by an unbounded search:

* capacity: a job that does not fit what is left is not added;
* bound: the jobs from index ``i`` on can add at most ``min(free - used, short(i..) +
  min(long(i..), extra - used_long))``, rounded down to a multiple of the greatest common
  divisor of their sizes; when that cannot strictly beat the best, the level is done (the
  bound only shrinks with ``i``). Subsets cut there use no more than the best, and come
  later in the order, so they could not have replaced it;
* dominance: a job identical to an earlier job of the same level (same CPUs, same kind)
  is skipped: every subset of its branch has a twin in the earlier job's branch that is
  as good and comes first;
* done: when the best reaches the bound of the whole problem, nothing can beat it.

A *node* is one subset formed (one job added); ``bound_nodes`` counts them.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from queuesim.common.jit import jit

#: nodes explored between two looks at the clock when the search is bounded in time
CHUNK_NODES = 4096

# layout of the resumable search state
_DEPTH, _NEXT, _USED, _USED_LONG, _BEST, _BEST_LEN, _DONE = range(7)
_STATE_SIZE = 7


@jit
def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


@jit
def _prepare(
    cpus: np.ndarray, long: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Suffix sums of the short and the long jobs' CPUs, suffix gcds of the sizes, and for
    each job the index of the previous identical job (same CPUs and kind; -1 if none)."""
    n = cpus.shape[0]
    suf_short = np.zeros(n + 1, dtype=np.int64)
    suf_long = np.zeros(n + 1, dtype=np.int64)
    suf_gcd = np.zeros(n + 1, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        suf_short[i] = suf_short[i + 1]
        suf_long[i] = suf_long[i + 1]
        if long[i]:
            suf_long[i] += cpus[i]
        else:
            suf_short[i] += cpus[i]
        suf_gcd[i] = _gcd(cpus[i], suf_gcd[i + 1])
    key = cpus * 2 + long.astype(np.int64)
    order = np.argsort(key, kind="mergesort")
    prev_same = np.full(n, -1, dtype=np.int64)
    for k in range(1, n):
        if key[order[k]] == key[order[k - 1]]:
            prev_same[order[k]] = order[k - 1]
    return suf_short, suf_long, suf_gcd, prev_same


@jit
def _reach(
    i: int,
    used: int,
    used_long: int,
    free: int,
    extra: int,
    suf_short: np.ndarray,
    suf_long: np.ndarray,
    suf_gcd: np.ndarray,
) -> int:
    """An upper bound on the CPUs a subset can use that holds the current jobs and adds
    only jobs from index ``i`` on."""
    room = free - used
    more = suf_short[i] + min(suf_long[i], extra - used_long)
    if more < room:
        room = more
    g = suf_gcd[i]
    if g > 1:
        room -= room % g
    return used + room


@jit
def _search(
    cpus: np.ndarray,
    long: np.ndarray,
    free: int,
    extra: int,
    suf_short: np.ndarray,
    suf_long: np.ndarray,
    suf_gcd: np.ndarray,
    prev_same: np.ndarray,
    cap: int,
    state: np.ndarray,
    pick: np.ndarray,
    best_pick: np.ndarray,
    budget: int,
) -> int:
    """Run the depth-first search from ``state`` for at most ``budget`` more nodes; returns
    the nodes used. ``state[_DONE]`` becomes 1 when the search is over."""
    n = cpus.shape[0]
    depth = state[_DEPTH]
    i = state[_NEXT]
    used = state[_USED]
    used_long = state[_USED_LONG]
    best = state[_BEST]
    nodes = 0
    done = False
    while True:
        first = pick[depth - 1] + 1 if depth > 0 else 0  # this level's first job
        found = -1
        while i < n:
            if _reach(i, used, used_long, free, extra, suf_short, suf_long, suf_gcd) <= best:
                break  # nothing from i on can beat the best: the level is done
            c = cpus[i]
            if (
                c <= free - used
                and (not long[i] or c <= extra - used_long)
                and prev_same[i] < first
            ):
                found = i
                break
            i += 1
        if found < 0:
            if depth == 0:
                done = True
                break
            depth -= 1
            j = pick[depth]
            used -= cpus[j]
            if long[j]:
                used_long -= cpus[j]
            i = j + 1
            continue
        if nodes >= budget:
            i = found
            break
        nodes += 1
        pick[depth] = found
        depth += 1
        used += cpus[found]
        if long[found]:
            used_long += cpus[found]
        i = found + 1
        if used > best:
            best = used
            state[_BEST_LEN] = depth
            best_pick[:depth] = pick[:depth]
            if best >= cap:
                done = True
                break
    state[_DEPTH] = depth
    state[_NEXT] = i
    state[_USED] = used
    state[_USED_LONG] = used_long
    state[_BEST] = best
    state[_DONE] = 1 if done else 0
    return nodes


class Search(NamedTuple):
    """The outcome of one search."""

    chosen: np.ndarray  #: indices into the jobs given, ascending (= the search order)
    used: int  #: CPUs the chosen jobs use
    nodes: int  #: subsets formed
    bound_hit: bool  #: stopped by a bound before the search was over


def best_subset(
    cpus: np.ndarray,
    long: np.ndarray,
    free: int,
    extra: int,
    *,
    bound_nodes: int = 0,
    bound_ms: float = 0.0,
) -> Search:
    """The subset of the jobs (``cpus[i]`` CPUs each; ``long[i]``: runs past the shadow
    time) that uses the most of ``free`` CPUs, with the long jobs within ``extra``; among
    equal uses, the first subset in the order the jobs are given (see the module
    docstring).

    ``bound_nodes`` (0: none) caps the subsets formed, ``bound_ms`` (0: none) the wall
    time; when one stops the search, the best subset found so far is returned and
    ``bound_hit`` is set. The time bound is looked at every :data:`CHUNK_NODES` nodes.
    """
    cpus = np.ascontiguousarray(cpus, dtype=np.int64)
    long = np.ascontiguousarray(long, dtype=np.bool_)
    n = cpus.shape[0]
    free = max(int(free), 0)
    extra = min(max(int(extra), 0), free)
    suf_short, suf_long, suf_gcd, prev_same = _prepare(cpus, long)
    cap = _reach(0, 0, 0, free, extra, suf_short, suf_long, suf_gcd) if n else 0
    state = np.zeros(_STATE_SIZE, dtype=np.int64)
    pick = np.zeros(n, dtype=np.int64)
    best_pick = np.zeros(n, dtype=np.int64)
    nodes = 0
    if n == 0 or cap == 0:
        state[_DONE] = 1
    elif bound_ms <= 0:
        budget = bound_nodes if bound_nodes > 0 else np.iinfo(np.int64).max
        nodes = _search(
            cpus, long, free, extra, suf_short, suf_long, suf_gcd, prev_same, cap,
            state, pick, best_pick, budget,
        )  # fmt: skip
    else:
        deadline = time.perf_counter() + bound_ms / 1000.0
        while True:
            budget = CHUNK_NODES if bound_nodes <= 0 else min(CHUNK_NODES, bound_nodes - nodes)
            nodes += _search(
                cpus, long, free, extra, suf_short, suf_long, suf_gcd, prev_same, cap,
                state, pick, best_pick, budget,
            )  # fmt: skip
            if state[_DONE] or (bound_nodes > 0 and nodes >= bound_nodes):
                break
            if time.perf_counter() >= deadline:
                break
    chosen = np.sort(best_pick[: state[_BEST_LEN]])
    return Search(chosen, int(state[_BEST]), nodes, not state[_DONE])


def search_order(cpus: np.ndarray, variant: str) -> np.ndarray:
    """The order DPSA's variants search the eligible jobs in (section III.C of paper
    ``001``), given the jobs in priority order: ``p`` priority order; ``n`` by CPUs
    ascending, ``w`` by CPUs descending, ties in priority order."""
    if variant == "p":
        return np.arange(cpus.shape[0])
    if variant == "n":
        return np.argsort(cpus, kind="stable")
    if variant == "w":
        return np.argsort(-cpus, kind="stable")
    raise ValueError(f"variant must be one of p, n, w; got {variant!r}")


def warm_up() -> None:
    """Compile (or load from numba's cache) the search kernels on a tiny input."""
    best_subset(np.array([1, 2]), np.array([False, True]), 2, 1)
    best_subset(np.array([1, 2]), np.array([False, True]), 2, 1, bound_ms=1.0)
