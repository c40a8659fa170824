"""Terminal rendering of a comparison and of wait heatmaps, with rich.

Only layout lives here: the numbers come from :mod:`queuesim.results.comparison` and
:mod:`queuesim.results.heatmap`. Everything fits the console's width: tables wrap their headers,
and a heatmap with more bins than columns merges adjacent bins (exactly: from summed waits
and job counts) and says so.

Heatmap cells read without colour too: a bar's height grows with the mean wait (``▁`` to
``█``, eight levels on the shared scale of :func:`queuesim.results.heatmap.scale_forward`), colour
repeats it, and ``·`` marks a bin in which no job was submitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime

import numpy as np
import pandas as pd
from rich import box
from rich.color import Color
from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from queuesim.reports.precision import marked, metric_texts
from queuesim.reports.summary import sig3, spaced
from queuesim.results.comparison import METRIC_COLUMNS, Comparison, best_marks
from queuesim.results.heatmap import DAY, BinSpec, WaitGrid, scale_forward, scale_max
from queuesim.site.units import format_duration

__all__ = [
    "BLOCKS",
    "EMPTY_CELL",
    "against_table",
    "comparison_renderable",
    "heatmap_renderable",
    "losers_table",
    "metrics_table",
    "print_comparison",
]

#: Cell characters from the shortest to the longest mean wait.
BLOCKS = "▁▂▃▄▅▆▇█"
#: A bin in which no job was submitted.
EMPTY_CELL = "·"
BEST = Style(bold=True, color="green")
_LABEL_MAX = 24

#: Display header and formatter of each compared metric.
_METRIC_HEADERS = {
    "awwt": "AWWT",
    "awrt": "AWRT",
    "awsd": "AWSD",
    "anuwt": "ANUWT",
    "nuwt_dev": "NUWT-dev",
    "mean_wait": "mean\nwait",
    "mean_bounded_slowdown": "mean\nbounded\nslowdown",
    "utilization": "utili-\nzation",
}


def _duration(x: float) -> str:
    return format_duration(x) if math.isfinite(x) else "-"


def _decimal2(x: float) -> str:
    return f"{x:,.2f}" if math.isfinite(x) else "-"


def _sig(x: float) -> str:
    return sig3(x) if math.isfinite(x) else "-"


def _percent(x: float) -> str:
    return f"{x:.1f} %" if math.isfinite(x) else "-"


def _hours(x: float) -> str:
    return f"{x:,.1f} h" if math.isfinite(x) else "-"


def _signed_hours(x: float) -> str:
    return f"{x:+,.1f} h" if math.isfinite(x) else "-"


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


#: Table 1's columns in two groups, shown as two tables when one does not fit: the
#: paper's criteria, then the plain ones.
_METRIC_GROUPS = (
    ("awwt", "awrt", "awsd", "anuwt", "nuwt_dev"),
    ("mean_wait", "mean_bounded_slowdown", "utilization"),
)
_AGAINST_GROUPS = (
    (
        ("users\nimproved", "users_improved_pct", _percent),
        ("jobs\nimproved", "jobs_improved_pct", _percent),
        ("mean wait\ndecrease", "mean_improvement_h", _hours),
    ),
    (
        ("users\nworsened", "users_deteriorated_pct", _percent),
        ("jobs\nworsened", "jobs_deteriorated_pct", _percent),
        ("mean wait\nincrease", "mean_deterioration_h", _hours),
    ),
)


def _fits(table: Table, width: int) -> bool:
    console = Console(width=10_000, color_system=None)
    return console.measure(table).maximum <= width


def _split(build: Callable[[list[int], bool], Table], groups: int, width: int) -> list[Table]:
    """One table of every column group if it fits ``width``, else one table per group."""
    whole = build(list(range(groups)), False)
    if _fits(whole, width):
        return [whole]
    return [build([g], g > 0) for g in range(groups)]


def metrics_table(table: pd.DataFrame, width: int = 100) -> list[Table]:
    """Paper ``004``'s Table 1: one row per setup, the best of each column in bold green.

    Returns one table, or two (the paper's criteria, then the others) when one would not
    fit ``width`` columns."""
    marks = best_marks(table)
    texts = {c: metric_texts(c, table[c].astype(float).tolist()) for c in METRIC_COLUMNS}

    def build(groups: list[int], continued: bool) -> Table:
        title = "Performance and fairness" + (" (continued)" if continued else "")
        last = groups[-1] == len(_METRIC_GROUPS) - 1
        caption = (
            "best of each column in bold green, (tie) when setups share it; lower is better, "
            "except utilization"
            if last
            else None
        )
        out = titled_table(title, caption)
        out.add_column("setup", overflow="fold")
        columns = [c for g in groups for c in _METRIC_GROUPS[g]]
        for column in columns:
            out.add_column(_METRIC_HEADERS[column], justify="right", no_wrap=True)
        for i, setup in enumerate(table.index):
            cells: list[RenderableType] = [str(setup)]
            for column in columns:
                mark = marks[column][str(setup)]
                text = marked(texts[column][i], mark)
                cells.append(Text(text, style=BEST if mark else ""))
            out.add_row(*cells)
        return out

    return _split(build, len(_METRIC_GROUPS), width)


def against_table(against: pd.DataFrame, baseline: str, width: int = 100) -> list[Table]:
    """Paper ``004``'s Table 2: how waits changed against ``baseline`` (one table, or two:
    improvements, then deteriorations, when one would not fit ``width``)."""
    matched = ", ".join(f"{int(n):,}" for n in against["matched_jobs"].unique()) or "0"
    caption = (
        f"improved / worsened: the job waited strictly less / more than under {baseline} "
        "(a user: their mean wait); decrease / increase: mean change in hours over those "
        f"jobs; jobs matched by job_id: {matched}"
    )

    def build(groups: list[int], continued: bool) -> Table:
        title = f"Wait times against {baseline}" + (" (continued)" if continued else "")
        last = groups[-1] == len(_AGAINST_GROUPS) - 1
        out = titled_table(title, caption if last else None)
        out.add_column("setup", overflow="fold")
        headers = [h for g in groups for h in _AGAINST_GROUPS[g]]
        for header, _, _ in headers:
            out.add_column(header, justify="right", no_wrap=True)
        for setup, row in against.iterrows():
            out.add_row(str(setup), *(fmt(float(row[column])) for _, column, fmt in headers))
        return out

    return _split(build, len(_AGAINST_GROUPS), width)


def losers_table(losers: pd.DataFrame, baseline: str, top: int) -> RenderableType:
    """The users whose mean wait grew the most, per setup."""
    title = f"Users who lost the most against {baseline} (top {top} per setup)"
    if losers.empty:
        return Text.assemble((title, "bold"), "\nno user's mean wait grew")
    out = titled_table(title, "mean wait over the user's jobs, in hours; ranked by its change")
    out.add_column("setup", overflow="fold")
    out.add_column("user", justify="right", no_wrap=True)
    out.add_column("jobs", justify="right", no_wrap=True)
    out.add_column(f"mean wait\n{baseline}", justify="right", no_wrap=True)
    out.add_column("mean wait\nsetup", justify="right", no_wrap=True)
    out.add_column("change", justify="right", no_wrap=True)
    previous = None
    for row in losers.to_dict(orient="records"):
        setup = str(row["setup"])
        out.add_row(
            setup if setup != previous else "",
            str(row["user"]),
            f"{int(row['jobs']):,}",
            _hours(float(row["baseline_mean_wait_h"])),
            _hours(float(row["mean_wait_h"])),
            _signed_hours(float(row["change_h"])),
        )
        previous = setup
    return out


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


def _cleaning(comp: Comparison) -> RenderableType:
    counts = {name: {k: v for k, v in r.cleaning.items() if v} for name, r in comp.runs.items()}
    distinct = {tuple(sorted(c.items())) for c in counts.values()}
    if len(distinct) == 1:
        only = next(iter(counts.values()))
        if not only:
            return Text("data cleaning: no jobs dropped or repaired", style="dim")
        listed = ", ".join(f"{reason} {n:,}" for reason, n in only.items())
        return Text(f"data cleaning (same for every setup): {listed}", style="dim")
    table = titled_table("Data cleaning (jobs per reason)")
    reasons = list(next(iter(comp.runs.values())).cleaning)
    shown = [r for r in reasons if any(c.get(r) for c in counts.values())]
    table.add_column("setup", overflow="fold")
    for reason in shown:
        table.add_column(reason.replace("_", " "), justify="right")
    for name, c in counts.items():
        table.add_row(name, *(f"{c.get(r, 0):,}" for r in shown))
    return table


def comparison_renderable(
    comp: Comparison, *, grids: Mapping[str, WaitGrid] | None = None, width: int = 100
) -> RenderableType:
    """The whole comparison: facts, Table 1, Table 2, losers, heatmaps, cleaning."""
    jobs = comp.table["jobs"]
    counted = f"{int(jobs.iloc[0]):,} jobs" if jobs.nunique() == 1 else "jobs: see below"
    head = Text.assemble(
        ("Comparison", "bold"),
        f" of {_setups(len(comp.results))} on {comp.workload or 'the workload'} ({counted}); "
        f"baseline {comp.baseline}",
    )
    parts: list[RenderableType] = [head, *metrics_table(comp.table, width)]
    if not comp.against_baseline.empty:
        parts.extend(against_table(comp.against_baseline, comp.baseline, width))
        parts.append(losers_table(comp.losers, comp.baseline, comp.top))
    if grids:
        parts.append(heatmap_renderable(grids, width))
    parts.append(_cleaning(comp))
    return Group(*spaced(parts))


def _setups(n: int) -> str:
    return f"{n} setup" if n == 1 else f"{n} setups"


def print_comparison(
    console: Console, comp: Comparison, *, grids: Mapping[str, WaitGrid] | None = None
) -> None:
    """Print :func:`comparison_renderable` at the console's width."""
    console.print(comparison_renderable(comp, grids=grids, width=console.width))
