"""Reading a saved run folder (``metrics.json`` plus ``jobs.parquet`` or ``jobs.csv``) back,
for ``queuesim heatmap``."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from queuesim.common.atomic import stale_temporaries
from queuesim.reports.bundle import ReportError
from queuesim.results.heatmap import TraceClock
from queuesim.results.output import COMPLETION_MARKER

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
    metrics_path = folder / COMPLETION_MARKER
    _refuse_incomplete(folder, metrics_path)
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


#: files of a run folder other than its completion marker
_RUN_FILES = ("jobs.parquet", "jobs.csv", "schedule.swf", "cleaning.csv", "queues.csv", "users.csv")


def _refuse_incomplete(folder: Path, marker: Path) -> None:
    """Refuse a run folder whose writing was interrupted: run files (or a writer's
    temporaries) without the completion marker, which is written last."""
    if marker.is_file():
        return
    present = [name for name in _RUN_FILES if (folder / name).exists()]
    present += [p.name for p in stale_temporaries(folder)]
    if present:
        raise ReportError(
            f"{folder}: incomplete run folder: it has {', '.join(present)} but no "
            f"{COMPLETION_MARKER}, which is written last, so writing it was interrupted; "
            "run `queuesim run SITE WORKLOAD --out DIR` into it again"
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
