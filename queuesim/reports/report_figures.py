"""The figures a comparison report shows beyond the heatmap, chosen from its runs: the
baseline's queues over time, Gantt chart and fairshare usage; every setup's wait
distribution; and, for each other setup (the first few), who gained and who lost, and the
same jobs' starts side by side (diff Gantt)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from queuesim.reports.figures import (
    diff_gantt_figure,
    fairshare_figure,
    figure_png_svg,
    gantt_figure,
    queue_timeline_figure,
    wait_cdf_figure,
    winners_losers_figure,
)
from queuesim.results.comparison import Comparison

__all__ = ["GANTT_JOBS", "ReportFigure", "comparison_figures"]

#: The Gantt window holds about this many jobs, from the median submit time on.
GANTT_JOBS = 60
#: Fairshare usage is drawn with this half-life (Slurm's default PriorityDecayHalfLife).
FAIRSHARE_HALF_LIFE = 7 * 86400.0
#: Setups compared with the baseline figure by figure (the others are in the tables).
COMPARED = 3


@dataclass(frozen=True)
class ReportFigure:
    stem: str  #: file name without suffix
    caption: str
    png: bytes
    svg: bytes


def _window(comp: Comparison) -> tuple[float, float]:
    """Submit times ``[start, end)`` holding about :data:`GANTT_JOBS` of the baseline's jobs,
    from its median submit time on."""
    submit = np.sort(comp.runs[comp.baseline].jobs["submit"].to_numpy(dtype=np.float64))
    first = len(submit) // 2
    last = min(first + GANTT_JOBS, len(submit) - 1)
    start, end = float(submit[first]), float(submit[last])
    return start, end if end > start else start + 3600.0


def comparison_figures(comp: Comparison) -> list[ReportFigure]:
    base = comp.runs[comp.baseline]
    start, end = _window(comp)
    span = max(base.jobs["end"].max() - start, 1.0)
    builds = [
        (
            "queues-over-time",
            f"Jobs waiting and utilization over time, stacked by queue ({comp.baseline})",
            lambda: queue_timeline_figure(base.jobs, base.queues, base.total_cpus),
        ),
        (
            "wait-cdf",
            "Share of jobs that waited at most x, per queue, one line per setup",
            lambda: wait_cdf_figure({n: r.jobs for n, r in comp.runs.items()}, base.queues),
        ),
        (
            "gantt",
            f"Jobs running from the median submit time on ({comp.baseline}), by queue",
            lambda: gantt_figure(
                base.jobs, start, start + min(span, 4 * (end - start) + 3600.0), base.total_cpus
            ),
        ),
        (
            "fairshare",
            f"Decayed usage of the heaviest users (half-life 7 days), {comp.baseline}",
            lambda: fairshare_figure(base.jobs, FAIRSHARE_HALF_LIFE),
        ),
    ]
    others = [n for n in comp.runs if n != comp.baseline][:COMPARED]
    for i, name in enumerate(others, start=1):
        other = comp.runs[name]
        builds += [
            (
                f"winners-losers-{i}",
                f"Per user, change of mean wait under {name} against {comp.baseline}",
                lambda o=other, n=name: winners_losers_figure(  # type: ignore[misc]
                    base.jobs, o.jobs, (comp.baseline, n)
                ),
            ),
            (
                f"diff-gantt-{i}",
                f"The same jobs under {comp.baseline} and {name}",
                lambda o=other, n=name: diff_gantt_figure(  # type: ignore[misc]
                    base.jobs, o.jobs, start, end, (comp.baseline, n)
                ),
            ),
        ]
    return [ReportFigure(stem, caption, *figure_png_svg(build)) for stem, caption, build in builds]
