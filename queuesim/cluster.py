"""Node-level cluster state: free CPUs and memory of every node, and job placement.

Every node of every cluster is one entry of numpy arrays. A job asks for a number of CPUs
(and, when the site models memory, an amount of memory per CPU) and may be spread over
several nodes; it may only use the nodes its queue allows. Placement is first fit in node
order, the order of the clusters in the site file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from queuesim.errors import PolicyViolation
from queuesim.site import Site


@dataclass(frozen=True)
class Allocation:
    """Where a job runs: node indices and the CPUs it holds on each."""

    nodes: np.ndarray
    cpus: np.ndarray
    mem_per_cpu: int


class ClusterState:
    """Free resources of every node, changed only by :meth:`allocate` and :meth:`release`."""

    def __init__(self, site: Site, queue_names: list[str]) -> None:
        self.capacity_cpus = site.node_cpus()
        self.capacity_mem = site.node_memory()
        self.free_cpus = self.capacity_cpus.copy()
        self.free_mem = self.capacity_mem.copy()
        self.total_cpus = int(self.capacity_cpus.sum())
        self.total_free = self.total_cpus
        # node mask per queue (None: all nodes)
        offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for c in site.clusters:
            offsets[c.name] = (start, start + c.nodes)
            start += c.nodes
        self._queue_masks: list[np.ndarray | None] = []
        for name in queue_names:
            queue = site.queue(name)
            if queue.clusters is None or set(queue.clusters) == set(offsets):
                self._queue_masks.append(None)
                continue
            mask = np.zeros(start, dtype=bool)
            for cluster in queue.clusters:
                lo, hi = offsets[cluster]
                mask[lo:hi] = True
            self._queue_masks.append(mask)
        self._flat = all(m is None for m in self._queue_masks)
        self._no_mask = np.ones(start, dtype=bool)
        self._nodes_buffer = np.empty(start, dtype=np.int64)
        self._counts_buffer = np.empty(start, dtype=np.int64)

    def _mask(self, queue: int) -> tuple[np.ndarray, bool]:
        mask = self._queue_masks[queue]
        return (mask, True) if mask is not None else (self._no_mask, False)

    def can_place(self, cpus: int, mem_per_cpu: int, queue: int) -> bool:
        """Whether a job of ``cpus`` CPUs could start now."""
        if cpus > self.total_free:
            return False
        if mem_per_cpu == 0 and self._flat:
            return True
        mask, use_mask = self._mask(queue)
        return bool(_room(self.free_cpus, self.free_mem, mask, use_mask, mem_per_cpu) >= cpus)

    def allocate(self, job_id: int, cpus: int, mem_per_cpu: int, queue: int) -> Allocation:
        """Place a job first fit; raise :class:`PolicyViolation` if it does not fit."""
        mask, use_mask = self._mask(queue)
        nodes = self._nodes_buffer
        counts = self._counts_buffer
        used = _first_fit(
            self.free_cpus, self.free_mem, mask, use_mask, mem_per_cpu, cpus, nodes, counts
        )
        if used < 0:
            have = int(_room(self.free_cpus, self.free_mem, mask, use_mask, mem_per_cpu))
            rule = "CPU capacity" if mem_per_cpu == 0 else "CPU and memory capacity"
            raise PolicyViolation(
                f"job {job_id}: starting it would exceed the {rule}: it needs {cpus} CPUs"
                f"{f' with {mem_per_cpu} bytes each' if mem_per_cpu else ''}, "
                f"only {have} can be placed now"
            )
        self.total_free -= cpus
        return Allocation(
            nodes=nodes[:used].copy(), cpus=counts[:used].copy(), mem_per_cpu=mem_per_cpu
        )

    def release(self, alloc: Allocation) -> None:
        _release(self.free_cpus, self.free_mem, alloc.nodes, alloc.cpus, alloc.mem_per_cpu)
        self.total_free += int(alloc.cpus.sum())

    def max_placeable(self, mem_per_cpu: int, queue: int) -> int:
        """The most CPUs of such a job the empty site could ever hold (for rejection)."""
        room = self.capacity_cpus
        if mem_per_cpu > 0:
            room = np.minimum(room, self.capacity_mem // mem_per_cpu)
        mask = self._queue_masks[queue]
        if mask is not None:
            room = np.where(mask, room, 0)
        return int(room.sum())


@numba.njit(cache=True)
def _room(
    free_cpus: np.ndarray, free_mem: np.ndarray, mask: np.ndarray, use_mask: bool, mem: int
) -> int:
    """CPUs of a job (``mem`` bytes per CPU) that could be placed now, over all nodes."""
    total = 0
    for n in range(free_cpus.shape[0]):
        if use_mask and not mask[n]:
            continue
        room = free_cpus[n]
        if mem > 0:
            room = min(room, free_mem[n] // mem)
        total += room
    return total


@numba.njit(cache=True)
def _first_fit(
    free_cpus: np.ndarray,
    free_mem: np.ndarray,
    mask: np.ndarray,
    use_mask: bool,
    mem: int,
    cpus: int,
    nodes: np.ndarray,
    counts: np.ndarray,
) -> int:
    """Take ``cpus`` CPUs first fit in node order; fill ``nodes``/``counts`` and return how
    many nodes were used, or -1 (changing nothing) if they do not fit."""
    if _room(free_cpus, free_mem, mask, use_mask, mem) < cpus:
        return -1
    need = cpus
    used = 0
    for n in range(free_cpus.shape[0]):
        if need == 0:
            break
        if use_mask and not mask[n]:
            continue
        room = free_cpus[n]
        if mem > 0:
            room = min(room, free_mem[n] // mem)
        if room <= 0:
            continue
        take = min(room, need)
        free_cpus[n] -= take
        free_mem[n] -= take * mem
        nodes[used] = n
        counts[used] = take
        used += 1
        need -= take
    return used


@numba.njit(cache=True)
def _release(
    free_cpus: np.ndarray, free_mem: np.ndarray, nodes: np.ndarray, counts: np.ndarray, mem: int
) -> None:
    for k in range(nodes.shape[0]):
        free_cpus[nodes[k]] += counts[k]
        free_mem[nodes[k]] += counts[k] * mem


def warm_up() -> None:
    """Compile (or load from numba's cache) the placement kernels on a tiny input."""
    cpus = np.ones(1, dtype=np.int64)
    mem = np.ones(1, dtype=np.int64)
    mask = np.ones(1, dtype=bool)
    nodes = np.empty(1, dtype=np.int64)
    counts = np.empty(1, dtype=np.int64)
    _first_fit(cpus, mem, mask, False, 0, 1, nodes, counts)
    _release(cpus, mem, nodes, counts, 0)
