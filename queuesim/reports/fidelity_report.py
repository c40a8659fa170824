"""How ``queuesim fidelity`` shows a :class:`~queuesim.studies.fidelity.Fidelity`: one
report on the report model (:mod:`.document`), printed in the terminal and written as a
self-contained HTML page, Markdown or JSON, and one figure (matplotlib, imported when
drawing): busy CPUs and waiting jobs over time, logged vs simulated, and the distribution
of the start differences. The figure never needs a display and is written atomically, byte-for-byte
the same for the same run (no date or software stamp)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import RenderableType

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.reports.document import Block, Bullets, Report, Section, Strong
from queuesim.reports.document import Figure as ReportFigure
from queuesim.reports.document import Table as ReportTable
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.reports.render_text import report_renderable, to_json
from queuesim.reports.summary import not_modelled_section

if TYPE_CHECKING:
    from queuesim.results.fidelity import Fidelity

__all__ = [
    "fidelity_figure",
    "fidelity_renderable",
    "fidelity_report",
    "write_fidelity_figure",
    "write_fidelity_report",
]

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


def fidelity_report(
    found: Fidelity, *, figure_png: bytes | None = None, figure_file: str = "fidelity.png"
) -> Report:
    """The fidelity check on the report model: what was compared, then a section each for
    the wait per queue, the jobs with the largest |delta|, what the log holds that the
    simulation cannot know, what the site uses that is not modelled and, when its PNG is
    given, the figure of :func:`fidelity_figure` (``figure_file`` beside a Markdown
    report)."""
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
    lead: list[Block] = [Bullets([(Strong(k), ": ", v) for k, v in facts.items()])]
    sections = [
        Section("Wait per queue, logged and simulated", [_queues(found)]),
        Section(f"The {len(found.top)} jobs with the largest |delta|", [_top(found)]),
        Section("What the log holds that the simulation cannot know", [_causes(found)]),
    ]
    if found.not_modelled:
        sections.append(not_modelled_section(found.not_modelled))
    if figure_png is not None:
        caption = "Utilization and queue length, logged vs simulated; share of jobs by |delta|"
        sections.append(Section("Figure", [ReportFigure(figure_file, caption, figure_png)]))
    title = f"queuesim fidelity {found.site} / {found.policy}"
    return Report(title, lead, sections, dict(facts))


def fidelity_renderable(found: Fidelity, width: int) -> RenderableType:
    """The terminal summary, laid out for ``width`` columns."""
    return report_renderable(fidelity_report(found), width)


def _queues(found: Fidelity) -> ReportTable:
    header = ["queue", "jobs", "mean logged", "mean sim", "median logged", "median sim"]
    rows = [
        [
            str(row["queue"]),
            f"{row['jobs']:,}",
            _span(row["logged_mean_wait"]),
            _span(row["simulated_mean_wait"]),
            _span(row["logged_median_wait"]),
            _span(row["simulated_median_wait"]),
        ]
        for row in found.queues.to_dict(orient="records")
    ]
    keys = [
        [None, row["jobs"], *(row[k] for k in _QUEUE_WAITS)]
        for row in found.queues.to_dict(orient="records")
    ]
    return ReportTable(header, rows, [False] + [True] * 5, keys=keys)


_QUEUE_WAITS = (
    "logged_mean_wait",
    "simulated_mean_wait",
    "logged_median_wait",
    "simulated_median_wait",
)


def _top(found: Fidelity) -> ReportTable:
    held = bool((found.top["held_by"] != "").any())
    caption = "logged, sim: the job's wait; " + (
        "held: the queue limits that held it in the run"
        if held
        else "no queue limit held any of them in the run"
    )
    if found.reservations:
        caption += "; 1st resv: how long after submit the run first reserved a start"
    header = ["job", "user", "queue", "CPUs", "logged", "sim", "delta"]
    if held:
        header.append("held")
    if found.reservations:
        header.append("1st resv")
    rows, keys = [], []
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
        key: list[float | None] = [None, None, None, row["cpus"]]
        key += [row["logged_wait"], row["simulated_wait"], row["delta"]]
        if held:
            cells.append(str(row["held_by"]) or "-")
            key.append(None)
        if found.reservations:
            cells.append(_span(row["first_reservation_wait"]))
            key.append(row["first_reservation_wait"])
        rows.append(cells)
        keys.append(key)
    right = [False, False, False, True, True, True, True]
    right += [False] * held + [True] * bool(found.reservations)
    return ReportTable(header, rows, right, keys=keys, caption=(caption,))


def _causes(found: Fidelity) -> ReportTable:
    rows = []
    for cause in found.causes:
        meaning = cause.meaning
        if cause.detail and "hours" in cause.detail:
            meaning += f" ({cause.detail['hours']:,.1f} h in all)"
        rows.append([cause.key, f"{cause.count:,}", meaning])
    caption = ("a large count explains differences the site model cannot remove",)
    return ReportTable(["cause", "count", "meaning"], rows, [False, True, False], caption=caption)


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


def figure_bytes(found: Fidelity, fmt: str) -> bytes:
    """The figure as ``png`` or ``svg`` bytes, the same for the same inputs."""
    import matplotlib

    metadata: dict[str, dict[str, Any]] = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
    }
    with matplotlib.rc_context({"svg.hashsalt": "queuesim", "font.size": 9}):
        buffer = io.BytesIO()
        fidelity_figure(found).savefig(buffer, format=fmt, metadata=metadata[fmt], dpi=_DPI)
    return buffer.getvalue()


def write_fidelity_figure(path: str | Path, found: Fidelity) -> Path:
    """Write the figure to ``path`` (``.png`` or ``.svg``) atomically."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: the figure is written as .png or .svg")
    data = figure_bytes(found, fmt)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_fidelity_report(out: str | Path, found: Fidelity) -> list[Path]:
    """Write the report to ``out``, its format chosen by the suffix: ``.html`` (the figure
    inline), ``.md`` (the figure written beside it as ``<name>-figure.png``) or ``.json``
    (no figure). Returns the files written."""
    out = Path(out)
    fmt = out.suffix.lower()
    if fmt == ".json":
        atomic_write_text(out, to_json(fidelity_report(found)))
        return [out]
    figure = out.with_name(f"{out.stem}-figure.png")
    png = figure_bytes(found, "png")
    report = fidelity_report(found, figure_png=png, figure_file=figure.name)
    if fmt == ".html":
        atomic_write_text(out, to_html(report))
        return [out]
    with atomic_path(figure) as tmp:
        tmp.write_bytes(png)
    atomic_write_text(out, to_markdown(report))
    return [out, figure]
