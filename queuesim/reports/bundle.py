"""The report bundle of a comparison, and reading a saved run back.

:func:`write_bundle` writes everything a comparison produced into one folder::

    report.md             the report, top to bottom: setups, tables, heatmaps, cleaning
    report.html           the same, self-contained (images embedded as base64)
    comparison.json       every figure, definitions' inputs, the setups and the file list
    metrics.csv           Table 1: one row per setup, metrics in seconds / plain ratios
    against-baseline.csv  Table 2: wait changes against the baseline, per setup
    losers.csv            the users who lost the most, per setup
    queues.csv            wait figures per queue and setup, with changes against the baseline
    heatmap.png / .svg    mean wait per queue and time bin, one panel per setup
    heatmap.csv           the same grid in numbers (blank: no job submitted)
    figures/              the other figures, PNG and SVG: queues over time, wait CDF,
                          Gantt chart, fairshare usage, winners and losers, diff Gantt
    <setup>/              each setup's run, as ``queuesim run --out`` writes it
                          (``site/policy`` setups nest: ``kth-sp2/easy/``)

The folder is written as a whole: the bundle is built in a temporary folder beside the
target (``.<name>.<random>.tmp``; one left by a killed run is removed by the next) and
swapped in only once complete, so an error midway leaves the previous bundle
untouched, and a re-run leaves no stale file behind. Because the target is replaced as a
whole, an existing folder is only replaced when it is empty or is itself a bundle (has a
``comparison.json`` written by queuesim); anything else is refused rather than deleted.

Same inputs give the same bytes: no timestamps, paths relative to the bundle, and
deterministic images (see :mod:`queuesim.reports.heatmap_plot`).

The report's content is made by :mod:`.comparison_report` as a small document
(:mod:`.document`) rendered to Markdown and HTML.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.atomic import (
    atomic_path,
    atomic_write_text,
    check_writable_dir,
    remove_stale_temporaries,
)
from queuesim.common.errors import QueuesimError
from queuesim.common.version import __version__
from queuesim.reports.comparison_report import (
    bundle_dir_name,
    cleaning_counts,
    report_document,
)
from queuesim.reports.heatmap_plot import render_heatmap_as
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.reports.report_figures import comparison_figures
from queuesim.results.comparison import Comparison
from queuesim.results.heatmap import BinSpec, WaitGrid, parse_bin
from queuesim.results.output import write_run
from queuesim.results.registry import MetricOptions, extra_metrics

#: The ``kind`` of ``comparison.json``: marks a folder queuesim may replace as a whole.
BUNDLE_KIND = "queuesim-compare"


class ReportError(QueuesimError):
    """A report or a saved run cannot be written or read where asked."""


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
    folder: Path, grids: Mapping[str, WaitGrid], *, stem: str = "heatmap", log: bool = True
) -> list[Path]:
    """``heatmap.png``, ``heatmap.svg`` and ``heatmap.csv`` of ``grids`` in ``folder``
    (``log``: the colour scale, see :func:`.heatmap_plot.heatmap_figure`)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"{stem}.png", folder / f"{stem}.svg", folder / f"{stem}.csv"]
    for path, data in zip(
        files[:2], render_heatmap_as(grids, ("png", "svg"), log=log), strict=True
    ):
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
    check_writable_dir(out)
    if not out.exists():
        return
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
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old.tmp", dir=out.parent))
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
    jobs_format: str | None = None,
    figures: bool = True,
    run_folders: bool = True,
) -> list[Path]:
    """Write the report bundle of ``comp`` into ``out`` (see the module docstring).

    ``command`` is the command line that produced the comparison, quoted in the report.
    ``jobs_format`` (``parquet`` or ``csv``) is the setups' job tables' format; default:
    Parquet when pyarrow is installed. ``figures=False`` leaves out ``figures/`` (the
    heatmap stays). ``run_folders=False`` leaves out the setups' run folders (each a full
    run's per-job files: tens of megabytes on a large trace); the bundle then holds the
    comparison only, and ``queuesim report`` cannot rebuild it.
    Returns the files written, under ``out``, in the order listed in ``report.md``.

    Raises:
        ReportError: ``out`` exists and is neither empty nor a previous bundle.
    """
    out = Path(out)
    spec = parse_bin(bin)
    check_bundle_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out.parent, out.name)  # a killed earlier run's
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        names = _write_into(
            tmp, comp, spec, command, jobs_format or _jobs_format(), figures, run_folders
        )
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / name for name in names]


def _write_into(
    folder: Path,
    comp: Comparison,
    spec: BinSpec,
    command: str | None,
    jobs_format: str,
    figures: bool,
    run_folders: bool,
) -> list[str]:
    run_files: list[str] = []
    if set(comp.results) != set(comp.runs):
        raise ReportError(
            "a report bundle holds every setup's run folder, so it needs the simulations "
            "themselves; to report on saved runs, use `queuesim report`"
        )
    dirs = {name: bundle_dir_name(name) for name in comp.runs}
    if len(set(dirs.values())) != len(dirs):
        raise ReportError(f"two setups map to the same folder: {dirs}")
    for name, result in comp.results.items() if run_folders else ():
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
        "queues.csv",
        "heatmap.png",
        "heatmap.svg",
        "heatmap.csv",
    ]
    drawn = comparison_figures(comp) if figures else []
    placed = [(f"figures/{f.stem}.png", f) for f in drawn]
    figure_files = [name for file, _ in placed for name in (file, file[:-3] + "svg")]
    files = top_files + figure_files + run_files
    if placed:
        (folder / "figures").mkdir()
    for file, fig in placed:
        for name, data in ((file, fig.png), (file[:-3] + "svg", fig.svg)):
            with atomic_path(folder / name) as tmp:
                tmp.write_bytes(data)
    write_heatmap_files(folder, grids)
    _write_csv(folder / "metrics.csv", comp.table, index=True)
    _write_csv(folder / "against-baseline.csv", comp.against_baseline, index=True)
    _write_csv(folder / "losers.csv", comp.losers, index=False)
    _write_csv(folder / "queues.csv", comp.per_queue, index=True)

    clock = next(iter(comp.runs.values())).clock
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
                "folder": dirs[name] if run_folders else None,
                "site": r.site,
                "site_file": comp.sources.get(name),
                "policy": r.policy,
                "params": dict(sorted(r.params.items())),
                "total_cpus": r.total_cpus,
                "queues": list(r.queues),
                "jobs": len(r.jobs),
            }
            for name, r in comp.runs.items()
        ],
        "metrics": {name: m.as_dict() for name, m in comp.metrics.items()},
        "against_baseline": _records(comp.against_baseline),
        "losers": comp.losers.to_dict(orient="records"),
        "per_queue": comp.per_queue.reset_index().to_dict(orient="records"),
        "cleaning": cleaning_counts(comp),
        "files": files,
    }
    text = json.dumps(_json_safe(document), indent=2, ensure_ascii=False, allow_nan=False)
    atomic_write_text(folder / "comparison.json", text + "\n")

    png = (folder / "heatmap.png").read_bytes()
    report = report_document(comp, grids, png, command, files, figures=placed)
    atomic_write_text(folder / "report.md", to_markdown(report))
    atomic_write_text(folder / "report.html", to_html(report))
    return files
