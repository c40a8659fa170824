"""``queuesim bench``'s table child (:mod:`queuesim.studies.bench_table`) on a small trace:
a row of several setups runs them as ``queuesim compare`` does, and reports every setup's
jobs and start check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from queuesim.studies import bench_table

REPO = Path(__file__).resolve().parents[1]


def test_a_row_of_several_setups_runs_them_together_and_counts_every_setup(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two sites on the 2,000-job KTH sample, run in parallel: 4,000 jobs, both runs'
    passes, a positive simulate time, one start check per setup (no reference: '-')."""
    run = bench_table.BenchRun(
        "two setups", "kth-sp2-sample.swf", ("kth-sp2.yaml", "tiny.yaml"), None
    )
    monkeypatch.setattr(bench_table, "RUNS", (run,))
    bench_table._child(run.name, str(REPO / "workloads"), str(REPO / "site-configs"))
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["jobs"] == 4000
    assert figures["passes"] > 0 and figures["simulate"] > 0
    assert figures["starts"] == ["-", "-"]


def test_the_warm_up_compiles_each_kind_of_run_the_rows_enter_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before the rows, the bench makes numba's cache hold every kind of run they enter:
    FCFS, EASY and the site's own policy (EASY) are one kind, conservative's promises
    another; afterwards both are cached, so no row is charged a compile."""
    from queuesim.core import kernels
    from queuesim.core.batch_run import RunKind

    pairs = "kth-sp2.yaml:fcfs,kth-sp2.yaml:easy,kth-sp2.yaml:,kth-sp2.yaml:conservative"
    bench_table._warm_up_child(str(REPO / "site-configs"), pairs)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["kinds"] == 2
    assert 0 <= figures["compiled"] <= 2
    assert kernels.ready([RunKind(False, False, False), RunKind(True, False, False)])


def test_a_row_past_its_own_time_limit_is_shown_stopped_at_that_limit() -> None:
    """The blocked deep conservative row is stopped at six times its target (not the
    default ten minutes) and says so; a row that ended is judged by its target."""
    row = next(r for r in bench_table.RUNS if r.name.endswith("at once, conservative"))
    assert row.time_limit == 6 * (row.target_seconds or 0)
    assert bench_table._verdict({"timed_out": True}, row) == "stopped after 120 s"
    assert bench_table._verdict({"total": 19.0}, row) == "met"
    assert bench_table._verdict({"total": 21.0}, row) == "not met"
    quick = bench_table.RUNS[0]
    assert bench_table._verdict({"timed_out": True}, quick) == "stopped after 600 s"
