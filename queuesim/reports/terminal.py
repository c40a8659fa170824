"""Terminal rendering of wait heatmaps with rich, and of a comparison through the report
model's terminal renderer (:mod:`.render_text`) with its heatmap drawn here.

Only layout lives here: the numbers come from :mod:`queuesim.results.comparison` and
:mod:`queuesim.results.heatmap`. Everything fits the console's width: a heatmap with more
bins than columns merges adjacent bins (exactly: from summed waits and job counts) and says
so.

Heatmap cells read without colour too: a bar's height grows with the mean wait (``▁`` to
``█``, eight levels on the shared scale of :func:`queuesim.results.heatmap.scale_forward`), colour
repeats it, and ``·`` marks a bin in which no job was submitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime

import numpy as np
from rich import box
from rich.color import Color
from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from queuesim.reports.summary import spaced
from queuesim.results.comparison import Comparison
from queuesim.results.heatmap import DAY, BinSpec, WaitGrid, scale_forward, scale_max

__all__ = [
    "BLOCKS",
    "EMPTY_CELL",
    "heatmap_renderable",
    "print_comparison",
    "titled_table",
]

#: Cell characters from the shortest to the longest mean wait.
BLOCKS = "▁▂▃▄▅▆▇█"
#: A bin in which no job was submitted.
EMPTY_CELL = "·"
_LABEL_MAX = 24


def titled_table(title: str, caption: str | None = None) -> Table:
    """A table in the house style: bold title and caption on the left, a rule under the
    header, no frame."""
    return Table(
        title=Text(title, style="bold"),
        title_justify="left",
        caption=caption,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )


# --- heatmaps --------------------------------------------------------------------------------


def _level_colors() -> list[Style]:
    from matplotlib import colormaps

    from queuesim.reports.heatmap_plot import COLORMAP

    cmap = colormaps[COLORMAP]
    styles = []
    for k in range(len(BLOCKS)):
        r, g, b, _ = cmap((k + 0.5) / len(BLOCKS))
        styles.append(Style(color=Color.from_rgb(255 * r, 255 * g, 255 * b)))
    return styles


def _levels(means: np.ndarray, top: float) -> np.ndarray:
    """Level 0..7 of each mean (minutes) on the shared scale; -1 for an empty bin."""
    position = scale_forward(np.nan_to_num(means, nan=0.0)) / float(scale_forward(top))
    levels = np.minimum(len(BLOCKS) - 1, np.floor(position * len(BLOCKS))).astype(np.int64)
    return np.where(np.isnan(means), -1, levels)


def _short(minutes: float) -> str:
    if minutes >= 9_950:
        return f"{minutes / 1000:,.0f}k"
    if minutes >= 999.5:
        return f"{minutes / 1000:.1f}k"
    if minutes >= 10 or minutes == 0:
        return f"{minutes:,.0f}"
    return f"{minutes:.1f}"


def _legend(top: float, styles: list[Style]) -> Text:
    """``mean wait (minutes): · none  ▁ 0+  ▂ 0.7+ ...``: each block from its number up."""
    from queuesim.results.heatmap import scale_inverse

    text = Text("mean wait (minutes):  ")
    text.append(EMPTY_CELL, style="dim")
    text.append(" none  ")
    step = float(scale_forward(top)) / len(BLOCKS)
    for k, block in enumerate(BLOCKS):
        text.append(block, style=styles[k])
        text.append(f" {_short(float(scale_inverse(k * step)))}+  ")
    text.append(f"(max {_short(top)})")
    return text


def _per_column(grid: WaitGrid, factor: int) -> str:
    """``day``, ``12 days``, ``2 weeks``, ``6h bin``, ``18h bin`` ..."""
    spec = grid.spec
    if spec.kind != "seconds":
        return spec.kind if factor == 1 else f"{factor} {spec.kind}s"
    return f"{BinSpec('seconds', spec.width * factor).label} bin"


_Period = tuple[Callable[[datetime], object], Callable[[datetime], str]]

#: Calendar periods to mark on a dated time axis, finest first: (key, label).
_DATED_PERIODS: tuple[_Period, ...] = (
    (lambda t: t.date(), lambda t: f"{t.day} {t:%b}"),
    (lambda t: t.isocalendar()[:2], lambda t: f"{t.day} {t:%b}"),
    (lambda t: (t.year, t.month), lambda t: f"{t.year}" if t.month == 1 else f"{t:%b}"),
    (
        lambda t: (t.year, (t.month - 1) // 3),
        lambda t: f"{t.year}" if t.month == 1 else f"{t:%b}",
    ),
    (lambda t: t.year, lambda t: f"{t.year}"),
)


def _place(ticks: list[tuple[int, str]], cell: int, columns: int) -> str | None:
    """The axis line with ``label`` at ``column * cell`` for each tick, or None if two
    labels would touch or one would run past the cells."""
    line = ""
    for column, label in ticks:
        at = column * cell
        if line and at < len(line) + 1:
            return None
        line = line.ljust(at) + label
    return line if len(line) <= columns * cell else None


def _axis(grid: WaitGrid, cell: int) -> str:
    """A line of time labels above the cells: each label sits over the column in which its
    period (day, week, month, quarter, year; or a number of days) begins, choosing the
    finest period whose labels do not touch. Months are named, January by its year (the
    heading gives the whole span with years)."""
    starts, ends = grid.edges[:-1], grid.edges[1:]
    if grid.clock.dated:
        # the last second before each column, and the last second of each column
        before = [grid.clock.to_datetime(float(x) - 1.0) for x in starts]
        last = [grid.clock.to_datetime(float(x) - 1.0) for x in ends]
        for key, label in _DATED_PERIODS:
            ticks = [
                (i, label(e))  # a period begins inside column i: the one ``e`` lies in
                for i, (b, e) in enumerate(zip(before, last, strict=True))
                if key(b) != key(e)
            ]
            line = _place(ticks, cell, len(starts))
            if line is not None:
                return line
        return ""
    step = 1.0
    for _ in range(40):
        ticks = []
        for i, (b, e) in enumerate(zip(starts, ends, strict=True)):
            k = math.floor((e - 1.0) / DAY / step)
            if math.floor((b - 1.0) / DAY / step) != k:
                ticks.append((i, f"day {k * step:g}"))
        line = _place(ticks, cell, len(starts))
        if line is not None:
            return line
        step *= 2.5 if str(step).startswith("2") else 2.0
    return ""


def heatmap_renderable(grids: Mapping[str, WaitGrid], width: int) -> RenderableType:
    """Every grid as rows of coloured blocks on one scale, fitted to ``width`` columns."""
    first = next(iter(grids.values()))
    label_width = min(
        _LABEL_MAX,
        max(len(f"{q} ({n:,})") for g in grids.values() for q, n in _queue_counts(g)),
    )
    room = max(10, width - label_width - 2)
    factor = max(1, math.ceil(first.bins / room))
    fitted = {name: g.coarsen(factor) for name, g in grids.items()}
    sample = next(iter(fitted.values()))
    cell = 2 if sample.bins * 2 <= room else 1
    top = scale_max(fitted.values())
    styles = _level_colors()
    zone = f" ({sample.clock.zone_name})" if sample.clock.dated else ""
    per = _per_column(first, factor)
    span = ""
    if sample.clock.dated:
        begin = sample.clock.to_datetime(float(sample.edges[0]))
        end = sample.clock.to_datetime(float(sample.edges[-1]) - 1.0)
        span = f", {begin.day} {begin:%b %Y} to {end.day} {end:%b %Y}"
    parts: list[RenderableType] = [
        Text.assemble(
            ("Mean wait per queue over time, by submit time", "bold"),
            f"\none column per {per}{span}{zone}",
        )
    ]
    axis = _axis(sample, cell)
    for name, grid in fitted.items():
        lines = Text()
        lines.append(name, style="bold")
        lines.append("\n" + " " * (label_width + 2) + axis)
        levels = _levels(grid.mean_minutes, top)
        for r, (queue, n) in enumerate(_queue_counts(grid)):
            label = f"{queue} ({n:,})"
            if len(label) > label_width:
                label = label[: label_width - 1] + "…"
            lines.append("\n" + label.ljust(label_width + 2))
            for level in levels[r].tolist():
                if level < 0:
                    lines.append(EMPTY_CELL * cell, style="dim")
                else:
                    lines.append(BLOCKS[level] * cell, style=styles[level])
        lines.no_wrap = True
        lines.overflow = "crop"
        parts.append(lines)
    parts.append(_legend(top, styles))
    return Group(*spaced(parts))


def _queue_counts(grid: WaitGrid) -> list[tuple[str, int]]:
    return list(zip(grid.queues, grid.queue_jobs().tolist(), strict=True))


# --- the whole comparison --------------------------------------------------------------------


def print_comparison(
    console: Console,
    comp: Comparison,
    *,
    grids: Mapping[str, WaitGrid] | None = None,
    command: str | None = None,
) -> None:
    """The comparison's report (:func:`~.comparison_report.report_document`, the one a
    bundle's ``report.md`` renders) at the console's width, printed by the report model's
    terminal renderer: its heatmap drawn as blocks (``grids``; default: one column per day),
    without the bundle's lists of figures and files."""
    from queuesim.reports.comparison_report import SECTIONS, report_document
    from queuesim.reports.render_text import print_report

    grids = comp.heatmap("day") if grids is None else grids
    report = report_document(comp, grids, None, command, [])
    drawn = {SECTIONS[5]: heatmap_renderable(grids, console.width)}
    print_report(console, report, drawings=drawn, skip=(SECTIONS[6], SECTIONS[8]))
