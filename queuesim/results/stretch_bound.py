"""Offline lower bound on the optimal maximum (bounded) stretch of a DFRS instance.

Source: Stillwell, Vivien and Casanova, "Dynamic fractional resource scheduling vs. batch
scheduling" (paper ``002``), section 3, Theorem 1 and the binary search that follows it.

The relaxation
--------------
The paper drops two things that make the real problem hard, so the bound is optimistic and
therefore a valid lower bound for every schedule our simulator can produce:

* **memory** -- with memory the problem contains bin packing and is NP-hard in the strong
  sense, so every job is treated as if it needed no memory (the ``memory`` column is read and
  validated but plays no part in the bound);
* **placement** -- tasks may be moved between nodes at any moment and for free.

Job ``j`` has release date ``r_j`` (``submit``), processing time ``p_j`` on a dedicated
platform (``runtime``), ``|T_j|`` tasks (``tasks``) and a CPU need ``c_j`` in ``(0, 1]`` per
task (``cpu_need``); the platform has ``|P|`` nodes (``hosts``) of CPU capacity 1. A candidate
maximum stretch ``S`` gives job ``j`` the deadline ``d_j = r_j + S * p_j``. The release dates
and deadlines cut the time line into consecutive intervals ``t`` of length ``l(t)``, and
``alpha[j, t]`` is the fraction of job ``j`` done during ``t``. Theorem 1 of ``002``: a
schedule of maximum stretch at most ``S`` exists (in the relaxed model) if and only if

* (1a) every job is done entirely: ``sum_t alpha[j, t] = 1``;
* (1b, 1c) nothing is done in an interval outside ``[r_j, d_j)``;
* (1d) no job runs faster than on a dedicated platform: ``alpha[j, t] * p_j <= l(t)``;
* (1e) the CPU work of an interval fits on the platform:
  ``sum_j alpha[j, t] * p_j * c_j * |T_j| <= |P| * l(t)``.

That is exactly the linear system solved here, with nothing added and nothing left out.
Feasibility is monotone in ``S`` (a later deadline only relaxes the system), so a binary search
on ``S`` finds the smallest feasible stretch.

Bounded stretch
---------------
``002`` reports the *bounded* stretch (threshold ``tau`` = 10 s; see
:func:`queuesim.results.stretch.bounded_stretch`). A job's bounded stretch is at most ``S`` exactly
when its turn-around time is at most ``S * max(p_j, tau)`` (for ``S >= 1``), so the deadline
used here is ``d_j = r_j + S * max(p_j, tau)`` while ``p_j`` keeps its role in (1d) and (1e).
With ``tau = 0`` this is the paper's system verbatim; with the default ``tau`` it bounds the
metric the paper actually reports, so the degradation from bound is never below 1. Since the
bounded stretch of any job is at least 1, so is the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "JOB_COLUMNS",
    "DfrsJobs",
    "JobsLike",
    "StretchBracket",
    "max_stretch_bound_bracket",
    "max_stretch_lower_bound",
    "stretch_is_achievable",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]

#: Columns of a DFRS job table; ``memory`` may be omitted (taken as 0).
JOB_COLUMNS = ("submit", "runtime", "tasks", "cpu_need", "memory")

#: Default bounded-stretch threshold in seconds, as in paper ``002``.
DEFAULT_TAU = 10.0

#: HiGHS solvers tried in turn on each feasibility LP. The interior-point method is one to two
#: orders of magnitude faster than dual simplex on these transportation-like systems (0.7 s vs
#: 41 s on a 1,000-job, 122,000-variable instance); simplex is the fallback when it reports
#: neither feasibility nor infeasibility.
_METHODS = ("highs-ipm", "highs-ds")

#: Default relative accuracy of the binary search on the stretch.
DEFAULT_RTOL = 1e-3


@dataclass(frozen=True, slots=True, eq=False)
class DfrsJobs:
    """A validated DFRS job table: one entry per job, as read-only float arrays.

    Attributes:
        submit: release date ``r_j`` in seconds.
        runtime: processing time ``p_j`` in seconds when running alone at yield 1 (``>= 0``).
        tasks: number of tasks ``|T_j|`` (an integer ``>= 1``, stored as float).
        cpu_need: CPU need ``c_j`` of each task, a fraction of a node in ``(0, 1]``.
        memory: memory requirement of each task, a fraction of a node in ``[0, 1]``.
    """

    submit: FloatArray
    runtime: FloatArray
    tasks: FloatArray
    cpu_need: FloatArray
    memory: FloatArray

    @classmethod
    def from_table(cls, jobs: JobsLike) -> DfrsJobs:
        """Read and validate the columns of :data:`JOB_COLUMNS` from a frame or a mapping.

        Raises:
            ValueError: if a required column is missing, the columns differ in length, or a
                value is missing, not finite or out of range; the message names the column,
                the number of offending jobs and the first of them with its value.
        """
        if isinstance(jobs, DfrsJobs):
            return jobs
        columns: dict[str, FloatArray] = {}
        length: int | None = None
        for name in JOB_COLUMNS:
            if name not in jobs:
                if name == "memory":
                    continue
                raise ValueError(
                    f"jobs: missing column {name!r} (expected columns {', '.join(JOB_COLUMNS)})"
                )
            values = np.array(jobs[name], dtype=np.float64).reshape(-1)
            if length is not None and len(values) != length:
                raise ValueError(
                    f"jobs: column {name!r} has {len(values)} values, expected {length}"
                )
            length = len(values)
            values.setflags(write=False)
            columns[name] = values
        if "memory" not in columns:
            memory = np.zeros(length or 0)
            memory.setflags(write=False)
            columns["memory"] = memory
        table = cls(**columns)
        table._validate()
        return table

    def __len__(self) -> int:
        return len(self.submit)

    @property
    def demand(self) -> FloatArray:
        """CPU demand of each job at full speed, ``c_j * |T_j|`` (in nodes' worth of CPU)."""
        return self.cpu_need * self.tasks

    @property
    def work(self) -> FloatArray:
        """CPU work of each job, ``c_j * |T_j| * p_j`` (CPU-seconds)."""
        return self.cpu_need * self.tasks * self.runtime

    def _validate(self) -> None:
        _check("submit", self.submit, np.isfinite(self.submit), "a finite number of seconds")
        _check("runtime", self.runtime, self.runtime >= 0, "a finite number of seconds >= 0")
        _check(
            "tasks",
            self.tasks,
            (self.tasks >= 1) & (self.tasks == np.floor(self.tasks)),
            "an integer >= 1",
        )
        _check("cpu_need", self.cpu_need, (self.cpu_need > 0) & (self.cpu_need <= 1), "in (0, 1]")
        _check("memory", self.memory, (self.memory >= 0) & (self.memory <= 1), "in [0, 1]")


#: Anything :meth:`DfrsJobs.from_table` accepts: a frame or a mapping of column name to values
#: (rows in the same order everywhere), or an already validated table.
JobsLike: TypeAlias = pd.DataFrame | Mapping[str, npt.ArrayLike] | DfrsJobs


def _check(name: str, values: FloatArray, ok: npt.NDArray[np.bool_], expected: str) -> None:
    bad = np.flatnonzero(~(ok & np.isfinite(values)))
    if len(bad):
        first = int(bad[0])
        raise ValueError(
            f"jobs: column {name!r} must be {expected}; {len(bad)} job(s) are not, "
            f"the first is row {first} with {values[first]!r}"
        )


@dataclass(frozen=True, slots=True)
class StretchBracket:
    """Where the binary search left the optimal maximum stretch ``S*`` of the relaxation.

    ``lower <= S* <= upper`` and ``upper <= lower * (1 + rtol)`` (``lower == upper == S*`` when
    the search ended on a proven optimum, e.g. ``S* = 1``). ``lower`` is proven infeasible or
    is a closed-form bound; ``upper`` is proven feasible. ``solves`` counts the linear
    programs solved.
    """

    lower: float
    upper: float
    solves: int


def stretch_is_achievable(
    jobs: JobsLike, hosts: int, stretch: float, *, tau: float = DEFAULT_TAU
) -> bool:
    """Whether linear system (1) of ``002`` (Theorem 1) has a solution for this stretch.

    True means that, without memory constraints and with free migration, some schedule
    finishes every job ``j`` by ``submit_j + stretch * max(runtime_j, tau)``; False means no
    schedule at all can (memory only makes things harder). Jobs with ``runtime == 0`` need no
    CPU and are ignored.

    Raises:
        ValueError: on an invalid job table, ``hosts < 1``, a negative or non-finite ``tau``,
            a ``stretch`` that is not positive and finite, or ``tau == 0`` with a zero runtime.
    """
    if not np.isfinite(stretch) or stretch <= 0:
        raise ValueError(f"stretch must be a positive finite number, got {stretch!r}")
    instance = _Instance(DfrsJobs.from_table(jobs), hosts, tau)
    return instance.achievable(float(stretch))


def max_stretch_lower_bound(
    jobs: JobsLike, hosts: int, *, tau: float = DEFAULT_TAU, rtol: float = DEFAULT_RTOL
) -> float:
    """Lower bound on the optimal maximum bounded stretch of an instance (``002``, section 3).

    The smallest ``S >= 1`` for which :func:`stretch_is_achievable` holds, found by binary
    search and returned from below: the result ``L`` satisfies ``L <= S* <= L * (1 + rtol)``
    where ``S*`` is the exact optimum of the relaxation, so ``L`` is itself a valid lower bound
    (up to the LP solver's feasibility tolerance, about 1e-7 relative). See
    :func:`max_stretch_bound_bracket` for the search and its cost.

    Args:
        jobs: the job table (:data:`JOB_COLUMNS`; ``memory`` is ignored, as in the paper).
        hosts: number of nodes ``|P|``, each of CPU capacity 1.
        tau: bounded-stretch threshold in seconds (``0`` gives the paper's plain system).
        rtol: relative accuracy of the binary search.

    Raises:
        ValueError: see :func:`max_stretch_bound_bracket`.
    """
    return max_stretch_bound_bracket(jobs, hosts, tau=tau, rtol=rtol).lower


def max_stretch_bound_bracket(
    jobs: JobsLike, hosts: int, *, tau: float = DEFAULT_TAU, rtol: float = DEFAULT_RTOL
) -> StretchBracket:
    """Binary search for the optimal maximum stretch of the relaxation of ``002`` section 3.

    1. Start from the closed-form bound ``S0 = max(1, max_j c_j |T_j| p_j / (|P| max(p_j,
       tau)))`` (a job can use at most ``|P|`` nodes' worth of CPU); if ``S0`` is feasible it
       is the optimum.
    2. Double the candidate until the system becomes feasible, keeping the last infeasible
       value as the lower end.
    3. Bisect geometrically (``sqrt(lower * upper)``) until ``upper <= lower * (1 + rtol)``,
       i.e. about ``log2(ln 2 / ln(1 + rtol))`` more solves (10 for the default 1e-3).

    Each feasibility test splits the jobs into groups whose windows ``[r_j, d_j)`` do not
    overlap (they are independent) and solves one HiGHS linear program per group.

    Cost, measured on random 1,000-job instances on 128 hosts (12-13 LP solves each): about
    1-6 s at offered loads 0.5-0.9; 40-80 s under sustained overload (load 1.5-3), where
    windows grow long and each LP has 200,000-400,000 variables. ``rtol=1e-2`` saves about
    three solves.

    Raises:
        ValueError: on an invalid job table, ``hosts < 1``, a negative or non-finite ``tau``,
            ``rtol`` not in ``(0, 1)``, or ``tau == 0`` with a job whose runtime is 0.
    """
    if not (np.isfinite(rtol) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    instance = _Instance(DfrsJobs.from_table(jobs), hosts, tau)
    lower = instance.closed_form_lower()
    if instance.achievable(lower):
        return StretchBracket(lower, lower, instance.solves)
    upper = 2.0 * lower
    while not instance.achievable(upper):
        lower, upper = upper, 2.0 * upper
    while upper > lower * (1.0 + rtol):
        middle = float(np.sqrt(lower * upper))
        if instance.achievable(middle):
            upper = middle
        else:
            lower = middle
    return StretchBracket(lower, upper, instance.solves)


class _Instance:
    """The jobs that need CPU, in normalised time units, plus a count of LP solves."""

    def __init__(self, jobs: DfrsJobs, hosts: int, tau: float) -> None:
        if isinstance(hosts, bool) or int(hosts) != hosts or hosts < 1:
            raise ValueError(f"hosts must be an integer >= 1, got {hosts!r}")
        if not np.isfinite(tau) or tau < 0:
            raise ValueError(f"tau must be a finite number of seconds >= 0, got {tau!r}")
        busy = jobs.runtime > 0
        if tau == 0 and not busy.all():
            first = int(np.flatnonzero(~busy)[0])
            raise ValueError(
                f"jobs: with tau = 0 the stretch of a job with runtime 0 is undefined (row {first})"
            )
        self.hosts = float(hosts)
        self.solves = 0
        runtime = jobs.runtime[busy]
        # Work in units of the longest runtime from the first release, to keep the LP
        # coefficients near 1 whatever the trace's time scale.
        unit = float(runtime.max()) if len(runtime) else 1.0
        origin = float(jobs.submit[busy].min()) if len(runtime) else 0.0
        self.release = (jobs.submit[busy] - origin) / unit
        self.runtime = runtime / unit
        self.window = np.maximum(runtime, tau) / unit
        self.demand = jobs.demand[busy]

    def closed_form_lower(self) -> float:
        """``max(1, max_j c_j |T_j| p_j / (|P| max(p_j, tau)))``: valid for every schedule."""
        if not len(self.runtime):
            return 1.0
        ratio = self.demand * self.runtime / (self.hosts * self.window)
        return max(1.0, float(ratio.max()))

    def achievable(self, stretch: float) -> bool:
        if not len(self.runtime):
            return True
        deadline = self.release + stretch * self.window
        order = np.argsort(self.release, kind="stable")
        reach = np.maximum.accumulate(deadline[order])
        # A new group starts where a job is released no earlier than every earlier deadline.
        cuts = np.flatnonzero(self.release[order][1:] >= reach[:-1]) + 1
        groups = np.split(order, cuts)
        # Cheapest necessary condition first: the group's work fits on the platform.
        for group in groups:
            span = float(deadline[group].max() - self.release[group].min())
            if float(self.demand[group] @ self.runtime[group]) > self.hosts * span * (1 + 1e-9):
                return False
        return all(self._group_feasible(group, deadline) for group in groups)

    def _group_feasible(self, group: IntArray, deadline: FloatArray) -> bool:
        # scipy costs a quarter of a second to import: only the bound's LPs need it
        from scipy.optimize import linprog
        from scipy.sparse import coo_array

        release, due = self.release[group], deadline[group]
        runtime, demand = self.runtime[group], self.demand[group]
        points = np.unique(np.concatenate([release, due]))
        length = np.diff(points)
        first = np.searchsorted(points, release)
        count = np.searchsorted(points, due) - first
        n_jobs, n_vars = len(group), int(count.sum())
        # One variable alpha[j, t] per job and interval of its window (1b, 1c).
        job = np.repeat(np.arange(n_jobs), count)
        offset = np.arange(n_vars) - np.repeat(np.cumsum(count) - count, count)
        interval = np.repeat(first, count) + offset
        # (1d) alpha[j, t] <= l(t) / p_j, as a variable bound (with alpha <= 1).
        upper = np.minimum(1.0, length[interval] / runtime[job])
        # (1e) rows: drop those that cannot bind even with every variable at its bound.
        coeff = runtime[job] * demand[job]
        capacity = self.hosts * length
        binding = np.bincount(interval, weights=coeff * upper, minlength=len(length)) > capacity
        row_of = np.cumsum(binding) - 1
        keep = binding[interval]
        columns = np.arange(n_vars)
        a_ub: Any = None
        b_ub: Any = None
        if keep.any():
            a_ub = coo_array(
                (coeff[keep], (row_of[interval[keep]], columns[keep])),
                shape=(int(binding.sum()), n_vars),
            ).tocsr()
            b_ub = capacity[binding]
        # (1a) rows: each job is done entirely.
        a_eq = coo_array((np.ones(n_vars), (job, columns)), shape=(n_jobs, n_vars)).tocsr()
        bounds = np.column_stack([np.zeros(n_vars), upper])
        for method in _METHODS:
            self.solves += 1
            result = linprog(
                np.zeros(n_vars),
                A_ub=a_ub,
                b_ub=b_ub,
                A_eq=a_eq,
                b_eq=np.ones(n_jobs),
                bounds=bounds,
                method=method,
            )
            if result.status in (0, 2):
                return bool(result.status == 0)
        raise RuntimeError(
            f"the LP of the max-stretch bound failed ({n_jobs} jobs, {n_vars} variables): "
            f"status {result.status}, {result.message}"
        )
