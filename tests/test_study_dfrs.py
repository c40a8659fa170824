"""``queuesim study dfrs`` (papers 000 and 002): a tiny study end to end, its determinism,
the bound cache, what must hold of the numbers, and the errors for bad arguments.

The tiny study is 2 load levels x 1 synthetic trace of 60 jobs on the 128-node site, FCFS
and EASY, plus two DFRS algorithms when this build has them. The command is driven through
:func:`queuesim.cli.study.add_dfrs_arguments` and :func:`~queuesim.cli.study.run_dfrs`, as
``queuesim study dfrs`` does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from queuesim.cli import study as cli_study
from queuesim.common.errors import PolicyViolation, QueuesimError, WorkloadError
from queuesim.policies.registry import known_policies
from queuesim.studies import dfrs as study_dfrs
from queuesim.studies.dfrs import running as study_running

REPO = Path(__file__).resolve().parents[1]
SITE_CONFIGS = REPO / "site-configs"
DFRS_PICK = ("GreedyP*/OPT=MIN", "GreedyPM*/per/OPT=MIN/MINVT=600")
HAVE_DFRS = "dfrs" in known_policies()
TINY_ALGORITHMS = ("FCFS", "EASY", *(DFRS_PICK if HAVE_DFRS else ()))
OUTPUTS = ("study.csv", "study.md", "study.html", "degradation-vs-load.png", "timings.csv")


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="queuesim study dfrs")
    cli_study.add_dfrs_arguments(parser)
    return parser.parse_args(list(argv))


def tiny_args(cache: str = "cache", workers: int = 1, *extra: str) -> argparse.Namespace:
    return parse(
        "--traces-per-load",
        "1",
        "--jobs",
        "60",
        "--loads",
        "0.9,0.3",
        "--hpc2n-weeks",
        "0",
        "--algorithms",
        ",".join(TINY_ALGORITHMS),
        "--site-configs",
        str(SITE_CONFIGS),
        "--cache",
        cache,
        "--out",
        "reports/dfrs",
        "--workers",
        str(workers),
        "--quiet",
        *extra,
    )


def run(args: argparse.Namespace) -> int:
    return cli_study.run_dfrs(args, Console(quiet=True))


def without_timing(markdown: str) -> str:
    """``study.md`` without its one line that depends on the clock and the cache."""
    return "\n".join(line for line in markdown.splitlines() if "this run took" not in line)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny study run twice from scratch (own caches, 1 and 2 processes), in two
    folders, with the same relative --out so that the quoted command is the same."""
    folders = []
    for workers in (1, 2):
        folder = tmp_path_factory.mktemp(f"study{workers}")
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(folder)
            assert run(tiny_args("cache", workers)) == 0
        folders.append(folder)
    return folders[0], folders[1]


def test_tiny_study_writes_its_files(two_runs: tuple[Path, Path]):
    out = two_runs[0] / "reports" / "dfrs"
    for name in OUTPUTS:
        assert (out / name).is_file(), name
    assert not list(out.glob(".*.tmp")), "no temporary file left behind"
    assert (out / "degradation-vs-load.png").read_bytes().startswith(b"\x89PNG")
    md = (out / "study.md").read_text(encoding="utf-8")
    assert "`queuesim study dfrs --traces-per-load 1 --jobs 60" in md
    assert "--loads 0.3,0.9" in md
    assert "this run took" in md and "2 bounds computed, 0 read from the cache" in md
    assert "## Degradation factor (000 Table I)" in md
    assert "**5-minute rescheduling penalty**" in md and "**no rescheduling penalty**" in md
    assert "| algorithm | synthetic avg | std | max |" in md
    assert "(degradation-vs-load.png)" in md
    assert "0 run(s) below 1 - 1e-06" in md
    timings = pd.read_csv(out / "timings.csv")
    assert set(timings["task"]) == {"bound", *TINY_ALGORITHMS}
    assert (timings["seconds"] >= 0).all()


def test_tiny_study_is_deterministic(two_runs: tuple[Path, Path]):
    first, second = (folder / "reports" / "dfrs" for folder in two_runs)
    for name in ("study.csv", "degradation-vs-load.png"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    md = [without_timing((f / "study.md").read_text(encoding="utf-8")) for f in (first, second)]
    assert md[0] == md[1]
    caches = [pd.read_csv(f / "cache" / "bounds.csv") for f in two_runs]
    columns = ["instance", "digest", "hosts", "bound", "upper", "solves"]
    pd.testing.assert_frame_equal(caches[0][columns], caches[1][columns])


def test_study_csv_rows_and_what_must_hold(two_runs: tuple[Path, Path]):
    frame = pd.read_csv(two_runs[0] / "reports" / "dfrs" / "study.csv")
    assert list(frame.columns) == study_dfrs.STUDY_COLUMNS  # no timing in it
    assert len(frame) == 2 * len(TINY_ALGORITHMS) * 2  # instances x algorithms x penalties
    assert set(frame["penalty"]) == {0, 300}
    assert list(dict.fromkeys(frame["algorithm"])) == list(TINY_ALGORITHMS)
    assert set(frame["load"]) == {0.3, 0.9} and (frame["jobs"] == 60).all()
    # the bound is a lower bound on every schedule's maximum stretch (rtol 1e-3, from below)
    assert (frame["degradation"] >= 1 - 1e-6).all()
    assert (frame["bound"] >= 1).all()
    assert np.allclose(frame["degradation"], frame["max_stretch"] / frame["bound"], rtol=1e-5)
    # the best algorithm of every instance and penalty has degradation factor 1
    best = frame.groupby(["instance", "penalty"])["degradation_factor"].min()
    assert (best == 1).all()
    assert (frame["degradation_factor"] >= 1).all()
    # batch algorithms run once and are reported under both penalties, unchanged
    for label in ("FCFS", "EASY"):
        rows = frame[frame["algorithm"] == label]
        by_penalty = [rows[rows["penalty"] == p]["max_stretch"].to_numpy() for p in (0, 300)]
        assert np.array_equal(*by_penalty)
        assert (rows[["preemptions", "migrations", "moved_memory_mb"]] == 0).all().all()


def test_a_rerun_reads_the_bounds_from_the_cache(two_runs: tuple[Path, Path], tmp_path: Path):
    folder = two_runs[0]
    config = cli_study.dfrs_config(tiny_args(str(folder / "cache")))
    result = study_dfrs.run_study(config, tmp_path / "again", command="again")
    assert (result.bounds_computed, result.bounds_cached) == (0, 2)
    before = (folder / "reports" / "dfrs" / "study.csv").read_bytes()
    assert (tmp_path / "again" / "study.csv").read_bytes() == before
    assert "0 bounds computed, 2 read from the cache" in (
        tmp_path / "again" / "study.md"
    ).read_text(encoding="utf-8")


def test_bound_cache_round_trips_exactly(tmp_path: Path):
    figures = study_dfrs.BoundFigures("x", "0123abcd", 128, 4.021719604451211, 4.0257, 12, 1.5)
    path = tmp_path / "bounds.csv"
    study_dfrs.write_bound_cache(path, {figures.digest: figures})
    assert study_dfrs.read_bound_cache(path) == {figures.digest: figures}
    path.write_text("nonsense\n1\n", encoding="utf-8")
    with pytest.raises(QueuesimError, match="not a bound cache"):
        study_dfrs.read_bound_cache(path)


def test_missing_hpc2n_trace_is_skipped_with_a_note(tmp_path: Path):
    args = parse(
        "--traces-per-load",
        "1",
        "--jobs",
        "30",
        "--loads",
        "0.5",
        "--hpc2n-weeks",
        "2",
        "--penalties",
        "0",
        "--algorithms",
        "easy",
        "--workloads",
        str(tmp_path / "nowhere"),
        "--site-configs",
        str(SITE_CONFIGS),
        "--cache",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    )
    assert run(args) == 0
    md = (tmp_path / "out" / "study.md").read_text(encoding="utf-8")
    assert "The HPC2N weeks were skipped" in md and "nowhere" in md
    assert "HPC2N avg" not in md


@pytest.mark.realtrace
def test_hpc2n_weeks_are_instances(tmp_path: Path, real_workloads: Path):
    workloads = real_workloads
    if not (workloads / study_dfrs.HPC2N_TRACE).is_file():
        pytest.skip(f"{study_dfrs.HPC2N_TRACE} is not in {workloads}")
    args = parse(
        "--traces-per-load",
        "0",
        "--hpc2n-weeks",
        "1",
        "--penalties",
        "0",
        "--algorithms",
        "FCFS,EASY",
        "--workloads",
        str(workloads),
        "--site-configs",
        str(SITE_CONFIGS),
        "--cache",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    )
    assert run(args) == 0
    frame = pd.read_csv(tmp_path / "out" / "study.csv")
    assert set(frame["trace_set"]) == {"HPC2N"} and set(frame["week"]) == {0}
    assert (frame["jobs"] == 133).all()  # HPC2N-2002's first week
    assert (frame["degradation"] >= 1 - 1e-6).all()
    md = (tmp_path / "out" / "study.md").read_text(encoding="utf-8")
    assert "the first 1 week(s) of `HPC2N-2002-2.2-cln.swf.gz`" in md
    assert "| algorithm | HPC2N avg | std | max |" in md


# ------------------------------------------------------------------ arguments


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--loads", "0,0.5", r"--loads expects load levels in \(0, 1\], got 0"),
        ("--loads", "0.5,1.5", r"--loads expects load levels in \(0, 1\], got 1.5"),
        ("--loads", "low", "--loads expects comma-separated numbers"),
        ("--penalties", "-300", "--penalties expects seconds >= 0, got -300"),
        ("--jobs", "1", "--jobs expects a whole number >= 2, got 1"),
        ("--workers", "0", "--workers expects at least 1, got 0"),
    ],
)
def test_bad_arguments_are_clear_errors(option: str, value: str, message: str):
    with pytest.raises(QueuesimError, match=message):
        cli_study.dfrs_config(parse(option, value, "--algorithms", "easy"))


def test_an_unknown_algorithm_names_the_valid_ones():
    with pytest.raises(QueuesimError, match="unknown algorithm 'SJF'") as error:
        cli_study.dfrs_config(parse("--algorithms", "EASY,SJF"))
    valid = str(error.value).split("valid: ", 1)[1].split(", ")
    assert valid[:2] == ["FCFS", "EASY"] and "conservative" in valid
    if HAVE_DFRS:
        assert "GreedyPM*/per/OPT=MIN/MINVT=600" in valid


def test_nothing_to_run_is_an_error():
    with pytest.raises(QueuesimError, match="nothing to run"):
        cli_study.dfrs_config(
            parse("--traces-per-load", "0", "--hpc2n-weeks", "0", "--algorithms", "easy")
        )


def test_an_algorithm_given_twice_is_an_error():
    with pytest.raises(QueuesimError, match="'EASY' is given twice"):
        cli_study.dfrs_config(parse("--algorithms", "easy", "--algorithms", "EASY"))


def test_loads_and_penalties_are_parsed():
    assert study_dfrs.parse_loads("0.9, 0.1,0.9,1") == (0.1, 0.9, 1.0)
    assert study_dfrs.parse_penalties("300,0,300") == (300.0, 0.0)
    assert study_dfrs.penalty_title(0) == "no rescheduling penalty"
    assert study_dfrs.penalty_title(300) == "5-minute rescheduling penalty"
    assert study_dfrs.penalty_title(45) == "45 s rescheduling penalty"


@pytest.mark.skipif(not HAVE_DFRS, reason="the DFRS policies are not in this build")
def test_the_default_algorithms_resolve():
    specs = study_dfrs.resolve_algorithms(study_dfrs.DEFAULT_ALGORITHMS, (0.0, 300.0))
    assert [s.label for s in specs] == list(study_dfrs.DEFAULT_ALGORITHMS)
    assert [s.uses_penalty for s in specs] == [False, False] + [True] * len(
        study_dfrs.DFRS_ALGORITHMS
    )
    assert [s.policy for s in specs[:2]] == ["fcfs", "easy"]


def test_a_failing_run_names_the_instance_and_the_algorithm():
    error = study_running._located(PolicyViolation("job 7 started twice"), "load0.5-seed1 / EASY")
    assert isinstance(error, PolicyViolation)
    assert str(error) == "load0.5-seed1 / EASY: job 7 started twice"
    assert isinstance(study_running._located(WorkloadError("bad"), "x"), WorkloadError)


def test_the_command_line_reports_bad_arguments(capsys: pytest.CaptureFixture[str]):
    from queuesim.cli import main

    assert main(["study", "dfrs", "--loads", "0.5,1.2"]) == 2
    assert "--loads expects load levels in (0, 1], got 1.2" in capsys.readouterr().err
    assert main(["study", "dfrs", "--algorithms", "EASY,SJF"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "unknown algorithm 'SJF'; valid: FCFS, EASY" in err
