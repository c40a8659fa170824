"""Offline VCSched algorithms and the :func:`solve` entry point.

All from Casanova, Schanzenbach, Stillwell and Vivien, *Resource Allocation using Virtual
Clusters* (``003`` in ``../shared/papers``):

* ``MCB1`` .. ``MCB8``: multi-capacity bin packing with a binary search on the yield
  (section 3.4, :mod:`queuesim.policies.dfrs.packing`);
* ``GR``: tasks in the given order, each on the least CPU-loaded host (load: sum of the
  CPU needs already there) that has room for its memory; ``SG``: the same with tasks by
  decreasing memory (section 3.3);
* ``GB`` and ``SGB``: GR and SG with depth-first backtracking, cut after a bound on the
  number of placement attempts (500,000 in the paper);
* ``RRND`` and ``RRNZ``: randomised rounding of the LP relaxation of the MILP; RRNZ first
  turns the zero probabilities into 0.01 (section 3.2);
* ``MILP``: the exact mixed-integer program of sections 2.5 and 5.1, solved with HiGHS
  through :func:`scipy.optimize.milp`; only for small instances.

Every algorithm only chooses the hosts; the yields are then set by a
:class:`~queuesim.policies.dfrs.yields.YieldStep` (by default the average-yield step of section 3.5,
which the paper applies after every heuristic). :func:`lp_bound` is the rational LP bound
on the minimum yield (section 3.1).

Costs: MCB is compiled and takes about a millisecond for 500 tasks on 64 hosts. RRND and
RRNZ solve an LP of ``2 * tasks * hosts + 1`` variables, about 30 s at that size (the paper
reports minutes with GLPK). GB and SGB are plain Python: a few seconds when they use up
their 500,000 attempts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from queuesim.common.errors import ConfigError
from queuesim.policies.dfrs.instance import (
    Allocation,
    FloatArray,
    Instance,
    IntArray,
    NoAllocationError,
)
from queuesim.policies.dfrs.packing import FIT_EPS, SORT_KEYS, mcb_mapping
from queuesim.policies.dfrs.yields import YieldStep, step_yields

if TYPE_CHECKING:
    from scipy.optimize import LinearConstraint

#: bound on placement attempts of GB and SGB (``003`` section 3.3)
PLACEMENT_ATTEMPTS = 500_000
#: probability RRNZ gives a host the LP relaxation gave none (``003`` section 3.2)
RRNZ_EPSILON = 0.01

#: finds the host of every task, or None; gets the instance and a random generator
Mapper = Callable[[Instance, np.random.Generator], IntArray | None]

_REGISTRY: dict[str, Mapper] = {}


def register(name: str) -> Callable[[Mapper], Mapper]:
    """Record a mapping algorithm under ``name`` (upper case, as in the paper)."""

    def add(mapper: Mapper) -> Mapper:
        if name in _REGISTRY:
            raise ValueError(f"algorithm name {name!r} is registered twice")
        _REGISTRY[name] = mapper
        return mapper

    return add


def known_algorithms() -> list[str]:
    """Names :func:`solve` accepts."""
    return list(_REGISTRY)


def solve(
    instance: Instance,
    algorithm: str,
    *,
    step: YieldStep = YieldStep.AVG,
    rng: np.random.Generator | None = None,
) -> Allocation:
    """Allocate ``instance`` with the named algorithm (case-insensitive, e.g. ``"mcb8"``).

    ``rng`` drives RRND and RRNZ (default: a generator seeded with 0). Raises
    :class:`~queuesim.common.errors.ConfigError` for an unknown name and
    :class:`NoAllocationError` when the algorithm leaves a task unplaced. The allocation is
    checked before it is returned (:meth:`Allocation.check`).
    """
    name = algorithm.upper()
    mapper = _REGISTRY.get(name)
    if mapper is None:
        raise ConfigError(
            f"unknown algorithm {algorithm!r}; known algorithms: {', '.join(_REGISTRY)}"
        )
    host = mapper(instance, rng if rng is not None else np.random.default_rng(0))
    if host is None:
        memory = float(instance.task_memory.sum())
        raise NoAllocationError(
            f"{name} found no allocation of the {instance.n_tasks} tasks on "
            f"{instance.hosts} hosts (their memory adds up to {memory:.3g} hosts)"
        )
    allocation = Allocation(instance, host, step_yields(instance, host, step), name)
    allocation.check()
    return allocation


def _mcb_mapper(variant: int) -> Mapper:
    def mapper(instance: Instance, _rng: np.random.Generator) -> IntArray | None:
        return mcb_mapping(instance, variant)

    return mapper


for _variant in SORT_KEYS:
    register(f"MCB{_variant}")(_mcb_mapper(_variant))


# ------------------------------------------------------------------------------ greedy


def _memory_order(instance: Instance) -> IntArray:
    """Tasks by decreasing memory, ties in task order (the order of SG and SGB)."""
    order: IntArray = np.argsort(-instance.task_memory, kind="stable").astype(np.int64)
    return order


def greedy_mapping(instance: Instance, order: IntArray | None = None) -> IntArray | None:
    """GR (``003`` section 3.3): each task of ``order`` (default: task order) on the host of
    least CPU load, lowest index among equals, that has room for its memory."""
    tasks = np.arange(instance.n_tasks) if order is None else order
    cpu, mem = instance.task_cpu, instance.task_memory
    load = np.zeros(instance.hosts)
    free = np.ones(instance.hosts)
    host = np.full(instance.n_tasks, -1, dtype=np.int64)
    for t in tasks:
        fits = free >= mem[t] - FIT_EPS
        if not fits.any():
            return None
        h = int(np.argmin(np.where(fits, load, np.inf)))
        host[t] = h
        load[h] += cpu[t]
        free[h] -= mem[t]
    return host


def backtracking_mapping(
    instance: Instance,
    order: IntArray | None = None,
    max_attempts: int = PLACEMENT_ATTEMPTS,
) -> IntArray | None:
    """GB (``003`` section 3.3): GR's choices explored depth first, backtracking when a task
    fits nowhere; gives up (None) after ``max_attempts`` placements or when every choice
    has been tried. The first complete mapping is GR's whenever GR succeeds."""
    tasks = np.arange(instance.n_tasks) if order is None else order
    n = tasks.shape[0]
    cpu, mem = instance.task_cpu, instance.task_memory
    load = np.zeros(instance.hosts)
    free = np.ones(instance.hosts)
    host = np.full(instance.n_tasks, -1, dtype=np.int64)
    choices: list[IntArray] = [np.zeros(0, dtype=np.int64)] * n
    tried = np.zeros(n, dtype=np.int64)

    def candidates(t: int) -> IntArray:
        fits = np.flatnonzero(free >= mem[t] - FIT_EPS)
        ranked: IntArray = fits[np.argsort(load[fits], kind="stable")]
        return ranked

    attempts = 0
    depth = 0
    choices[0] = candidates(int(tasks[0]))
    while depth < n:
        t = int(tasks[depth])
        if host[t] >= 0:  # back at this depth: take this task off before its next choice
            load[host[t]] -= cpu[t]
            free[host[t]] += mem[t]
            host[t] = -1
        if tried[depth] == choices[depth].shape[0]:
            if depth == 0:
                return None
            depth -= 1
            continue
        if attempts == max_attempts:
            return None
        attempts += 1
        h = int(choices[depth][tried[depth]])
        tried[depth] += 1
        host[t] = h
        load[h] += cpu[t]
        free[h] -= mem[t]
        depth += 1
        if depth < n:
            choices[depth] = candidates(int(tasks[depth]))
            tried[depth] = 0
    return host


register("GR")(lambda inst, _rng: greedy_mapping(inst))
register("SG")(lambda inst, _rng: greedy_mapping(inst, _memory_order(inst)))
register("GB")(lambda inst, _rng: backtracking_mapping(inst))
register("SGB")(lambda inst, _rng: backtracking_mapping(inst, _memory_order(inst)))


# ------------------------------------------------------------------------------ LP and MILP


def _vcsched_program(
    instance: Instance,
) -> tuple[FloatArray, list[LinearConstraint], int]:
    """The VCSched MILP of ``003`` (sections 2.5 and 5.1) with integrality dropped.

    Variables, in order: ``e[t, h]`` (task ``t`` on host ``h``), ``a[t, h]`` (CPU fraction
    of host ``h`` given to task ``t``), both task-major, then ``Y``. Constraints:
    ``a <= e``; each task on one host; CPU and memory of each host at most 1; each task
    gets at least ``cpu_need * Y``. The paper's upper bounds ``sum_h a[t, h] <= need`` and
    equal shares for the tasks of a job only cap CPU, which maximising ``Y`` never needs, so
    they are left out. Returns the objective (to minimise, so ``-Y``), the constraints and
    the number ``T * H`` of ``e`` variables.
    """
    import scipy.sparse as sp  # a solver's import, paid only when one solves
    from scipy.optimize import LinearConstraint

    tasks, hosts = instance.n_tasks, instance.hosts
    th = tasks * hosts
    n_var = 2 * th + 1
    eye = sp.identity(th, format="csr")
    per_task = sp.kron(sp.identity(tasks), np.ones((1, hosts)), format="csr")  # T x TH
    per_host = sp.kron(np.ones((1, tasks)), sp.identity(hosts), format="csr")  # H x TH
    zeros_th = sp.csr_matrix((tasks, th))
    zeros_h = sp.csr_matrix((hosts, th))
    zero_col_t = sp.csr_matrix((tasks, 1))
    zero_col_h = sp.csr_matrix((hosts, 1))
    memory = per_host @ sp.diags(np.repeat(instance.task_memory, hosts))
    a_le_e = sp.hstack([-eye, eye, sp.csr_matrix((th, 1))])
    one_host = sp.hstack([per_task, zeros_th, zero_col_t])
    host_cpu = sp.hstack([zeros_h, per_host, zero_col_h])
    host_mem = sp.hstack([memory, zeros_h, zero_col_h])
    task_cpu = sp.hstack([zeros_th, per_task, -instance.task_cpu.reshape(-1, 1)])
    constraints = [
        LinearConstraint(a_le_e.tocsr(), -np.inf, 0.0),
        LinearConstraint(one_host.tocsr(), 1.0, 1.0),
        LinearConstraint(host_cpu.tocsr(), -np.inf, 1.0),
        LinearConstraint(host_mem.tocsr(), -np.inf, 1.0),
        LinearConstraint(task_cpu.tocsr(), 0.0, np.inf),
    ]
    objective = np.zeros(n_var)
    objective[-1] = -1.0
    return objective, constraints, th


def relaxation(instance: Instance) -> tuple[float, FloatArray] | None:
    """Solve the LP relaxation of the VCSched MILP with HiGHS: its minimum yield and the
    fractional placement ``e`` (tasks x hosts); None when it is infeasible (the tasks'
    memory exceeds the hosts')."""
    from scipy.optimize import Bounds, milp

    objective, constraints, th = _vcsched_program(instance)
    result = milp(objective, constraints=constraints, bounds=Bounds(0.0, 1.0))
    if result.status != 0:
        return None
    placement = np.clip(result.x[:th], 0.0, 1.0).reshape(instance.n_tasks, instance.hosts)
    return float(result.x[-1]), placement


def lp_bound(instance: Instance) -> float:
    """Upper bound on the minimum yield of any allocation: the optimum of the rational LP,
    ``min(1, hosts / total CPU need)`` when the tasks' memory fits in the hosts' and 0
    otherwise (``003`` section 3.1 gives the closed form and a solution reaching it)."""
    if instance.task_memory.sum() > instance.hosts + FIT_EPS * instance.n_tasks:
        return 0.0
    return float(min(1.0, instance.hosts / float(instance.task_cpu.sum())))


def milp_mapping(instance: Instance, time_limit: float | None = None) -> IntArray | None:
    """The mapping of largest minimum yield, from the VCSched MILP of ``003`` (sections 2.5
    and 5.1), solved by HiGHS; None when the instance is infeasible.

    Hosts are identical, so relabelling them by the first task they hold shows that some
    optimum puts task ``t`` on a host ``<= t``; the other ``e[t, h]`` are fixed to 0. With a
    ``time_limit`` the best mapping found so far is returned (maybe not optimal).
    """
    from scipy.optimize import Bounds, milp

    objective, constraints, th = _vcsched_program(instance)
    upper = np.ones(objective.shape[0])
    e_upper = upper[:th].reshape(instance.n_tasks, instance.hosts)
    e_upper[np.triu_indices(instance.n_tasks, 1, instance.hosts)] = 0.0
    integrality = np.zeros(objective.shape[0])
    integrality[:th] = 1
    options: dict[str, float] = {"mip_rel_gap": 1e-9}
    if time_limit is not None:
        options["time_limit"] = time_limit
    result = milp(
        objective,
        constraints=constraints,
        integrality=integrality,
        bounds=Bounds(np.zeros(objective.shape[0]), upper),
        options=options,
    )
    if result.x is None:
        return None
    placement = result.x[:th].reshape(instance.n_tasks, instance.hosts)
    host: IntArray = placement.argmax(axis=1).astype(np.int64)
    return host


def rounding_mapping(
    instance: Instance, rng: np.random.Generator, epsilon: float = 0.0
) -> IntArray | None:
    """RRND (``epsilon = 0``) and RRNZ (``epsilon = 0.01``), ``003`` section 3.2.

    Solve the LP relaxation; then for each task in order draw a host with probability
    proportional to its fractional placement (zeros raised to ``epsilon``). A host without
    room for the task's memory gets probability 0 and the draw is repeated; the heuristic
    fails when no host is left.
    """
    solved = relaxation(instance)
    if solved is None:
        return None
    weights = solved[1].copy()
    if epsilon > 0.0:
        weights[weights <= 1e-9] = epsilon
    mem = instance.task_memory
    free = np.ones(instance.hosts)
    host = np.full(instance.n_tasks, -1, dtype=np.int64)
    for t in range(instance.n_tasks):
        p = weights[t].copy()
        while True:
            total = p.sum()
            if total <= 0.0:
                return None
            h = int(rng.choice(instance.hosts, p=p / total))
            if free[h] >= mem[t] - FIT_EPS:
                break
            p[h] = 0.0
        host[t] = h
        free[h] -= mem[t]
    return host


register("RRND")(lambda inst, rng: rounding_mapping(inst, rng))
register("RRNZ")(lambda inst, rng: rounding_mapping(inst, rng, RRNZ_EPSILON))
register("MILP")(lambda inst, _rng: milp_mapping(inst))
