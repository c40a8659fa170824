"""The content of a comparison's report: setups, Table 1 (performance and fairness), Table 2
(wait changes against the baseline), the users who lost most, heatmaps and data cleaning."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from queuesim.common.version import __version__
from queuesim.reports.document import (
    Block,
    Bullets,
    Code,
    Figure,
    Link,
    Para,
    Report,
    Section,
    Strong,
    Table,
    Text,
    Verbatim,
    markup,
    text_of,
)
from queuesim.reports.precision import marked, metric_texts
from queuesim.reports.report_figures import ReportFigure
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
    "Figures",
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


def _setup_rows(comp: Comparison) -> Table:
    rows = []
    for name, run in comp.runs.items():
        params = ", ".join(f"{k}={v}" for k, v in sorted(run.params.items())) or "-"
        rows.append(
            [
                name + (" (baseline)" if name == comp.baseline else ""),
                run.site,
                comp.sources.get(name, "-"),
                run.policy,
                params,
                f"{run.total_cpus:,}",
                ", ".join(run.queues),
                f"{len(run.jobs):,}",
            ]
        )
    header = ["setup", "site", "site file", "policy", "parameters", "CPUs", "queues", "jobs"]
    right = [False] * 5 + [True, False, True]
    return Table(header, rows, right)


def _metrics_block(comp: Comparison) -> Table:
    marks = best_marks(comp.table)
    texts = {c: metric_texts(c, comp.table[c].astype(float).tolist()) for c in METRIC_COLUMNS}
    rows, bold = [], set()
    for i, setup in enumerate(comp.table.index):
        mark = [marks[c][str(setup)] for c in METRIC_COLUMNS]
        cells = [marked(texts[c][i], m) for c, m in zip(METRIC_COLUMNS, mark, strict=True)]
        rows.append([str(setup), *cells])
        bold |= {(i, j + 1) for j, m in enumerate(mark) if m}
    header = ["setup"] + [_HEADERS[c] for c in METRIC_COLUMNS]
    keys = [[None, *(float(v) for v in row)] for row in comp.table[list(METRIC_COLUMNS)].to_numpy()]
    right = [False] + [True] * len(METRIC_COLUMNS)
    return Table(header, rows, right, frozenset(bold), keys=keys)


def _against_block(comp: Comparison) -> Table:
    columns = (
        ("users improved", "users_improved_pct", "{:.1f} %"),
        ("jobs improved", "jobs_improved_pct", "{:.1f} %"),
        ("mean decrease, jobs", "mean_improvement_h", "{:,.1f}"),
        ("users deteriorated", "users_deteriorated_pct", "{:.1f} %"),
        ("jobs deteriorated", "jobs_deteriorated_pct", "{:.1f} %"),
        ("mean increase, jobs", "mean_deterioration_h", "{:,.1f}"),
        ("mean decrease, users", "mean_user_improvement_h", "{:,.1f}"),
        ("mean increase, users", "mean_user_deterioration_h", "{:,.1f}"),
    )
    rows = [
        [str(setup)] + [_num(float(row[c]), f) for _, c, f in columns]
        for setup, row in comp.against_baseline.iterrows()
    ]
    units = [""] + ["h" if c.endswith("_h") else "" for _, c, _ in columns]
    header = ["setup"] + [h for h, _, _ in columns]
    return Table(header, rows, [False] + [True] * len(columns), units=units)


def _queues_block(comp: Comparison) -> Table:
    """Each queue's figures per setup, a setup's change against the baseline beside each."""
    header = ["queue", "setup", "jobs", "AWWT", "median", "p90", "p99", "max", "> 24 h"]
    hours = ("awwt", "median_wait", "p90_wait", "p99_wait", "max_wait")
    rows, keys = [], []
    for record in comp.per_queue.reset_index().to_dict(orient="records"):
        against = record["setup"] != comp.baseline
        cells = [_with_change(record, c, HOUR, "{:,.1f}", against) for c in hours]
        cells.append(_with_change(record, "waited_over_24h", 0.01, "{:.1f} %", against))
        rows.append([str(record["queue"]), str(record["setup"]), f"{int(record['jobs']):,}"])
        rows[-1] += cells
        figures = [*hours, "waited_over_24h"]
        keys.append([None, None, float(record["jobs"]), *(float(record[c]) for c in figures)])
    units = ["", "", "", "h", "h", "h", "h", "h", ""]
    right = [False, False, True, True, True, True, True, True, True]
    return Table(header, rows, right, units=units, keys=keys)


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


def _losers_block(comp: Comparison) -> Table:
    header = [
        "setup",
        "user",
        "jobs",
        f"mean wait under {comp.baseline}",
        "mean wait",
        "change",
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
    units = ["", "", "", "h", "h", "h"]
    return Table(header, rows, [False, True, True, True, True, True], units=units)


def cleaning_counts(comp: Comparison) -> dict[str, dict[str, int]]:
    return {name: dict(r.cleaning) for name, r in comp.runs.items()}


def _cleaning_block(comp: Comparison) -> Table | Para:
    counts = cleaning_counts(comp)
    reasons = list(next(iter(counts.values())))
    shown = [r for r in reasons if any(c.get(r, 0) for c in counts.values())]
    if not shown:
        return Para.of("No job was dropped or repaired by data cleaning, in any setup.")
    rows = [[r] + [f"{c.get(r, 0):,}" for c in counts.values()] for r in shown]
    return Table(["reason", *counts], rows, [False] + [True] * len(counts))


def _heatmap_words(grid: WaitGrid) -> Text:
    spec = grid.spec
    if spec.kind == "seconds":
        bins = f"bins of {spec.label}, counted from the trace's start"
    elif grid.clock.dated:
        start = "midnight" if spec.kind == "day" else "Monday midnight"
        zone = grid.clock.zone_name
        bins = f"one {spec.kind} per column, from {start} in "
        return text_of(
            "Mean wait of the jobs submitted in each queue and time bin (",
            bins,
            Verbatim(zone),
            _HEATMAP_REST,
        )
    else:
        bins = f"one {spec.kind} per column, counted from the trace's start"
    return markup(
        f"Mean wait of the jobs submitted in each queue and time bin ({bins}" + _HEATMAP_REST
    )


_HEATMAP_REST = (
    "; a job submitted exactly on a bin edge counts in the later bin). One panel per setup, "
    "on one colour scale: linear up to 1 minute, logarithmic above. Hatched cells: no job "
    "was submitted (not a zero wait). Rows are the site's queues in its file's order, with "
    "their job counts. The numbers are in `heatmap.csv` (blank: no job), the image also as "
    "`heatmap.svg`."
)


def report_document(
    comp: Comparison,
    grids: Mapping[str, WaitGrid],
    png: bytes | None,
    command: str | None,
    files: Sequence[str],
    svg: bytes | None = None,
    *,
    figure: str = "heatmap.png",
    figures: Sequence[tuple[str, ReportFigure]] = (),
) -> Report:
    """The comparison's report (sections :data:`SECTIONS`), to render with any renderer;
    ``files`` are listed (and linked) last, ``figure`` is where the heatmap lies beside a
    Markdown rendering (``png``: the image; None: not drawn, as for the terminal, which
    draws the heatmap itself), ``figures`` the other figures with where each lies."""
    count = len(comp.runs)
    on = comp.workload or "a workload"
    title = (
        f"Run of {comp.baseline} on {on}" if count == 1 else f"Comparison of {count} setups on {on}"
    )
    made: list[str | Verbatim | Code] = [f"Made by queuesim {__version__}"]
    made += [" with ", Code(command), "."] if command else ["."]
    lead: list[Block] = [
        Para.of(
            *made,
            " Each setup replays the same trace; the baseline is ",
            Strong(comp.baseline),
            ". Durations read d (days), h (hours), m (minutes), s (seconds).",
        )
    ]
    tau = next(iter(comp.metrics.values())).bounded_slowdown_tau
    sections = [
        Section(SECTIONS[0], [_setup_rows(comp)]),
        Section(
            SECTIONS[1],
            [
                Para.of(
                    "As in Klusáček et al. (paper 004, Table 1), with each job weighted by its "
                    "CPU time e = cpus * runtime: AWWT, AWRT and AWSD are the weighted means of "
                    "wait, response time and slowdown; ANUWT and NUWT-dev the mean and "
                    "standard deviation over users of their total wait divided by their CPU "
                    f"time. Bounded slowdown uses τ = {tau:g} s. The best value of each column "
                    "is in bold, marked (tie) when several setups share it; lower is better, "
                    "except utilization. Each column shows as many digits as it takes to tell "
                    "different values apart."
                ),
                _metrics_block(comp),
            ],
        ),
        Section(SECTIONS[2], _against_blocks(comp)),
        Section(SECTIONS[3], _losers_blocks(comp)),
        Section(
            SECTIONS[4],
            [
                Para.of(
                    "Per queue (and over all queues), each setup's job count, AWWT, median, "
                    "90th and 99th percentile and longest wait, in hours, and the share of "
                    "jobs that waited more than a day; in brackets, the change against the "
                    "baseline on the same queue (hours, percentage points). Percentiles "
                    "interpolate linearly between the two nearest waits (numpy's default). All "
                    "figures, mean bounded slowdown and the share waiting over an hour "
                    "included, are in `queues.csv`."
                ),
                _queues_block(comp),
            ],
        ),
        Section(
            SECTIONS[5],
            [
                Para(_heatmap_words(next(iter(grids.values())))),
                *(
                    [
                        Figure(
                            figure,
                            "Mean wait per queue and time bin, one panel per setup",
                            png,
                            svg,
                        )
                    ]
                    if png is not None
                    else []
                ),
            ],
        ),
        Section(SECTIONS[6], _figure_blocks(figures)),
        Section(
            SECTIONS[7],
            [
                Para.of(
                    "Jobs each cleaning rule dropped or repaired while reading the trace for "
                    "each setup (the job lists are in each setup's `cleaning.csv`)."
                ),
                _cleaning_block(comp),
            ],
        ),
        Section(SECTIONS[8], [Bullets([(Link(f, f),) for f in files])]),
    ]
    facts = {
        "queuesim_version": __version__,
        "command": command,
        "workload": comp.workload,
        "baseline": comp.baseline,
        "setups": {
            name: {"site": r.site, "policy": r.policy, "params": dict(r.params)}
            for name, r in comp.runs.items()
        },
    }
    return Report(title, lead, sections, facts)


def _figure_blocks(figures: Sequence[tuple[str, ReportFigure]]) -> list[Block]:
    if not figures:
        return [Para.of("No figure was drawn for this report.")]
    blocks: list[Block] = [
        Para.of(
            "Times are hours since the trace's first submission. The Gantt charts show a "
            "window from the baseline's median submit time; their CPU rows are bands "
            "placed for drawing (queuesim does not record which CPU a job ran on). Each "
            "image is also written as SVG."
        )
    ]
    blocks += [Figure(file, fig.caption, fig.png, fig.svg) for file, fig in figures]
    return blocks


def _against_blocks(comp: Comparison) -> list[Block]:
    if comp.against_baseline.empty:
        return [Para.of("Only one setup: there is nothing to compare with the baseline.")]
    counts = sorted({int(n) for n in comp.against_baseline["matched_jobs"]})
    matched = (
        f"{counts[0]:,} matched in every setup"
        if len(counts) == 1
        else f"from {counts[0]:,} to {counts[-1]:,} matched, depending on the setup"
    )
    words = Para.of(
        "Against ",
        Verbatim(comp.baseline),
        f" (paper 004, Table 2). Jobs are matched by job id ({matched}). A job improved if "
        "it waited strictly less than under the baseline and deteriorated if strictly more; "
        "a user improved or deteriorated by the same rule on their mean wait over their "
        "matched jobs. Percentages are of all matched jobs / users. The mean decrease and "
        "increase are in hours, averaged over the improved / deteriorated jobs (as in the "
        "paper) and, in the last two columns, users.",
    )
    return [words, _against_block(comp)]


def _losers_blocks(comp: Comparison) -> list[Block]:
    if comp.losers.empty:
        return [Para.of("No user's mean wait grew against the baseline.")]
    words = Para.of(
        f"Per setup, the {comp.top} users whose mean wait (over their matched jobs) grew the "
        "most against the baseline, in hours."
    )
    return [words, _losers_block(comp)]
