"""Reading a saved run folder (``metrics.json`` plus ``jobs.parquet`` or ``jobs.csv``) back,
for ``queuesim heatmap`` and ``queuesim report``."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from queuesim.common.atomic import stale_temporaries
from queuesim.reports.bundle import ReportError
from queuesim.results.heatmap import TraceClock
from queuesim.results.output import COMPLETION_MARKER
from queuesim.results.run_facts import RunFacts

# --- reading a saved run ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RunDir:
    """A saved run read back: its name, job table, queues in site order and clock."""

    name: str
    jobs: pd.DataFrame
    queues: tuple[str, ...]
    clock: TraceClock
    #: everything a comparison or report needs of the run; None in a folder written by an
    #: older queuesim, with the reason in ``facts_problem``
    facts: RunFacts | None = None
    facts_problem: str = ""

    def require_facts(self) -> RunFacts:
        """The run's facts, or :class:`ReportError` saying why the folder lacks them."""
        if self.facts is None:
            raise ReportError(self.facts_problem)
        return self.facts


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
    clock = TraceClock(
        int(start) if isinstance(start, int | float) else None,
        zone if isinstance(zone, str) else None,
    )
    names = tuple(str(q) for q in queues) if isinstance(queues, list) else ()
    try:
        facts = _facts(document, run, jobs, names, clock, folder)
    except ReportError as exc:
        return RunDir(name, jobs, names, clock, None, str(exc))
    return RunDir(name, jobs, names, clock, facts)


def _facts(
    document: dict[str, Any],
    run: dict[str, Any],
    jobs: pd.DataFrame,
    queues: tuple[str, ...],
    clock: TraceClock,
    folder: Path,
) -> RunFacts:
    """The run's facts from its ``metrics.json``; queues found only in the job table are
    added after the listed ones, and CPUs missing from an older file are an error."""
    cpus = run.get("total_cpus")
    if not isinstance(cpus, int) or cpus <= 0:
        raise ReportError(
            f"{folder / 'metrics.json'}: run.total_cpus is missing or not a positive "
            "integer (written by an older queuesim?); run it again to report on it"
        )
    seen = [*queues, *sorted({str(q) for q in jobs["queue"]} - set(queues))]
    cleaning = document.get("cleaning")
    params = run.get("params")
    return RunFacts(
        jobs=jobs,
        site=str(run.get("site") or folder.name),
        policy=str(run.get("policy") or "?"),
        params=dict(params) if isinstance(params, dict) else {},
        total_cpus=cpus,
        queues=tuple(seen),
        cleaning={str(k): int(v) for k, v in cleaning.items()}
        if isinstance(cleaning, dict)
        else {},
        clock=clock,
        workload=str(run.get("workload") or ""),
        extra={"queuesim_version": run.get("queuesim_version"), "folder": str(folder)},
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
