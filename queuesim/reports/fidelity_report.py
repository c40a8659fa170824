"""How ``queuesim fidelity`` shows a :class:`~queuesim.studies.fidelity.Fidelity`: the
terminal summary (rich) and one figure (matplotlib, imported when drawing): busy CPUs and
waiting jobs over time, logged vs simulated, and the distribution of the start
differences. The figure never needs a display and is written atomically, byte-for-byte
the same for the same run (no date or software stamp)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from queuesim.common.atomic import atomic_path
from queuesim.reports.summary import facts_grid, not_modelled_table, spaced
from queuesim.reports.terminal import titled_table

if TYPE_CHECKING:
    from queuesim.results.fidelity import Fidelity

__all__ = ["fidelity_figure", "fidelity_renderable", "write_fidelity_figure"]

_DPI = 110


def _span(seconds: float) -> str:
    """A duration in one short unit, signed when negative: ``45 s``, ``-12.5 m``,
    ``31.6 h``."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    s = abs(seconds)
    if s < 60:
        return f"{seconds:.0f} s"
    if s < 3600:
        return f"{seconds / 60:.1f} m"
    return f"{seconds / 3600:,.1f} h"


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %"


def fidelity_renderable(found: Fidelity) -> RenderableType:
    """The terminal summary."""
    s = found.summary
    policy = found.policy + (
        " (" + ", ".join(f"{k}={v}" for k, v in sorted(found.params.items())) + ")"
        if found.params
        else ""
    )
    facts = {
        "site": f"{found.site} ({found.total_cpus:,} CPUs)",
        "log": found.log,
        "policy": policy,
        "jobs compared": f"{int(s['jobs']):,}"
        + "".join(f", {n:,} left out ({k})" for k, n in found.excluded.items() if n),
        "delta": "simulated start - logged start (+: the simulation started it later)",
        "|delta| median / p90": f"{_span(s['median_abs_delta'])} / {_span(s['p90_abs_delta'])}",
        "within 1 min / 10 min / 1 h": " / ".join(
            _percent(s[k]) for k in ("within_1min", "within_10min", "within_1h")
        ),
        "simulated earlier / later": f"{_percent(s['share_simulated_earlier'])} / "
        f"{_percent(s['share_simulated_later'])}",
        "median delta": _span(s["median_delta"]),
        "rank correlation of waits": f"{s['spearman_wait']:.3f} (Spearman; 1: same order)",
        "mean wait logged / simulated": f"{_span(s['logged_mean_wait'])} / "
        f"{_span(s['simulated_mean_wait'])}",
    }
    parts: list[RenderableType] = [facts_grid(facts), _queues(found), _top(found)]
    parts.append(_causes(found))
    if found.not_modelled:
        parts.append(not_modelled_table(found.not_modelled))
    title = Text(f"queuesim fidelity {found.site} / {found.policy}", style="bold")
    return Panel(Group(*spaced(parts)), title=title, expand=False)


def _queues(found: Fidelity) -> RenderableType:
    table = titled_table("wait per queue: logged vs simulated")
    table.add_column("queue")
    for header in ("jobs", "mean logged", "mean sim", "median logged", "median sim"):
        table.add_column(header, justify="right")
    for row in found.queues.to_dict(orient="records"):
        table.add_row(
            str(row["queue"]),
            f"{row['jobs']:,}",
            _span(row["logged_mean_wait"]),
            _span(row["simulated_mean_wait"]),
            _span(row["logged_median_wait"]),
            _span(row["simulated_median_wait"]),
        )
    return table


def _top(found: Fidelity) -> RenderableType:
    held = bool((found.top["held_by"] != "").any())
    caption = "logged, sim: the job's wait; " + (
        "held: the queue limits that held it in the run"
        if held
        else "no queue limit held any of them in the run"
    )
    if found.reservations:
        caption += "; 1st resv: how long after submit the run first reserved a start"
    table = titled_table(f"the {len(found.top)} jobs with the largest |delta|", caption)
    for header in ("job", "user", "queue"):
        table.add_column(header, no_wrap=True, max_width=12)
    for header in ("CPUs", "logged", "sim", "delta"):
        table.add_column(header, justify="right", no_wrap=True)
    if held:
        table.add_column("held")
    if found.reservations:
        table.add_column("1st resv", justify="right", no_wrap=True)
    for row in found.top.to_dict(orient="records"):
        cells = [
            str(row["log_id"]).split(".", 1)[0],  # PBS: 123.server -> 123
            str(row["user"]),
            str(row["queue"]),
            f"{row['cpus']:,}",
            _span(row["logged_wait"]),
            _span(row["simulated_wait"]),
            _span(row["delta"]),
        ]
        if held:
            cells.append(str(row["held_by"]) or "-")
        if found.reservations:
            cells.append(_span(row["first_reservation_wait"]))
        table.add_row(*cells)
    return table


def _causes(found: Fidelity) -> RenderableType:
    table = titled_table(
        "what the log holds that the simulation cannot know",
        "a large count explains differences the site model cannot remove",
    )
    table.add_column("cause")
    table.add_column("count", justify="right")
    table.add_column("meaning", overflow="fold")
    for cause in found.causes:
        meaning = cause.meaning
        if cause.detail and "hours" in cause.detail:
            meaning += f" ({cause.detail['hours']:,.1f} h in all)"
        table.add_row(cause.key, f"{cause.count:,}", meaning)
    return table


def fidelity_figure(found: Fidelity) -> Any:
    """Three panels: busy CPUs and waiting jobs over time (logged vs simulated, hours
    since the log's first submit), and the cumulative share of jobs by |delta|."""
    from matplotlib.figure import Figure

    grid = found.timeline
    fig = Figure(figsize=(10.0, 8.0), dpi=_DPI, layout="constrained")
    busy, waiting, cdf = fig.subplots(3, 1)
    waiting.sharex(busy)
    hours = (grid["time"].to_numpy() - float(grid["time"].iloc[0])) / 3600
    for kind, style in (("logged", "-"), ("simulated", "--")):
        busy.plot(hours, grid[f"{kind}_busy_cpus"], style, label=kind)
        waiting.plot(hours, grid[f"{kind}_waiting_jobs"], style, label=kind)
    busy.axhline(found.total_cpus, color="grey", linewidth=0.8, label="site CPUs")
    busy.set_ylabel("busy CPUs")
    waiting.set_ylabel("waiting jobs")
    waiting.set_xlabel("hours since the first submit")
    busy.legend(loc="upper right", fontsize=8)
    busy.set_title("utilization and queue length, logged vs simulated", loc="left")
    gap = np.sort(np.abs(found.jobs["delta"].to_numpy(dtype=np.float64)))
    share = np.arange(1, gap.size + 1) / gap.size
    cdf.step(np.maximum(gap, 1.0) / 60, share, where="post")
    cdf.set_xscale("log")
    for minutes in (1, 10, 60):
        cdf.axvline(minutes, color="grey", linewidth=0.6, linestyle=":")
    cdf.set_xlabel("|simulated start - logged start| (minutes; under 1 s drawn at 1 s)")
    cdf.set_ylabel("share of jobs")
    cdf.set_ylim(0, 1)
    cdf.set_title("share of jobs within a start difference", loc="left")
    return fig


def write_fidelity_figure(path: str | Path, found: Fidelity) -> Path:
    """Write the figure to ``path`` (``.png`` or ``.svg``) atomically."""
    import matplotlib

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    metadata: dict[str, dict[str, Any]] = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
    }
    if fmt not in metadata:
        raise ValueError(f"{path}: the figure is written as .png or .svg")
    with matplotlib.rc_context({"svg.hashsalt": "queuesim", "font.size": 9}):
        buffer = io.BytesIO()
        fidelity_figure(found).savefig(buffer, format=fmt, metadata=metadata[fmt], dpi=_DPI)
    with atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getvalue())
    return path
