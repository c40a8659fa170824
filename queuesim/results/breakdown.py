"""The wait figures of a run per queue and per user, beside the whole run's.

Admins decide per queue and per user group, and a mean hides the tail: every group gets
the figures of :func:`~queuesim.results.metrics.wait_figures` (jobs, AWWT, AWRT, AWSD,
mean, median, 90th and 99th percentile and longest wait, mean and largest bounded
slowdown, the shares of jobs that waited more than an hour and more than a day), each
group's users their NUWT too (Klusáček et al., paper 004).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from queuesim.results.metrics import WAIT_FIGURES, per_user, wait_figures

#: the row of :func:`by_queue` that holds the whole run
ALL = "(all)"


_COLUMNS = ("wait", "runtime", "cpus")


def _figures(jobs: pd.DataFrame, tau: float) -> dict[str, float]:
    wait, runtime, cpus = (jobs[c].to_numpy(dtype=np.float64) for c in _COLUMNS)
    return wait_figures(wait, runtime, cpus, tau)


def _figures_by(keys: pd.Series, jobs: pd.DataFrame, tau: float) -> dict[Any, dict[str, float]]:
    """:func:`_figures` of each group of rows with one value of ``keys``, in ascending key
    order (missing keys left out, as ``groupby`` does). One stable sort of the three columns
    instead of a sub-table per group: each group's values keep their row order and are
    copied into arrays of their own, so every sum is the one a groupby gives, to the bit."""
    codes, uniques = pd.factorize(keys, sort=True)
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    ends = np.cumsum(np.bincount(codes[order], minlength=len(uniques)))
    sorted_columns = [jobs[c].to_numpy(dtype=np.float64)[order] for c in _COLUMNS]
    rows: dict[Any, dict[str, float]] = {}
    start = 0
    for key, end in zip(uniques, ends.tolist(), strict=True):
        wait, runtime, cpus = (column[start:end].copy() for column in sorted_columns)
        rows[key] = wait_figures(wait, runtime, cpus, tau)
        start = end
    return rows


def _frame(rows: Mapping[Any, dict[str, float]], index_name: str) -> pd.DataFrame:
    frame = pd.DataFrame.from_dict(dict(rows), orient="index", columns=list(WAIT_FIGURES))
    frame["jobs"] = frame["jobs"].astype(np.int64)
    frame.index.name = index_name
    return frame


def by_queue(jobs: pd.DataFrame, queues: Sequence[str], *, tau: float = 10.0) -> pd.DataFrame:
    """One row per queue that ran jobs, in the site's order ``queues``, then :data:`ALL`;
    the columns of :data:`~queuesim.results.metrics.WAIT_FIGURES`."""
    per_queue = _figures_by(jobs["queue"].astype(str), jobs, tau)
    rows = {q: per_queue[q] for q in queues if q in per_queue}
    rows[ALL] = _figures(jobs, tau)
    return _frame(rows, "queue")


def by_user(jobs: pd.DataFrame, *, tau: float = 10.0) -> pd.DataFrame:
    """One row per user (ascending), the wait figures and ``nuwt``, the user's wait per
    CPU-second consumed (:func:`~queuesim.results.metrics.per_user`)."""
    frame = _frame(_figures_by(jobs["user"], jobs, tau), "user")
    frame["nuwt"] = per_user(jobs)["nuwt"]
    return frame
