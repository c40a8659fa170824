"""Progress of long runs (issue 18): the simulated time reached, plain lines when the
console is no terminal, and compare's per-setup progress from worker processes."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import queuesim.reports.progress as progress_module
from queuesim.reports.progress import RunProgress, TaskProgress, simulated_at
from queuesim.studies.compare import compare, setups_for

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"


def test_simulated_time_is_the_last_submitted_jobs_submit_time() -> None:
    submits = np.array([100.0, 160.0, 400.0])
    assert [simulated_at(submits, d) for d in (0, 1, 2, 3, 9)] == [0.0, 0.0, 60.0, 300.0, 300.0]


def test_plain_console_gets_a_line_per_quarter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a terminal: no bar, one plain line per quarter reached, none at the end."""
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with RunProgress(console) as shown:
        update = shown.for_trace("run", np.arange(100.0) * 3600)
        for done in range(0, 101, 5):
            update(done, 100)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # 25 %, 50 %, 75 %
    assert lines[0].startswith("run: 25 of 100 jobs submitted, simulated 1d")


def test_a_runs_first_report_shows_no_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose first report is already past a quarter has no clock yet: its line says
    no jobs/s rather than 0 jobs/s; the next report gives one."""
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with RunProgress(console) as shown:
        update = shown.for_trace("run", np.arange(100.0) * 3600)
        update(30, 100)
        update(60, 100)
    first, second = out.getvalue().splitlines()
    assert "jobs/s" not in first
    assert second.endswith(" jobs/s") and " 0 jobs/s" not in second


def test_study_progress_is_plain_on_a_plain_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """A study's finished tasks, not on a terminal: a plain line at each quarter, naming the
    last task as written (brackets are not rich markup), none at the end; the total may
    arrive with the first task."""
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with TaskProgress(console, "runs", 0) as shown:
        for k in range(8):
            shown.finished(f"[bold]trace{k}[/bold] / EASY", total=8)
    assert out.getvalue().splitlines() == [
        "2 of 8 runs done, last: [bold]trace1[/bold] / EASY",
        "4 of 8 runs done, last: [bold]trace3[/bold] / EASY",
        "6 of 8 runs done, last: [bold]trace5[/bold] / EASY",
    ]


def test_study_progress_draws_a_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal a study's progress is a bar counting its tasks, gone once done."""
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with TaskProgress(console, "runs", 4) as shown:
        shown.finished("a")
        assert shown.bar is not None
        shown.finished("b")
        assert shown.bar.tasks[0].completed == 2 and shown.bar.tasks[0].total == 4


def test_compare_reports_every_setups_progress_from_workers() -> None:
    """Two setups in two processes: each reports its own progress up to all its jobs, and
    the results are those of a run without progress."""
    seen: dict[str, list[int]] = {}

    def record(name: str, done: int, total: int, simulated: float) -> None:
        seen.setdefault(name, []).append(done)
        assert total == 2000 and simulated >= 0

    setups = setups_for([KTH_SITE], ["easy", "fcfs"])
    comp = compare(setups, KTH_SAMPLE, workers=2, progress=record)
    assert set(seen) == {"kth-sp2/easy", "kth-sp2/fcfs"}
    assert all(v[-1] == 2000 and v == sorted(v) for v in seen.values())
    alone = compare(setups, KTH_SAMPLE, workers=1)
    for name in seen:
        assert comp.results[name].jobs.equals(alone.results[name].jobs)
