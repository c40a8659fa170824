"""The terminal summary of one simulation: a report on the report model
(:func:`summary_report`) printed by its terminal renderer, and the rich pieces the fidelity
summary shares (facts grid, not-modelled table).

This module only lays out numbers it is given: the :class:`~queuesim.results.metrics.Metrics` of a
run, the data-cleaning counts of its workload, a few free-form facts (site, workload,
policy, speed ...) and the run's extra metrics, each written in the unit the metric registry
gives it. It knows nothing of policies or of how the numbers were obtained.

The layout fits an 80-column terminal: the facts, one table of metrics in themes (jobs,
waiting, slowdown, fairness, machine) and a small table of data cleaning.
Durations are shown in human form (``2h 5m``) next to the raw seconds, so a reader can both
grasp them and compare them exactly with another run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table

from queuesim.reports.document import Block, Bullets, Para, Report, Section, Strong
from queuesim.reports.document import Table as ReportTable
from queuesim.reports.render_text import report_renderable
from queuesim.results.metrics import Metrics
from queuesim.results.registry import Unit, definition
from queuesim.site.units import format_duration

__all__ = ["metric_facts", "not_modelled_section", "print_summary", "summary_renderable"]

#: Shown instead of the cleaning table when the workload needed no cleaning.
NO_CLEANING = "no jobs dropped or repaired"


def summary_renderable(
    *,
    title: str,
    metrics: Metrics,
    cleaning: Mapping[str, int],
    facts: Mapping[str, str],
    queues: pd.DataFrame | None = None,
    users: pd.DataFrame | None = None,
    top: int = 5,
    cleaning_detail: Mapping[str, tuple[str, Sequence[int]]] | None = None,
    not_modelled: Sequence[tuple[str, str, str]] = (),
    width: int = 80,
) -> RenderableType:
    """Build the summary of one run (:func:`summary_report`, laid out by the report model's
    terminal renderer for ``width`` columns), ready for ``console.print``.

    Args:
        title: the heading, e.g. ``"metacentrum-complex on METACENTRUM-2013"``.
        metrics: the run's metrics.
        cleaning: how many jobs each data-cleaning rule dropped or repaired, by reason, in
            the order to show them; reasons with a zero count are left out.
        facts: key/value lines shown first (site, workload, policy, jobs/s ...), in order.
        queues: the wait figures per queue, shown when the site has more than one queue.
        users: the wait figures per user; the ``top`` who waited most per CPU-second are
            shown.
        cleaning_detail: per reason, what was done (dropped, repaired, rejected, warning)
            and the first trace lines it names; shown beside the counts when given.
        not_modelled: what the site's own configuration uses that the simulation does
            not model (the site's ``not_modelled``: setting, value, source), shown last so
            that no reader takes the run for the site's whole behaviour.
    """
    return report_renderable(
        summary_report(
            title=title,
            metrics=metrics,
            cleaning=cleaning,
            facts=facts,
            queues=queues,
            users=users,
            top=top,
            cleaning_detail=cleaning_detail,
            not_modelled=not_modelled,
        ),
        width,
    )


def summary_report(
    *,
    title: str,
    metrics: Metrics,
    cleaning: Mapping[str, int],
    facts: Mapping[str, str],
    queues: pd.DataFrame | None = None,
    users: pd.DataFrame | None = None,
    top: int = 5,
    cleaning_detail: Mapping[str, tuple[str, Sequence[int]]] | None = None,
    not_modelled: Sequence[tuple[str, str, str]] = (),
) -> Report:
    """The summary of one run on the report model (see :func:`summary_renderable` for the
    arguments): the facts first, then a section each for the metrics, the queues, the
    users, data cleaning and what the site uses that is not modelled."""
    lead: list[Block] = []
    if facts:
        lead.append(Bullets([(Strong(k), ": ", v) for k, v in facts.items()]))
    sections = [Section("Metrics", [_metrics_table(metrics)])]
    if queues is not None and len(queues) > 2:  # one queue and the whole run: the same
        sections.append(Section("Wait per queue", [queues_table(queues)]))
    if users is not None and top > 0:
        worst = users.sort_values("nuwt", ascending=False, kind="stable").head(top)
        heading = f"The {len(worst)} users who waited most per CPU-second (NUWT)"
        sections.append(Section(heading, [_figures_table("user", worst, _USER_COLUMNS)]))
    sections.append(Section("Data cleaning", [_cleaning_part(cleaning, cleaning_detail or {})]))
    if not_modelled:
        sections.append(not_modelled_section(not_modelled))
    return Report(title, lead, sections, dict(facts))


def print_summary(console: Console, **parts: Any) -> None:
    """Print :func:`summary_renderable` of ``parts`` (its keyword arguments) on ``console``,
    at its width."""
    console.print(summary_renderable(width=console.width, **parts))


def spaced(parts: list[RenderableType]) -> list[RenderableType]:
    """Separate the parts by one blank line."""
    return [part if i == 0 else Padding(part, (1, 0, 0, 0)) for i, part in enumerate(parts)]


def facts_grid(facts: Mapping[str, str]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", overflow="fold")
    grid.add_column(overflow="fold")
    for key, value in facts.items():
        grid.add_row(key, value)
    return grid


def _metrics_table(m: Metrics) -> ReportTable:
    rows = [
        ["jobs", _count(m.jobs), ""],
        ["  completed", _count(m.completed), ""],
        ["  killed", _count(m.killed), ""],
        ["users", _count(m.users), ""],
        ["mean wait", *_duration(m.mean_wait)],
        ["  median", *_duration(m.median_wait)],
        ["  90th percentile", *_duration(m.p90_wait)],
        ["  99th percentile", *_duration(m.p99_wait)],
        ["  max", *_duration(m.max_wait)],
        ["  share waiting > 1 h", _percent(m.waited_over_1h), ""],
        ["  share waiting > 24 h", _percent(m.waited_over_24h), ""],
        ["AWWT (weighted wait)", *_duration(m.awwt)],
        ["AWRT (weighted response)", *_duration(m.awrt)],
        ["AWSD (weighted slowdown)", _decimal2(m.awsd), ""],
        [f"bounded slowdown, tau {_seconds(m.bounded_slowdown_tau)}", "", ""],
        ["  mean", _decimal2(m.mean_bounded_slowdown), ""],
        ["  max", _decimal2(m.max_bounded_slowdown), ""],
        ["ANUWT (mean user NUWT)", sig3(m.anuwt), ""],
        ["NUWT-dev (std over users)", sig3(m.nuwt_dev), ""],
        ["utilization", _percent(m.utilization), ""],
        ["makespan", *_duration(m.makespan)],
    ]
    return ReportTable(["metric", "value", "seconds"], rows, [False, True, True])


def not_modelled_section(entries: Sequence[tuple[str, str, str]]) -> Section:
    """The site's settings not modelled: one row each, with its value and source."""
    rows = [list(entry) for entry in entries]
    table = ReportTable([f"not modelled ({len(rows)})", "value", "source"], rows, [False] * 3)
    return Section("Not modelled", [table])


def _cleaning_part(
    cleaning: Mapping[str, int], detail: Mapping[str, tuple[str, Sequence[int]]]
) -> Block:
    shown = [(reason, count) for reason, count in cleaning.items() if count != 0]
    if not shown:
        return Para.of(f"data cleaning: {NO_CLEANING}")
    header = ["data cleaning", "jobs"] + (["done", "first lines"] if detail else [])
    rows = []
    for reason, count in shown:
        row = [reason, _count(count)]
        if detail:
            action, lines = detail.get(reason, ("", ()))
            row += [action, " ".join(map(str, lines))]
        rows.append(row)
    return ReportTable(header, rows, [False, True, False, False][: len(header)])


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %"


def _share(share: float) -> str:
    """A share in a narrow column: ``12.5%``."""
    return f"{100 * share:.1f}%"


def _short(seconds: float) -> str:
    """A duration in a narrow column: ``5h 29m``, ``0s``."""
    return format_duration(seconds)


def _jobs(n: float) -> str:
    return f"{int(n):,}"


#: what the per-queue and per-user tables show: heading, column, how it is written
_QUEUE_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("jobs", "jobs", _jobs),
    ("AWWT", "awwt", _short),
    ("median", "median_wait", _short),
    ("p90", "p90_wait", _short),
    ("p99", "p99_wait", _short),
    ("max", "max_wait", _short),
    (">24h", "waited_over_24h", _share),
)
_USER_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("jobs", "jobs", _jobs),
    ("NUWT", "nuwt", lambda x: sig3(x)),  # sig3 is defined below
    ("mean wait", "mean_wait", _short),
    ("p90", "p90_wait", _short),
    ("max", "max_wait", _short),
    (">24h", "waited_over_24h", _share),
)


def _figures_table(
    first: str,
    rows: pd.DataFrame,
    shown: Sequence[tuple[str, str, Callable[[Any], str]]],
) -> ReportTable:
    """A narrow table of ``rows`` (labelled by their index, headed ``first``) and the
    ``shown`` columns."""
    header = [first, *(heading for heading, _, _ in shown)]
    cells = [
        [str(name), *(write(row[column]) for _, column, write in shown)]
        for name, row in rows.iterrows()
    ]
    return ReportTable(header, cells, [False] + [True] * len(shown))


def queues_table(queues: pd.DataFrame) -> ReportTable:
    """The wait figures per queue (:func:`~queuesim.results.breakdown.by_queue`), the whole
    run last."""
    return _figures_table("queue", queues, _QUEUE_COLUMNS)


def _count(n: int) -> str:
    return f"{n:,}"


def _decimal2(x: float) -> str:
    return f"{x:,.2f}"


def _seconds(seconds: float) -> str:
    """Raw seconds, exact enough to compare runs: ``7,512 s``, or ``0.25 s`` below 10 s."""
    return f"{seconds:,.0f} s" if abs(seconds) >= 10 else f"{seconds:.3g} s"


def _duration(seconds: float) -> tuple[str, str]:
    """The (human, raw) pair shown for a duration."""
    return format_duration(seconds), _seconds(seconds)


def sig3(x: float) -> str:
    """``x`` with three significant digits, in plain notation whenever that stays short.

    ``0.0812`` -> ``0.0812``, ``13.517`` -> ``13.5``, ``1234.5`` -> ``1,230`` (large values keep all
    their digits rather than switch to ``1.23e+03``); tiny values use scientific notation.
    """
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    x = float(f"{x:.3g}")  # round first, so 9.996 becomes 10.0, not 10.00
    magnitude = math.floor(math.log10(abs(x)))
    if magnitude < -4:
        return f"{x:.2e}"
    decimals = 2 - magnitude
    return f"{x:,.{decimals}f}" if decimals > 0 else f"{x:,.0f}"


def metric_facts(values: Mapping[str, Any]) -> dict[str, str]:
    """Summary lines for a run's extra metrics (:func:`~queuesim.results.registry.extra_metrics`):
    each metric shown in summaries, by its label, its value written in its unit (None: not
    computed)."""
    facts = {}
    for name, value in values.items():
        metric = definition(name)
        if metric.in_summary:
            facts[metric.label] = "not computed" if value is None else _in_unit(value, metric.unit)
    return facts


def _in_unit(value: float, unit: Unit) -> str:
    if unit is Unit.COUNT:
        return f"{int(value):,}"
    if unit is Unit.FRACTION:
        return f"{value:.4f}"
    if unit is Unit.GIGABYTES:
        return f"{value:,.1f} GB"
    if unit is Unit.GIGABYTES_PER_SECOND:
        return f"{value:.3g} GB/s"
    if unit is Unit.SECONDS:
        return f"{value:,.4g} s"
    return f"{value:,.4g}"
