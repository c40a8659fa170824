"""Job yields for a fixed mapping of tasks to hosts.

Once every task has a host, the yields are a continuous problem. With ``load[h]`` the sum
of the CPU needs of the tasks on host ``h``, giving every job the yield
``min(1, 1 / max(load))`` maximises the minimum yield (Stillwell, Vivien and Casanova,
*Dynamic fractional resource scheduling versus batch scheduling*, ``002``, section 4.6). What
that leaves unused on the less loaded hosts is then handed out by one of two steps:

* :func:`average_yields` (OPT=AVG): maximise the average job yield while no job drops below
  a given minimum. Casanova et al., *Resource Allocation using Virtual Clusters* (``003``,
  section 3.5) show that when every job sits on one host a greedy pass is optimal: on each
  host, raise the cheapest job first. A job spread over several hosts couples them; those
  mappings are solved as the linear program of ``002`` with HiGHS.
* :func:`max_min_yields` (OPT=MIN, ``002`` section 4.6): progressive filling. Raise the
  yields of all unfrozen jobs together until a host saturates or a job reaches 1; freeze the
  jobs of saturated hosts and those at 1; repeat.

Yields are per job: every task of a job gets the same share of its need (``003`` section 5
explains why the average is taken over jobs, not tasks).
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from queuesim.policies.dfrs.instance import FloatArray, Instance, IntArray, host_sums

#: slack used when deciding that a host is saturated or a job is at yield 1
_EPS = 1e-12


class YieldStep(StrEnum):
    """How the CPU left after maximising the minimum yield is handed out."""

    EQUAL = "equal"  # no second step: every job gets the maximised minimum
    AVG = "avg"  # OPT=AVG: maximise the average yield (003 section 3.5)
    MIN = "min"  # OPT=MIN: iterative max-min (002 section 4.6)


def host_loads(instance: Instance, host: IntArray) -> FloatArray:
    """Sum of the CPU needs of the tasks on every host (``Lambda_h`` of ``002``)."""
    return host_sums(instance, host, instance.task_cpu)


def max_min_yield(instance: Instance, host: IntArray) -> float:
    """The largest yield every job can get at once on this mapping: ``min(1, 1/max load)``."""
    peak = float(host_loads(instance, host).max())
    return 1.0 if peak <= 1.0 else 1.0 / peak


def _pairs(instance: Instance, host: IntArray) -> tuple[IntArray, IntArray, FloatArray]:
    """The distinct (job, host) pairs of a mapping and the CPU one unit of the job's yield
    costs on that host (its task count there times its need)."""
    key = instance.task_job * instance.hosts + np.asarray(host, dtype=np.int64)
    keys, counts = np.unique(key, return_counts=True)
    jobs = keys // instance.hosts
    hosts = keys % instance.hosts
    return jobs, hosts, counts * instance.cpu_need[jobs]


def _fit_to_hosts(
    instance: Instance, host: IntArray, yields: FloatArray, floor: float | FloatArray
) -> FloatArray:
    """Shrink the part of each yield above ``floor`` so that no host is over capacity.

    Solver output can overshoot a capacity by its feasibility tolerance; scaling the
    excess of every job by the smallest ratio over its hosts removes that exactly.
    """
    jobs, hosts, cost = _pairs(instance, host)
    floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), yields.shape)
    extra = yields - floor
    base = np.bincount(hosts, weights=cost * floor[jobs], minlength=instance.hosts)
    added = np.bincount(hosts, weights=cost * extra[jobs], minlength=instance.hosts)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(added > 0, (1.0 - base) / added, np.inf)
    ratio = np.clip(ratio, 0.0, 1.0)
    scale = np.ones(instance.n_jobs)
    np.minimum.at(scale, jobs, ratio[hosts])
    out: FloatArray = floor + extra * scale
    return out


def max_min_yields(
    instance: Instance, host: IntArray, start: FloatArray | None = None
) -> FloatArray:
    """OPT=MIN: the max-min fair yields of a mapping, by progressive filling.

    In the result every job either has yield 1 or sits on a saturated host on which no
    job has a higher yield; the smallest yield is :func:`max_min_yield`. With ``start``
    (yields that fit the hosts already), filling raises every job from its start value.
    """
    jobs, hosts, cost = _pairs(instance, host)
    yields: FloatArray = (
        np.zeros(instance.n_jobs) if start is None else np.array(start, dtype=np.float64)
    )
    used = np.bincount(hosts, weights=cost * yields[jobs], minlength=instance.hosts).astype(
        np.float64
    )
    active = np.ones(instance.n_jobs, dtype=bool)
    while active.any():
        rate = np.bincount(hosts, weights=cost * active[jobs], minlength=instance.hosts)
        busy = rate > 0
        room = np.maximum(1.0 - used[busy], 0.0) / rate[busy]
        step = min(float(room.min()), float((1.0 - yields[active]).min()))
        yields[active] += step
        used += step * rate
        saturated = busy & (used >= 1.0 - _EPS)
        frozen = np.zeros(instance.n_jobs, dtype=bool)
        frozen[jobs[saturated[hosts]]] = True
        frozen |= yields >= 1.0 - _EPS
        active &= ~frozen
    yields[yields >= 1.0 - _EPS] = 1.0
    floor = float(yields.min()) if start is None else np.minimum(start, yields)
    return _fit_to_hosts(instance, host, yields, floor)


def average_yields(
    instance: Instance, host: IntArray, min_yield: float | None = None
) -> FloatArray:
    """OPT=AVG: yields maximising the average job yield, none below ``min_yield``.

    ``min_yield`` defaults to :func:`max_min_yield` of the mapping; a larger value is an
    error. When every job's tasks share one host the greedy step of ``003`` (section 3.5)
    is exact: on each host, jobs in increasing order of the CPU one unit of their yield
    costs there get as much as they can use until the host is full. Otherwise the linear
    program (maximise the sum of yields under the host capacities) is solved with HiGHS.
    """
    best = max_min_yield(instance, host)
    floor = best if min_yield is None else float(min_yield)
    if not 0.0 <= floor <= best + _EPS:
        raise ValueError(
            f"min_yield {floor:g} is not achievable on this mapping (at most {best:g})"
        )
    floor = min(floor, best)
    jobs, hosts, cost = _pairs(instance, host)
    if np.unique(jobs).shape[0] == jobs.shape[0]:
        yields = _greedy_average(instance, jobs, hosts, cost, floor)
    else:
        yields = _lp_average(instance, jobs, hosts, cost, floor)
    return _fit_to_hosts(instance, host, yields, floor)


def _greedy_average(
    instance: Instance, jobs: IntArray, hosts: IntArray, cost: FloatArray, floor: float
) -> FloatArray:
    """The exchange-argument greedy of ``003`` section 3.5 (each job on a single host)."""
    yields = np.full(instance.n_jobs, floor)
    room = 1.0 - np.bincount(hosts, weights=cost * floor, minlength=instance.hosts)
    for k in np.lexsort((cost, hosts)):
        h = hosts[k]
        if room[h] <= 0.0:
            continue
        gain = min(1.0 - floor, room[h] / cost[k])
        yields[jobs[k]] += gain
        room[h] -= gain * cost[k]
    return yields


def _lp_average(
    instance: Instance, jobs: IntArray, hosts: IntArray, cost: FloatArray, floor: float
) -> FloatArray:
    """Maximise the sum of yields in [floor, 1] under the host capacities (HiGHS)."""
    import scipy.sparse as sp  # a solver's import, paid only when one solves
    from scipy.optimize import linprog

    capacity = sp.csr_matrix((cost, (hosts, jobs)), shape=(instance.hosts, instance.n_jobs))
    result = linprog(
        -np.ones(instance.n_jobs),
        A_ub=capacity,
        b_ub=np.ones(instance.hosts),
        bounds=(floor, 1.0),
        method="highs",
    )
    if result.x is None:  # the floor itself is feasible, so this is a solver failure
        raise RuntimeError(f"average-yield LP failed: {result.message}")
    out: FloatArray = np.clip(result.x, floor, 1.0)
    return out


def step_yields(instance: Instance, host: IntArray, step: YieldStep) -> FloatArray:
    """Yields of a mapping after the chosen second step (see :class:`YieldStep`)."""
    if step is YieldStep.AVG:
        return average_yields(instance, host)
    if step is YieldStep.MIN:
        return max_min_yields(instance, host)
    return np.full(instance.n_jobs, max_min_yield(instance, host))
