"""Node-level cluster state: free CPUs and memory of every node, pools, and placement.

Every node of every cluster is one entry of numpy arrays, clusters in site-file order. A
job asks for a number of CPUs (and, when the site models memory, an amount of memory per
CPU) and may be spread over several nodes of the clusters its queue may use.

Nodes are grouped into *pools*, the columns of the availability profile
(:mod:`queuesim.core.profile`): one pool per node when the site models memory, one per cluster
otherwise. Pools are contiguous ranges of nodes. A policy that planned a job into pools
starts it with that plan; within a cluster pool the nodes are chosen first fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import numpy as np

from queuesim.common.errors import PolicyViolation
from queuesim.common.jit import jit
from queuesim.core.profile import fitting_cpus
from queuesim.site.enums import MemoryModel
from queuesim.site.model import Site

IntOrArray = TypeVar("IntOrArray", int, np.ndarray)

#: memory of a pool where memory is not modelled: never the limit
UNLIMITED = np.iinfo(np.int64).max // 4


class NodeState(NamedTuple):
    """What the placement kernels change: free CPUs and memory per node and per pool, and
    which nodes make each pool (``pool_first[p]`` to ``pool_end[p] - 1``)."""

    free_cpus: np.ndarray
    free_mem: np.ndarray
    free_gpus: np.ndarray
    pool_free_cpus: np.ndarray
    pool_free_mem: np.ndarray
    pool_free_gpus: np.ndarray
    pool_first: np.ndarray
    pool_end: np.ndarray
    #: pools are nodes (memory is per pool then)
    per_node: bool


class Request(NamedTuple):
    """A job to place: ``cpus`` CPUs of ``mem`` bytes each (``ppn`` > 0: exactly that many
    on each node it uses, with ``gpn`` GPUs each) on the pools ``mask`` allows; where
    ``plan`` says (CPUs per pool) when ``planned``."""

    cpus: int
    mem: int
    ppn: int
    gpn: int
    mask: np.ndarray
    planned: bool
    plan: np.ndarray


class Placement(NamedTuple):
    """Where a job runs, as flat arrays: the nodes and its CPUs on each, its pools and its
    CPUs in each (the placement kernel's output buffers, or one allocation's)."""

    nodes: np.ndarray
    counts: np.ndarray
    pools: np.ndarray
    pool_cpus: np.ndarray


@dataclass(frozen=True)
class Allocation:
    """Where a job runs: nodes and the CPUs it holds on each, and the same per pool."""

    nodes: np.ndarray
    cpus: np.ndarray
    mem_per_cpu: int
    pools: np.ndarray
    pool_cpus: np.ndarray
    #: GPUs it holds on each of its nodes
    gpus_per_node: int = 0


class ClusterState:
    """Free resources of every node, changed only by :meth:`allocate` and :meth:`release`."""

    def __init__(
        self,
        site: Site,
        queue_names: list[str],
        *,
        per_node: bool = False,
        node_sets: Sequence[frozenset[str] | None] = (None,),
    ) -> None:
        """``per_node``: one pool per node even without memory (jobs with a shape, so
        that the profile sees single nodes). ``node_sets``: the clusters jobs' own
        requirements allow (node properties, GPUs; ``None``: all), each combined with every
        queue's clusters into one row of :attr:`masks` (see :meth:`mask_row`)."""
        self.capacity_cpus = site.node_cpus()
        self.capacity_mem = site.node_memory()
        self.capacity_gpus = site.node_gpus()
        self.free_cpus = self.capacity_cpus.copy()
        self.free_mem = self.capacity_mem.copy()
        self.free_gpus = self.capacity_gpus.copy()
        #: whether any node has GPUs (the profile then tracks them)
        self.gpus_modelled = bool(self.capacity_gpus.any())
        self.total_cpus = int(self.capacity_cpus.sum())
        self.total_free = self.total_cpus
        nodes = self.capacity_cpus.shape[0]
        cluster_of_node = np.repeat(np.arange(len(site.clusters)), [c.nodes for c in site.clusters])
        self.per_node = per_node or site.memory is MemoryModel.PER_CPU
        if self.per_node:
            self.pool_first = np.arange(nodes, dtype=np.int64)
            self.pool_end = self.pool_first + 1
            self.pool_free_cpus = self.free_cpus.copy()
            self.pool_free_mem = self.free_mem.copy()
            self.pool_free_gpus = self.free_gpus.copy()
            pool_cluster = cluster_of_node
        else:
            sizes = np.array([c.nodes for c in site.clusters], dtype=np.int64)
            self.pool_end = np.cumsum(sizes)
            self.pool_first = self.pool_end - sizes
            self.pool_free_cpus = np.array([c.cpus for c in site.clusters], dtype=np.int64)
            self.pool_free_mem = np.full(len(site.clusters), UNLIMITED, dtype=np.int64)
            self.pool_free_gpus = np.add.reduceat(self.free_gpus, self.pool_first)
            pool_cluster = np.arange(len(site.clusters))
        self.pools = self.pool_first.shape[0]
        #: what every pool holds when empty
        self.pool_capacity_cpus = self.pool_free_cpus.copy()
        self.pool_capacity_mem = self.pool_free_mem.copy()
        self.pool_capacity_gpus = self.pool_free_gpus.copy()
        cluster_names = [c.name for c in site.clusters]
        self._sets = len(node_sets)
        #: the pools of every (queue, node set) pair, in the order of :meth:`mask_row`
        self.masks = np.zeros((len(queue_names) * self._sets, self.pools), dtype=np.bool_)
        for q, name in enumerate(queue_names):
            allowed = site.queue(name).clusters
            for k, needed in enumerate(node_sets):
                clusters = [
                    i
                    for i, c in enumerate(cluster_names)
                    if (allowed is None or c in allowed) and (needed is None or c in needed)
                ]
                self.masks[self.mask_row(q, k)] = np.isin(pool_cluster, clusters)
        self._state = NodeState(
            self.free_cpus,
            self.free_mem,
            self.free_gpus,
            self.pool_free_cpus,
            self.pool_free_mem,
            self.pool_free_gpus,
            self.pool_first,
            self.pool_end,
            self.per_node,
        )
        self._out = Placement(
            np.empty(nodes, dtype=np.int64),
            np.empty(nodes, dtype=np.int64),
            np.empty(self.pools, dtype=np.int64),
            np.empty(self.pools, dtype=np.int64),
        )
        self._state_and_out = (*self._state, *self._out)
        self._no_plan = np.zeros(self.pools, dtype=np.int64)

    @property
    def node_state(self) -> NodeState:
        """The arrays the placement kernels change (this state's own)."""
        return self._state

    # --- questions -------------------------------------------------------------------

    def mask_row(self, queue: IntOrArray, node_set: IntOrArray) -> IntOrArray:
        """The row of :attr:`masks` for jobs of ``queue`` whose requirements allow the
        clusters of ``node_sets[node_set]`` (numbers or arrays of them)."""
        row: IntOrArray = queue * self._sets + node_set
        return row

    def _room(
        self,
        mem_per_cpu: int,
        row: int,
        cpus: np.ndarray,
        mem: np.ndarray,
        ppn: int = 0,
        gpus: np.ndarray | None = None,
        gpn: int = 0,
    ) -> int:
        room = cpus if mem_per_cpu == 0 else np.minimum(cpus, mem // mem_per_cpu)
        if ppn > 0:  # a shaped job takes ppn CPUs on a node, or nothing
            room = np.where(room >= ppn, ppn, 0)
        if gpn > 0 and gpus is not None:
            room = np.where(gpus >= gpn, room, 0)
        return int(room[self.masks[row]].sum())

    def max_placeable(self, mem_per_cpu: int, row: int, ppn: int = 0, gpn: int = 0) -> int:
        """The most CPUs of such a job (``ppn`` CPUs and ``gpn`` GPUs on each node it uses;
        ``ppn`` 0: any spread) on the pools of ``masks[row]`` the empty site could ever hold
        (for rejection)."""
        if self.per_node:
            return self._room(
                mem_per_cpu,
                row,
                self.capacity_cpus,
                self.capacity_mem,
                ppn,
                self.capacity_gpus,
                gpn,
            )
        cpus = np.add.reduceat(self.capacity_cpus, self.pool_first)
        return self._room(mem_per_cpu, row, cpus, np.full_like(cpus, UNLIMITED))

    # --- changes ---------------------------------------------------------------------

    def allocate(
        self,
        job_id: int,
        cpus: int,
        mem_per_cpu: int,
        row: int,
        plan: np.ndarray | None = None,
        ppn: int = 0,
        gpn: int = 0,
    ) -> Allocation:
        """Place a job - where ``plan`` says (CPUs per pool), else first fit over the pools
        of ``masks[row]`` (its queue's and requirements') - or raise
        :class:`PolicyViolation` naming the rule. A job with ``ppn`` > 0 takes exactly
        ``ppn`` CPUs, and ``gpn`` GPUs, on each node it uses (one pool a node)."""
        if (ppn > 0 or gpn > 0) and not self.per_node:
            raise PolicyViolation(
                f"job {job_id}: a job with {ppn} CPUs and {gpn} GPUs per node needs one pool "
                "per node"
            )
        if gpn > 0 and ppn == 0:
            raise PolicyViolation(f"job {job_id}: a job with GPUs needs its CPUs per node")
        planned = plan is not None
        if plan is None:
            plan = self._no_plan
        mask = self.masks[row]
        outcome = _place_entry(
            *self._state_and_out, cpus, mem_per_cpu, ppn, gpn, mask, planned, plan
        )
        if outcome < 0:
            raise PolicyViolation(self._refusal(outcome, job_id, cpus, mem_per_cpu, row, plan))
        used_nodes, used_pools = divmod(outcome, self.pools + 1)
        self.total_free -= cpus
        out = self._out
        return Allocation(
            nodes=out.nodes[:used_nodes].copy(),
            cpus=out.counts[:used_nodes].copy(),
            mem_per_cpu=mem_per_cpu,
            pools=out.pools[:used_pools].copy(),
            pool_cpus=out.pool_cpus[:used_pools].copy(),
            gpus_per_node=gpn,
        )

    def _refusal(
        self, outcome: int, job_id: int, cpus: int, mem_per_cpu: int, row: int, plan: np.ndarray
    ) -> str:
        if outcome == _PLAN_SIZE:
            return (
                f"job {job_id}: the placement plan holds {int(plan.sum())} CPUs, "
                f"the job needs {cpus}"
            )
        if outcome == _PLAN_QUEUE:
            return (
                f"job {job_id}: the placement plan uses nodes its queue or its requirements "
                "(node properties, GPUs) rule out"
            )
        if outcome == _PLAN_SHAPE:
            return (
                f"job {job_id}: the placement plan {plan[plan > 0].tolist()} does not give "
                "every node it uses the job's CPUs per node"
            )
        have = self._room(mem_per_cpu, row, self.pool_free_cpus, self.pool_free_mem)
        rule = "CPU capacity" if mem_per_cpu == 0 else "CPU and memory capacity"
        where = (
            f" where it was planned ({plan[plan > 0].tolist()} per pool)"
            if (outcome == _PLANNED_NO_ROOM)
            else ""
        )
        memory = f" with {mem_per_cpu} bytes each" if mem_per_cpu else ""
        return (
            f"job {job_id}: starting it would exceed the {rule}: it needs {cpus} CPUs"
            f"{memory}{where}, only {have} can be placed now"
        )

    def release(self, alloc: Allocation) -> None:
        self.total_free += _release_entry(
            *self._state,
            alloc.nodes,
            alloc.cpus,
            alloc.pools,
            alloc.pool_cpus,
            alloc.mem_per_cpu,
            alloc.gpus_per_node,
        )


_NO_ROOM = -1
_PLANNED_NO_ROOM = -2
_PLAN_SIZE = -3
_PLAN_QUEUE = -4
_PLAN_SHAPE = -5


# Numba types plain arguments much faster than named tuples, and a run places and
# releases every job: the structures cross into compiled code flattened (the node state
# and the output buffers as one tuple made once), and are named again there.
_NODES = len(NodeState._fields)
_PLACEMENT = _NODES + len(Placement._fields)
_GPN = _PLACEMENT + 1  #: where _release_entry finds the GPUs per node


@jit
def _place_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`_place` called with its structures flattened: node state, output buffers,
    request."""
    return _place(
        NodeState(*fields[:_NODES]),
        Request(*fields[_PLACEMENT:]),
        Placement(*fields[_NODES:_PLACEMENT]),
    )


@jit
def _release_entry(*fields):  # type: ignore[no-untyped-def]
    """:func:`_release` called with its structures flattened."""
    return _release(
        NodeState(*fields[:_NODES]),
        Placement(*fields[_NODES:_PLACEMENT]),
        fields[_PLACEMENT],
        fields[_GPN],
    )


@jit(borrowing=True)
def _place(state: NodeState, request: Request, out: Placement) -> int:
    """Place ``request``: as its plan says when planned, else first fit over the pools its
    mask allows; within a pool, first fit over its nodes. Changes nothing and returns a
    negative code when it does not fit; else returns ``nodes_used * (pool_count + 1) +
    pools_used``, with the nodes, pools and CPUs written to ``out``."""
    plan, planned, ppn, mem = request.plan, request.planned, request.ppn, request.mem
    gpn = request.gpn
    n_pools: int = plan.shape[0]
    if planned:
        total = 0
        for p in range(n_pools):
            if plan[p] and not request.mask[p]:
                return _PLAN_QUEUE
            if plan[p] and ppn > 0 and plan[p] != ppn:
                return _PLAN_SHAPE
            total += plan[p]
        if total != request.cpus:
            return _PLAN_SIZE
    used_pools = 0
    need = request.cpus
    for p in range(n_pools):
        if planned:
            want = plan[p]
        elif request.mask[p] and need > 0:
            want = need
        else:
            want = 0
        if want == 0:
            continue
        room = 0
        for n in range(state.pool_first[p], state.pool_end[p]):
            if gpn == 0 or state.free_gpus[n] >= gpn:
                room += fitting_cpus(state.free_cpus[n], state.free_mem[n], mem)
        if room < want:
            if planned:
                return _PLANNED_NO_ROOM
            want = room
        if ppn > 0 and not planned:
            want = ppn if want >= ppn else 0
        if want > 0:
            out.pools[used_pools] = p
            out.pool_cpus[used_pools] = want
            used_pools += 1
            need -= want
    if need > 0:
        return _NO_ROOM
    used = 0
    for k in range(used_pools):
        p = out.pools[k]
        left = out.pool_cpus[k]
        n = state.pool_first[p]
        while left > 0:
            room = fitting_cpus(state.free_cpus[n], state.free_mem[n], mem)
            if gpn > 0 and state.free_gpus[n] < gpn:
                room = 0
            if room > 0:
                take = min(room, left)
                state.free_cpus[n] -= take
                state.free_mem[n] -= take * mem
                state.free_gpus[n] -= gpn
                out.nodes[used] = n
                out.counts[used] = take
                used += 1
                left -= take
            n += 1
        state.pool_free_cpus[p] -= out.pool_cpus[k]
        if state.per_node:
            state.pool_free_mem[p] -= out.pool_cpus[k] * mem
            state.pool_free_gpus[p] -= gpn
    return used * (n_pools + 1) + used_pools


@jit(borrowing=True)
def _release(state: NodeState, held: Placement, mem: int, gpn: int) -> int:
    """Give back the resources ``held`` (of ``mem`` bytes per CPU, ``gpn`` GPUs per node);
    returns its CPU count."""
    for k in range(held.nodes.shape[0]):
        state.free_cpus[held.nodes[k]] += held.counts[k]
        state.free_mem[held.nodes[k]] += held.counts[k] * mem
        state.free_gpus[held.nodes[k]] += gpn
    total = 0
    for k in range(held.pools.shape[0]):
        state.pool_free_cpus[held.pools[k]] += held.pool_cpus[k]
        if state.per_node:
            state.pool_free_mem[held.pools[k]] += held.pool_cpus[k] * mem
            state.pool_free_gpus[held.pools[k]] += gpn
        total += held.pool_cpus[k]
    return total


def warm_up() -> None:
    """Compile (or load from numba's cache) the placement kernels on a tiny input."""
    site = Site.model_validate(
        {"name": "warm-up", "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 1}]}
    )
    state = ClusterState(site, [site.queues[0].name])
    state.release(state.allocate(0, 1, 0, 0))
    state.release(state.allocate(0, 1, 0, 0, np.ones(1, dtype=np.int64)))


#: the placement kernels entered from Python (see :mod:`.kernels`)
KERNELS = (_place_entry, _release_entry)
