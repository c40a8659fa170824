"""Mean wait per queue and time bin: the heatmap of paper ``004`` (Klusáček et al., Fig. 5).

A :class:`WaitGrid` holds, for each queue (rows, in the site file's order) and each time bin
(columns, by *submit* time), the number of jobs submitted and the sum of their waits; the
mean wait in minutes is derived from them. Keeping sums and counts (not only means) lets a
renderer merge adjacent bins exactly, e.g. to fit a terminal.

Binning rules, relied upon by every renderer and by the tests:

* Bins are half-open, ``[start, end)``: a job submitted exactly on an edge goes to the
  *later* bin, the one that starts at that edge.
* ``day`` and ``week`` bins follow the calendar when the trace's header gives its
  ``UnixStartTime``: days start at local midnight in the trace's ``TimeZoneString`` (UTC when
  the header names no zone, or one this machine does not know), weeks on Monday at midnight.
  A bin therefore lasts 23 or 25 hours on a daylight-saving change. Without a start time,
  and for a width given in seconds, bins are ``[k*w, (k+1)*w)`` seconds since the trace's
  start (SWF submit times count from it).
* The bins run from the one holding the first submit to the one holding the last, so a
  bin in between in which no job was submitted is *empty*: its mean is NaN (blank in CSV,
  hatched in images, ``·`` in the terminal), never 0. A queue with no job at all is kept
  as an all-empty row, so setups with the same site always show the same rows.

Nothing here draws: see :mod:`queuesim.reports.heatmap_plot` (PNG/SVG) and
:mod:`queuesim.reports.terminal` (rich).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.common.errors import QueuesimError
from queuesim.core.result import Result
from queuesim.site.units import parse_duration

__all__ = [
    "BinSpec",
    "HeatmapError",
    "TraceClock",
    "WaitGrid",
    "bin_edges",
    "parse_bin",
    "scale_forward",
    "scale_inverse",
    "scale_max",
    "shared_grids",
    "wait_grid",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DAY = 86_400.0
WEEK = 7 * DAY


class HeatmapError(QueuesimError):
    """A heatmap cannot be built from the given input (bin width, jobs, queues)."""


@dataclass(frozen=True)
class BinSpec:
    """How submit times are cut into bins: calendar ``day``/``week`` or ``seconds`` wide."""

    kind: Literal["day", "week", "seconds"]
    width: float  #: nominal width in seconds (86,400 for a day, 604,800 for a week)

    @property
    def label(self) -> str:
        """``day``, ``week`` or e.g. ``6h`` / ``5,400 s``, for titles and legends."""
        if self.kind != "seconds":
            return self.kind
        for unit, size in (("d", DAY), ("h", 3600.0), ("m", 60.0)):
            if self.width >= size and self.width % size == 0:
                return f"{self.width / size:g}{unit}"
        return f"{self.width:,g} s"


def parse_bin(value: str | float | BinSpec) -> BinSpec:
    """``"day"``, ``"week"``, or a positive width: seconds (``3600``) or a duration (``6h``).

    Raises:
        HeatmapError: for anything else, including a width of zero or below.
    """
    if isinstance(value, BinSpec):
        return value
    if isinstance(value, str) and value.strip().lower() in ("day", "week"):
        kind: Literal["day", "week"] = "day" if value.strip().lower() == "day" else "week"
        return BinSpec(kind, DAY if kind == "day" else WEEK)
    expected = "a bin is 'day', 'week' or a positive width in seconds or as a duration ('6h')"
    if isinstance(value, bool):
        raise HeatmapError(f"{expected}, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            width = float(text)
        except ValueError:
            try:
                width = parse_duration(text)
            except ValueError:
                raise HeatmapError(f"{expected}, got {value!r}") from None
    elif isinstance(value, int | float):
        width = float(value)
    else:
        raise HeatmapError(f"{expected}, got {value!r}")
    if not (math.isfinite(width) and width > 0):
        raise HeatmapError(f"{expected}; a width must be more than 0 seconds, got {value!r}")
    return BinSpec("seconds", width)


@dataclass(frozen=True)
class TraceClock:
    """How trace seconds map to dates: the SWF header's ``UnixStartTime`` and time zone."""

    unix_start_time: int | None = None
    time_zone: str | None = None  #: the header's ``TimeZoneString``, e.g. ``US/Pacific``

    @classmethod
    def of(cls, result: Result) -> TraceClock:
        header = result.workload.header
        if header is None:
            return cls()
        return cls(header.unix_start_time, header.time_zone_string)

    @property
    def dated(self) -> bool:
        return self.unix_start_time is not None

    @property
    def tz(self) -> tzinfo:
        """The trace's zone; UTC if none is named or this machine does not know it."""
        if self.time_zone:
            try:
                return ZoneInfo(self.time_zone)
            except (ZoneInfoNotFoundError, ValueError):
                pass
        return UTC

    @property
    def zone_name(self) -> str:
        tz = self.tz
        return "UTC" if tz is UTC else str(tz)

    def to_datetime(self, seconds: float) -> datetime:
        """Trace seconds as an aware local datetime (only for a dated clock)."""
        if self.unix_start_time is None:
            raise ValueError("this trace has no UnixStartTime")
        return datetime.fromtimestamp(self.unix_start_time + seconds, self.tz)

    def _from_date(self, day: date) -> float:
        assert self.unix_start_time is not None
        midnight = datetime(day.year, day.month, day.day, tzinfo=self.tz)
        return midnight.timestamp() - self.unix_start_time


def bin_edges(first: float, last: float, spec: BinSpec, clock: TraceClock) -> FloatArray:
    """Bin edges (trace seconds) from the bin holding ``first`` to the one holding ``last``.

    There is one more edge than bins; ``edges[0] <= first`` and ``last < edges[-1]``.
    """
    if not (math.isfinite(first) and math.isfinite(last)) or last < first:
        raise ValueError(f"need finite first <= last, got {first!r}, {last!r}")
    if spec.kind in ("day", "week") and clock.dated:
        step = timedelta(days=1 if spec.kind == "day" else 7)
        day = clock.to_datetime(first).date()
        if spec.kind == "week":
            day -= timedelta(days=day.weekday())
        edges = [clock._from_date(day)]
        while edges[-1] <= last:
            day += step
            edges.append(clock._from_date(day))
        return np.asarray(edges, dtype=np.float64)
    width = spec.width
    k0 = math.floor(first / width)
    k1 = math.floor(last / width) + 1
    return np.arange(k0, k1 + 1, dtype=np.float64) * width


@dataclass(frozen=True, eq=False)
class WaitGrid:
    """Jobs and summed waits per (queue, submit-time bin); see the module docstring."""

    queues: tuple[str, ...]
    edges: FloatArray  #: bin edges in trace seconds, one more than bins
    jobs: IntArray  #: (queues, bins) number of jobs submitted
    wait_sum: FloatArray  #: (queues, bins) sum of their waits, seconds
    spec: BinSpec
    clock: TraceClock
    merged: int = 1  #: how many original bins each column holds (see :meth:`coarsen`)

    @property
    def bins(self) -> int:
        return len(self.edges) - 1

    @property
    def mean_minutes(self) -> FloatArray:
        """Mean wait in minutes per cell; NaN where no job was submitted."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean: FloatArray = np.where(
                self.jobs > 0, self.wait_sum / np.maximum(self.jobs, 1) / 60.0, np.nan
            )
        return mean

    def queue_jobs(self) -> IntArray:
        """Jobs per queue over all bins."""
        total: IntArray = self.jobs.sum(axis=1)
        return total

    def coarsen(self, factor: int) -> WaitGrid:
        """Merge each ``factor`` adjacent bins into one (the last may hold fewer)."""
        if factor < 1:
            raise ValueError(f"factor must be >= 1, got {factor}")
        if factor == 1:
            return self
        starts = np.arange(0, self.bins, factor)
        edges = np.append(self.edges[starts], self.edges[-1])
        return WaitGrid(
            queues=self.queues,
            edges=edges,
            jobs=np.add.reduceat(self.jobs, starts, axis=1),
            wait_sum=np.add.reduceat(self.wait_sum, starts, axis=1),
            spec=self.spec,
            clock=self.clock,
            merged=self.merged * factor,
        )

    def bin_labels(self) -> list[str]:
        """A label for each bin's start: a local date (and time) when the trace is dated,
        else seconds since the trace's start."""
        starts = self.edges[:-1]
        if not self.clock.dated:
            return [f"{s:.0f}" for s in starts]
        sub_day = self.spec.kind == "seconds" and (self.spec.width % DAY != 0)
        fmt = "%Y-%m-%dT%H:%M" if sub_day else "%Y-%m-%d"
        return [self.clock.to_datetime(float(s)).strftime(fmt) for s in starts]

    def frame(self) -> pd.DataFrame:
        """Mean wait (minutes) as a DataFrame: one row per queue, one column per bin."""
        return pd.DataFrame(
            self.mean_minutes,
            index=pd.Index(list(self.queues), name="queue"),
            columns=pd.Index(self.bin_labels(), name="bin_start"),
        )


def _queues_of(jobs: pd.DataFrame) -> tuple[str, ...]:
    column = jobs["queue"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return tuple(str(c) for c in column.cat.categories)
    return tuple(sorted({str(q) for q in column.unique()}))


def wait_grid(
    source: Result | pd.DataFrame,
    bin: str | float | BinSpec = "day",
    *,
    queues: Sequence[str] | None = None,
    clock: TraceClock | None = None,
    edges: FloatArray | None = None,
) -> WaitGrid:
    """The :class:`WaitGrid` of one run: from a :class:`Result`, or from its per-job table.

    Args:
        source: a result (rows in its site's queue order, dates from its trace header), or a
            job table with at least ``queue``, ``submit`` and ``wait`` columns (rows in the
            categorical order of ``queue``, else sorted by name; no dates unless ``clock``).
        bin: ``"day"``, ``"week"``, or a width in seconds (or a duration such as ``"6h"``).
        queues: the rows, in order; a queue without jobs is an empty row.
        clock: the trace's start time and zone, overriding the result's.
        edges: bin edges to use instead of computing them (to share bins across runs).

    Raises:
        HeatmapError: no jobs, a bad bin, or a job in a queue not among ``queues``.
    """
    spec = parse_bin(bin)
    if isinstance(source, Result):
        jobs = source.jobs
        queues = tuple(q.name for q in source.site.queues) if queues is None else queues
        clock = TraceClock.of(source) if clock is None else clock
    else:
        jobs = source
    clock = clock or TraceClock()
    missing = [c for c in ("queue", "submit", "wait") if c not in jobs.columns]
    if missing:
        raise HeatmapError(f"the job table lacks column(s) {', '.join(missing)}")
    if len(jobs) == 0:
        raise HeatmapError("no jobs to draw a heatmap of: the job table is empty")
    rows = tuple(str(q) for q in queues) if queues is not None else _queues_of(jobs)
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    wait = jobs["wait"].to_numpy(dtype=np.float64)
    if not (np.isfinite(submit).all() and np.isfinite(wait).all()):
        raise HeatmapError("the job table has a missing or non-finite submit or wait time")
    if edges is None:
        edges = bin_edges(float(submit.min()), float(submit.max()), spec, clock)
    column = np.searchsorted(edges, submit, side="right") - 1  # an edge goes to the later bin
    if (column < 0).any() or (column >= len(edges) - 1).any():
        raise ValueError("some submit times lie outside the given bin edges")
    row_of = {q: i for i, q in enumerate(rows)}
    names = jobs["queue"].astype(str).to_numpy()
    unknown = sorted(set(np.unique(names).tolist()) - set(row_of))
    if unknown:
        raise HeatmapError(
            f"jobs in queue(s) {', '.join(unknown)}, which are not among the rows "
            f"({', '.join(rows) or 'none'})"
        )
    row = np.array([row_of[n] for n in names], dtype=np.int64)
    shape = (len(rows), len(edges) - 1)
    flat = row * shape[1] + column
    size = shape[0] * shape[1]
    counts = np.bincount(flat, minlength=size).astype(np.int64).reshape(shape)
    sums = np.bincount(flat, weights=wait, minlength=size).astype(np.float64).reshape(shape)
    return WaitGrid(rows, np.asarray(edges, dtype=np.float64), counts, sums, spec, clock)


def shared_grids(
    runs: Mapping[str, Result | tuple[pd.DataFrame, Sequence[str]]],
    bin: str | float | BinSpec = "day",
    clock: TraceClock | None = None,
) -> dict[str, WaitGrid]:
    """One grid per run, all on the same bins (from the earliest to the latest submit of
    any run), for side-by-side panels on one colour scale. A run is a :class:`Result` or
    its job table and queues; dates come from ``clock``, else from the first run."""
    if not runs:
        raise HeatmapError("no runs to draw heatmaps of")
    spec = parse_bin(bin)
    tables = {
        name: (r.jobs, tuple(q.name for q in r.site.queues)) if isinstance(r, Result) else r
        for name, r in runs.items()
    }
    if clock is None:
        first = next(iter(runs.values()))
        clock = TraceClock.of(first) if isinstance(first, Result) else TraceClock()
    edges = _common_edges((jobs for jobs, _ in tables.values()), spec, clock)
    return {
        name: wait_grid(jobs, spec, queues=queues, clock=clock, edges=edges)
        for name, (jobs, queues) in tables.items()
    }


def _common_edges(tables: Iterable[pd.DataFrame], spec: BinSpec, clock: TraceClock) -> FloatArray:
    firsts, lasts = [], []
    for jobs in tables:
        if len(jobs) == 0:
            raise HeatmapError("no jobs to draw a heatmap of: a job table is empty")
        submit = jobs["submit"].to_numpy(dtype=np.float64)
        firsts.append(float(submit.min()))
        lasts.append(float(submit.max()))
    return bin_edges(min(firsts), max(lasts), spec, clock)


# --- the colour scale, shared by the terminal and the images -----------------------------------

#: Below this many minutes the colour scale is linear; above it, logarithmic (one step per
#: factor of 10). Waits span from seconds to weeks; a linear scale would paint every panel
#: but the worst one in a single colour.
LINEAR_BELOW_MINUTES = 1.0


def scale_forward(minutes: npt.ArrayLike) -> FloatArray:
    """Position on the colour scale of a wait in minutes: ``m`` below 1, ``1 + log10(m)``
    above (continuous and increasing; 0 -> 0, 1 -> 1, 10 -> 2, 100 -> 3 ...)."""
    m = np.asarray(minutes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(
            m <= LINEAR_BELOW_MINUTES,
            m / LINEAR_BELOW_MINUTES,
            1.0 + np.log10(np.maximum(m, LINEAR_BELOW_MINUTES) / LINEAR_BELOW_MINUTES),
        )
    return out


def scale_inverse(position: npt.ArrayLike) -> FloatArray:
    """The wait in minutes at a position of the colour scale (inverse of
    :func:`scale_forward`)."""
    p = np.asarray(position, dtype=np.float64)
    out: FloatArray = np.where(
        p <= 1.0, p * LINEAR_BELOW_MINUTES, LINEAR_BELOW_MINUTES * 10.0 ** (p - 1.0)
    )
    return out


def scale_max(grids: Iterable[WaitGrid]) -> float:
    """The top of a colour scale shared by ``grids``: their largest mean wait in minutes
    (at least 1 minute, so that a run without waiting still has a scale)."""
    top = 0.0
    for grid in grids:
        means = grid.mean_minutes
        if np.isfinite(means).any():
            top = max(top, float(np.nanmax(means)))
    return max(top, LINEAR_BELOW_MINUTES)
