"""The terminal summary of one simulation, rendered with rich.

This module only lays out numbers it is given: the :class:`~queuesim.results.metrics.Metrics` of a
run, the data-cleaning counts of its workload, a few free-form facts (site, workload,
policy, speed ...) and the run's extra metrics, each written in the unit the metric registry
gives it. It knows nothing of policies or of how the numbers were obtained.

The layout fits an 80-column terminal: a header of facts, one table of metrics grouped by
theme (jobs, waiting, slowdown, fairness, machine) and a small table of data cleaning.
Durations are shown in human form (``2h 5m``) next to the raw seconds, so a reader can both
grasp them and compare them exactly with another run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from queuesim.results.metrics import Metrics
from queuesim.results.registry import Unit, definition
from queuesim.site.units import format_duration

__all__ = ["metric_facts", "not_modelled_table", "print_summary", "summary_renderable"]

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
) -> RenderableType:
    """Build the summary of one run, ready for ``console.print``.

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
    parts: list[RenderableType] = []
    if facts:
        parts.append(facts_grid(facts))
    parts.append(_metrics_table(metrics))
    if queues is not None and len(queues) > 2:  # one queue and the whole run: the same
        parts.append(queues_table(queues))
    if users is not None and top > 0:
        parts.append(users_table(users, top))
    parts.append(_cleaning_part(cleaning, cleaning_detail or {}))
    if not_modelled:
        parts.append(not_modelled_table(not_modelled))
    return Panel(
        Group(*spaced(parts)),
        title=Text(title, style="bold"),
        title_align="left",
        box=box.ROUNDED,
        expand=False,
        padding=(1, 2),
    )


def print_summary(console: Console, **parts: Any) -> None:
    """Print :func:`summary_renderable` of ``parts`` (its keyword arguments) on ``console``."""
    console.print(summary_renderable(**parts))


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


def _metrics_table(m: Metrics) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("seconds", justify="right", no_wrap=True, style="dim")

    table.add_row("jobs", _count(m.jobs), "")
    table.add_row("  completed", _count(m.completed), "")
    table.add_row("  killed", _count(m.killed), "")
    table.add_row("users", _count(m.users), "", end_section=True)

    table.add_row("mean wait", *_duration(m.mean_wait))
    table.add_row("  median", *_duration(m.median_wait))
    table.add_row("  90th percentile", *_duration(m.p90_wait))
    table.add_row("  99th percentile", *_duration(m.p99_wait))
    table.add_row("  max", *_duration(m.max_wait))
    table.add_row("  share waiting > 1 h", _percent(m.waited_over_1h), "")
    table.add_row("  share waiting > 24 h", _percent(m.waited_over_24h), "")
    table.add_row("AWWT (weighted wait)", *_duration(m.awwt))
    table.add_row("AWRT (weighted response)", *_duration(m.awrt), end_section=True)

    table.add_row("AWSD (weighted slowdown)", _decimal2(m.awsd), "")
    table.add_row(f"bounded slowdown, tau {_seconds(m.bounded_slowdown_tau)}", "", "")
    table.add_row("  mean", _decimal2(m.mean_bounded_slowdown), "")
    table.add_row("  max", _decimal2(m.max_bounded_slowdown), "", end_section=True)

    table.add_row("ANUWT (mean user NUWT)", sig3(m.anuwt), "")
    table.add_row("NUWT-dev (std over users)", sig3(m.nuwt_dev), "", end_section=True)

    table.add_row("utilization", _percent(m.utilization), "")
    table.add_row("makespan", *_duration(m.makespan))
    return table


def not_modelled_table(entries: Sequence[tuple[str, str, str]]) -> Table:
    """The site's settings not modelled: one row each, with its value and source."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column(f"not modelled ({len(entries)})", overflow="fold")
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold", style="dim")
    for setting, value, source in entries:  # as text: a value may hold '[...]'
        table.add_row(Text(setting), Text(value), Text(source))
    return table


def _cleaning_part(
    cleaning: Mapping[str, int], detail: Mapping[str, tuple[str, Sequence[int]]]
) -> RenderableType:
    shown = [(reason, count) for reason, count in cleaning.items() if count != 0]
    if not shown:
        return Text(f"data cleaning: {NO_CLEANING}", style="dim")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("data cleaning", overflow="fold")
    table.add_column("jobs", justify="right", no_wrap=True)
    if detail:
        table.add_column("done", no_wrap=True)
        table.add_column("first lines", overflow="fold")
    for reason, count in shown:
        if detail:
            action, lines = detail.get(reason, ("", ()))
            table.add_row(reason, _count(count), action, " ".join(map(str, lines)))
        else:
            table.add_row(reason, _count(count))
    return table


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
    title: str,
    first: str,
    rows: pd.DataFrame,
    shown: Sequence[tuple[str, str, Callable[[Any], str]]],
) -> Table:
    """A narrow table of ``rows`` (labelled by their index, headed ``first``) and the
    ``shown`` columns."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left")
    table.title = title
    table.add_column(first, no_wrap=True)
    for heading, _, _ in shown:
        table.add_column(heading, justify="right", no_wrap=True)
    for name, row in rows.iterrows():
        table.add_row(str(name), *(write(row[column]) for _, column, write in shown))
    return table


def queues_table(queues: pd.DataFrame) -> Table:
    """The wait figures per queue (:func:`~queuesim.results.breakdown.by_queue`), the whole
    run last."""
    return _figures_table("wait per queue", "queue", queues, _QUEUE_COLUMNS)


def users_table(users: pd.DataFrame, top: int) -> Table:
    """The ``top`` users by NUWT (waited most per CPU-second consumed) and their waits."""
    worst = users.sort_values("nuwt", ascending=False, kind="stable").head(top)
    title = f"the {len(worst)} users who waited most per CPU-second (NUWT)"
    return _figures_table(title, "user", worst, _USER_COLUMNS)


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
