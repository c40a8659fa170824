"""The report's figures beyond the heatmap, one function each, drawn with matplotlib
(imported only when a figure is drawn) from the numbers of :mod:`queuesim.results.timelines`:

* :func:`gantt_figure` - the jobs of a time window as bars over CPU rows, coloured by queue
  or user; :func:`diff_gantt_figure` - the same jobs' starts under two setups;
* :func:`queue_timeline_figure` - jobs waiting and CPUs busy over time, stacked by queue;
* :func:`wait_cdf_figure` - the distribution of waits per queue, setups overlaid;
* :func:`fairshare_figure` - the decayed usage of the heaviest users over time;
* :func:`winners_losers_figure` - each user's change of mean wait against the baseline,
  sized by CPU time, the top gainers and losers named.

Each returns a :class:`matplotlib.figure.Figure`; :func:`figure_bytes` renders one as PNG
or SVG (byte-deterministic, via :func:`.heatmap_plot.render_figure`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from queuesim.reports.heatmap_plot import render_figure, render_figure_as
from queuesim.results.timelines import (
    decayed_usage,
    gantt_rows,
    queue_timeline,
    start_shifts,
    user_changes,
    wait_cdf,
)

__all__ = [
    "diff_gantt_figure",
    "fairshare_figure",
    "figure_bytes",
    "figure_png_svg",
    "gantt_figure",
    "queue_timeline_figure",
    "wait_cdf_figure",
    "winners_losers_figure",
]

HOUR = 3600.0
_WIDTH = 11.0
_PALETTE = "tab20"


def figure_bytes(build: Callable[[], Any], fmt: str) -> bytes:
    """``build()``'s figure as ``png`` or ``svg`` bytes."""
    return render_figure(build, fmt)


def figure_png_svg(build: Callable[[], Any]) -> tuple[bytes, bytes]:
    """``build()``'s figure as PNG and SVG bytes, built once."""
    png, svg = render_figure_as(build, ("png", "svg"))
    return png, svg


def _figure(height: float, rows: int = 1, **grid: Any) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(_WIDTH, height), dpi=110, layout="constrained")
    axes = fig.subplots(rows, 1, squeeze=False, **grid)[:, 0]
    return fig, axes


def _colours(keys: Sequence[Any]) -> dict[Any, Any]:
    from matplotlib import colormaps

    cmap = colormaps[_PALETTE]
    return {k: cmap(i % cmap.N) for i, k in enumerate(keys)}


def gantt_figure(
    jobs: pd.DataFrame,
    start: float,
    end: float,
    total_cpus: int,
    *,
    colour_by: str = "queue",
    title: str = "Jobs running in the window",
) -> Any:
    """The jobs of ``[start, end)`` (trace seconds) as bars over CPU rows
    (:func:`~queuesim.results.timelines.gantt_rows`), coloured by ``queue`` or ``user``."""
    rows = gantt_rows(jobs, start, end, total_cpus)
    fig, (ax,) = _figure(4.5)
    keys = sorted(set(rows[colour_by].astype(str)))
    colours = _colours(keys)
    spans = zip(
        rows["start"].to_numpy(dtype=np.float64),
        rows["end"].to_numpy(dtype=np.float64),
        rows["bands"].tolist(),
        rows[colour_by].astype(str).tolist(),
        strict=True,
    )
    # every bar in one collection, drawn in the same order: a window of a busy machine has
    # a thousand bars or more, and an artist each cost seconds to lay out and save
    boxes, faces = [], []
    for begin, finish, bands, key in spans:
        x0, x1 = begin / HOUR, begin / HOUR + (finish - begin) / HOUR
        for first, stop in bands:
            boxes.append([(x0, first), (x0, stop), (x1, stop), (x1, first)])
            faces.append(colours[key])
    if boxes:
        from matplotlib.collections import PolyCollection

        ax.add_collection(
            PolyCollection(boxes, facecolors=faces, edgecolors="white", linewidth=0.3)
        )
    ax.axhline(total_cpus, color="black", linewidth=0.8)
    ax.set_xlim(start / HOUR, end / HOUR)
    top = max((b for bands in rows["bands"] for _, b in bands), default=total_cpus)
    ax.set_ylim(0, max(total_cpus, top))
    ax.set_xlabel("hours since trace start")
    ax.set_ylabel("CPUs (rows drawn, not the real CPU numbers)")
    ax.set_title(title, loc="left", fontsize=10, fontweight="bold")
    if len(keys) <= 20:
        from matplotlib.patches import Patch

        handles = [Patch(color=colours[k], label=k) for k in keys]
        ax.legend(handles=handles, title=colour_by, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def diff_gantt_figure(
    base: pd.DataFrame, other: pd.DataFrame, start: float, end: float, names: tuple[str, str]
) -> Any:
    """The jobs submitted in ``[start, end)``, one row each (submit order): the run under
    ``names[0]`` as a grey bar, under ``names[1]`` as a coloured one (red: started later,
    blue: earlier, green: same start)."""
    shifts = start_shifts(base, other, start, end)
    fig, (ax,) = _figure(max(2.5, 1.2 + 0.12 * len(shifts)))
    y = np.arange(len(shifts))
    ax.barh(
        y,
        (shifts["end_base"] - shifts["start_base"]) / HOUR,
        left=shifts["start_base"] / HOUR,
        height=0.8,
        color="#bbbbbb",
        label=names[0],
    )
    colour = np.where(
        shifts["shift"] > 0, "#c0392b", np.where(shifts["shift"] < 0, "#2e86c1", "#27ae60")
    )
    ax.barh(
        y,
        (shifts["end_other"] - shifts["start_other"]) / HOUR,
        left=shifts["start_other"] / HOUR,
        height=0.4,
        color=colour,
        label=names[1],
    )
    ax.set_ylim(len(shifts), -1)
    ax.set_yticks([])
    ax.set_ylabel("jobs, by submit time")
    ax.set_xlabel("hours since trace start")
    ax.set_title(
        f"Same jobs, {names[0]} (grey) and {names[1]} (red: later, blue: earlier)",
        loc="left",
        fontsize=10,
        fontweight="bold",
    )
    return fig


def _on_grid(
    timeline: pd.DataFrame, column: str, queues: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The step functions of ``column`` per queue on the union of their change times."""
    times = np.unique(timeline["time"].to_numpy(dtype=np.float64))
    values = []
    for queue in queues:
        mine = timeline[timeline["queue"] == queue]
        at = np.searchsorted(mine["time"].to_numpy(), times, side="right") - 1
        series = mine[column].to_numpy(dtype=np.float64)
        values.append(np.where(at >= 0, series[np.maximum(at, 0)], 0.0))
    return times, np.vstack(values)


#: Above this many change times, the areas of :func:`queue_timeline_figure` are rasterized
#: in its SVG (axes and text stay vectors).
RASTER_POINTS = 5_000


def queue_timeline_figure(
    jobs: pd.DataFrame, queues: Sequence[str], total_cpus: int, *, title: str = ""
) -> Any:
    """Jobs waiting (top) and utilization (bottom: busy CPUs / the machine's), stacked by
    queue, over time (:func:`~queuesim.results.timelines.queue_timeline`)."""
    timeline = queue_timeline(jobs, queues)
    names = list(dict.fromkeys(timeline["queue"]))
    times, waiting = _on_grid(timeline, "waiting", names)
    _, busy = _on_grid(timeline, "busy_cpus", names)
    fig, (top, bottom) = _figure(5.5, 2, sharex=True)
    colours = _colours(names)
    x = times / HOUR
    # a long trace's areas have a corner per change of any queue (100,000 jobs: 90 MB of
    # SVG paths); past RASTER_POINTS they are drawn as an image inside the SVG
    flat = len(times) > RASTER_POINTS
    palette = [colours[n] for n in names]
    top.stackplot(x, waiting, labels=names, colors=palette, step="post", rasterized=flat)
    bottom.stackplot(x, 100 * busy / total_cpus, colors=palette, step="post", rasterized=flat)
    top.set_ylabel("jobs waiting")
    bottom.set_ylabel("utilization (%)")
    bottom.set_ylim(0, 100)
    bottom.set_xlabel("hours since trace start")
    top.set_title(
        title or "Queue length and utilization over time, stacked by queue",
        loc="left",
        fontsize=10,
        fontweight="bold",
    )
    if len(names) <= 20:
        top.legend(loc="upper left", bbox_to_anchor=(1, 1), title="queue")
    return fig


#: At most this many queue panels in the wait CDF (the busiest), then one for all jobs.
CDF_PANELS = 8


def wait_cdf_figure(runs: Mapping[str, pd.DataFrame], queues: Sequence[str]) -> Any:
    """Per queue (the :data:`CDF_PANELS` busiest of the first run, and all jobs), the share
    of jobs that waited at most x, one line per setup; waits on a log axis (a zero wait is
    drawn at one second)."""
    first = next(iter(runs.values()))
    counts = first["queue"].astype(str).value_counts()
    shown = [q for q in queues if q in counts.index]
    shown = sorted(shown, key=lambda q: -int(counts[q]))[:CDF_PANELS]
    panels = [*shown, None] if len(shown) > 1 else [None]
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(_WIDTH, 0.6 + 2.6 * rows), dpi=110, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True).ravel()
    for ax, queue in zip(axes, panels, strict=False):
        for name, jobs in runs.items():
            mine = jobs if queue is None else jobs[jobs["queue"].astype(str) == queue]
            values, share = wait_cdf(mine["wait"])
            ax.step(np.maximum(values, 1.0), share, where="post", label=name)
        ax.set_xscale("log")
        ax.set_title("all queues" if queue is None else f"queue {queue}", loc="left", fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=8)
    fig.supxlabel("wait (seconds, log scale)")
    fig.supylabel("share of jobs waiting at most")
    return fig


def fairshare_figure(
    jobs: pd.DataFrame, half_life: float, *, top: int = 8, points: int = 200, by: str = "user"
) -> Any:
    """The decayed usage (CPU-hours) of the ``top`` accounts with the most CPU time, over
    the run (:func:`~queuesim.results.timelines.decayed_usage`)."""
    heavy = (jobs["cpus"] * (jobs["end"] - jobs["start"])).groupby(jobs[by]).sum()
    chosen = heavy.sort_values(ascending=False, kind="mergesort").index[:top]
    mine = jobs[jobs[by].isin(chosen)]
    times = np.linspace(float(jobs["submit"].min()), float(jobs["end"].max()), points)
    usage = decayed_usage(mine, half_life, times, by=by)
    fig, (ax,) = _figure(4.0)
    for account in chosen:
        ax.plot(times / HOUR, usage[account] / HOUR, label=f"{by} {account}")
    ax.set_xlabel("hours since trace start")
    ax.set_ylabel("decayed usage (CPU-hours)")
    ax.set_title(
        f"Fairshare: decayed usage of the {len(chosen)} heaviest {by}s "
        f"(half-life {half_life / HOUR:g} h)",
        loc="left",
        fontsize=10,
        fontweight="bold",
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1), fontsize=8)
    return fig


def winners_losers_figure(
    base: pd.DataFrame, other: pd.DataFrame, names: tuple[str, str], *, top: int = 5
) -> Any:
    """Each user's change of mean wait (hours) under ``names[1]`` against ``names[0]``,
    against their mean wait under the baseline; marker area by CPU time; the ``top`` gainers
    and losers named (:func:`~queuesim.results.timelines.user_changes`)."""
    changes = user_changes(base, other)
    fig, (ax,) = _figure(4.5)
    size = 20 + 400 * changes["cpu_time"] / max(float(changes["cpu_time"].max()), 1.0)
    colour = np.where(
        changes["change"] > 0, "#c0392b", np.where(changes["change"] < 0, "#2e86c1", "#999999")
    )
    ax.scatter(
        changes["mean_wait_base"] / HOUR, changes["change"] / HOUR, s=size, c=colour, alpha=0.6
    )
    ax.axhline(0, color="black", linewidth=0.8)
    named = pd.concat([changes.head(top), changes.tail(top)]).drop_duplicates("user")
    labelled = zip(
        named["user"].tolist(),
        named["mean_wait_base"].to_numpy(dtype=np.float64),
        named["change"].to_numpy(dtype=np.float64),
        strict=True,
    )
    for user, before, change in labelled:
        if change != 0:
            ax.annotate(
                str(user),
                (before / HOUR, change / HOUR),
                fontsize=8,
                xytext=(4, 4),
                textcoords="offset points",
            )
    ax.set_xlabel(f"mean wait under {names[0]} (h)")
    ax.set_ylabel(f"change under {names[1]} (h)")
    ax.set_title(
        f"Winners (blue) and losers (red) per user: {names[1]} against {names[0]}; area: CPU time",
        loc="left",
        fontsize=10,
        fontweight="bold",
    )
    return fig
