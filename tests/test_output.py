"""Output files: atomic writes, clean overwrites, and a strict, stable metrics.json."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import queuesim.results.output as output
from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.core.result import Result
from queuesim.core.workload import CLEANING_REASONS
from queuesim.results.metrics import Metrics
from queuesim.results.output import JOB_CSV_COLUMNS, write_metrics, write_run
from queuesim.studies.simulate import metrics_of, simulate

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
OUT_FILES = [
    "cleaning.csv",
    "jobs.parquet",
    "metrics.json",
    "queues.csv",
    "schedule.swf",
    "users.csv",
]

METRICS_KEY_ORDER = [
    "jobs",
    "completed",
    "killed",
    "users",
    "mean_wait",
    "awwt",
    "awrt",
    "awsd",
    "mean_bounded_slowdown",
    "max_bounded_slowdown",
    "bounded_slowdown_tau",
    "anuwt",
    "nuwt_dev",
    "utilization",
    "makespan",
    "first_submit",
    "last_end",
    "median_wait",
    "p90_wait",
    "p99_wait",
    "max_wait",
    "waited_over_1h",
    "waited_over_24h",
    "rejected",
    "cleaning",
    "cleaning_detail",
    "counters",
    "not_modelled",
    "run",
]
RUN_KEY_ORDER = [
    "queuesim_version",
    "site",
    "workload",
    "policy",
    "params",
    "passes",
    "total_cpus",
    "unix_start_time",
    "time_zone",
    "queues",
]


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Result, Metrics]]:
    out = {}
    for policy in ("fcfs", "easy"):
        result = simulate(KTH_SITE, KTH_SAMPLE, policy=policy)
        out[policy] = (result, metrics_of(result))
    return out


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"metrics.json holds the non-JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


# --- atomic writes ---------------------------------------------------------------------------


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_atomic_path_keeps_the_old_file_and_no_temp_when_the_writer_raises(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old complete content\n", encoding="utf-8")
    with pytest.raises(error), atomic_path(target) as tmp:
        tmp.write_text("new half", encoding="utf-8")
        raise error("crash mid-way")
    assert target.read_text(encoding="utf-8") == "old complete content\n"
    assert names_in(tmp_path) == ["report.txt"]


def test_atomic_path_leaves_no_file_when_the_first_write_fails(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    with pytest.raises(RuntimeError), atomic_path(target):
        raise RuntimeError("crash before anything was written")
    assert names_in(tmp_path) == []


def test_atomic_write_text_keeps_the_old_file_when_the_text_cannot_be_written(
    tmp_path: Path,
) -> None:
    target = tmp_path / "metrics.json"
    target.write_text("{}\n", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "x" * 10_000 + "\ud800")  # a lone surrogate: not UTF-8
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert names_in(tmp_path) == ["metrics.json"]


def test_atomic_write_text_replaces_the_content_with_unix_newlines(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "dir" / "out.txt"  # missing folders are created
    atomic_write_text(target, "first\n")
    atomic_write_text(target, "second\nline\n")
    assert target.read_bytes() == b"second\nline\n"
    assert names_in(target.parent) == ["out.txt"]
    assert target.stat().st_mode & 0o777 == 0o644


# --- write_run -------------------------------------------------------------------------------


def test_write_run_writes_the_documented_files_and_returns_them(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    files = write_run(tmp_path / "out", *runs["easy"])
    assert sorted(f.name for f in files) == OUT_FILES
    assert names_in(tmp_path / "out") == OUT_FILES
    columns = pq.read_schema(tmp_path / "out" / "jobs.parquet").names
    assert columns == list(JOB_CSV_COLUMNS)


def test_jobs_parquet_and_jobs_csv_hold_the_same_table(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    """The two formats of the job table differ in encoding only: the same columns, in
    order, with the Result's values and types (integers stay integers in Parquet)."""
    result, metrics = runs["easy"]
    write_run(tmp_path / "p", result, metrics)
    write_run(tmp_path / "c", result, metrics, jobs_format="csv")
    assert names_in(tmp_path / "c") == [n.replace("jobs.parquet", "jobs.csv") for n in OUT_FILES]
    header = (tmp_path / "c" / "jobs.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == list(JOB_CSV_COLUMNS)
    parquet = pd.read_parquet(tmp_path / "p" / "jobs.parquet")
    expected = result.jobs.loc[:, list(JOB_CSV_COLUMNS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(parquet, expected, check_dtype=False)
    assert parquet["job_id"].dtype == "int64" and parquet["wait"].dtype == "float64"
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "c" / "jobs.csv"), parquet, check_dtype=False
    )
    # jobs.csv is laid out column by column, in the bytes pandas' to_csv writes
    pandas_bytes = expected.to_csv(index=False, lineterminator="\n").encode("utf-8")
    assert (tmp_path / "c" / "jobs.csv").read_bytes() == pandas_bytes
    assert pq.read_schema(tmp_path / "p" / "jobs.parquet").metadata is None  # no versions


def test_write_run_refuses_an_unknown_jobs_format(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    with pytest.raises(ValueError, match="jobs_format must be one of"):
        write_run(tmp_path / "x", *runs["easy"], jobs_format="xlsx")
    assert not (tmp_path / "x").exists()


def test_rerunning_write_run_overwrites_every_file_cleanly(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    write_run(tmp_path / "reused", *runs["fcfs"])
    write_run(tmp_path / "reused", *runs["easy"])
    write_run(tmp_path / "fresh", *runs["easy"])
    assert names_in(tmp_path / "reused") == OUT_FILES  # no temp file left behind
    for name in OUT_FILES:
        assert filecmp.cmp(tmp_path / "reused" / name, tmp_path / "fresh" / name, shallow=False)


def test_write_run_failing_mid_file_keeps_that_file_and_leaves_no_temp(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_run(out, *runs["fcfs"])
    old_schedule = (out / "schedule.swf").read_bytes()

    def crashing_write_swf(path: Path, jobs: Any, header_lines: Any = ()) -> None:
        with atomic_path(path) as tmp:
            tmp.write_bytes(old_schedule[: len(old_schedule) // 2])
            raise OSError("disk full")

    monkeypatch.setattr(output, "write_swf", crashing_write_swf)
    with pytest.raises(OSError, match="disk full"):
        write_run(out, *runs["easy"])
    # the completion marker was removed before writing began: the folder says incomplete
    assert names_in(out) == [n for n in OUT_FILES if n != "metrics.json"]
    assert (out / "schedule.swf").read_bytes() == old_schedule


# --- metrics.json ----------------------------------------------------------------------------


def test_metrics_json_has_no_nan_or_infinity(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    result, metrics = runs["easy"]
    broken = dataclasses.replace(
        metrics, awsd=math.nan, nuwt_dev=math.inf, anuwt=-math.inf, utilization=float("nan")
    )
    path = tmp_path / "metrics.json"
    write_metrics(path, result, broken)
    text = path.read_text(encoding="utf-8")
    for constant in ("NaN", "Infinity"):
        assert constant not in text
    document = strict_json(text)
    assert [document[k] for k in ("awsd", "nuwt_dev", "anuwt", "utilization")] == [None] * 4
    assert document["awwt"] == metrics.awwt


def test_metrics_json_of_a_real_run_is_strict_json_with_finite_numbers(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    path = tmp_path / "metrics.json"
    write_metrics(path, *runs["easy"])
    document = strict_json(path.read_text(encoding="utf-8"))
    for key, value in document.items():
        if isinstance(value, float):
            assert math.isfinite(value), key


def test_metrics_json_key_order_is_stable(
    tmp_path: Path, runs: dict[str, tuple[Result, Metrics]]
) -> None:
    texts = []
    for name in ("a.json", "b.json"):
        write_metrics(tmp_path / name, *runs["easy"])
        texts.append((tmp_path / name).read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    document = json.loads(texts[0])
    assert list(document) == METRICS_KEY_ORDER
    assert list(document["cleaning"]) == list(CLEANING_REASONS)
    assert list(document["run"]) == RUN_KEY_ORDER
    assert texts[0].endswith("}\n")


def test_metrics_json_says_what_each_cleaning_reason_did_and_where(tmp_path: Path) -> None:
    from builders import J, make_site, make_trace, simulate

    from queuesim.core.workload import CleaningOptions, prepare
    from queuesim.results.metrics import compute_metrics
    from queuesim.results.output import write_run

    site = make_site([(1, 4)], properties=[("fast",)])
    jobs = [
        J(1, 0, 10, 1),
        J(2, 0, 0, 1),  # line 2: zero runtime, dropped
        J(3, 1, 10, 1, properties="slow"),  # line 3: no group has it, rejected
        J(4, 1, 10, 1, properties="c0.example.org"),  # line 4: a host, warned
    ]
    workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    run = simulate(site, workload, "easy")
    write_run(tmp_path, run.result, compute_metrics(run.result.jobs, total_cpus=site.total_cpus))
    detail = json.loads((tmp_path / "metrics.json").read_text())["cleaning_detail"]
    assert detail == {
        "zero_runtime": {"action": "dropped", "jobs": 1, "first_lines": [2]},
        "no_node_with_properties": {"action": "rejected", "jobs": 1, "first_lines": [3]},
        "host_requirement_not_modelled": {"action": "warning", "jobs": 1, "first_lines": [4]},
    }


_RUN_WITHOUT_OUT = """
import sys
from queuesim.cli import main
assert main(["run", "kth-sp2", sys.argv[1], "--quiet", "--kernels", "interpreted"]) == 0
print(sorted(m for m in ("pyarrow.parquet", "matplotlib", "scipy.linalg") if m in sys.modules))
"""


def test_a_run_without_out_imports_no_file_writer_nor_plotting(tmp_path: Path) -> None:
    """`queuesim run` without --out, in a fresh process, imports neither pyarrow's Parquet
    writer (and file systems) nor matplotlib nor scipy.linalg: each costs every run time
    while only writing files, figures or compiling kernels needs it."""
    trace = tmp_path / "three.swf"
    trace.write_text(
        "".join(f"{i} {10 * i} -1 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n" for i in (1, 2, 3))
    )
    done = subprocess.run(
        [sys.executable, "-c", _RUN_WITHOUT_OUT, str(trace)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
