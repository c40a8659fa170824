"""End to end through the command line: ``queuesim.cli.main([...])`` and the console script.

The README's demo must run and write its files; the same run twice must give the same
bytes; bad input must give one clear message on stderr and a non-zero exit, never a
traceback; and on a real trace the schedule in the job table must be feasible.
"""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from queuesim.cli import main
from queuesim.core.workload import CLEANING_REASONS, load_workload
from queuesim.site.loading import load_site
from queuesim.traces.swf import read_swf

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
SHIPPED_SITES = sorted((REPO / "site-configs").glob("*.yaml"))
OUT_FILES = (
    "metrics.json",
    "jobs.parquet",
    "schedule.swf",
    "cleaning.csv",
    "queues.csv",
    "users.csv",
)
METRIC_KEYS = (
    "mean_wait",
    "awwt",
    "awrt",
    "awsd",
    "mean_bounded_slowdown",
    "max_bounded_slowdown",
    "anuwt",
    "nuwt_dev",
    "utilization",
    "makespan",
    "cleaning",
)
JOB_COLUMNS = ("job_id", "user", "queue", "submit", "start", "end", "wait", "runtime", "cpus")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flat(text: str) -> str:
    """``text`` without any whitespace, so that checks survive the terminal's line wrapping
    (which the dedicated wrapping test below checks on its own)."""
    return "".join(text.split())


def assert_clear_error(code: int, out: str, err: str, *expected: str | Path) -> None:
    """One message on stderr, nothing on stdout, exit code 2, no traceback."""
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.startswith("error: ")
    assert "Traceback" not in err
    for part in expected:
        assert flat(str(part)) in flat(err), (part, err)


def job(job_id: int, submit: int, runtime: int, cpus: int) -> str:
    return f"{job_id} {submit} -1 {runtime} {cpus} -1 -1 {cpus} {runtime} -1 1 1 1 -1 -1 -1 -1 -1"


def write_trace(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "trace.swf"
    path.write_text("; Version: 2.2\n" + "\n".join(lines) + "\n", encoding="ascii")
    return path


# --- the README's demo -----------------------------------------------------------------------


def test_readme_demo_exits_0_prints_the_summary_and_writes_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--out", out_dir)
    assert code == 0, err
    assert err == ""
    for shown in ("queuesim kth-sp2 / easy", "2,000 jobs", "AWWT", "utilization"):
        assert shown in out
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(OUT_FILES)

    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    assert set(METRIC_KEYS) <= set(metrics)
    assert metrics["jobs"] == 2000
    assert list(metrics["cleaning"]) == list(CLEANING_REASONS)
    assert metrics["run"]["policy"] == "easy"

    jobs = pd.read_parquet(out_dir / "jobs.parquet")
    assert set(JOB_COLUMNS) <= set(jobs.columns)
    assert len(jobs) == 2000
    np.testing.assert_array_equal(jobs["wait"], jobs["start"] - jobs["submit"])
    assert metrics["mean_wait"] == pytest.approx(jobs["wait"].mean())

    schedule = read_swf(out_dir / "schedule.swf").jobs
    assert schedule["job_id"].tolist() == jobs["job_id"].tolist()
    np.testing.assert_array_equal(schedule["wait"], jobs["wait"])
    np.testing.assert_array_equal(schedule["runtime"], jobs["runtime"])

    cleaning = (out_dir / "cleaning.csv").read_text(encoding="utf-8")
    assert cleaning == "job_id,line,reason,action\n"  # the sample needs no cleaning


def test_jobs_format_csv_writes_the_same_job_table_as_csv_instead_of_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--jobs-format csv: jobs.csv in place of jobs.parquet, the same rows and values,
    and every other file byte-identical to the default run's."""
    code, _, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--quiet", "--out", tmp_path / "p")
    assert code == 0, err
    code, _, err = run_cli(
        capsys, "run", KTH_SITE, KTH_SAMPLE, "--quiet", "--out", tmp_path / "c",
        "--jobs-format", "csv",
    )  # fmt: skip
    assert code == 0, err
    csv_files = sorted(p.name for p in (tmp_path / "c").iterdir())
    assert csv_files == sorted(name.replace("jobs.parquet", "jobs.csv") for name in OUT_FILES)
    from_csv = pd.read_csv(tmp_path / "c" / "jobs.csv")
    from_parquet = pd.read_parquet(tmp_path / "p" / "jobs.parquet")
    pd.testing.assert_frame_equal(from_csv, from_parquet, check_dtype=False)
    for name in set(OUT_FILES) - {"jobs.parquet"}:
        assert (tmp_path / "c" / name).read_bytes() == (tmp_path / "p" / name).read_bytes()


def test_jobs_format_choices_are_the_writers_formats_default_first() -> None:
    """The option's choices are spelled in the CLI (which imports no writer to build its
    parser); they must stay the writer's formats, with the same default."""
    from queuesim.cli import build_parser
    from queuesim.results.output import JOBS_FORMATS

    parser = build_parser()
    assert parser.parse_args(["run", "s", "w"]).jobs_format == JOBS_FORMATS[0]
    for name in JOBS_FORMATS:
        assert parser.parse_args(["run", "s", "w", "--jobs-format", name]).jobs_format == name
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "s", "w", "--jobs-format", "xlsx"])


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_same_run_twice_gives_byte_identical_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str
) -> None:
    for name in ("first", "second"):
        code, _, err = run_cli(
            capsys, "run", KTH_SITE, KTH_SAMPLE, "--policy", policy, "--quiet",
            "--out", tmp_path / name,
        )  # fmt: skip
        assert code == 0, err
    for name in OUT_FILES:
        assert filecmp.cmp(tmp_path / "first" / name, tmp_path / "second" / name, shallow=False)
    metrics = json.loads((tmp_path / "first" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run"]["policy"] == policy


def test_quiet_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--quiet")
    assert (code, out, err) == (0, "", "")


def test_console_script_runs_the_demo_like_main(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Path(sys.executable).with_name("queuesim")
    assert script.exists(), f"the console script is not installed beside {sys.executable}"
    proc = subprocess.run(
        [script, "run", KTH_SITE, KTH_SAMPLE, "--out", tmp_path / "sub", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # another process, same bytes
    code, _, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--out", tmp_path / "in", "--quiet")
    assert code == 0, err
    for name in OUT_FILES:
        assert filecmp.cmp(tmp_path / "sub" / name, tmp_path / "in" / name, shallow=False)


def test_console_script_exits_2_on_bad_input_without_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("queuesim")
    proc = subprocess.run(
        [script, "run", tmp_path / "missing.yaml", KTH_SAMPLE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert flat("no such site file") in flat(proc.stderr)
    assert "Traceback" not in proc.stderr


def test_only_the_programs_own_command_line_changes_the_garbage_collector() -> None:
    """``main()`` on the program's command line (what the console script runs) collects
    less often and freezes the objects left when it returns (the process ends next);
    ``main(argv)`` from Python, as here, leaves the collector alone."""
    import gc

    from queuesim.common.program import PROGRAM_GC_THRESHOLDS

    before = gc.get_threshold()
    assert main([]) == 2  # no command: the help, exit status 2
    assert gc.get_threshold() == before
    script = (
        "import gc, sys\nfrom queuesim.cli import main\n"
        "code = main()\nprint(code, *gc.get_threshold(), gc.get_freeze_count() > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split()[-5:] == [str(v) for v in (2, *PROGRAM_GC_THRESHOLDS, True)]


# --- bad input -------------------------------------------------------------------------------


def test_missing_site_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    code, out, err = run_cli(capsys, "run", missing, KTH_SAMPLE)
    assert_clear_error(code, out, err, missing, "no such site file")


def test_missing_workload_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.swf"
    code, out, err = run_cli(capsys, "run", KTH_SITE, missing)
    assert_clear_error(code, out, err, missing, "no such workload file")


def test_unreadable_yaml_is_a_clear_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "broken.yaml"
    site.write_text("name: x\nclusters: [\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "run", site, KTH_SAMPLE)
    assert_clear_error(code, out, err, site, "not valid YAML at line 3")


def test_site_without_clusters_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "empty.yaml"
    site.write_text("name: x\nclusters: []\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "run", site, KTH_SAMPLE)
    assert_clear_error(code, out, err, site, "clusters:")


def test_unknown_policy_is_a_clear_error_listing_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--policy", "nope")
    assert_clear_error(code, out, err, "unknown policy 'nope'", "conservative", "easy", "fcfs")


def test_job_larger_than_the_site_is_a_clear_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path, [job(1, 0, 10, 4), job(2, 5, 10, 101)])
    code, out, err = run_cli(capsys, "run", KTH_SITE, trace)
    assert_clear_error(code, out, err, trace, "line 3 (101 CPUs, queue", "--reject-unrunnable")


def test_reject_unrunnable_runs_the_rest_and_lists_the_rejected_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path, [job(1, 0, 10, 4), job(2, 5, 10, 101)])
    out_dir = tmp_path / "out"
    code, _, err = run_cli(
        capsys, "run", KTH_SITE, trace, "--reject-unrunnable", "--quiet", "--out", out_dir
    )
    assert code == 0, err
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    assert (metrics["jobs"], metrics["rejected"], metrics["cleaning"]["too_large"]) == (1, 1, 1)
    assert (out_dir / "cleaning.csv").read_text(encoding="utf-8").splitlines() == [
        "job_id,line,reason,action",
        "2,3,too_large,rejected",
    ]


def test_malformed_swf_line_is_a_clear_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path, [job(1, 0, 10, 4), "2 5 -1 10 4"])
    code, out, err = run_cli(capsys, "run", KTH_SITE, trace)
    assert_clear_error(code, out, err, f"{trace}:3:", "expected 18")


def test_skip_bad_lines_runs_the_rest_and_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path, [job(1, 0, 10, 4), "2 5 -1 10 4", job(3, 5, 10, 4)])
    out_dir = tmp_path / "out"
    code, _, err = run_cli(
        capsys, "run", KTH_SITE, trace, "--skip-bad-lines", "--quiet", "--out", out_dir
    )
    assert code == 0, err
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    assert (metrics["jobs"], metrics["cleaning"]["malformed_line"]) == (2, 1)


def test_param_without_equals_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--param", "foo")
    assert_clear_error(code, out, err, "--param expects KEY=VALUE, got 'foo'")


def test_badly_typed_param_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "run", KTH_SITE, KTH_SAMPLE, "--param", "record_reservations=maybe"
    )
    assert_clear_error(code, out, err, "expects bool, got 'maybe'")


def test_out_naming_an_existing_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_dir = tmp_path / "results"
    not_a_dir.write_text("", encoding="utf-8")
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--quiet", "--out", not_a_dir)
    assert_clear_error(code, out, err, not_a_dir)


@pytest.mark.parametrize("tau", ["-1", "nan"])
def test_invalid_tau_is_a_clear_error(capsys: pytest.CaptureFixture[str], tau: str) -> None:
    code, out, err = run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--quiet", f"--tau={tau}")
    assert_clear_error(code, out, err, "tau")


def test_error_message_keeps_a_long_path_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / ("a-rather-long-folder-name-" * 3) / "missing-site-file.yaml"
    code, _, err = run_cli(capsys, "run", missing, KTH_SAMPLE)
    assert code == 2
    assert str(missing) in err


# --- validate and policies -------------------------------------------------------------------


def test_validate_reports_every_problem_of_a_bad_file_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "bad.yaml"
    site.write_text(
        "name: ''\n"
        "clusters:\n"
        "  - name: c\n"
        "    nodes: 0\n"
        "    cpus_per_node: 1\n"
        "queues:\n"
        "  - name: q\n"
        "    max_walltime: forever\n"
        "colour: blue\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "validate", site)
    assert code == 2
    assert "Traceback" not in out + err
    report = flat(out + err)
    assert flat("4 problems") in report
    for key in ("name:", "clusters[0].nodes:", "queues[0].max_walltime:", "colour:"):
        assert flat(key) in report, key


def test_validate_all_shipped_site_configs_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert SHIPPED_SITES
    code, out, err = run_cli(capsys, "validate", *SHIPPED_SITES)
    assert code == 0, out + err
    assert out.count("✓") == len(SHIPPED_SITES)
    assert "✗" not in out


def test_validate_with_one_bad_file_among_good_ones_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nclusters: []\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "validate", KTH_SITE, bad)
    assert code == 2
    assert out.count("✓") == 1
    assert out.count("✗") == 1


def test_validate_reports_an_unknown_policy_in_the_site_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(
        "name: x\nclusters: [{name: c, nodes: 1, cpus_per_node: 1}]\nscheduler: {policy: nope}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "validate", site)
    assert code == 2
    assert flat("unknown policy 'nope'") in flat(out + err)


def test_policies_lists_fcfs_easy_conservative(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "policies")
    assert (code, err) == (0, "")
    names = {line.split()[0] for line in out.splitlines() if line and not line[0].isspace()}
    assert {"fcfs", "easy", "conservative"} <= names


def test_policies_shows_whole_descriptions_and_parameter_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The scan policy's description is not cut at its first line, and every parameter
    shows its type and default."""
    code, out, _ = run_cli(capsys, "policies")
    assert code == 0
    text = flat(out)
    last = "`reserved_jobs: 1` with `optimized` plans as EASY does; `0` never reserves."
    assert flat(last) in text
    for shown in (
        "anti_starvation (str) = 'optimized'",
        "reserved_jobs (int) = 1",
        "reserve_when_limited (bool) = True",
        "penalty (float) = 300.0",
    ):
        assert flat(shown) in text


# --- a real trace ----------------------------------------------------------------------------


@pytest.mark.realtrace
def test_easy_on_the_full_kth_trace_gives_a_feasible_schedule(
    real_workloads: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = real_workloads / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.is_file():
        pytest.skip(f"{trace} is absent")
    out_dir = tmp_path / "out"
    code, _, err = run_cli(
        capsys, "run", KTH_SITE, trace, "--policy", "easy", "--quiet", "--out", out_dir
    )
    assert code == 0, err
    jobs = pd.read_parquet(out_dir / "jobs.parquet")
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    site = load_site(KTH_SITE)
    prepared = load_workload(trace, site).jobs
    assert len(jobs) == metrics["jobs"] == len(prepared) > 28_000

    # every job has a start and an end, and ran exactly its trace runtime once
    assert not jobs[["start", "end", "wait", "runtime"]].isna().any().any()
    assert jobs["job_id"].is_unique
    assert (jobs["end"] > jobs["start"]).all()
    runtime = prepared.set_index("job_id")["runtime"]
    np.testing.assert_array_equal(jobs["runtime"], runtime.loc[jobs["job_id"]].to_numpy())

    # no start before submit, and wait = start - submit
    assert (jobs["start"] >= jobs["submit"]).all()
    np.testing.assert_array_equal(jobs["wait"], jobs["start"] - jobs["submit"])

    # CPUs in use never exceed the site's total at any instant (ends free CPUs first)
    events = pd.DataFrame(
        {
            "time": np.concatenate([jobs["end"], jobs["start"]]),
            "kind": np.repeat([0, 1], len(jobs)),  # 0 = end, applied before 1 = start
            "delta": np.concatenate([-jobs["cpus"], jobs["cpus"]]),
        }
    ).sort_values(["time", "kind"], kind="mergesort")
    in_use = events["delta"].cumsum().to_numpy()
    assert in_use.max() <= site.total_cpus == 100
    assert in_use.min() >= 0
    assert in_use[-1] == 0


def test_python_dash_m_queuesim_is_the_queuesim_command() -> None:
    """`python -m queuesim` runs the command (same name in its usage, same exit status for
    a bad site file), for environments whose scripts are not on PATH."""
    ok = subprocess.run(
        [sys.executable, "-m", "queuesim", "--help"], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0 and ok.stdout.startswith("usage: queuesim ")
    bad = subprocess.run(
        [sys.executable, "-m", "queuesim", "run", "no-such-site.yaml", "x.swf"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "no-such-site.yaml" in bad.stderr
