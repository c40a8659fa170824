"""Comparing setups: paper 004's Table 2 arithmetic on hand-made job tables, the losers
ranking, the best-value highlighting, setup naming, the baseline, parallel runs, bad input.

The hand-made tables are small enough to check every figure on paper; each test works the
numbers out in a comment.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import queuesim
from queuesim.cli import main
from queuesim.common.errors import QueuesimError
from queuesim.reports.precision import metric_texts
from queuesim.results.comparison import (
    AGAINST_COLUMNS,
    LOSER_COLUMNS,
    METRIC_COLUMNS,
    CompareError,
    against_baseline,
    best_marks,
    losers,
)
from queuesim.studies.compare import Setup, compare, setups_for

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
H = 3600.0


def jobs(rows: list[tuple[int, int, float]]) -> pd.DataFrame:
    """A job table from (job_id, user, wait seconds) rows; other columns do not matter."""
    return pd.DataFrame(rows, columns=["job_id", "user", "wait"])


# Six jobs of three users, waits in hours:
#
#   job user  baseline  setup   change
#    1   A      1.0      0.0    -1.0   improved
#    2   A      2.0      2.0     0     unchanged
#    3   A      0.0      1.0    +1.0   deteriorated
#    4   B      0.5      0.0    -0.5   improved
#    5   B      1.0      0.0    -1.0   improved
#    6   C      0.0      2.0    +2.0   deteriorated
#   (7   only in the setup; 8 only in the baseline: unmatched, left out)
#
# Users' mean waits: A 1.0 -> 1.0 (unchanged), B 0.75 -> 0.0 (improved by 0.75 h),
# C 0.0 -> 2.0 (deteriorated by 2 h).
BASE = jobs(
    [(1, 1, 1 * H), (2, 1, 2 * H), (3, 1, 0), (4, 2, 0.5 * H), (5, 2, H), (6, 3, 0), (8, 3, 9)]
)
SETUP = jobs([(1, 1, 0), (2, 1, 2 * H), (3, 1, H), (4, 2, 0), (5, 2, 0), (6, 3, 2 * H), (7, 1, 5)])


def test_against_baseline_percentages_and_mean_hours_match_hand_computation() -> None:
    table = against_baseline({"base": BASE, "new": SETUP}, "base")
    assert list(table.columns) == list(AGAINST_COLUMNS)
    assert list(table.index) == ["new"]
    row = table.loc["new"]
    assert row["matched_jobs"] == 6
    assert row["unmatched_jobs"] == 2  # job 7 and job 8
    assert row["users"] == 3
    # jobs: 3 of 6 improved (1, 4, 5) -> 50 %; 2 of 6 deteriorated (3, 6) -> 33.3 %
    assert row["jobs_improved_pct"] == pytest.approx(50.0)
    assert row["jobs_deteriorated_pct"] == pytest.approx(100 * 2 / 6)
    # mean improvement over improved jobs: (1 + 0.5 + 1) / 3 = 0.8333 h
    assert row["mean_improvement_h"] == pytest.approx(2.5 / 3)
    # mean deterioration over deteriorated jobs: (1 + 2) / 2 = 1.5 h
    assert row["mean_deterioration_h"] == pytest.approx(1.5)
    # users: B improved, C deteriorated, A unchanged -> 33.3 % each way
    assert row["users_improved_pct"] == pytest.approx(100 / 3)
    assert row["users_deteriorated_pct"] == pytest.approx(100 / 3)
    assert row["mean_user_improvement_h"] == pytest.approx(0.75)
    assert row["mean_user_deterioration_h"] == pytest.approx(2.0)


def test_identical_runs_neither_improve_nor_deteriorate() -> None:
    table = against_baseline({"a": BASE, "b": BASE.copy()}, "a")
    row = table.loc["b"]
    assert row["jobs_improved_pct"] == 0 and row["jobs_deteriorated_pct"] == 0
    assert row["users_improved_pct"] == 0 and row["users_deteriorated_pct"] == 0
    # a mean over no job is undefined, not zero
    assert math.isnan(row["mean_improvement_h"]) and math.isnan(row["mean_deterioration_h"])


def test_baseline_row_is_left_out_and_setups_keep_their_order() -> None:
    table = against_baseline({"z": SETUP, "base": BASE, "a": SETUP}, "base")
    assert list(table.index) == ["z", "a"]


def test_losers_are_ranked_by_mean_wait_increase_then_jobs_then_user() -> None:
    # Users' mean wait change (hours): 10 -> +2 (1 job), 20 -> +2 (2 jobs),
    # 30 -> +1 (1 job), 40 -> -1 (improved: not a loser), 50 -> 0 (unchanged).
    base = jobs([(1, 10, 0), (2, 20, 0), (3, 20, H), (4, 30, 0), (5, 40, H), (6, 50, H)])
    new = jobs([(1, 10, 2 * H), (2, 20, 2 * H), (3, 20, 3 * H), (4, 30, H), (5, 40, 0), (6, 50, H)])
    table = losers({"base": base, "new": new}, "base", top=5)
    assert list(table.columns) == list(LOSER_COLUMNS)
    # equal +2 h: user 20 (2 jobs) before user 10 (1 job); then user 30
    assert table["user"].tolist() == [20, 10, 30]
    assert table["jobs"].tolist() == [2, 1, 1]
    assert table["change_h"].tolist() == pytest.approx([2.0, 2.0, 1.0])
    assert table["baseline_mean_wait_h"].tolist() == pytest.approx([0.5, 0.0, 0.0])
    assert table["mean_wait_h"].tolist() == pytest.approx([2.5, 2.0, 1.0])
    assert losers({"base": base, "new": new}, "base", top=2)["user"].tolist() == [20, 10]


def test_duplicate_job_ids_are_refused_because_jobs_are_matched_by_id() -> None:
    doubled = jobs([(1, 1, 0), (1, 1, 5)])
    with pytest.raises(CompareError, match="job_id 1 appears twice"):
        against_baseline({"base": BASE, "new": doubled}, "base")


def test_best_value_is_lowest_except_utilization_which_is_highest() -> None:
    """Lower is better for every compared metric but utilization."""
    table = pd.DataFrame(
        {c: [2.0, 1.0, 3.0] for c in METRIC_COLUMNS}, index=pd.Index(["a", "b", "c"])
    )
    marks = best_marks(table)
    assert marks["awwt"] == {"a": "", "b": "best", "c": ""}
    assert marks["nuwt_dev"]["b"] == "best"
    assert marks["utilization"] == {"a": "", "b": "", "c": "best"}


def test_setups_sharing_the_best_value_are_a_tie_not_best() -> None:
    """'best' only when strictly best: equal best values (to 1e-9) are each marked tie."""
    table = pd.DataFrame(
        {c: [1.0, 1.0 + 1e-12, 2.0] for c in METRIC_COLUMNS}, index=pd.Index(["a", "b", "c"])
    )
    assert best_marks(table)["awrt"] == {"a": "tie", "b": "tie", "c": ""}
    assert best_marks(table.iloc[:1])["awrt"] == {"a": ""}


def test_different_values_never_print_the_same() -> None:
    """Three AWRTs of 3 days and some hours no longer all print as '3d'; equal values still
    print alike."""
    day = 86400.0
    texts = metric_texts("awrt", [3 * day + 100.0, 3 * day + 2000.0, 3 * day + 100.0])
    assert texts[0] != texts[1] and texts[0] == texts[2]
    assert metric_texts("awrt", [3 * day, 5 * day]) == ["3d", "5d"]  # readable when enough
    assert metric_texts("utilization", [0.61701, 0.61699]) == ["61.701 %", "61.699 %"]
    assert len(set(metric_texts("awsd", [1.0, 1.0 + 1e-7]))) == 2


@given(st.lists(st.floats(0, 1e8, allow_nan=False), min_size=2, max_size=5))
@settings(max_examples=60, deadline=None)
def test_distinct_values_get_distinct_texts(values: list[float]) -> None:
    """For any values, two texts are equal only when the values are the same figure."""
    for column in ("awwt", "anuwt", "utilization", "mean_bounded_slowdown"):
        texts = metric_texts(column, values)
        for a in range(len(values)):
            for b in range(a + 1, len(values)):
                if texts[a] == texts[b]:
                    assert math.isclose(values[a], values[b], rel_tol=1e-9)


def test_policy_list_names_setups_site_slash_policy() -> None:
    setups = setups_for([KTH_SITE], ["easy", "fcfs"])
    assert setups == [Setup(KTH_SITE, "easy"), Setup(KTH_SITE, "fcfs")]
    with pytest.raises(CompareError) as info:  # the names show in the baseline message
        compare(setups, KTH_SAMPLE, baseline="nope")
    assert "kth-sp2/easy, kth-sp2/fcfs" in str(info.value)


def test_baseline_not_among_setups_is_refused_before_any_simulation() -> None:
    with pytest.raises(CompareError, match="baseline 'nope' is not among the setups"):
        compare([KTH_SITE], KTH_SAMPLE, baseline="nope")


def test_two_sites_with_the_same_name_are_told_apart_by_file_name(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        shutil.copy(KTH_SITE, tmp_path / name)
    comp = compare([tmp_path / "a.yaml", tmp_path / "b.yaml"], KTH_SAMPLE, workers=1)
    assert list(comp.results) == ["a", "b"]
    assert comp.sources == {"a": "a.yaml", "b": "b.yaml"}


def test_the_same_setup_twice_is_refused() -> None:
    with pytest.raises(CompareError, match="both named 'kth-sp2/easy'"):
        compare(setups_for([KTH_SITE, KTH_SITE], ["easy"]), KTH_SAMPLE)


@pytest.fixture(scope="module")
def kth_parallel() -> queuesim.Comparison:
    setups = setups_for([KTH_SITE], ["easy", "fcfs", "conservative"])
    return queuesim.compare(setups, KTH_SAMPLE, baseline="easy", workers=2)


def test_parallel_runs_equal_sequential_runs(kth_parallel: queuesim.Comparison) -> None:
    setups = setups_for([KTH_SITE], ["easy", "fcfs", "conservative"])
    sequential = compare(setups, KTH_SAMPLE, baseline="easy", workers=1)
    assert list(sequential.results) == list(kth_parallel.results)
    for name, result in sequential.results.items():
        pd.testing.assert_frame_equal(result.jobs, kth_parallel.results[name].jobs)
    pd.testing.assert_frame_equal(sequential.table, kth_parallel.table)
    pd.testing.assert_frame_equal(sequential.against_baseline, kth_parallel.against_baseline)
    pd.testing.assert_frame_equal(sequential.losers, kth_parallel.losers)


def test_api_returns_tables_results_and_heatmaps(kth_parallel: queuesim.Comparison) -> None:
    comp = kth_parallel
    assert comp.baseline == "kth-sp2/easy"  # chosen by its policy name
    assert list(comp.results) == ["kth-sp2/easy", "kth-sp2/fcfs", "kth-sp2/conservative"]
    assert list(comp.table.columns) == ["jobs", "users", *METRIC_COLUMNS]
    assert list(comp.table.index) == list(comp.results)
    assert list(comp.against_baseline.index) == ["kth-sp2/fcfs", "kth-sp2/conservative"]
    assert set(comp.losers["setup"]) <= {"kth-sp2/fcfs", "kth-sp2/conservative"}
    assert (comp.losers["change_h"] > 0).all()
    assert comp.against_baseline.loc["kth-sp2/fcfs", "matched_jobs"] == 2000
    grids = comp.heatmap(bin="week")
    assert list(grids) == list(comp.results)
    for grid in grids.values():
        assert grid.queues == ("batch",)
        assert grid.jobs.sum() == 2000
        assert grid.clock.dated
    # the same bins in every panel
    first = next(iter(grids.values()))
    assert all((g.edges == first.edges).all() for g in grids.values())


def test_empty_workload_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.swf"
    empty.write_text("; Version: 2.2\n", encoding="ascii")
    with pytest.raises(QueuesimError, match="no jobs"):
        compare([KTH_SITE], empty)


# --- the command line ------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_clear_error(code: int, out: str, err: str, *expected: str) -> None:
    """One message on stderr, nothing on stdout, exit code 2, no traceback."""
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.startswith("error: ")
    assert "Traceback" not in err
    flat = "".join(err.split())
    for part in expected:
        assert "".join(part.split()) in flat, (part, err)


def test_cli_baseline_not_among_setups_is_one_clear_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys, "compare", KTH_SITE, "--workload", KTH_SAMPLE, "--policy", "easy",
        "--policy", "fcfs", "--baseline", "sjf",
    )  # fmt: skip
    assert_clear_error(code, out, err, "baseline 'sjf' is not among the setups")


@pytest.mark.parametrize("width", ["0", "-3600", "-1d", "soon"])
def test_cli_bin_width_zero_negative_or_unreadable_is_one_clear_message(
    capsys: pytest.CaptureFixture[str], width: str
) -> None:
    code, out, err = run_cli(
        capsys, "compare", KTH_SITE, "--workload", KTH_SAMPLE, f"--bin={width}"
    )
    assert_clear_error(code, out, err, "'day', 'week' or a positive width")


def test_cli_empty_workload_is_one_clear_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.swf"
    empty.write_text("; Version: 2.2\n", encoding="ascii")
    code, out, err = run_cli(capsys, "compare", KTH_SITE, "--workload", empty)
    assert_clear_error(code, out, err, "the workload has no jobs")


def test_cli_compare_prints_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    """compare prints the report model's sections through its terminal renderer."""
    code, out, err = run_cli(
        capsys, "compare", KTH_SITE, "--workload", KTH_SAMPLE, "--policy", "fcfs",
        "--policy", "easy", "--top", "2", "--workers", "1",
    )  # fmt: skip
    assert code == 0, err
    flat = " ".join(out.split())
    for part in (
        "Performance and fairness",
        "Wait times against the baseline Against kth-sp2/fcfs",
        "Users who lost the most Per setup, the 2 users",
        "Wait per queue",
        "Mean wait per queue over time",
        "batch (2,000)",
        "Data cleaning",
    ):
        assert part in flat, part
    # the bundle's lists of figures and files are left out of the terminal
    assert "\nFiles\n" not in out and "\nFigures\n" not in out


def test_compare_attaches_a_dfrs_annotation_as_run_does(tmp_path: Path) -> None:
    """A DFRS-annotated workload compared under a DFRS policy and EASY: compare reads the
    annotation the trace's header names, as run does (it used to skip it and fail with 'no
    annotation file'), and both results carry it."""
    from queuesim.traces.dfrs_annotation import write_synthetic_trace

    trace = tmp_path / "annotated.swf"
    write_synthetic_trace(trace, 8, 40, seed=3, load=0.5)
    site = REPO / "site-configs" / "dfrs-lublin-128.yaml"
    setups = [queuesim.Setup(site, "easy"), queuesim.Setup(site, "Greedy*/OPT=MIN")]
    comparison = queuesim.compare(setups, trace, workers=1)
    assert all(r.workload.annotated for r in comparison.results.values())
    assert all(len(r.jobs) == 40 for r in comparison.results.values())


def test_each_compare_setup_gets_exactly_the_per_job_result_of_a_lone_run(
    kth_parallel: queuesim.Comparison,
) -> None:
    """Issue 20: a setup run within compare (in worker processes) and the same setup run
    alone give the same per-job table, to the bit."""
    for policy in ("easy", "fcfs", "conservative"):
        alone = queuesim.simulate(KTH_SITE, KTH_SAMPLE, policy=policy)
        pd.testing.assert_frame_equal(
            kth_parallel.results[f"kth-sp2/{policy}"].jobs, alone.jobs, check_exact=True
        )


def test_the_likely_longest_setup_is_handed_to_the_workers_first() -> None:
    """A site modelling memory plans over every node (tiny: 15 nodes), one that does not
    over every cluster (2): with the same jobs, the per-node site's run is costlier and
    goes first; equal costs keep the order given."""
    from types import SimpleNamespace
    from typing import Any

    from queuesim.site.enums import MemoryModel
    from queuesim.site.loading import load_site
    from queuesim.studies.compare import likely_cost, longest_first

    clusters = load_site(REPO / "site-configs" / "tiny.yaml")
    nodes = clusters.model_copy(update={"memory": MemoryModel.PER_CPU})
    wl: Any = SimpleNamespace(jobs=[0] * 10)
    assert likely_cost(clusters, wl) == 10 * 2
    assert likely_cost(nodes, wl) == 10 * 15
    prepared: Any = [("a", clusters, wl), ("b", clusters, wl), ("c", nodes, wl)]
    assert longest_first(prepared) == [2, 0, 1]
