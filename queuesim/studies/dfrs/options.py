"""The DFRS study from the command line: its options, and the tables it prints."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from rich.console import Console
from rich.table import Table

from queuesim.common.errors import QueuesimError
from queuesim.studies.dfrs.config import StudyConfig
from queuesim.studies.dfrs.running import run_study
from queuesim.studies.dfrs.tables import _num, _sets, penalty_title, summary

if TYPE_CHECKING:
    pass


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
    """Run the study into ``out`` with its progress on ``console``, then print the summary
    tables and the files written (nothing at all when ``quiet``)."""

    def progress(text: str) -> None:
        if not quiet:
            console.print(f"[dim]{text}[/dim]", highlight=False)

    result = run_study(config, out, command=command, workers=workers, on_progress=progress)
    if not quiet:
        for table in _terminal_tables(result.frame):
            console.print(table)
        console.print(
            f"study time {result.seconds / 60:.1f} min; written: "
            + ", ".join(str(f) for f in result.files),
            highlight=False,
        )


def _terminal_tables(frame: pd.DataFrame) -> list[Table]:
    """One table per penalty: average and maximum degradation from bound per trace set."""
    sets = _sets(frame)
    stats = {s: summary(frame, "degradation", frame["trace_set"] == s) for s in sets}
    tables = []
    for penalty in dict.fromkeys(frame["penalty"].astype(float).tolist()):
        table = Table(title=f"Degradation from bound, {penalty_title(penalty)}")
        table.add_column("algorithm", no_wrap=True)
        for s in sets:
            table.add_column(f"{s} avg", justify="right", no_wrap=True)
            table.add_column("max", justify="right", no_wrap=True)
        for label in dict.fromkeys(frame["algorithm"]):
            row = [label]
            for s in sets:
                mean, _, top = stats[s][(penalty, label)]
                row += [_num(mean), _num(top)]
            table.add_row(*row)
        tables.append(table)
    return tables
