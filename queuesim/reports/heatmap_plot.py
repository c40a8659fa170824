"""Heatmap images (PNG, SVG) of mean wait per queue and time bin, drawn with matplotlib.

One panel per setup, stacked on a shared time axis and one shared colour scale (see
:func:`queuesim.results.heatmap.scale_forward`: linear below a minute, logarithmic above), queues
as rows in the site file's order with their job counts, a colour bar labelled "mean wait
(minutes)". Bins in which no job was submitted are hatched, distinct from a zero wait.

Drawing never needs a display: the figure is a plain :class:`matplotlib.figure.Figure`
rendered by the Agg canvas, and pyplot's global state is not touched. Output is
byte-deterministic: SVG ids come from a fixed ``svg.hashsalt``, and the date and software
stamps matplotlib would write are left out. Files are written atomically.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from queuesim.common.atomic import atomic_path
from queuesim.results.heatmap import (
    DAY,
    WaitGrid,
    scale_forward,
    scale_inverse,
    scale_max,
)

__all__ = ["COLORMAP", "EMPTY_LABEL", "heatmap_figure", "render_heatmap", "write_heatmap"]

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


def heatmap_figure(grids: Mapping[str, WaitGrid], *, title: str | None = None) -> Any:
    """The figure of ``grids`` (one panel each, same bins), ready to save."""
    import matplotlib.dates as mdates
    from matplotlib import colormaps
    from matplotlib.colors import FuncNorm
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if not grids:
        raise ValueError("no grids to draw")
    first = next(iter(grids.values()))
    clock, edges = first.clock, first.edges
    rows = [max(len(g.queues), 1) for g in grids.values()]
    height = 1.3 + sum(0.6 + 0.27 * max(r, 2) for r in rows)
    fig = Figure(figsize=(11.0, height), dpi=_DPI, layout="constrained")
    axes = fig.subplots(
        len(grids), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": rows}
    )[:, 0]

    top = scale_max(grids.values())
    norm = FuncNorm((scale_forward, scale_inverse), vmin=0.0, vmax=top)
    cmap = colormaps[COLORMAP].with_extremes(bad=(0.0, 0.0, 0.0, 0.0))  # empty: see-through
    if clock.dated:
        tz = clock.tz
        x = mdates.date2num([clock.to_datetime(float(e)) for e in edges])  # type: ignore[no-untyped-call]
        xlabel = f"submit date ({clock.zone_name}); one column per {_bin_words(first)}"
    else:
        x = edges / DAY
        xlabel = f"days since trace start (submit time); one column per {_bin_words(first)}"

    mesh = None
    for ax, (name, grid) in zip(axes, grids.items(), strict=True):
        values = np.ma.masked_invalid(grid.mean_minutes)
        y = np.arange(len(grid.queues) + 1, dtype=np.float64)
        ax.patch.set_facecolor("white")
        ax.patch.set_hatch(_HATCH)
        ax.patch.set_edgecolor(_HATCH_COLOR)
        raster = values.size > _VECTOR_CELLS
        mesh = ax.pcolormesh(x, y, values, cmap=cmap, norm=norm, shading="flat", rasterized=raster)
        counts = grid.queue_jobs()
        ax.set_yticks(
            y[:-1] + 0.5,
            labels=[f"{q} ({n:,})" for q, n in zip(grid.queues, counts.tolist(), strict=True)],
        )
        ax.set_ylim(len(grid.queues), 0)  # first queue of the site file on top
        ax.tick_params(axis="y", length=0)
        ax.set_title(name, loc="left", fontsize=10, fontweight="bold")
    axes[0].set_xlim(float(x[0]), float(x[-1]))
    if clock.dated:
        locator = mdates.AutoDateLocator(tz=tz, minticks=4, maxticks=12)  # type: ignore[no-untyped-call]
        formatter = mdates.ConciseDateFormatter(locator, tz=tz)  # type: ignore[no-untyped-call]
        axes[-1].xaxis.set_major_locator(locator)
        axes[-1].xaxis.set_major_formatter(formatter)
    axes[-1].set_xlabel(xlabel)
    fig.supylabel("queue (jobs submitted)", fontsize=9)
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


def render_heatmap(grids: Mapping[str, WaitGrid], fmt: str, *, title: str | None = None) -> bytes:
    """The image of ``grids`` as ``png`` or ``svg`` bytes (byte-deterministic)."""
    import matplotlib

    if fmt not in _METADATA:
        raise ValueError(f"format must be png or svg, got {fmt!r}")
    with matplotlib.rc_context(_RC):
        fig = heatmap_figure(grids, title=title)
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt], dpi=_DPI)
    return buffer.getvalue()


def write_heatmap(
    path: str | Path, grids: Mapping[str, WaitGrid], *, title: str | None = None
) -> Path:
    """Write the image to ``path`` (``.png`` or ``.svg``) atomically."""
    path = Path(path)
    data = render_heatmap(grids, path.suffix.lstrip(".").lower(), title=title)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path
