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


def _figures(jobs: pd.DataFrame, tau: float) -> dict[str, float]:
    wait, runtime, cpus = (jobs[c].to_numpy(dtype=np.float64) for c in ("wait", "runtime", "cpus"))
    return wait_figures(wait, runtime, cpus, tau)


def _frame(rows: Mapping[Any, dict[str, float]], index_name: str) -> pd.DataFrame:
    frame = pd.DataFrame.from_dict(dict(rows), orient="index", columns=list(WAIT_FIGURES))
    frame["jobs"] = frame["jobs"].astype(np.int64)
    frame.index.name = index_name
    return frame


def by_queue(jobs: pd.DataFrame, queues: Sequence[str], *, tau: float = 10.0) -> pd.DataFrame:
    """One row per queue that ran jobs, in the site's order ``queues``, then :data:`ALL`;
    the columns of :data:`~queuesim.results.metrics.WAIT_FIGURES`."""
    names = jobs["queue"].astype(str)
    rows = {q: _figures(jobs[names == q], tau) for q in queues if (names == q).any()}
    rows[ALL] = _figures(jobs, tau)
    return _frame(rows, "queue")


def by_user(jobs: pd.DataFrame, *, tau: float = 10.0) -> pd.DataFrame:
    """One row per user (ascending), the wait figures and ``nuwt``, the user's wait per
    CPU-second consumed (:func:`~queuesim.results.metrics.per_user`)."""
    rows = {user: _figures(group, tau) for user, group in jobs.groupby("user", sort=True)}
    frame = _frame(rows, "user")
    frame["nuwt"] = per_user(jobs)["nuwt"]
    return frame
