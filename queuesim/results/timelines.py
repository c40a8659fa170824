"""The numbers behind the report's figures, computed from per-job tables (``submit``,
``start``, ``end``, ``wait``, ``cpus``, ``queue``, ``user``): what each figure of
:mod:`queuesim.reports.figures` draws, so that it can be checked without looking at pixels.

* :func:`queue_timeline` - per queue, jobs waiting and CPUs busy over time (step functions);
* :func:`wait_cdf` - the empirical distribution of waits;
* :func:`gantt_rows` - jobs of a time window placed on CPU rows;
* :func:`start_shifts` - the same jobs' starts under two setups (a diff Gantt);
* :func:`decayed_usage` - each user's usage decayed with a half-life (fairshare, as
  Slurm's ``PriorityDecayHalfLife``: usage ``u`` counts ``u * 2**(-age / half_life)``);
* :func:`user_changes` - each user's change of mean wait against a baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "decayed_usage",
    "gantt_rows",
    "queue_timeline",
    "start_shifts",
    "user_changes",
    "wait_cdf",
]


def queue_timeline(jobs: pd.DataFrame, queues: Sequence[str]) -> pd.DataFrame:
    """One row per (queue, instant at which something changed in it): ``time``,
    ``queue``, ``waiting`` (jobs submitted, not started) and ``busy_cpus`` (CPUs of its
    running jobs), each holding from ``time`` until the queue's next row. Queues in the
    order given (then any other, sorted); a job counts as waiting on ``[submit, start)``
    and running on ``[start, end)``."""
    names = [*queues, *sorted({str(q) for q in jobs["queue"]} - set(queues))]
    parts = []
    for queue in names:
        mine = jobs[jobs["queue"].astype(str) == queue]
        if mine.empty:
            continue
        cpus = mine["cpus"].to_numpy(dtype=np.float64)
        ones = np.ones(len(mine))
        times = np.concatenate(
            [mine[c].to_numpy(dtype=np.float64) for c in ("submit", "start", "start", "end")]
        )
        waiting = np.concatenate([ones, -ones, 0 * ones, 0 * ones])
        busy = np.concatenate([0 * cpus, 0 * cpus, cpus, -cpus])
        frame = pd.DataFrame({"time": times, "waiting": waiting, "busy_cpus": busy})
        steps = frame.groupby("time", sort=True).sum().cumsum().reset_index()
        steps.insert(1, "queue", queue)
        parts.append(steps)
    out = pd.concat(parts, ignore_index=True)
    out["waiting"] = out["waiting"].round().astype(np.int64)
    return out


def wait_cdf(waits: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted waits and, for each, the share of jobs that waited at most that long."""
    values = np.sort(np.asarray(waits, dtype=np.float64))
    share = np.arange(1, len(values) + 1, dtype=np.float64) / max(len(values), 1)
    return values, share


def _runs(rows: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Sorted row numbers as ``(first, last + 1)`` runs of consecutive rows."""
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    return tuple((int(r[0]), int(r[-1]) + 1) for r in np.split(rows, breaks))


def gantt_rows(jobs: pd.DataFrame, start: float, end: float, total_cpus: int) -> pd.DataFrame:
    """The jobs running at some point of ``[start, end)``, each given CPU rows no other job
    holds while it runs: one contiguous band within the machine, first fit, where one is
    free, else the lowest free rows (several bands). queuesim does not record which CPU a
    job ran on, so rows are a drawing, not the machine's numbering. Rows above
    ``total_cpus`` are used only if the schedule held more CPUs than the machine (never,
    for a valid schedule); ``above`` flags such jobs. Columns: ``job_id``, ``queue``,
    ``user``, ``start``, ``end``, ``cpus``, ``bands`` (tuple of ``(first, last + 1)``
    rows), ``above``."""
    window = jobs[(jobs["start"] < end) & (jobs["end"] > start)]
    window = window.sort_values(["start", "job_id"], kind="mergesort")
    need = window["cpus"].to_numpy(dtype=np.int64)
    size = total_cpus + int(need.sum())
    held = np.zeros(size, dtype=bool)
    running: list[tuple[float, np.ndarray]] = []  # end, rows held
    bands, above = [], []
    for s, e, c in zip(window["start"], window["end"], need.tolist(), strict=True):
        keep = []
        for finish, rows in running:
            if finish <= s:
                held[rows] = False
            else:
                keep.append((finish, rows))
        running = keep
        free = np.flatnonzero(~held)
        # a band within the machine, else the lowest free rows (which stay within it
        # whenever the schedule does): a band above it would flag a valid schedule
        runs = [(a, b) for a, b in _runs(free) if b - a >= c and a + c <= total_cpus]
        chosen = np.arange(runs[0][0], runs[0][0] + c) if runs and c > 0 else free[:c]
        held[chosen] = True
        running.append((float(e), chosen))
        bands.append(_runs(chosen) if c > 0 else ())
        above.append(bool(c > 0 and chosen[-1] >= total_cpus))
    out = window[["job_id", "queue", "user", "start", "end", "cpus"]].copy()
    out["bands"] = pd.Series(bands, index=out.index, dtype=object)
    out["above"] = np.asarray(above, dtype=bool)
    return out.reset_index(drop=True)


def start_shifts(base: pd.DataFrame, other: pd.DataFrame, start: float, end: float) -> pd.DataFrame:
    """The jobs submitted in ``[start, end)`` under both setups (matched by ``job_id``):
    ``job_id``, ``submit``, ``start_base``, ``end_base``, ``start_other``, ``end_other`` and
    ``shift`` (other's start less the baseline's: > 0, the job started later)."""
    a = base[(base["submit"] >= start) & (base["submit"] < end)]
    merged = a[["job_id", "submit", "start", "end"]].merge(
        other[["job_id", "start", "end"]], on="job_id", suffixes=("_base", "_other")
    )
    merged["shift"] = merged["start_other"] - merged["start_base"]
    return merged.sort_values(["submit", "job_id"], kind="mergesort").reset_index(drop=True)


def decayed_usage(
    jobs: pd.DataFrame, half_life: float, times: np.ndarray, *, by: str = "user"
) -> pd.DataFrame:
    """Each account's decayed usage (CPU-seconds) at each of ``times``: a job running on
    ``[start, end)`` with ``c`` CPUs adds ``c dt`` at every instant, and what was added
    ``age`` seconds ago counts ``2**(-age / half_life)``. Exact (the integral of the
    decayed charge, not sampled): for ``t`` past the job, its contribution is
    ``c * h / ln 2 * (2**(-(t - min(end, t)) / h) - 2**(-(t - start) / h))``.
    Returns one column per account (sorted), one row per time."""
    h = float(half_life)
    k = np.log(2.0) / h
    t = np.asarray(times, dtype=np.float64)[:, None]
    start = jobs["start"].to_numpy(dtype=np.float64)[None, :]
    stop = np.minimum(jobs["end"].to_numpy(dtype=np.float64)[None, :], t)
    begun = t > start
    with np.errstate(over="ignore", invalid="ignore"):
        # e^{-k(t-stop)} - e^{-k(t-start)}, written so long half-lives lose no digits
        part = np.exp(-k * (t - stop)) * -np.expm1(-k * (stop - start)) / k
    part = np.where(begun, part, 0.0) * jobs["cpus"].to_numpy(dtype=np.float64)[None, :]
    accounts = jobs[by].to_numpy()
    out = {}
    for account in sorted(set(accounts.tolist())):
        out[account] = part[:, accounts == account].sum(axis=1)
    return pd.DataFrame(out, index=pd.Index(np.asarray(times, dtype=np.float64), name="time"))


def user_changes(base: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per user, over the jobs of both runs (matched by ``job_id``): ``jobs``, ``cpu_time``
    (CPU-seconds, from the baseline), ``mean_wait_base``, ``mean_wait`` and ``change``
    (seconds; < 0: the user gained). Sorted by change, gainers first."""
    m = base[["job_id", "user", "wait", "cpus", "runtime"]].merge(
        other[["job_id", "wait"]], on="job_id", suffixes=("_base", "")
    )
    m["cpu_time"] = m["cpus"] * m["runtime"]
    out = m.groupby("user", sort=True).agg(
        jobs=("job_id", "size"),
        cpu_time=("cpu_time", "sum"),
        mean_wait_base=("wait_base", "mean"),
        mean_wait=("wait", "mean"),
    )
    out["change"] = out["mean_wait"] - out["mean_wait_base"]
    return out.sort_values(["change"], kind="mergesort").reset_index()
