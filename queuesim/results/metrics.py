"""Metrics of one simulation, computed from its per-job table.

Every function here is a pure function of the per-job ``DataFrame`` a simulation produces
(one row per job, with at least ``user``, ``submit``, ``end``, ``wait``, ``runtime``, ``cpus``
and ``status``). The input frame is never modified, and nothing here knows which policy
produced the table.

Notation used throughout: job ``j`` waited ``w_j`` seconds (column ``wait``, that is
``start - submit``), ran for ``r_j`` seconds (column ``runtime``, that is ``end - start``: the
time it actually ran in the simulation, so a killed job counts with the time it ran until it
was killed) on ``c_j`` CPUs (column ``cpus``), and weighs ``e_j = c_j * r_j``, its CPU
consumption in CPU-seconds.

A job run time-shared by a DFRS policy (:mod:`queuesim.policies.dfrs.online`) progresses at varying
rates, so for it ``r_j`` is its work (its runtime at rate 1) and ``w_j`` is its response
time ``end - submit`` less that work: all the time it was held back, before its first start,
paused or slowed by sharing. Response times stay ``w_j + r_j``, the bounded slowdown is then
the papers' bounded stretch, and utilization counts the work done.

Sources of the definitions:

* AWWT, AWRT, AWSD, NUWT, ANUWT and NUWT-dev are the performance and fairness criteria of
  Klusáček et al., the study of interactions among scheduling policies on the MetaCentrum
  workload (paper ``004``). Weighting by CPU consumption keeps the many small jobs from
  dominating a site-wide average; NUWT relates a user's waiting to the CPU time the user
  consumed, in the spirit of max-min fairshare.
* The bounded slowdown is Feitelson's, as used by the DPSA paper (``001``, time-bounded
  scheduling based on EASY) and by Stillwell, Vivien and Casanova (``002``, DFRS vs batch
  scheduling), who call it the bounded stretch and set the threshold to 10 seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["Metrics", "compute_metrics", "per_user"]

FloatArray = npt.NDArray[np.float64]

#: Statuses a job may end with in a simulation result.
STATUSES = ("completed", "killed")

_NUMERIC_COLUMNS = ("submit", "end", "wait", "runtime", "cpus")
_REQUIRED_COLUMNS = ("user", *_NUMERIC_COLUMNS, "status")


@dataclass(frozen=True, slots=True)
class Metrics:
    """The headline numbers of one simulation; see :func:`compute_metrics` for definitions.

    Times are in seconds; ``anuwt`` and ``nuwt_dev`` are seconds of wait per CPU-second
    consumed; ``utilization`` is a fraction in ``[0, 1]`` for a feasible schedule.
    """

    jobs: int
    completed: int
    killed: int
    users: int
    mean_wait: float
    awwt: float
    awrt: float
    awsd: float
    mean_bounded_slowdown: float
    max_bounded_slowdown: float
    bounded_slowdown_tau: float
    anuwt: float
    nuwt_dev: float
    utilization: float
    makespan: float
    first_submit: float
    last_end: float
    median_wait: float
    p90_wait: float
    p99_wait: float
    max_wait: float
    waited_over_1h: float
    waited_over_24h: float

    def as_dict(self) -> dict[str, float | int]:
        """The metrics as a flat dict whose keys are the field names, in declaration order.

        The keys are stable: reports, CSV/JSON exports and comparisons rely on them.
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


def compute_metrics(jobs: pd.DataFrame, *, total_cpus: int, tau: float = 10.0) -> Metrics:
    """Compute the :class:`Metrics` of a simulation from its per-job table.

    With ``w_j``, ``r_j``, ``c_j`` and ``e_j = c_j * r_j`` as in the module docstring, summing
    over all jobs (completed and killed alike):

    * ``awwt`` -- average weighted wait time (Klusáček et al., paper ``004``):
      ``sum(e_j * w_j) / sum(e_j)``.
    * ``awrt`` -- average weighted response time (ibid.):
      ``sum(e_j * (w_j + r_j)) / sum(e_j)``.
    * ``awsd`` -- average weighted slowdown (ibid.): ``sum(e_j * s_j) / sum(e_j)`` with the
      plain slowdown ``s_j = (w_j + r_j) / r_j``.
    * ``mean_bounded_slowdown`` / ``max_bounded_slowdown`` -- mean and maximum over jobs of
      Feitelson's bounded slowdown ``b_j = max(1, (w_j + r_j) / max(r_j, tau))``, as used in
      the DPSA paper (``001``) and, as "bounded stretch", by Stillwell, Vivien and Casanova
      (``002``). Jobs shorter than ``tau`` are treated as if they had run ``tau`` seconds, so
      a near-instant job that waited briefly cannot dominate the figure. ``tau`` defaults to
      10 s as in ``002`` and is reported back as ``bounded_slowdown_tau``.
    * ``anuwt`` / ``nuwt_dev`` -- the fairness criteria of Klusáček et al. (``004``). The
      normalised user wait time of user ``u`` is ``NUWT_u = sum_{j of u} w_j /
      sum_{j of u} c_j * r_j`` (see :func:`per_user`); ``anuwt`` is the mean of ``NUWT_u``
      over users and ``nuwt_dev`` their *population* standard deviation (``ddof=0``: the
      users of a run are the whole population, not a sample of it).
    * ``mean_wait`` -- the plain mean of ``w_j`` over jobs.
    * ``makespan`` -- ``max(end) - min(submit)``, from the first submission to the last end;
      ``first_submit`` and ``last_end`` are those two instants.
    * ``utilization`` -- ``sum(c_j * r_j) / (total_cpus * makespan)``: the share of the
      machine's CPU-seconds over the makespan that jobs used.
    * ``jobs``, ``completed``, ``killed``, ``users`` -- row count, rows per status, and the
      number of distinct users.
    * ``median_wait``, ``p90_wait``, ``p99_wait``, ``max_wait`` -- the 50th, 90th and 99th
      percentiles and the maximum of ``w_j`` (see :func:`wait_figures`).
    * ``waited_over_1h`` / ``waited_over_24h`` -- the share of jobs with ``w_j`` over one
      hour / one day (strictly more).

    Raises:
        ValueError: if the table is empty, lacks a required column, has a missing or
            non-finite value in a required column, has a ``runtime <= 0``, a ``wait < 0`` or
            ``cpus <= 0`` anywhere, or a status other than ``completed`` / ``killed``; or if
            ``total_cpus <= 0`` or ``tau`` is negative or not finite; or if ``max(end)`` is
            not after ``min(submit)``. Messages about rows name the offending column, how
            many jobs break the rule and the first of them with its value.
    """
    if total_cpus <= 0:
        raise ValueError(f"total_cpus must be a positive number of CPUs, got {total_cpus!r}")
    if not np.isfinite(tau) or tau < 0:
        raise ValueError(f"tau must be a finite number of seconds >= 0, got {tau!r}")
    cols = _validated_columns(jobs, _REQUIRED_COLUMNS)

    wait, runtime, cpus = cols["wait"], cols["runtime"], cols["cpus"]
    weight = cpus * runtime
    total_weight = float(weight.sum())
    figures = wait_figures(wait, runtime, cpus, tau)

    nuwt = _per_user(jobs["user"], wait, weight)["nuwt"].to_numpy(dtype=np.float64)

    first_submit = float(cols["submit"].min())
    last_end = float(cols["end"].max())
    makespan = last_end - first_submit
    if makespan <= 0:
        raise ValueError(
            f"the makespan max(end) - min(submit) must be positive, got {makespan!r}: "
            "the end column is inconsistent with submit + wait + runtime"
        )

    status = jobs["status"]
    completed = int((status == "completed").sum())
    killed = int((status == "killed").sum())

    waits: dict[str, Any] = {k: v for k, v in figures.items() if k != "jobs"}
    return Metrics(
        jobs=len(jobs),
        completed=completed,
        killed=killed,
        users=len(nuwt),
        bounded_slowdown_tau=float(tau),
        anuwt=float(nuwt.mean()),
        nuwt_dev=float(nuwt.std(ddof=0)),
        utilization=total_weight / (total_cpus * makespan),
        makespan=makespan,
        first_submit=first_submit,
        last_end=last_end,
        **waits,
    )


#: the figures :func:`wait_figures` gives for any group of jobs, in order
WAIT_FIGURES = (
    "jobs",
    "awwt",
    "awrt",
    "awsd",
    "mean_wait",
    "median_wait",
    "p90_wait",
    "p99_wait",
    "max_wait",
    "mean_bounded_slowdown",
    "max_bounded_slowdown",
    "waited_over_1h",
    "waited_over_24h",
)
HOUR = 3600.0
DAY = 86400.0


def wait_figures(
    wait: FloatArray, runtime: FloatArray, cpus: FloatArray, tau: float
) -> dict[str, float]:
    """The wait figures of a group of jobs (the whole run, a queue, a user), as defined in
    :func:`compute_metrics`, with ``jobs`` their number (:data:`WAIT_FIGURES`).

    Percentiles are numpy's default ("linear", type 7 of Hyndman and Fan): with the ``n``
    waits sorted as ``x_0 <= ... <= x_{n-1}`` and ``h = (n - 1) p``, the ``p``-th
    percentile is ``x_k + (h - k) (x_{k+1} - x_k)`` for ``k = floor(h)`` - so the median
    of an even count is the mean of the middle two, and the 99th percentile of fewer than
    101 jobs lies between the two largest waits.
    """
    weight = cpus * runtime
    total_weight = float(weight.sum())
    response = wait + runtime
    bounded = np.maximum(1.0, response / np.maximum(runtime, tau))
    median, p90, p99 = (float(v) for v in np.percentile(wait, [50, 90, 99]))
    return {
        "jobs": float(wait.size),
        # e_j * s_j = c_j * r_j * (w_j + r_j) / r_j = c_j * (w_j + r_j): no division per job
        "awwt": float(np.dot(weight, wait)) / total_weight,
        "awrt": float(np.dot(weight, response)) / total_weight,
        "awsd": float(np.dot(cpus, response)) / total_weight,
        "mean_wait": float(wait.mean()),
        "median_wait": median,
        "p90_wait": p90,
        "p99_wait": p99,
        "max_wait": float(wait.max()),
        "mean_bounded_slowdown": float(bounded.mean()),
        "max_bounded_slowdown": float(bounded.max()),
        "waited_over_1h": float(np.count_nonzero(wait > HOUR)) / wait.size,
        "waited_over_24h": float(np.count_nonzero(wait > DAY)) / wait.size,
    }


def per_user(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per-user wait figures, the basis of ANUWT and NUWT-dev (Klusáček et al., ``004``).

    Returns one row per user, indexed by ``user`` in ascending order, with columns:

    * ``jobs`` -- the user's number of jobs;
    * ``total_wait`` -- ``sum w_j`` over the user's jobs, in seconds;
    * ``cpu_time`` -- ``sum c_j * r_j`` over the user's jobs, in CPU-seconds;
    * ``nuwt`` -- the normalised user wait time ``total_wait / cpu_time``: how long the user
      waited per CPU-second consumed, so heavy users may wait longer for the same NUWT;
    * ``mean_wait`` -- ``total_wait / jobs``, in seconds.

    Raises:
        ValueError: on the same malformed input as :func:`compute_metrics` (empty table,
            missing column or value, ``runtime <= 0``, ``wait < 0``, ``cpus <= 0``).
    """
    cols = _validated_columns(jobs, ("user", "wait", "runtime", "cpus"))
    return _per_user(jobs["user"], cols["wait"], cols["cpus"] * cols["runtime"])


def _per_user(user: pd.Series, wait: FloatArray, cpu_time: FloatArray) -> pd.DataFrame:
    """The table of :func:`per_user` from already validated columns (one groupby pass)."""
    frame = pd.DataFrame({"user": user.to_numpy(), "wait": wait, "cpu_time": cpu_time})
    out = frame.groupby("user", sort=True).agg(
        jobs=("wait", "size"),
        total_wait=("wait", "sum"),
        cpu_time=("cpu_time", "sum"),
    )
    out["nuwt"] = out["total_wait"] / out["cpu_time"]
    out["mean_wait"] = out["total_wait"] / out["jobs"]
    return out


def _validated_columns(jobs: pd.DataFrame, required: tuple[str, ...]) -> dict[str, FloatArray]:
    """Check the preconditions on ``jobs`` and return its numeric columns as float arrays.

    Only the columns in ``required`` are checked; the arrays are fresh copies or read-only
    views that callers never write to, so the input frame is left untouched.
    """
    if len(jobs) == 0:
        raise ValueError("cannot compute metrics of an empty job table (no jobs were simulated)")
    missing = [c for c in required if c not in jobs.columns]
    if missing:
        raise ValueError(
            f"the job table lacks required column(s) {', '.join(missing)}; "
            f"it has {', '.join(map(str, jobs.columns))}"
        )

    cols: dict[str, FloatArray] = {}
    for name in required:
        if name in ("user", "status"):
            if jobs[name].isna().any():
                _raise_at(
                    jobs, jobs[name].isna().to_numpy(), f"column {name!r} has a missing value"
                )
            continue
        try:
            values = jobs[name].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"column {name!r} must be numeric ({exc})") from None
        bad = ~np.isfinite(values)
        if bad.any():
            _raise_at(jobs, bad, f"column {name!r} has a missing or non-finite value")
        cols[name] = values

    lower_bounds = (  # column, message, whether 0 is a valid value
        ("runtime", "runtime must be > 0 seconds for every job", False),
        ("wait", "wait must be >= 0 seconds for every job", True),
        ("cpus", "cpus must be >= 1 for every job", False),
    )
    for name, message, zero_allowed in lower_bounds:
        if name not in cols:
            continue
        bad = cols[name] < 0 if zero_allowed else cols[name] <= 0
        if bad.any():
            _raise_at(jobs, bad, message, name)
    if "status" in required and (bad := ~jobs["status"].isin(STATUSES).to_numpy()).any():
        _raise_at(jobs, bad, f"status must be one of {', '.join(STATUSES)}", "status")
    return cols


def _raise_at(
    jobs: pd.DataFrame, bad: npt.NDArray[np.bool_], message: str, column: str | None = None
) -> NoReturn:
    """Raise ``ValueError(message)`` naming how many rows are bad and the first of them."""
    first = int(np.flatnonzero(bad)[0])
    if "job_id" in jobs.columns:
        where = f"job_id {_plain(jobs['job_id'].iloc[first])!r}"
    else:
        where = f"row {first}"
    got = f" (got {_plain(jobs[column].iloc[first])!r})" if column is not None else ""
    raise ValueError(f"{message}: {int(bad.sum())} job(s) violate it, the first is {where}{got}")


def _plain(value: object) -> object:
    """A numpy scalar as the Python scalar it holds, so messages read ``3``, not ``np.int64(3)``."""
    return value.item() if isinstance(value, np.generic) else value
