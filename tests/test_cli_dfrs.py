"""The DFRS commands end to end: ``queuesim generate lublin`` and ``queuesim solve``.

Called through ``queuesim.cli.main([...])`` with stdout and stderr captured: generated
traces must be reproducible byte for byte, reach the requested offered load and read back
with processors ``tasks x cpu_need x node_cpus``; solved allocations must be valid and
below the LP bound, the MILP must be at least as good as every heuristic, and bad input
must give one clear message and the documented exit code, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from queuesim.cli import build_parser, main
from queuesim.cli.options import EXAMPLES
from queuesim.policies.dfrs.instance import allocation_problems, instance_from_dict, load_instance
from queuesim.policies.dfrs.offline import known_algorithms, lp_bound
from queuesim.traces import dfrs_annotation as annotate
from queuesim.traces.lublin import offered_load

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "workloads" / "dfrs-instance-example.yaml"
#: the heuristic that finds no allocation of the example (documented in the file)
FAILS_ON_EXAMPLE = "GR"
TOLERANCE = 1e-9


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flat(text: str) -> str:
    """``text`` without whitespace, so checks survive the terminal's line wrapping."""
    return "".join(text.split())


def assert_clear_error(code: int, out: str, err: str, expected_code: int, *parts: object) -> None:
    assert code == expected_code, (code, out, err)
    assert out == ""
    assert err.startswith("error: ")
    assert "Traceback" not in err
    for part in parts:
        assert flat(str(part)) in flat(err), (part, err)


def generate(
    capsys: pytest.CaptureFixture[str], out: Path, *extra: str, seed: int = 1
) -> tuple[int, str, str]:
    return run_cli(
        capsys, "generate", "lublin", "--nodes", "64", "--jobs", "400", "--seed", str(seed),
        "--out", out, *extra,
    )  # fmt: skip


def solve(
    capsys: pytest.CaptureFixture[str], instance: Path, algorithm: str, out: Path, *extra: str
) -> dict[str, Any]:
    code, stdout, err = run_cli(
        capsys, "solve", instance, "--algorithm", algorithm, "--out", out, *extra
    )
    assert code == 0, (algorithm, stdout, err)
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return document


def allocation_of(document: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Task hosts (in task order) and job yields from a ``solve --out`` document."""
    hosts = np.array([h for job in document["jobs"] for h in job["hosts"]], dtype=np.int64)
    yields = np.array([job["yield"] for job in document["jobs"]], dtype=np.float64)
    return hosts, yields


# --- generate ----------------------------------------------------------------------------------


def test_generate_is_byte_identical_for_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a" / "trace.swf", tmp_path / "b" / "trace.swf"
    assert generate(capsys, first, "--load", "0.6")[0] == 0
    assert generate(capsys, second, "--load", "0.6")[0] == 0
    assert first.read_bytes() == second.read_bytes()
    sidecar = annotate.annotation_path(first)
    assert sidecar.read_bytes() == annotate.annotation_path(second).read_bytes()


def test_generate_differs_for_another_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a" / "trace.swf", tmp_path / "b" / "trace.swf"
    assert generate(capsys, first, "--load", "0.6", seed=1)[0] == 0
    assert generate(capsys, second, "--load", "0.6", seed=2)[0] == 0
    a, b = annotate.read_annotated(first).jobs, annotate.read_annotated(second).jobs
    assert not np.array_equal(a["runtime"].to_numpy(), b["runtime"].to_numpy())
    assert not np.array_equal(a["mem_fraction"].to_numpy(), b["mem_fraction"].to_numpy())


def test_generate_without_load_writes_the_unscaled_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "trace.swf"
    assert generate(capsys, out, seed=3)[0] == 0
    back = annotate.read_annotated(out).jobs.drop(columns="line")
    expected = annotate.synthetic_trace(64, 400, 3)
    assert back["submit"].tolist() == expected["submit"].tolist()
    assert back["tasks"].tolist() == expected["tasks"].tolist()


@pytest.mark.parametrize(
    ("nodes", "jobs", "load"), [(128, 1000, 0.7), (64, 400, 0.1), (16, 200, 1)]
)
def test_generate_achieves_the_requested_offered_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: int, jobs: int, load: float
) -> None:
    """The load in nodes is exact up to rounding the scaled span to whole seconds: a relative
    error of at most 0.5 s over the span (about 1e-6 here)."""
    out = tmp_path / "trace.swf"
    code, stdout, _ = run_cli(
        capsys, "generate", "lublin", "--nodes", nodes, "--jobs", jobs, "--load", load,
        "--seed", 11, "--out", out,
    )  # fmt: skip
    assert code == 0
    frame = annotate.read_annotated(out).jobs
    span = float(frame["submit"].max() - frame["submit"].min())
    achieved = annotate.offered_node_load(frame, nodes)
    assert abs(achieved / load - 1) <= 0.5 / span + TOLERANCE
    assert abs(achieved / load - 1) < 1e-4
    assert flat(f"{achieved:.4f} of {nodes} nodes (target {load:g})") in flat(stdout)


@pytest.mark.parametrize("node_cpus", [4, 2])
def test_generate_reads_back_with_processors_tasks_x_cpu_need_x_node_cpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], node_cpus: int
) -> None:
    out = tmp_path / "lublin.swf"
    code, stdout, err = generate(capsys, out, "--load", "0.5", "--node-cpus", str(node_cpus))
    assert (code, err) == (0, "")
    trace = annotate.read_annotated(out)
    jobs = trace.jobs
    assert trace.node_cpus == node_cpus and len(jobs) == 400
    tasks = jobs["tasks"].to_numpy()
    cores = tasks * jobs["cpu_need"].to_numpy() * node_cpus
    assert (jobs["alloc_procs"].to_numpy() == cores).all()
    assert (jobs["req_procs"].to_numpy() == cores).all()
    assert (jobs.loc[tasks == 1, "alloc_procs"] == 1).all()  # a sequential task: one core
    assert (jobs.loc[tasks > 1, "alloc_procs"] == tasks[tasks > 1] * node_cpus).all()
    assert trace.header.max_procs == 64 * node_cpus >= jobs["alloc_procs"].max()
    # the batch view: offered load in cores, below the load in nodes
    assert offered_load(jobs, 64 * node_cpus) < annotate.offered_node_load(jobs, 64)
    assert flat(f"{out}, {annotate.annotation_path(out)}") in flat(stdout)
    assert "400 jobs" in stdout


def test_generate_job_classes_writes_interactive_and_batch_queues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "classes.swf.gz"
    assert generate(capsys, out, "--job-classes")[0] == 0
    assert (tmp_path / "classes.swf.dfrs.csv").is_file()
    jobs = annotate.read_annotated(out).jobs
    assert set(jobs["queue"].tolist()) == {0, 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "0"], "--nodes expects a number of nodes >= 1, got 0"),
        (["--jobs", "0"], "--jobs expects a number of jobs >= 1, got 0"),
        (["--load", "0"], "--load expects an offered load in (0, 1]"),
        (["--load", "-0.5"], "--load expects an offered load in (0, 1]"),
        (["--load", "1.01"], "--load expects an offered load in (0, 1]"),
        (["--load", "nan"], "got nan"),
        (["--load", "inf"], "got inf"),
        (["--jobs", "1", "--load", "0.5"], "--load needs --jobs 2 or more"),
        (["--node-cpus", "0"], "--node-cpus expects a number of cores >= 1"),
        (["--seed", "-1"], "--seed expects an integer >= 0"),
    ],
)
def test_generate_bad_numbers_are_clear_errors_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "trace.swf"
    base = {"--nodes": "8", "--jobs": "10", "--seed": "1"}
    for key, value in zip(args[::2], args[1::2], strict=True):
        base[key] = value
    words = [w for pair in base.items() for w in pair]
    code, stdout, err = run_cli(capsys, "generate", "lublin", *words, "--out", out)
    assert_clear_error(code, stdout, err, 2, message)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_generate_out_that_cannot_be_a_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = generate(capsys, tmp_path)
    assert_clear_error(code, out, err, 2, f"--out {tmp_path}: is a directory")
    (tmp_path / "busy.swf.dfrs.csv").mkdir()
    code, out, err = generate(capsys, tmp_path / "busy.swf")
    assert_clear_error(code, out, err, 2, "busy.swf.dfrs.csv: is a directory")
    (tmp_path / "plain").write_text("x")
    code, out, err = generate(capsys, tmp_path / "plain" / "t.swf")
    assert_clear_error(code, out, err, 2, "plain is a file, not a directory")
    assert not (tmp_path / "busy.swf").exists()


def test_generate_unknown_model_or_missing_option_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["generate", "pareto", "--nodes", "8", "--jobs", "5", "--seed", "1", "--out", "x.swf"],
        ["generate", "lublin", "--nodes", "8", "--jobs", "5", "--seed", "1"],
        ["generate", "lublin", "--nodes", "eight", "--jobs", "5", "--seed", "1", "--out", "x"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert "usage: queuesim generate" in capsys.readouterr().err


# --- solve -------------------------------------------------------------------------------------


def test_example_instance_is_small_and_valid() -> None:
    instance = load_instance(EXAMPLE)
    assert (instance.hosts, instance.n_jobs, instance.n_tasks) == (4, 6, 12)
    assert lp_bound(instance) == pytest.approx(4 / 7.35)


@pytest.mark.parametrize(
    "algorithm", [a for a in known_algorithms() if a not in (FAILS_ON_EXAMPLE, "MILP")]
)
def test_solve_example_gives_a_valid_allocation_below_the_lp_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], algorithm: str
) -> None:
    out = tmp_path / "result.json"
    document = solve(capsys, EXAMPLE, algorithm.lower(), out)
    instance = load_instance(EXAMPLE)
    hosts, yields = allocation_of(document)
    assert allocation_problems(instance, hosts, yields) == []
    assert document["algorithm"] == algorithm and document["step"] == "avg"
    assert document["min_yield"] == pytest.approx(yields.min(), abs=TOLERANCE)
    assert document["average_yield"] == pytest.approx(yields.mean(), abs=TOLERANCE)
    assert document["lp_bound"] == pytest.approx(lp_bound(instance))
    assert 0 < document["min_yield"] <= document["lp_bound"] + TOLERANCE
    assert [len(job["hosts"]) for job in document["jobs"]] == instance.tasks.tolist()


def test_solve_prints_every_job_and_the_yields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "solve", EXAMPLE, "--algorithm", "MCB8")
    assert (code, err) == (0, "")
    for name in ("cfd", "render", "genome", "stats", "mc", "post"):
        assert name in out
    for label in ("minimum yield", "average yield", "LP bound", "solve time", "hosts used"):
        assert label in out
    assert "0.4878" in out and "0.5442" in out  # MCB8's minimum yield, the bound 4 / 7.35


def small_instance(tmp_path: Path, seed: int) -> Path:
    """A random instance of 3 hosts and 5 jobs (10 tasks or fewer) whose memory fits."""
    rng = np.random.default_rng(seed)
    jobs = [
        {
            "name": f"j{i}",
            "tasks": int(rng.integers(1, 3)),
            "cpu_need": float(rng.choice([0.25, 0.5, 1.0])),
            "memory": float(rng.choice([0.1, 0.2])),
        }
        for i in range(5)
    ]
    path = tmp_path / f"small-{seed}.json"
    path.write_text(json.dumps({"hosts": 3, "jobs": jobs}), encoding="utf-8")
    instance_from_dict(json.loads(path.read_text()))  # valid by construction
    return path


@pytest.mark.parametrize("instance", ["example", "random-1", "random-2"])
def test_milp_is_at_least_every_heuristic_via_the_cli_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], instance: str
) -> None:
    path = EXAMPLE if instance == "example" else small_instance(tmp_path, int(instance[-1]))
    best = solve(capsys, path, "MILP", tmp_path / "milp.json")
    assert best["min_yield"] <= best["lp_bound"] + TOLERANCE
    solved = 0
    for algorithm in known_algorithms():
        out = tmp_path / f"{algorithm}.json"
        code, stdout, err = run_cli(capsys, "solve", path, "--algorithm", algorithm, "--out", out)
        if code == 1:  # a heuristic may find no allocation of a feasible instance
            assert_clear_error(code, stdout, err, 1, path, algorithm, "found no allocation")
            continue
        assert code == 0, err
        solved += 1
        heuristic = json.loads(out.read_text(encoding="utf-8"))
        assert heuristic["min_yield"] <= best["min_yield"] + TOLERANCE, algorithm
    assert solved >= len(known_algorithms()) - 1


def test_solve_step_equal_gives_every_job_the_minimum_yield(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    equal = solve(capsys, EXAMPLE, "MCB8", tmp_path / "equal.json", "--step", "equal")
    average = solve(capsys, EXAMPLE, "MCB8", tmp_path / "avg.json", "--step", "avg")
    maxmin = solve(capsys, EXAMPLE, "MCB8", tmp_path / "min.json", "--step", "min")
    yields = [job["yield"] for job in equal["jobs"]]
    assert yields == [equal["min_yield"]] * len(yields)
    for other in (average, maxmin):
        assert other["min_yield"] == pytest.approx(equal["min_yield"], abs=TOLERANCE)
        assert other["average_yield"] >= equal["average_yield"] - TOLERANCE
    assert average["average_yield"] >= maxmin["average_yield"] - TOLERANCE


def test_solve_out_is_the_same_bytes_for_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = solve(capsys, EXAMPLE, "RRNZ", tmp_path / "a.json", "--seed", "5")
    solve(capsys, EXAMPLE, "RRNZ", tmp_path / "b.json", "--seed", "5")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a["seed"] == 5 and a["algorithm"] == "RRNZ"


def test_solve_unknown_algorithm_is_an_error_listing_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.json"
    code, stdout, err = run_cli(capsys, "solve", EXAMPLE, "--algorithm", "MCB9", "--out", out)
    assert_clear_error(code, stdout, err, 2, "--algorithm MCB9: unknown algorithm")
    assert flat(", ".join(known_algorithms())) in flat(err)
    assert not out.exists()


def test_solve_unreadable_or_invalid_instance_is_an_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    code, out, err = run_cli(capsys, "solve", missing, "--algorithm", "MCB8")
    assert_clear_error(code, out, err, 2, missing, "cannot read the instance file")

    broken = tmp_path / "broken.json"
    broken.write_text('{"hosts": 2, "jobs": [', encoding="utf-8")
    code, out, err = run_cli(capsys, "solve", broken, "--algorithm", "MCB8")
    assert_clear_error(code, out, err, 2, broken, "not valid JSON")

    bad = tmp_path / "bad.yaml"
    bad.write_text("hosts: 2\njobs:\n  - {tasks: 1, cpu_need: 2.0, memory: 0.5}\n")
    code, out, err = run_cli(capsys, "solve", bad, "--algorithm", "MCB8")
    assert_clear_error(code, out, err, 2, bad, "jobs[0].cpu_need")


def test_solve_without_allocation_names_the_file_and_algorithm_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gr.json"
    code, stdout, err = run_cli(
        capsys, "solve", EXAMPLE, "--algorithm", FAILS_ON_EXAMPLE, "--out", out
    )
    assert_clear_error(code, stdout, err, 1, EXAMPLE, "GR found no allocation")
    assert not out.exists()

    infeasible = tmp_path / "infeasible.yaml"  # 1.2 hosts of memory on one host
    infeasible.write_text("hosts: 1\njobs:\n  - {tasks: 2, cpu_need: 0.5, memory: 0.6}\n")
    code, stdout, err = run_cli(capsys, "solve", infeasible, "--algorithm", "MILP")
    assert_clear_error(code, stdout, err, 1, infeasible, "MILP found no allocation")


def test_solve_out_directory_is_an_error_before_solving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "solve", EXAMPLE, "--algorithm", "MILP", "--out", tmp_path)
    assert_clear_error(code, out, err, 2, f"--out {tmp_path}: is a directory")


# --- help --------------------------------------------------------------------------------------


def test_help_examples_of_generate_and_solve_parse() -> None:
    parser = build_parser()
    lines = [line.strip() for line in EXAMPLES.splitlines()]
    for command in ("generate", "solve"):
        (line,) = [x for x in lines if x.startswith(f"queuesim {command} ")]
        args = parser.parse_args(line.split()[1:])
        assert args.command == command
