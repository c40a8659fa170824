"""Heatmap images (PNG, SVG) of mean wait per queue and time bin, drawn with matplotlib.

One panel per setup, stacked on a shared time axis and one shared colour scale (see
:func:`queuesim.results.heatmap.scale_forward`: linear below a minute, logarithmic above; or
linear throughout), queues as rows in the site file's order with their job counts - or, when
every setup has a single queue, one panel with a row per setup -, values written in the cells
when they fit, a colour bar labelled "mean wait
(minutes)". Bins in which no job was submitted are hatched, distinct from a zero wait.

Drawing never needs a display: the figure is a plain :class:`matplotlib.figure.Figure`
rendered by the Agg canvas, and pyplot's global state is not touched. Output is
byte-deterministic: SVG ids come from a fixed ``svg.hashsalt``, and the date and software
stamps matplotlib would write are left out. Files are written atomically.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from queuesim.common.atomic import atomic_path
from queuesim.results.heatmap import (
    DAY,
    FloatArray,
    WaitGrid,
    scale_forward,
    scale_inverse,
    scale_max,
)

__all__ = [
    "COLORMAP",
    "EMPTY_LABEL",
    "Panel",
    "cell_labels",
    "heatmap_figure",
    "heatmap_panels",
    "render_figure",
    "render_heatmap",
    "write_heatmap",
]

#: The colour map: pale yellow for short waits, dark red for long ones.
COLORMAP = "YlOrRd"
#: Legend entry of a hatched cell.
EMPTY_LABEL = "no job submitted"
COLORBAR_LABEL = "mean wait (minutes)"
_HATCH = "////"
_HATCH_COLOR = "#b0b0b0"
#: Above this many cells per panel, an SVG holds the cells as one embedded bitmap (labels
#: stay vector): thousands of vector rectangles make files of megabytes that browsers
#: draw slowly.
_VECTOR_CELLS = 2000
_RC: Any = {
    "svg.hashsalt": "queuesim",  # stable ids in SVG output
    "svg.fonttype": "none",  # text stays text: searchable, small, no font outlines embedded
    "hatch.color": _HATCH_COLOR,
    "hatch.linewidth": 0.6,
    "font.size": 9,
}
_DPI = 110
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
}


def _ticks(top: float) -> list[float]:
    """Colour bar ticks in minutes: 0, 1, 10, 100 ... up to ``top``."""
    ticks = [0.0, 1.0]
    while ticks[-1] * 10 <= top:
        ticks.append(ticks[-1] * 10)
    return [t for t in ticks if t <= top]


@dataclass(frozen=True)
class Panel:
    """One panel of the figure: a title, row labels top to bottom, and per row and bin the
    mean wait in minutes (NaN: no job submitted)."""

    title: str
    labels: tuple[str, ...]
    minutes: FloatArray


def heatmap_panels(grids: Mapping[str, WaitGrid]) -> list[Panel]:
    """The panels to draw. One per setup, queues as rows - except when every setup has a
    single queue (a one-queue site): then one panel with a row per setup, so that the
    setups stand next to each other instead of as thin strips."""
    single = len(grids) > 1 and all(len(g.queues) == 1 for g in grids.values())
    if single and len({g.queues for g in grids.values()}) == 1:
        queue = next(iter(grids.values())).queues[0]
        labels = tuple(f"{name} ({int(g.jobs.sum()):,})" for name, g in grids.items())
        minutes = np.vstack([g.mean_minutes for g in grids.values()])
        return [Panel(f"queue {queue}: one row per setup", labels, minutes)]
    return [
        Panel(
            name,
            tuple(f"{q} ({n:,})" for q, n in zip(g.queues, g.queue_jobs().tolist(), strict=True)),
            g.mean_minutes,
        )
        for name, g in grids.items()
    ]


def short_minutes(minutes: float) -> str:
    """A cell's annotation: ``45s``, ``12m``, ``5.2h``, ``3.1d`` (2 to 4 characters)."""
    if minutes < 1:
        return f"{minutes * 60:.0f}s"
    if minutes < 60:
        return f"{minutes:.0f}m"
    if minutes < 48 * 60:
        hours = minutes / 60
        return f"{hours:.1f}h" if hours < 10 else f"{hours:.0f}h"
    days = minutes / 1440
    return f"{days:.1f}d" if days < 10 else f"{days:.0f}d"


#: Cells are annotated with their value when a panel has at most this many columns ...
ANNOTATE_MAX_BINS = 40
#: ... and the figure at most this many rows in all.
ANNOTATE_MAX_ROWS = 30


def cell_labels(panels: list[Panel]) -> list[list[tuple[int, int, str]]]:
    """Per panel, the ``(row, column, text)`` written in the cells: every cell with a job
    when values fit (few enough columns and rows), else none."""
    rows = sum(len(p.labels) for p in panels)
    out: list[list[tuple[int, int, str]]] = []
    for panel in panels:
        bins = panel.minutes.shape[1]
        if bins > ANNOTATE_MAX_BINS or rows > ANNOTATE_MAX_ROWS:
            out.append([])
            continue
        out.append(
            [
                (i, j, short_minutes(float(v)))
                for (i, j), v in np.ndenumerate(panel.minutes)
                if np.isfinite(v)
            ]
        )
    return out


def heatmap_figure(
    grids: Mapping[str, WaitGrid], *, title: str | None = None, log: bool = True
) -> Any:
    """The figure of ``grids`` (same bins), ready to save: the panels of
    :func:`heatmap_panels`, values written in the cells where they fit (:func:`cell_labels`).
    ``log=False`` draws a linear colour scale instead of the linear-then-log one."""
    import matplotlib.dates as mdates
    from matplotlib import colormaps
    from matplotlib.colors import FuncNorm, Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if not grids:
        raise ValueError("no grids to draw")
    first = next(iter(grids.values()))
    clock, edges = first.clock, first.edges
    panels = heatmap_panels(grids)
    notes = cell_labels(panels)
    rows = [max(len(p.labels), 1) for p in panels]
    row_inches = 0.27 if not any(notes) else 0.34
    height = 1.3 + sum(0.6 + row_inches * max(r, 2) for r in rows)
    fig = Figure(figsize=(11.0, height), dpi=_DPI, layout="constrained")
    axes = fig.subplots(
        len(panels), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": rows}
    )[:, 0]

    top = scale_max(grids.values())
    if log:
        norm: Any = FuncNorm((scale_forward, scale_inverse), vmin=0.0, vmax=top)
    else:
        norm = Normalize(vmin=0.0, vmax=top)
    cmap = colormaps[COLORMAP].with_extremes(bad=(0.0, 0.0, 0.0, 0.0))  # empty: see-through
    if clock.dated:
        tz = clock.tz
        x = mdates.date2num([clock.to_datetime(float(e)) for e in edges])  # type: ignore[no-untyped-call]
        xlabel = f"submit date ({clock.zone_name}); one column per {_bin_words(first)}"
    else:
        x = edges / DAY
        xlabel = f"days since trace start (submit time); one column per {_bin_words(first)}"

    mesh = None
    for ax, panel, cells in zip(axes, panels, notes, strict=True):
        values = np.ma.masked_invalid(panel.minutes)
        y = np.arange(len(panel.labels) + 1, dtype=np.float64)
        ax.patch.set_facecolor("white")
        ax.patch.set_hatch(_HATCH)
        ax.patch.set_edgecolor(_HATCH_COLOR)
        raster = values.size > _VECTOR_CELLS
        mesh = ax.pcolormesh(x, y, values, cmap=cmap, norm=norm, shading="flat", rasterized=raster)
        for i, j, text in cells:
            dark = norm(float(panel.minutes[i, j])) > 0.6
            ax.text(
                (float(x[j]) + float(x[j + 1])) / 2,
                i + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )
        ax.set_yticks(y[:-1] + 0.5, labels=list(panel.labels))
        ax.set_ylim(len(panel.labels), 0)  # first queue of the site file on top
        ax.tick_params(axis="y", length=0)
        ax.set_title(panel.title, loc="left", fontsize=10, fontweight="bold")
    axes[0].set_xlim(float(x[0]), float(x[-1]))
    if clock.dated:
        locator = mdates.AutoDateLocator(tz=tz, minticks=4, maxticks=12)  # type: ignore[no-untyped-call]
        formatter = mdates.ConciseDateFormatter(locator, tz=tz)  # type: ignore[no-untyped-call]
        axes[-1].xaxis.set_major_locator(locator)
        axes[-1].xaxis.set_major_formatter(formatter)
    axes[-1].set_xlabel(xlabel)
    single = len(panels) == 1 and len(grids) > 1
    fig.supylabel(("setup" if single else "queue") + " (jobs submitted)", fontsize=9)
    assert mesh is not None
    ticks = _ticks(top)
    bar = fig.colorbar(mesh, ax=list(axes), ticks=ticks, fraction=0.04, pad=0.01, aspect=30)
    bar.ax.set_yticklabels([f"{t:,.0f}" for t in ticks])
    bar.set_label(COLORBAR_LABEL)
    if any((g.jobs == 0).any() for g in grids.values()):
        empty = Patch(facecolor="white", edgecolor=_HATCH_COLOR, hatch=_HATCH, label=EMPTY_LABEL)
        fig.legend(handles=[empty], loc="outside lower right", frameon=False, fontsize=8)
    fig.suptitle(
        title or f"Mean wait per queue and {_bin_words(first)}, by submit time",
        fontsize=11,
        x=0.01,
        ha="left",
    )
    return fig


def _bin_words(grid: WaitGrid) -> str:
    base = grid.spec.label if grid.spec.kind != "seconds" else f"{grid.spec.label} bin"
    return f"{grid.merged} x {base}" if grid.merged > 1 else base


def render_figure(build: Callable[[], Any], fmt: str) -> bytes:
    """The figure ``build()`` makes, as ``png`` or ``svg`` bytes, in the house style and
    byte-deterministic (every report figure is rendered here)."""
    return render_figure_as(build, (fmt,))[0]


def render_figure_as(build: Callable[[], Any], formats: Sequence[str]) -> list[bytes]:
    """The figure ``build()`` makes, built once and saved in each of ``formats`` (``png``,
    ``svg``): a report's figure is drawn as both, and building it (a Gantt chart's bars, a
    layout) costs as much as saving it."""
    import matplotlib

    for fmt in formats:
        if fmt not in _METADATA:
            raise ValueError(f"format must be png or svg, got {fmt!r}")
    out = []
    with matplotlib.rc_context(_RC):
        fig = build()
        for fmt in formats:
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt], dpi=_DPI)
            out.append(buffer.getvalue())
            # the layout is made once: the next format keeps the axes where this one put
            # them (constrained layout measures every tick label again, a third of a
            # many-panel figure's saving, to move them by about a point)
            fig.set_layout_engine("none")
    return out


def render_heatmap(
    grids: Mapping[str, WaitGrid], fmt: str, *, title: str | None = None, log: bool = True
) -> bytes:
    """The image of ``grids`` as ``png`` or ``svg`` bytes (byte-deterministic)."""
    return render_figure(lambda: heatmap_figure(grids, title=title, log=log), fmt)


def render_heatmap_as(
    grids: Mapping[str, WaitGrid], formats: Sequence[str], *, log: bool = True
) -> list[bytes]:
    """The image of ``grids`` in each of ``formats``, drawn once (byte-deterministic)."""
    return render_figure_as(lambda: heatmap_figure(grids, log=log), formats)


def write_heatmap(
    path: str | Path, grids: Mapping[str, WaitGrid], *, title: str | None = None
) -> Path:
    """Write the image to ``path`` (``.png`` or ``.svg``) atomically."""
    path = Path(path)
    data = render_heatmap(grids, path.suffix.lstrip(".").lower(), title=title)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path
