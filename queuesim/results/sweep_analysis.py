"""What a sweep's cell table says: the Pareto front of two metrics, the effect of each
axis, and the best cells. Pure functions of the table (one row per cell, the axis values
as columns, the metrics of :class:`~queuesim.results.metrics.Metrics` as columns, and
``status``); only cells whose ``status`` is ``done`` count.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["axis_effects", "best_cells", "pareto_front"]


def _done(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["status"] == "done"]


def _oriented(table: pd.DataFrame, metric: str, maximise: Sequence[str]) -> np.ndarray:
    """The metric as a quantity to minimise."""
    if metric not in table.columns:
        raise KeyError(f"no metric {metric!r} in the sweep's table")
    values = table[metric].to_numpy(dtype=np.float64)
    return -values if metric in maximise else values


def pareto_front(table: pd.DataFrame, x: str, y: str, *, maximise: Sequence[str] = ()) -> pd.Series:
    """Whether each finished cell is on the Pareto front of ``x`` and ``y``: no other cell
    is at least as good in both and strictly better in one (both minimised, except those
    named in ``maximise``). Indexed like the finished rows of ``table``."""
    done = _done(table)
    a, b = _oriented(done, x, maximise), _oriented(done, y, maximise)
    weakly = (a[None, :] <= a[:, None]) & (b[None, :] <= b[:, None])
    strictly = (a[None, :] < a[:, None]) | (b[None, :] < b[:, None])
    dominated = (weakly & strictly).any(axis=1)
    return pd.Series(~dominated, index=done.index, name="pareto")


def axis_effects(table: pd.DataFrame, axes: Sequence[str], metric: str) -> pd.DataFrame:
    """For every axis and each of its values, the ``metric`` over the finished cells with
    that value, the other axes marginalised: mean, min, max and the number of cells.
    Values keep the order they first appear in (the spec's order)."""
    done = _done(table)
    parts = []
    for axis in axes:
        key = done[axis].map(str)
        order = list(dict.fromkeys(key))
        grouped = done[metric].groupby(key, sort=False).agg(["mean", "min", "max", "count"])
        grouped = grouped.reindex(order)
        grouped.insert(0, "value", grouped.index)
        grouped.insert(0, "axis", axis)
        parts.append(grouped.reset_index(drop=True))
    columns = ["axis", "value", "mean", "min", "max", "count"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def best_cells(
    table: pd.DataFrame, metric: str, n: int, *, maximise: Sequence[str] = ()
) -> pd.DataFrame:
    """The ``n`` finished cells best by ``metric`` (ties: the earlier cell first)."""
    done = _done(table)
    score = _oriented(done, metric, maximise)
    order = np.lexsort((done["cell"].to_numpy(), score))
    return done.iloc[order[:n]]
