"""The content of a comparison's report: setups, Table 1 (performance and fairness), Table 2
(wait changes against the baseline), the users who lost most, heatmaps and data cleaning."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from queuesim.common.version import __version__
from queuesim.reports.document import Block, Bullets, DocTable, Heading, Image, Para
from queuesim.reports.precision import marked, metric_texts
from queuesim.results.comparison import METRIC_COLUMNS, Comparison, best_marks
from queuesim.results.heatmap import WaitGrid

HOUR = 3600.0

#: The second-level headings of report.md, in order (the reports/ example test checks them).
SECTIONS = (
    "Setups",
    "Performance and fairness",
    "Wait times against the baseline",
    "Users who lost the most",
    "Wait per queue",
    "Mean wait per queue over time",
    "Data cleaning",
    "Files",
)

#: the metrics of Table 1, as its columns are headed
_HEADERS = {
    "awwt": "AWWT",
    "awrt": "AWRT",
    "awsd": "AWSD",
    "anuwt": "ANUWT",
    "nuwt_dev": "NUWT-dev",
    "mean_wait": "mean wait",
    "mean_bounded_slowdown": "mean bounded slowdown",
    "utilization": "utilization",
}


def _num(x: float, fmt: str = "{:,.1f}") -> str:
    return fmt.format(x) if math.isfinite(x) else "-"


def bundle_dir_name(setup: str) -> str:
    """The folder of a setup's run inside a bundle: its name, each ``/``-separated part
    reduced to letters, digits, ``.``, ``_`` and ``-``."""
    parts = [re.sub(r"[^A-Za-z0-9._-]", "_", p) or "_" for p in setup.split("/")]
    return "/".join("_" if p in (".", "..") else p for p in parts)


def _setup_rows(comp: Comparison) -> DocTable:
    rows = []
    for name, result in comp.results.items():
        params = ", ".join(f"{k}={v}" for k, v in sorted(result.params.items())) or "-"
        site = result.site
        rows.append(
            [
                name + (" (baseline)" if name == comp.baseline else ""),
                site.name,
                comp.sources.get(name, "-"),
                result.policy,
                params,
                f"{site.total_cpus:,}",
                ", ".join(q.name for q in site.queues),
                f"{len(result.jobs):,}",
            ]
        )
    header = ["setup", "site", "site file", "policy", "parameters", "CPUs", "queues", "jobs"]
    right = [False] * 5 + [True, False, True]
    return DocTable(header, rows, right)


def _metrics_block(comp: Comparison) -> DocTable:
    marks = best_marks(comp.table)
    texts = {c: metric_texts(c, comp.table[c].astype(float).tolist()) for c in METRIC_COLUMNS}
    rows, bold = [], set()
    for i, setup in enumerate(comp.table.index):
        mark = [marks[c][str(setup)] for c in METRIC_COLUMNS]
        cells = [marked(texts[c][i], m) for c, m in zip(METRIC_COLUMNS, mark, strict=True)]
        rows.append([str(setup), *cells])
        bold |= {(i, j + 1) for j, m in enumerate(mark) if m}
    header = ["setup"] + [_HEADERS[c] for c in METRIC_COLUMNS]
    return DocTable(header, rows, [False] + [True] * len(METRIC_COLUMNS), frozenset(bold))


def _against_block(comp: Comparison) -> DocTable:
    columns = (
        ("users improved", "users_improved_pct", "{:.1f} %"),
        ("jobs improved", "jobs_improved_pct", "{:.1f} %"),
        ("mean decrease, jobs (h)", "mean_improvement_h", "{:,.1f}"),
        ("users deteriorated", "users_deteriorated_pct", "{:.1f} %"),
        ("jobs deteriorated", "jobs_deteriorated_pct", "{:.1f} %"),
        ("mean increase, jobs (h)", "mean_deterioration_h", "{:,.1f}"),
        ("mean decrease, users (h)", "mean_user_improvement_h", "{:,.1f}"),
        ("mean increase, users (h)", "mean_user_deterioration_h", "{:,.1f}"),
    )
    rows = [
        [str(setup)] + [_num(float(row[c]), f) for _, c, f in columns]
        for setup, row in comp.against_baseline.iterrows()
    ]
    return DocTable(["setup"] + [h for h, _, _ in columns], rows, [False] + [True] * len(columns))


def _queues_block(comp: Comparison) -> DocTable:
    """Each queue's figures per setup, a setup's change against the baseline beside each."""
    header = ["queue", "setup", "jobs", "AWWT", "median", "p90", "p99", "max", "> 24 h"]
    hours = ("awwt", "median_wait", "p90_wait", "p99_wait", "max_wait")
    rows = []
    for record in comp.per_queue.reset_index().to_dict(orient="records"):
        against = record["setup"] != comp.baseline
        cells = [_with_change(record, c, HOUR, "{:,.1f}", against) for c in hours]
        cells.append(_with_change(record, "waited_over_24h", 0.01, "{:.1f} %", against))
        rows.append([str(record["queue"]), str(record["setup"]), f"{int(record['jobs']):,}"])
        rows[-1] += cells
    return DocTable(header, rows, [False, False, True, True, True, True, True, True, True])


def _with_change(
    record: Mapping[Any, Any], column: str, unit: float, fmt: str, against: bool
) -> str:
    """``record[column]`` in ``unit`` (hours: 3600), and its change against the baseline in
    brackets unless it is the baseline's own row or the baseline has no such queue."""
    value = fmt.format(float(record[column]) / unit)
    change = float(record[f"{column}_change"])
    if not against or not math.isfinite(change):
        return value
    return f"{value} ({'+' if change >= 0 else '-'}{fmt.format(abs(change) / unit)})"


def _losers_block(comp: Comparison) -> DocTable:
    header = [
        "setup",
        "user",
        "jobs",
        f"mean wait under {comp.baseline} (h)",
        "mean wait (h)",
        "change (h)",
    ]
    rows = [
        [
            str(r["setup"]),
            str(r["user"]),
            f"{int(r['jobs']):,}",
            _num(float(r["baseline_mean_wait_h"])),
            _num(float(r["mean_wait_h"])),
            _num(float(r["change_h"]), "{:+,.1f}"),
        ]
        for r in comp.losers.to_dict(orient="records")
    ]
    return DocTable(header, rows, [False, True, True, True, True, True])


def cleaning_counts(comp: Comparison) -> dict[str, dict[str, int]]:
    return {name: dict(r.workload.cleaning.counts) for name, r in comp.results.items()}


def _cleaning_block(comp: Comparison) -> DocTable | Para:
    counts = cleaning_counts(comp)
    reasons = list(next(iter(counts.values())))
    shown = [r for r in reasons if any(c.get(r, 0) for c in counts.values())]
    if not shown:
        return Para("No job was dropped or repaired by data cleaning, in any setup.")
    rows = [[r] + [f"{c.get(r, 0):,}" for c in counts.values()] for r in shown]
    return DocTable(["reason", *counts], rows, [False] + [True] * len(counts))


def _heatmap_words(grid: WaitGrid) -> str:
    spec = grid.spec
    if spec.kind == "seconds":
        bins = f"bins of {spec.label}, counted from the trace's start"
    elif grid.clock.dated:
        start = "midnight" if spec.kind == "day" else "Monday midnight"
        bins = f"one {spec.kind} per column, from {start} in {grid.clock.zone_name}"
    else:
        bins = f"one {spec.kind} per column, counted from the trace's start"
    return (
        f"Mean wait of the jobs submitted in each queue and time bin ({bins}; a job "
        "submitted exactly on a bin edge counts in the later bin). One panel per setup, on "
        "one colour scale: linear up to 1 minute, logarithmic above. Hatched cells: no job "
        "was submitted (not a zero wait). Rows are the site's queues in its file's order, "
        "with their job counts. The numbers are in `heatmap.csv` (blank: no job), the "
        "image also as `heatmap.svg`."
    )


def report_document(
    comp: Comparison,
    grids: Mapping[str, WaitGrid],
    png: bytes,
    command: str | None,
    files: Sequence[str],
) -> tuple[str, list[Block]]:
    count = len(comp.results)
    title = (
        f"Comparison of {count} setup{'' if count == 1 else 's'} on {comp.workload or 'a workload'}"
    )
    made = f"Made by queuesim {__version__}" + (f" with `{command}`." if command else ".")
    blocks: list[Block] = [
        Heading(1, title),
        Para(
            f"{made} Each setup replays the same trace; the baseline is **{comp.baseline}**. "
            "Durations read d (days), h (hours), m (minutes), s (seconds)."
        ),
        Heading(2, SECTIONS[0]),
        _setup_rows(comp),
        Heading(2, SECTIONS[1]),
        Para(
            "As in Klusáček et al. (paper 004, Table 1), with each job weighted by its CPU "
            "time e = cpus * runtime: AWWT, AWRT and AWSD are the weighted means of wait, "
            "response time and slowdown; ANUWT and NUWT-dev the mean and standard deviation "
            "over users of their total wait divided by their CPU time. Bounded slowdown uses "
            f"τ = {next(iter(comp.metrics.values())).bounded_slowdown_tau:g} s. "
            "The best value of each column is in bold, marked (tie) when several setups share "
            "it; lower is better, except utilization. Each column shows as many digits as it "
            "takes to tell different values apart."
        ),
        _metrics_block(comp),
        Heading(2, SECTIONS[2]),
    ]
    if comp.against_baseline.empty:
        blocks.append(Para("Only one setup: there is nothing to compare with the baseline."))
    else:
        counts = sorted({int(n) for n in comp.against_baseline["matched_jobs"]})
        matched = (
            f"{counts[0]:,} matched in every setup"
            if len(counts) == 1
            else f"from {counts[0]:,} to {counts[-1]:,} matched, depending on the setup"
        )
        blocks += [
            Para(
                f"Against {comp.baseline} (paper 004, Table 2). Jobs are matched by job id "
                f"({matched}). A job improved if it waited strictly less than under "
                "the baseline and deteriorated if strictly more; a user improved or "
                "deteriorated by the same rule on their mean wait over their matched jobs. "
                "Percentages are of all matched jobs / users. The mean decrease and "
                "increase are in hours, averaged over the improved / deteriorated jobs (as "
                "in the paper) and, in the last two columns, users."
            ),
            _against_block(comp),
        ]
    blocks.append(Heading(2, SECTIONS[3]))
    if comp.losers.empty:
        blocks.append(Para("No user's mean wait grew against the baseline."))
    else:
        blocks += [
            Para(
                f"Per setup, the {comp.top} users whose mean wait (over their matched jobs) "
                "grew the most against the baseline, in hours."
            ),
            _losers_block(comp),
        ]
    blocks += [
        Heading(2, SECTIONS[4]),
        Para(
            "Per queue (and over all queues), each setup's job count, AWWT, median, 90th and "
            "99th percentile and longest wait, in hours, and the share of jobs that waited "
            "more than a day; in brackets, the change against the baseline on the same "
            "queue (hours, percentage points). Percentiles interpolate linearly between the "
            "two nearest waits (numpy's default). All figures, mean bounded slowdown and "
            "the share waiting over an hour included, are in `queues.csv`."
        ),
        _queues_block(comp),
    ]
    first = next(iter(grids.values()))
    blocks += [
        Heading(2, SECTIONS[5]),
        Para(_heatmap_words(first)),
        Image("heatmap.png", "Mean wait per queue and time bin, one panel per setup", png),
        Heading(2, SECTIONS[6]),
        Para(
            "Jobs each cleaning rule dropped or repaired while reading the trace for each "
            "setup (the job lists are in each setup's `cleaning.csv`)."
        ),
        _cleaning_block(comp),
        Heading(2, SECTIONS[7]),
        Bullets([f"`{f}`" for f in files]),
    ]
    return title, blocks
