"""Schedule-quality metrics of the DFRS papers: stretch, degradations, underutilization.

Sources:

* Stillwell, Vivien and Casanova, conference paper on DFRS for HPC workloads (``000``), section
  V: the *degradation factor* of an algorithm on an instance is its maximum stretch divided by
  the best maximum stretch any algorithm of the experiment achieved on that instance.
* Stillwell, Vivien and Casanova, "DFRS vs. batch scheduling" (``002``):

  - section 2: the *bounded stretch*, with a threshold of 10 seconds;
  - section 5.1: the *degradation from bound*, maximum stretch divided by the offline lower
    bound of section 3 (:func:`~.stretch_bound.max_stretch_lower_bound`), summarised over
    a set of instances by its average, standard deviation and maximum ("worst trace");
  - section 5.3.1: the *underutilization* and its normalised form.

Inputs are a DFRS job table (:data:`~.stretch_bound.JOB_COLUMNS`: ``submit``, ``runtime``
-- the dedicated runtime at yield 1 --, ``tasks``, ``cpu_need``, ``memory``) and, from a
simulation, the completion time of each job in the same order. Tables of results across
instances are wide frames: one row per instance, one column per algorithm. Nothing here
modifies its inputs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.results.stretch_bound import DEFAULT_TAU, DfrsJobs, FloatArray, JobsLike

__all__ = [
    "SUMMARY_COLUMNS",
    "bounded_stretch",
    "degradation_factors",
    "degradation_from_bound",
    "max_stretch",
    "normalized_underutilization",
    "summarize_degradation",
    "underutilization",
]

#: Columns of :func:`summarize_degradation`, in order.
SUMMARY_COLUMNS = ("mean", "std", "max")

#: Slack allowed, relative to the magnitude of ``submit + runtime``, when checking that no job
#: finished sooner than it could alone (absorbs floating-point rounding in simulated times).
_RUNTIME_SLACK = 1e-9


def bounded_stretch(
    jobs: JobsLike, completion: npt.ArrayLike, *, tau: float = DEFAULT_TAU
) -> FloatArray:
    """Bounded stretch of each job: ``max(1, (C_j - r_j) / max(p_j, tau))``.

    ``C_j`` is the completion time, ``r_j`` the submit time and ``p_j`` the *dedicated*
    runtime (alone on the platform, yield 1), not the time the job actually ran. Paper ``002``
    (section 2) replaces a turn-around time by ``tau`` when it is shorter than ``tau``, which
    gives ``max(C_j - r_j, tau) / max(p_j, tau)``; as ``C_j - r_j >= p_j`` in any valid
    schedule this equals Feitelson's bounded slowdown above, the form used by
    :mod:`queuesim.results.metrics`. ``tau`` defaults to 10 s as in ``002`` (``000`` used 30 s).

    Raises:
        ValueError: on an invalid job table, a completion array of the wrong length, a
            non-finite completion, a job finishing earlier than ``submit + runtime``, or a
            ``tau`` that is negative, not finite, or 0 while some runtime is 0.
    """
    table = DfrsJobs.from_table(jobs)
    done = _completion(table, completion)
    if not np.isfinite(tau) or tau < 0:
        raise ValueError(f"tau must be a finite number of seconds >= 0, got {tau!r}")
    denominator = np.maximum(table.runtime, tau)
    if (denominator <= 0).any():
        first = int(np.flatnonzero(denominator <= 0)[0])
        raise ValueError(
            f"jobs: with tau = 0 the stretch of a job with runtime 0 is undefined (row {first})"
        )
    stretch: FloatArray = np.maximum(1.0, (done - table.submit) / denominator)
    return stretch


def max_stretch(jobs: JobsLike, completion: npt.ArrayLike, *, tau: float = DEFAULT_TAU) -> float:
    """Maximum over jobs of :func:`bounded_stretch` (``002``'s objective).

    Raises:
        ValueError: as :func:`bounded_stretch`, or if there are no jobs.
    """
    stretch = bounded_stretch(jobs, completion, tau=tau)
    if not len(stretch):
        raise ValueError("jobs: the maximum stretch of an empty job table is undefined")
    return float(stretch.max())


def degradation_from_bound(max_stretches: pd.DataFrame, bounds: pd.Series) -> pd.DataFrame:
    """Degradation from bound (``002``, section 5.1): maximum stretch over the lower bound.

    Args:
        max_stretches: one row per instance, one column per algorithm.
        bounds: the lower bound of each instance
            (:func:`~.stretch_bound.max_stretch_lower_bound`), indexed like the rows.

    Returns:
        A frame shaped like ``max_stretches``; lower is better, 1 means the algorithm met the
        bound. For a single instance, divide the two numbers.

    Raises:
        ValueError: if a value is missing, not finite or not positive, or an instance of
            ``max_stretches`` has no bound.
    """
    _check_table(max_stretches, "max_stretches")
    missing = max_stretches.index.difference(bounds.index)
    if len(missing):
        raise ValueError(f"bounds: no bound for instance {missing[0]!r} ({len(missing)} missing)")
    aligned = bounds.reindex(max_stretches.index)
    _check_table(aligned.to_frame(), "bounds")
    return max_stretches.div(aligned, axis="index")


def degradation_factors(max_stretches: pd.DataFrame) -> pd.DataFrame:
    """Degradation factor (``000``, section V): maximum stretch over the instance's best.

    Args:
        max_stretches: one row per instance, one column per algorithm of the experiment.

    Returns:
        A frame shaped like the input, each row divided by its minimum: 1 for the best
        algorithm of the instance, 10 where some algorithm of the experiment did 10 times
        better.

    Raises:
        ValueError: if the table is empty or a value is missing, not finite or not positive.
    """
    _check_table(max_stretches, "max_stretches")
    return max_stretches.div(max_stretches.min(axis="columns"), axis="index")


def summarize_degradation(degradations: pd.DataFrame, *, ddof: int = 1) -> pd.DataFrame:
    """Average, standard deviation and maximum of each algorithm's column, over instances.

    ``002`` reports these three statistics of the degradation from bound over each set of
    traces (the maximum being the "worst trace"); the same summary suits degradation factors.
    The standard deviation is the sample one (``ddof=1``) by default since the instances are
    a sample of a workload model, so it is NaN with a single instance; pass ``ddof=0`` for
    the population one.

    Returns:
        One row per algorithm (the input's columns, in order) and the columns
        :data:`SUMMARY_COLUMNS`.

    Raises:
        ValueError: if the table is empty or a value is missing, not finite or not positive.
    """
    _check_table(degradations, "degradations")
    summary = pd.DataFrame(
        {
            "mean": degradations.mean(axis="index"),
            "std": degradations.std(axis="index", ddof=ddof),
            "max": degradations.max(axis="index"),
        }
    )
    summary.index.name = degradations.columns.name
    return summary


def underutilization(
    jobs: JobsLike,
    completion: npt.ArrayLike,
    hosts: int,
    *,
    allocated_cpu_seconds: float | None = None,
) -> float:
    """Underutilization of a schedule (``002``, section 5.3.1), in CPU-seconds.

    ``integral over t of min(|P|, D(t)) - u(t)``, where ``D(t)`` is the CPU demand at ``t``
    (the sum of the CPU needs of every task of every job submitted and not yet completed:
    ``c_j * |T_j|`` per job) and ``u(t)`` the CPU allocated to tasks at ``t``. It measures the
    CPU that was idle while work was waiting and could in principle have used it.

    The integral of ``u`` is the CPU actually allocated over the run. In the papers' model a
    task of job ``j`` receives exactly ``c_j * p_j`` CPU-seconds, so by default it is the
    workload's total work ``sum_j c_j * |T_j| * p_j``. A simulator that counts allocated but
    unproductive CPU (e.g. during a rescheduling penalty) passes its own total as
    ``allocated_cpu_seconds``.

    Raises:
        ValueError: on an invalid job table or completions (see :func:`bounded_stretch`),
            ``hosts < 1``, or a negative or non-finite ``allocated_cpu_seconds``.
    """
    table = DfrsJobs.from_table(jobs)
    done = _completion(table, completion)
    if isinstance(hosts, bool) or int(hosts) != hosts or hosts < 1:
        raise ValueError(f"hosts must be an integer >= 1, got {hosts!r}")
    if allocated_cpu_seconds is None:
        allocated = float(table.work.sum())
    elif np.isfinite(allocated_cpu_seconds) and allocated_cpu_seconds >= 0:
        allocated = float(allocated_cpu_seconds)
    else:
        raise ValueError(
            f"allocated_cpu_seconds must be a finite number >= 0, got {allocated_cpu_seconds!r}"
        )
    return _capped_demand_integral(table, done, float(hosts)) - allocated


def normalized_underutilization(
    jobs: JobsLike,
    completion: npt.ArrayLike,
    hosts: int,
    *,
    allocated_cpu_seconds: float | None = None,
) -> float:
    """:func:`underutilization` as a fraction of the workload's total work (``002``, 5.3.1).

    The total work, ``sum_j c_j * |T_j| * p_j`` CPU-seconds, is the resource the workload
    needs; dividing by it lets workloads of different sizes be averaged together.

    Raises:
        ValueError: as :func:`underutilization`, or if the workload has no work at all.
    """
    table = DfrsJobs.from_table(jobs)
    total = float(table.work.sum())
    if total <= 0:
        raise ValueError("jobs: normalised underutilization needs a workload with some work")
    wasted = underutilization(table, completion, hosts, allocated_cpu_seconds=allocated_cpu_seconds)
    return wasted / total


def _capped_demand_integral(table: DfrsJobs, done: FloatArray, hosts: float) -> float:
    """``integral of min(hosts, D(t)) dt``, D stepping up at submits and down at completions."""
    times = np.concatenate([table.submit, done])
    steps = np.concatenate([table.demand, -table.demand])
    order = np.argsort(times, kind="stable")
    times, steps = times[order], steps[order]
    demand = np.cumsum(steps)
    # D is constant on [times[i], times[i + 1]) once every step at times[i] is applied; equal
    # times give zero-length pieces, so the order of simultaneous steps does not matter.
    return float(np.dot(np.minimum(hosts, demand[:-1]), np.diff(times)))


def _completion(table: DfrsJobs, completion: npt.ArrayLike) -> FloatArray:
    done = np.array(completion, dtype=np.float64).reshape(-1)
    if len(done) != len(table):
        raise ValueError(f"completion: {len(done)} values for {len(table)} jobs")
    bad = np.flatnonzero(~np.isfinite(done))
    if len(bad):
        raise ValueError(
            f"completion: {len(bad)} job(s) have no finite completion time, "
            f"the first is row {int(bad[0])} with {done[bad[0]]!r}"
        )
    alone = table.submit + table.runtime
    earliest = alone - _RUNTIME_SLACK * (np.abs(table.submit) + table.runtime)
    early = np.flatnonzero(done < earliest)
    if len(early):
        first = int(early[0])
        raise ValueError(
            f"completion: {len(early)} job(s) complete before submit + runtime, the first is "
            f"row {first}: completion {done[first]!r} < {table.submit[first]!r} + "
            f"{table.runtime[first]!r}"
        )
    return done


def _check_table(table: pd.DataFrame, name: str) -> None:
    if table.empty:
        raise ValueError(f"{name}: the table is empty")
    values = table.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}: {int(bad.sum())} value(s) are missing, not finite or not positive, the "
            f"first is instance {table.index[row]!r}, column {table.columns[col]!r}: "
            f"{values[row, col]!r}"
        )
