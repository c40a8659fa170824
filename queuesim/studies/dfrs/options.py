"""The DFRS study from the command line: its options, and what it prints."""

from __future__ import annotations

import math
from pathlib import Path

from rich.console import Console

from queuesim.common.errors import QueuesimError
from queuesim.reports.progress import TaskProgress
from queuesim.reports.render_text import print_report
from queuesim.studies.dfrs.config import StudyConfig
from queuesim.studies.dfrs.running import run_study

# --- command line -------------------------------------------------------------------------


def _numbers(text: str, option: str, example: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise QueuesimError(
            f"{option} expects comma-separated numbers such as {example}, got {text!r}"
        ) from None
    if not values:
        raise QueuesimError(f"{option} expects at least one number, got {text!r}")
    return values


def parse_loads(text: str) -> tuple[float, ...]:
    """``0.1,0.5`` -> (0.1, 0.5): sorted, without repeats, each in (0, 1]."""
    loads = _numbers(text, "--loads", "0.1,0.5,0.9")
    bad = [x for x in loads if not (math.isfinite(x) and 0 < x <= 1)]
    if bad:
        raise QueuesimError(f"--loads expects load levels in (0, 1], got {bad[0]:g}")
    return tuple(sorted(set(loads)))


def parse_penalties(text: str) -> tuple[float, ...]:
    """``0,300`` -> (0.0, 300.0): in the given order, without repeats, each >= 0."""
    penalties = _numbers(text, "--penalties", "0,300")
    bad = [x for x in penalties if not (math.isfinite(x) and x >= 0)]
    if bad:
        raise QueuesimError(f"--penalties expects seconds >= 0, got {bad[0]:g}")
    return tuple(dict.fromkeys(penalties))


def run_and_print(
    config: StudyConfig,
    out: Path,
    *,
    command: str,
    workers: int | None,
    console: Console,
    quiet: bool,
) -> None:
    """Run the study into ``out`` with a progress bar on ``console``, then print its report
    and the files written (nothing at all when ``quiet``)."""
    with TaskProgress(console, "bounds and runs", 0) as shown:
        result = run_study(
            config,
            out,
            command=command,
            workers=workers,
            on_progress=None if quiet else lambda tasks, text: shown.finished(text, tasks),
        )
    if not quiet:
        assert result.report is not None
        print_report(console, result.report)
        console.print(
            f"study time {result.seconds / 60:.1f} min; written: "
            + ", ".join(str(f) for f in result.files),
            highlight=False,
        )
