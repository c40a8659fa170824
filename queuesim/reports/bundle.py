"""The report bundle of a comparison, and reading a saved run back.

:func:`write_bundle` writes everything a comparison produced into one folder::

    report.md             the report, top to bottom: setups, tables, heatmaps, cleaning
    report.html           the same, self-contained (images embedded as base64)
    comparison.json       every figure, definitions' inputs, the setups and the file list
    metrics.csv           Table 1: one row per setup, metrics in seconds / plain ratios
    against-baseline.csv  Table 2: wait changes against the baseline, per setup
    losers.csv            the users who lost the most, per setup
    heatmap.png / .svg    mean wait per queue and time bin, one panel per setup
    heatmap.csv           the same grid in numbers (blank: no job submitted)
    <setup>/              each setup's run, as ``queuesim run --out`` writes it
                          (``site/policy`` setups nest: ``kth-sp2/easy/``)

The folder is written as a whole: the bundle is built in a temporary folder beside the
target and swapped in only once complete, so an error midway leaves the previous bundle
untouched, and a re-run leaves no stale file behind. Because the target is replaced as a
whole, an existing folder is only replaced when it is empty or is itself a bundle (has a
``comparison.json`` written by queuesim); anything else is refused rather than deleted.

Same inputs give the same bytes: no timestamps, paths relative to the bundle, and
deterministic images (see :mod:`queuesim.reports.heatmap_plot`).

:func:`read_run_dir` reads a run folder (``metrics.json`` plus ``jobs.parquet`` or
``jobs.csv``) back for ``queuesim heatmap``.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.common.errors import QueuesimError
from queuesim.common.version import __version__
from queuesim.reports.heatmap_plot import render_heatmap
from queuesim.reports.terminal import format_metric
from queuesim.results.comparison import METRIC_COLUMNS, Comparison, best_setups
from queuesim.results.heatmap import BinSpec, TraceClock, WaitGrid, parse_bin
from queuesim.results.output import write_run
from queuesim.results.registry import MetricOptions, extra_metrics

__all__ = [
    "BUNDLE_KIND",
    "SECTIONS",
    "ReportError",
    "RunDir",
    "bundle_dir_name",
    "check_bundle_target",
    "read_run_dir",
    "write_bundle",
    "write_heatmap_files",
]

#: The ``kind`` of ``comparison.json``: marks a folder queuesim may replace as a whole.
BUNDLE_KIND = "queuesim-compare"
#: The second-level headings of report.md, in order (the reports/ example test checks them).
SECTIONS = (
    "Setups",
    "Performance and fairness",
    "Wait times against the baseline",
    "Users who lost the most",
    "Mean wait per queue over time",
    "Data cleaning",
    "Files",
)
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


class ReportError(QueuesimError):
    """A report or a saved run cannot be written or read where asked."""


# --- a tiny document model, rendered as markdown and as HTML ---------------------------------


@dataclass(frozen=True)
class _Heading:
    level: int
    text: str


@dataclass(frozen=True)
class _Para:
    text: str  #: plain text; `backticks` mark code


@dataclass(frozen=True)
class _Table:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[bool]  #: right-align this column (numbers)
    bold: frozenset[tuple[int, int]] = frozenset()  #: (row, column) cells to emphasise


@dataclass(frozen=True)
class _Image:
    file: str
    alt: str
    png: bytes = field(repr=False)


@dataclass(frozen=True)
class _Bullets:
    items: Sequence[str]


_Block = _Heading | _Para | _Table | _Image | _Bullets


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(blocks: Iterable[_Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            out.append("#" * block.level + " " + block.text)
        elif isinstance(block, _Para):
            out.append(block.text)
        elif isinstance(block, _Table):
            lines = [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "|".join("---:" if r else "---" for r in block.right) + "|",
            ]
            for i, row in enumerate(block.rows):
                cells = [
                    f"**{_md_cell(c)}**" if (i, j) in block.bold and c else _md_cell(c)
                    for j, c in enumerate(row)
                ]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
        elif isinstance(block, _Image):
            out.append(f"![{block.alt}]({block.file})")
        else:
            out.append("\n".join(f"- {item}" for item in block.items))
    return "\n\n".join(out) + "\n"


def _inline_html(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


_CSS = """\
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 72rem;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; }
th { border-bottom: 2px solid #888; vertical-align: bottom; }
td.n, th.n { text-align: right; }
td strong { color: #17692e; }
code { background: #f3f3f3; padding: 0 0.2rem; }
img { max-width: 100%; }
"""


def to_html(blocks: Iterable[_Block], title: str) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>\n{_CSS}</style>",
        "</head>",
        "<body>",
    ]
    for block in blocks:
        if isinstance(block, _Heading):
            out.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, _Para):
            out.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, _Table):
            out.append("<table>")

            def cls(j: int, tbl: _Table = block) -> str:
                return ' class="n"' if tbl.right[j] else ""

            out.append(
                "<tr>"
                + "".join(f"<th{cls(j)}>{html.escape(h)}</th>" for j, h in enumerate(block.header))
                + "</tr>"
            )
            for i, row in enumerate(block.rows):
                cells = []
                for j, c in enumerate(row):
                    text = html.escape(c)
                    if (i, j) in block.bold and c:
                        text = f"<strong>{text}</strong>"
                    cells.append(f"<td{cls(j)}>{text}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
        elif isinstance(block, _Image):
            data = base64.b64encode(block.png).decode("ascii")
            out.append(
                f'<p><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"></p>'
            )
        else:
            out.append("<ul>")
            out.extend(f"<li>{_inline_html(item)}</li>" for item in block.items)
            out.append("</ul>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


# --- the content -----------------------------------------------------------------------------


def _num(x: float, fmt: str = "{:,.1f}") -> str:
    return fmt.format(x) if math.isfinite(x) else "-"


def bundle_dir_name(setup: str) -> str:
    """The folder of a setup's run inside a bundle: its name, each ``/``-separated part
    reduced to letters, digits, ``.``, ``_`` and ``-``."""
    parts = [re.sub(r"[^A-Za-z0-9._-]", "_", p) or "_" for p in setup.split("/")]
    return "/".join("_" if p in (".", "..") else p for p in parts)


def _setup_rows(comp: Comparison) -> _Table:
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
    return _Table(header, rows, right)


def _metrics_block(comp: Comparison) -> _Table:
    best = best_setups(comp.table, shown=format_metric)
    rows, bold = [], set()
    for i, (setup, row) in enumerate(comp.table.iterrows()):
        rows.append([str(setup)] + [format_metric(c, float(row[c])) for c in METRIC_COLUMNS])
        bold |= {(i, j + 1) for j, c in enumerate(METRIC_COLUMNS) if setup in best[c]}
    header = ["setup"] + [_HEADERS[c] for c in METRIC_COLUMNS]
    return _Table(header, rows, [False] + [True] * len(METRIC_COLUMNS), frozenset(bold))


def _against_block(comp: Comparison) -> _Table:
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
    return _Table(["setup"] + [h for h, _, _ in columns], rows, [False] + [True] * len(columns))


def _losers_block(comp: Comparison) -> _Table:
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
    return _Table(header, rows, [False, True, True, True, True, True])


def _cleaning_counts(comp: Comparison) -> dict[str, dict[str, int]]:
    return {name: dict(r.workload.cleaning.counts) for name, r in comp.results.items()}


def _cleaning_block(comp: Comparison) -> _Table | _Para:
    counts = _cleaning_counts(comp)
    reasons = list(next(iter(counts.values())))
    shown = [r for r in reasons if any(c.get(r, 0) for c in counts.values())]
    if not shown:
        return _Para("No job was dropped or repaired by data cleaning, in any setup.")
    rows = [[r] + [f"{c.get(r, 0):,}" for c in counts.values()] for r in shown]
    return _Table(["reason", *counts], rows, [False] + [True] * len(counts))


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


def _document(
    comp: Comparison,
    grids: Mapping[str, WaitGrid],
    png: bytes,
    command: str | None,
    files: Sequence[str],
) -> tuple[str, list[_Block]]:
    count = len(comp.results)
    title = (
        f"Comparison of {count} setup{'' if count == 1 else 's'} on {comp.workload or 'a workload'}"
    )
    made = f"Made by queuesim {__version__}" + (f" with `{command}`." if command else ".")
    blocks: list[_Block] = [
        _Heading(1, title),
        _Para(
            f"{made} Each setup replays the same trace; the baseline is **{comp.baseline}**. "
            "Durations read d (days), h (hours), m (minutes), s (seconds)."
        ),
        _Heading(2, SECTIONS[0]),
        _setup_rows(comp),
        _Heading(2, SECTIONS[1]),
        _Para(
            "As in Klusáček et al. (paper 004, Table 1), with each job weighted by its CPU "
            "time e = cpus * runtime: AWWT, AWRT and AWSD are the weighted means of wait, "
            "response time and slowdown; ANUWT and NUWT-dev the mean and standard deviation "
            "over users of their total wait divided by their CPU time. Bounded slowdown uses "
            f"τ = {next(iter(comp.metrics.values())).bounded_slowdown_tau:g} s. "
            "The best value of each column is in bold; lower is better, except utilization."
        ),
        _metrics_block(comp),
        _Heading(2, SECTIONS[2]),
    ]
    if comp.against_baseline.empty:
        blocks.append(_Para("Only one setup: there is nothing to compare with the baseline."))
    else:
        counts = sorted({int(n) for n in comp.against_baseline["matched_jobs"]})
        matched = (
            f"{counts[0]:,} matched in every setup"
            if len(counts) == 1
            else f"from {counts[0]:,} to {counts[-1]:,} matched, depending on the setup"
        )
        blocks += [
            _Para(
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
    blocks.append(_Heading(2, SECTIONS[3]))
    if comp.losers.empty:
        blocks.append(_Para("No user's mean wait grew against the baseline."))
    else:
        blocks += [
            _Para(
                f"Per setup, the {comp.top} users whose mean wait (over their matched jobs) "
                "grew the most against the baseline, in hours."
            ),
            _losers_block(comp),
        ]
    first = next(iter(grids.values()))
    blocks += [
        _Heading(2, SECTIONS[4]),
        _Para(_heatmap_words(first)),
        _Image("heatmap.png", "Mean wait per queue and time bin, one panel per setup", png),
        _Heading(2, SECTIONS[5]),
        _Para(
            "Jobs each cleaning rule dropped or repaired while reading the trace for each "
            "setup (the job lists are in each setup's `cleaning.csv`)."
        ),
        _cleaning_block(comp),
        _Heading(2, SECTIONS[6]),
        _Bullets([f"`{f}`" for f in files]),
    ]
    return title, blocks


# --- writing ---------------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {
        str(k): {str(c): v for c, v in row.items()}
        for k, row in frame.to_dict(orient="index").items()
    }


def _write_csv(path: Path, frame: pd.DataFrame, *, index: bool) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=index, lineterminator="\n", na_rep="")


def heatmap_frame(grids: Mapping[str, WaitGrid]) -> pd.DataFrame:
    """All grids as one table: ``setup``, ``queue``, then one column per bin start (mean
    wait in minutes; NaN where no job was submitted)."""
    parts = []
    for name, grid in grids.items():
        frame = grid.frame().reset_index()
        frame.insert(0, "setup", name)
        parts.append(frame)
    out = pd.concat(parts, ignore_index=True)
    out.columns.name = None
    return out


def write_heatmap_files(
    folder: Path, grids: Mapping[str, WaitGrid], *, stem: str = "heatmap"
) -> list[Path]:
    """``heatmap.png``, ``heatmap.svg`` and ``heatmap.csv`` of ``grids`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"{stem}.png", folder / f"{stem}.svg", folder / f"{stem}.csv"]
    for path in files[:2]:
        data = render_heatmap(grids, path.suffix[1:])
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    _write_csv(files[2], heatmap_frame(grids), index=False)
    return files


def _jobs_format() -> str:
    return "parquet" if importlib.util.find_spec("pyarrow") is not None else "csv"


def check_bundle_target(out: Path) -> None:
    """Refuse ``out`` unless it is absent, an empty folder, or a previous bundle.

    Raises:
        ReportError: naming the folder and why it will not be replaced.
    """
    if not out.exists():
        return
    if not out.is_dir():
        raise ReportError(f"--out {out}: exists and is not a directory")
    if not any(out.iterdir()):
        return
    marker = out / "comparison.json"
    try:
        kind = json.loads(marker.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind != BUNDLE_KIND:
        raise ReportError(
            f"--out {out}: the folder exists, is not empty and is not a queuesim comparison "
            "bundle (it has no comparison.json written by queuesim). A bundle is replaced as "
            "a whole, so queuesim will not write into it; choose a new folder."
        )


def _swap_in(tmp: Path, out: Path) -> None:
    """Put the finished folder ``tmp`` at ``out``, replacing any previous bundle."""
    os.chmod(tmp, 0o755)
    if not out.exists():
        os.replace(tmp, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    os.rmdir(old)
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_bundle(
    out: str | Path,
    comp: Comparison,
    *,
    bin: str | float | BinSpec = "day",
    command: str | None = None,
) -> list[Path]:
    """Write the report bundle of ``comp`` into ``out`` (see the module docstring).

    ``command`` is the command line that produced the comparison, quoted in the report.
    Returns the files written, under ``out``, in the order listed in ``report.md``.

    Raises:
        ReportError: ``out`` exists and is neither empty nor a previous bundle.
    """
    out = Path(out)
    spec = parse_bin(bin)
    check_bundle_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        names = _write_into(tmp, comp, spec, command)
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / name for name in names]


def _write_into(folder: Path, comp: Comparison, spec: BinSpec, command: str | None) -> list[str]:
    jobs_format = _jobs_format()
    run_files: list[str] = []
    dirs = {name: bundle_dir_name(name) for name in comp.results}
    if len(set(dirs.values())) != len(dirs):
        raise ReportError(f"two setups map to the same folder: {dirs}")
    for name, result in comp.results.items():
        metrics = comp.metrics[name]
        extras = extra_metrics(result, MetricOptions(tau=metrics.bounded_slowdown_tau))
        written = write_run(
            folder / dirs[name], result, metrics, jobs_format=jobs_format, extras=extras
        )
        run_files += [p.relative_to(folder).as_posix() for p in written]

    grids = comp.heatmap(spec)
    top_files = [
        "report.md",
        "report.html",
        "comparison.json",
        "metrics.csv",
        "against-baseline.csv",
        "losers.csv",
        "heatmap.png",
        "heatmap.svg",
        "heatmap.csv",
    ]
    files = top_files + run_files
    write_heatmap_files(folder, grids)
    _write_csv(folder / "metrics.csv", comp.table, index=True)
    _write_csv(folder / "against-baseline.csv", comp.against_baseline, index=True)
    _write_csv(folder / "losers.csv", comp.losers, index=False)

    first = next(iter(comp.results.values()))
    clock = TraceClock.of(first)
    document = {
        "kind": BUNDLE_KIND,
        "queuesim_version": __version__,
        "command": command,
        "workload": comp.workload,
        "baseline": comp.baseline,
        "bin": spec.label,
        "unix_start_time": clock.unix_start_time,
        "time_zone": clock.time_zone,
        "setups": [
            {
                "name": name,
                "folder": dirs[name],
                "site": r.site.name,
                "site_file": comp.sources.get(name),
                "policy": r.policy,
                "params": dict(sorted(r.params.items())),
                "total_cpus": r.site.total_cpus,
                "queues": [q.name for q in r.site.queues],
                "jobs": len(r.jobs),
            }
            for name, r in comp.results.items()
        ],
        "metrics": {name: m.as_dict() for name, m in comp.metrics.items()},
        "against_baseline": _records(comp.against_baseline),
        "losers": comp.losers.to_dict(orient="records"),
        "cleaning": _cleaning_counts(comp),
        "files": files,
    }
    text = json.dumps(_json_safe(document), indent=2, ensure_ascii=False, allow_nan=False)
    atomic_write_text(folder / "comparison.json", text + "\n")

    png = (folder / "heatmap.png").read_bytes()
    title, blocks = _document(comp, grids, png, command, files)
    atomic_write_text(folder / "report.md", to_markdown(blocks))
    atomic_write_text(folder / "report.html", to_html(blocks, title))
    return files


# --- reading a saved run ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RunDir:
    """A saved run read back: its name, job table, queues in site order and clock."""

    name: str
    jobs: pd.DataFrame
    queues: tuple[str, ...]
    clock: TraceClock


def read_run_dir(path: str | Path) -> RunDir:
    """Read a folder written by ``queuesim run --out`` (or a setup folder of a bundle).

    Raises:
        ReportError: the folder is missing, is a whole bundle, or lacks a readable
            ``metrics.json`` or job table.
    """
    folder = Path(path)
    if not folder.exists():
        raise ReportError(f"{folder}: no such result directory")
    if not folder.is_dir():
        raise ReportError(f"{folder}: is a file, not a result directory")
    if (folder / "comparison.json").is_file() and not (folder / "metrics.json").is_file():
        runs = sorted(p.parent.relative_to(folder).as_posix() for p in folder.rglob("metrics.json"))
        listed = ", ".join(str(folder / r) for r in runs) or "none found"
        raise ReportError(
            f"{folder}: is a comparison bundle, not one run; its heatmaps are already in "
            f"heatmap.png. Pass one of its setup folders: {listed}"
        )
    metrics_path = folder / "metrics.json"
    if not metrics_path.is_file():
        raise ReportError(
            f"{folder}: not a queuesim result directory (no metrics.json); write one with "
            "`queuesim run SITE WORKLOAD --out DIR`"
        )
    try:
        document = json.loads(metrics_path.read_text(encoding="utf-8"))
        run = document.get("run", {}) if isinstance(document, dict) else None
        if not isinstance(run, dict):
            raise ValueError("no 'run' object")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"{metrics_path}: not a queuesim metrics.json ({exc})") from None
    jobs = _read_jobs(folder)
    queues = run.get("queues")
    start = run.get("unix_start_time")
    zone = run.get("time_zone")
    site, policy = run.get("site"), run.get("policy")
    name = f"{site}/{policy}" if site and policy else folder.name
    return RunDir(
        name=name,
        jobs=jobs,
        queues=tuple(str(q) for q in queues) if isinstance(queues, list) else (),
        clock=TraceClock(
            int(start) if isinstance(start, int | float) else None,
            zone if isinstance(zone, str) else None,
        ),
    )


def _read_jobs(folder: Path) -> pd.DataFrame:
    parquet, csv = folder / "jobs.parquet", folder / "jobs.csv"
    try:
        if parquet.is_file():
            if importlib.util.find_spec("pyarrow") is None:
                raise ReportError(f"{parquet}: reading Parquet needs pyarrow (pip install pyarrow)")
            jobs = pd.read_parquet(parquet)
            source = parquet
        elif csv.is_file():
            jobs = pd.read_csv(csv)
            source = csv
        else:
            raise ReportError(f"{folder}: has metrics.json but no jobs.csv or jobs.parquet")
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise ReportError(f"{folder}: cannot read the job table ({exc})") from None
    missing = [c for c in ("queue", "submit", "wait") if c not in jobs.columns]
    if missing:
        raise ReportError(f"{source}: lacks column(s) {', '.join(missing)}")
    if jobs.empty:
        raise ReportError(f"{source}: has no jobs")
    jobs["queue"] = jobs["queue"].astype(str)
    return jobs
