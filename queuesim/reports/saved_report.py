"""``queuesim report``: a report made again from saved runs, without simulating.

The inputs are run folders (``queuesim run --out``) or comparison bundles
(``queuesim compare --out``, whose setup folders are read in the bundle's order, its
baseline kept unless another is asked for). One run gives a run report; several give a
comparison, the same one ``compare`` prints, built from the saved job tables
(:meth:`~queuesim.results.comparison.Comparison.from_runs`). The output's suffix chooses
the renderer: ``.html`` (one self-contained page), ``.md`` (the figures written beside it
as ``NAME-heatmap.png``, ``NAME-gantt.png``...) or ``.json``; ``.csv`` writes one run's
jobs as evalys reads them (:mod:`queuesim.results.job_columns`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.reports.bundle import BUNDLE_KIND, ReportError
from queuesim.reports.comparison_report import report_document
from queuesim.reports.heatmap_plot import render_heatmap
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.reports.render_text import to_json
from queuesim.reports.report_figures import comparison_figures
from queuesim.reports.run_dir import read_run_dir
from queuesim.results.comparison import Comparison
from queuesim.results.job_columns import evalys_jobs
from queuesim.results.run_facts import RunFacts

__all__ = ["FORMATS", "collect_runs", "write_saved_report"]

#: Output suffix -> format.
FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".json": "json", ".csv": "evalys"}


def report_format(out: Path) -> str:
    """The format ``out``'s suffix names.

    Raises:
        ReportError: the suffix is none of :data:`FORMATS`.
    """
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ReportError(
            f"-o {out}: the report's format is chosen by its suffix; expected one of "
            f"{', '.join(FORMATS)}"
        )
    return fmt


def _bundle_setups(folder: Path) -> tuple[list[Path], str | None]:
    """A bundle's setup folders, in order, and its baseline."""
    try:
        document = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"{folder / 'comparison.json'}: not readable ({exc})") from None
    if not isinstance(document, dict) or document.get("kind") != BUNDLE_KIND:
        raise ReportError(f"{folder / 'comparison.json'}: not written by queuesim compare")
    setups = document.get("setups") or []
    folders = [folder / str(s.get("folder", "")) for s in setups if isinstance(s, dict)]
    missing = [str(f) for f in folders if not (f / "metrics.json").is_file()]
    if missing or not folders:
        raise ReportError(
            f"{folder}: this bundle does not hold its setups' run folders "
            f"({', '.join(missing) or 'none listed'}); run its compare command again with "
            "--out to get them"
        )
    baseline = document.get("baseline")
    return folders, str(baseline) if isinstance(baseline, str) else None


def collect_runs(paths: Sequence[str | Path]) -> tuple[dict[str, RunFacts], str | None]:
    """The runs of ``paths`` (run folders or bundles), named ``site/policy`` - or by folder
    when two runs share that name - and the baseline of the first bundle, if any."""
    folders: list[Path] = []
    baseline: str | None = None
    for path in paths:
        folder = Path(path)
        if (folder / "comparison.json").is_file() and not (folder / "metrics.json").is_file():
            inner, base = _bundle_setups(folder)
            folders += inner
            baseline = baseline or base
        else:
            folders.append(folder)
    runs = [read_run_dir(f) for f in folders]
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        names = [f.as_posix() for f in folders]
        if len(set(names)) != len(names):
            raise ReportError(f"the same run folder is given twice: {', '.join(names)}")
    return {n: r.require_facts() for n, r in zip(names, runs, strict=True)}, baseline


def _write_evalys(out: Path, runs: dict[str, RunFacts]) -> Path:
    if len(runs) != 1:
        raise ReportError(
            f"-o {out}: an evalys jobs CSV holds one run; {len(runs)} were given "
            f"({', '.join(runs)})"
        )
    run = next(iter(runs.values()))
    table = evalys_jobs(run.jobs, run.total_cpus, run.workload)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        table.to_csv(tmp, index=False, lineterminator="\n", na_rep="")
    return out


def write_saved_report(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    baseline: str | None = None,
    bin: str = "day",
    top: int = 5,
    tau: float = 10.0,
    command: str | None = None,
    figures: bool = True,
) -> list[Path]:
    """Write the report of the saved runs ``paths`` to ``out``; returns the files written
    (the report, and beside a Markdown report its figure)."""
    out = Path(out)
    fmt = report_format(out)
    runs, bundle_baseline = collect_runs(paths)
    if fmt == "evalys":
        return [_write_evalys(out, runs)]
    workloads = sorted({r.workload for r in runs.values() if r.workload})
    comp = Comparison.from_runs(
        runs, baseline or bundle_baseline, top=top, tau=tau, workload=", ".join(workloads)
    )
    grids = comp.heatmap(bin)
    png = render_heatmap(grids, "png")
    figure = out.with_name(f"{out.stem}-heatmap.png")
    inputs = [
        Path(os.path.relpath(Path(p).resolve(), out.resolve().parent)).as_posix() for p in paths
    ]
    drawn = comparison_figures(comp) if figures else []
    placed = [(f"{out.stem}-{f.stem}.png", f) for f in drawn]
    report = report_document(comp, grids, png, command, inputs, figure=figure.name, figures=placed)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = [out]
    if fmt == "html":
        atomic_write_text(out, to_html(report))
    elif fmt == "json":
        atomic_write_text(out, to_json(report))
    else:
        for path, data in [(figure, png), *((out.with_name(f), g.png) for f, g in placed)]:
            with atomic_path(path) as tmp:
                tmp.write_bytes(data)
            written.append(path)
        atomic_write_text(out, to_markdown(report))
    return written
