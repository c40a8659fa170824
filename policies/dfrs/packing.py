"""MCB1-MCB8: two-list multi-capacity bin packing with a binary search on the yield.

From Casanova, Schanzenbach, Stillwell and Vivien, *Resource Allocation using Virtual
Clusters* (``003`` in ``../shared/papers``, section 3.4), after the two-dimensional case of
Leinberger, Karypis and Kumar's multi-capacity bin packing. For a trial yield ``Y`` every
task needs ``cpu_need * Y`` of a host's CPU and its memory; that is two-dimensional vector
packing, solved by:

1. split the tasks into a CPU-heavy list (CPU requirement >= memory) and a memory-heavy
   list, each sorted by one of the eight keys of :data:`SORT_KEYS`;
2. fill the hosts one after the other: take from the list that counters the host's
   imbalance (memory-heavy tasks while more memory than CPU is free, else CPU-heavy) the
   first task that fits; if none fits, the first that fits from the other list; when no
   task fits, go to the next host;
3. the packing succeeds when every task is placed.

:func:`mcb_mapping` wraps this in the binary search of ``003``: the yield lies in
``(0, min(1, hosts / total need)]``; try the bound, then bisect until the interval is
narrower than 0.01 (the accuracy used by Stillwell et al. in ``000`` and ``002``). The
heuristic is not monotone in ``Y``, so the best mapping seen is kept. As a last resort the
tasks are packed by memory alone (``Y = 0``): any such mapping still has a positive yield.

:func:`mcb_online` is the online use of MCB8 in ``000`` (DYNMCB8) and ``002``: when no
yield lets every job in, drop the job of lowest priority and try again.

The packing loop is compiled with numba: ``000`` runs MCB8 at every scheduling event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from queuesim.common.jit import jit
from queuesim.policies.dfrs.instance import Allocation, FloatArray, Instance, IntArray
from queuesim.policies.dfrs.yields import YieldStep, step_yields

#: width of the final yield interval of the binary search
ACCURACY = 0.01
#: a task fits when it exceeds a host's free CPU or memory by at most this much
FIT_EPS = 1e-12


def _sum(cpu: FloatArray, mem: FloatArray) -> FloatArray:
    out: FloatArray = cpu + mem
    return out


def _spread(cpu: FloatArray, mem: FloatArray) -> FloatArray:
    out: FloatArray = np.abs(cpu - mem)
    return out


def _ratio(cpu: FloatArray, mem: FloatArray) -> FloatArray:
    hi = np.maximum(cpu, mem)
    lo = np.minimum(cpu, mem)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), np.inf)
    out[hi == 0] = 1.0  # nothing needed at all: perfectly balanced
    return out


def _largest(cpu: FloatArray, mem: FloatArray) -> FloatArray:
    out: FloatArray = np.maximum(cpu, mem)
    return out


#: MCB variant -> (sort key of a task from its CPU and memory requirement, descending?)
SORT_KEYS: dict[int, tuple[Callable[[FloatArray, FloatArray], FloatArray], bool]] = {
    1: (_sum, False),
    2: (_spread, False),
    3: (_ratio, False),
    4: (_largest, False),
    5: (_sum, True),
    6: (_spread, True),
    7: (_ratio, True),
    8: (_largest, True),
}


def _check_variant(variant: int) -> None:
    if variant not in SORT_KEYS:
        raise ValueError(f"unknown MCB variant {variant!r}; variants are 1 to 8")


def _sorted_lists(cpu: FloatArray, mem: FloatArray, variant: int) -> tuple[IntArray, IntArray]:
    """Task indices of the CPU-heavy and memory-heavy lists, each in MCB order (ties by
    task index, so the packing is deterministic)."""
    key_of, descending = SORT_KEYS[variant]
    key = key_of(cpu, mem)
    order = np.argsort(-key if descending else key, kind="stable").astype(np.int64)
    cpu_heavy = cpu[order] >= mem[order]
    return order[cpu_heavy], order[~cpu_heavy]


@jit
def _pack(
    cpu: np.ndarray,
    mem: np.ndarray,
    cpu_list: np.ndarray,
    mem_list: np.ndarray,
    hosts: int,
    eps: float,
    host_of: np.ndarray,
    used_cpu: np.ndarray,
    used_mem: np.ndarray,
) -> bool:
    """Fill hosts one by one from the two lists (module docstring, step 2), each host
    starting with ``used_cpu`` / ``used_mem`` already taken; write each listed task's host
    to ``host_of`` and say whether every listed task was placed."""
    lists = (cpu_list, mem_list)
    sizes = np.array([cpu_list.shape[0], mem_list.shape[0]])
    taken = (np.zeros(sizes[0], dtype=np.bool_), np.zeros(sizes[1], dtype=np.bool_))
    first = np.zeros(2, dtype=np.int64)  # first untaken position of each list
    left = sizes[0] + sizes[1]
    for h in range(hosts):
        if left == 0:
            break
        free_cpu = 1.0 - used_cpu[h]
        free_mem = 1.0 - used_mem[h]
        while left > 0:
            preferred = 1 if free_mem > free_cpu else 0
            placed = False
            for attempt in range(2):
                which = preferred if attempt == 0 else 1 - preferred
                tasks = lists[which]
                done = taken[which]
                for k in range(first[which], sizes[which]):
                    if done[k]:
                        continue
                    t = tasks[k]
                    if cpu[t] <= free_cpu + eps and mem[t] <= free_mem + eps:
                        done[k] = True
                        host_of[t] = h
                        free_cpu -= cpu[t]
                        free_mem -= mem[t]
                        left -= 1
                        placed = True
                        while first[which] < sizes[which] and done[first[which]]:
                            first[which] += 1
                        break
                if placed:
                    break
            if not placed:
                break
    return bool(left == 0)


def pack_at_yield(
    instance: Instance, yield_: float, variant: int = 8, fixed: IntArray | None = None
) -> IntArray | None:
    """The host of every task when MCB``variant`` packs the instance with every CPU need
    scaled by ``yield_``; None when some task is left over.

    ``fixed`` (one entry per task, -1 for a free task) pins tasks to their hosts: they
    take their share of the host first and MCB places only the others (paper ``002``
    section 4.3: MINVT/MINFT keep a young job's mapping while it keeps running).
    """
    _check_variant(variant)
    cpu = instance.task_cpu * yield_
    mem = instance.task_memory
    host_of = np.full(instance.n_tasks, -1, dtype=np.int64)
    used_cpu = np.zeros(instance.hosts)
    used_mem = np.zeros(instance.hosts)
    free = np.ones(instance.n_tasks, dtype=bool)
    if fixed is not None:
        pinned = np.asarray(fixed, dtype=np.int64) >= 0
        free = ~pinned
        host_of[pinned] = fixed[pinned]
        np.add.at(used_cpu, host_of[pinned], cpu[pinned])
        np.add.at(used_mem, host_of[pinned], mem[pinned])
        if (used_cpu > 1.0 + FIT_EPS).any() or (used_mem > 1.0 + FIT_EPS).any():
            return None
    cpu_list, mem_list = _sorted_lists(cpu, mem, variant)
    if not free.all():
        cpu_list = cpu_list[free[cpu_list]]
        mem_list = mem_list[free[mem_list]]
    placed = _pack(
        cpu, mem, cpu_list, mem_list, instance.hosts, FIT_EPS, host_of, used_cpu, used_mem
    )
    return host_of if bool(placed) else None


def yield_upper_bound(instance: Instance) -> float:
    """``min(1, hosts / total CPU need)``: no mapping gives every job a larger yield."""
    total = float(instance.task_cpu.sum())
    return float(min(1.0, instance.hosts / total))


def mcb_mapping(
    instance: Instance,
    variant: int = 8,
    accuracy: float = ACCURACY,
    fixed: IntArray | None = None,
) -> IntArray | None:
    """The mapping MCB``variant`` finds with the binary search on the yield of ``003``
    (section 3.4); None when it cannot place the tasks even by memory alone. ``fixed``
    pins tasks as in :func:`pack_at_yield`."""
    _check_variant(variant)
    if instance.task_memory.sum() > instance.hosts + FIT_EPS * instance.n_tasks:
        return None  # not even a fractional packing of the memory exists
    hi = yield_upper_bound(instance)
    best = pack_at_yield(instance, hi, variant, fixed)
    if best is not None:
        return best
    lo = 0.0
    while hi - lo > accuracy:
        mid = 0.5 * (lo + hi)
        found = pack_at_yield(instance, mid, variant, fixed)
        if found is None:
            hi = mid
        else:
            lo, best = mid, found
    if best is None:
        best = pack_at_yield(instance, 0.0, variant, fixed)
    return best


def mcb(instance: Instance, variant: int = 8, step: YieldStep = YieldStep.AVG) -> Allocation | None:
    """MCB``variant`` with its yields set by ``step``; None when it finds no mapping."""
    host = mcb_mapping(instance, variant)
    if host is None:
        return None
    return Allocation(instance, host, step_yields(instance, host, step), f"MCB{variant}")


@dataclass(frozen=True, eq=False)
class OnlinePacking:
    """Result of :func:`mcb_online`: the jobs kept (indices into the original instance, in
    its order) and their allocation, on ``instance.subset(kept)``; ``allocation`` is None
    when no job could be kept."""

    kept: IntArray
    removed: IntArray
    allocation: Allocation | None


def mcb_online(
    instance: Instance,
    priority: FloatArray,
    variant: int = 8,
    step: YieldStep = YieldStep.MIN,
    fixed: IntArray | None = None,
) -> OnlinePacking:
    """Pack as many jobs as MCB can, dropping the lowest-priority job while no yield works.

    This is how ``000`` (DYNMCB8) and ``002`` apply MCB8 at a scheduling event: the jobs
    removed are paused. ``priority`` has one value per job (larger is more urgent, ``inf``
    allowed); ties are broken by dropping the later job. ``step`` defaults to OPT=MIN,
    which ``002`` found never worse than OPT=AVG online. ``fixed`` (one entry per task of
    ``instance``, -1 for a free task) pins the tasks of jobs that must keep their mapping
    if they keep running; a removed job's pins go with it.
    """
    _check_variant(variant)
    prio = np.asarray(priority, dtype=np.float64)
    if prio.shape != (instance.n_jobs,) or np.isnan(prio).any():
        raise ValueError(f"priority must be {instance.n_jobs} numbers (one per job, no NaN)")
    # removal order: lowest priority first, later job first among equals
    order = np.lexsort((-np.arange(instance.n_jobs), prio))
    # the fewest drops that leave the kept jobs' memory within the hosts (a necessary
    # condition), so hopeless subsets are not packed at all
    job_memory = instance.memory * instance.tasks
    left = np.concatenate([np.cumsum(job_memory[order][::-1])[::-1], [0.0]])
    first = int(np.argmax(left <= instance.hosts + FIT_EPS * instance.n_tasks))
    for dropped in range(first, instance.n_jobs):
        kept = np.sort(order[dropped:])
        sub = instance.subset(kept)
        keep = np.zeros(instance.n_jobs, dtype=bool)
        keep[kept] = True
        pins = None if fixed is None else fixed[keep[instance.task_job]]
        # MCB finds a mapping exactly when the tasks pack by memory alone (yield 0), so
        # test that with one packing before the binary search on the yield
        if pack_at_yield(sub, 0.0, variant, pins) is None:
            continue
        host = mcb_mapping(sub, variant, fixed=pins)
        if host is not None:
            allocation = Allocation(sub, host, step_yields(sub, host, step), f"MCB{variant}")
            return OnlinePacking(kept, np.sort(order[:dropped]), allocation)
    return OnlinePacking(np.zeros(0, dtype=np.int64), np.sort(order), None)


def warm_up() -> None:
    """Compile (or load from numba's cache) the packing kernel on a tiny input."""
    pack_at_yield(Instance(1, np.array([1]), np.array([0.5]), np.array([0.5])), 1.0)
