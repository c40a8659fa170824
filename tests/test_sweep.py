"""queuesim sweep: cells on an in-process Dask cluster, rows that equal single runs,
resume and growth without rerunning finished cells, failing cells recorded, the batch job
scripts, the command line, and the report's Pareto front and axis effects."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from queuesim.cli import main
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.site.site_yaml import site_yaml
from queuesim.studies.simulate import metrics_of, simulate
from queuesim.studies.sweep import cell_table, plan, run_plan
from queuesim.studies.sweep_run import Execution, JobQueue, SweepProgress, job_script
from queuesim.studies.sweep_store import CELLS, read_rows

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 jobs of the shipped KTH sample: a few hundred milliseconds a run."""
    lines = (REPO / "workloads" / "kth-sp2-sample.swf").read_text().splitlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = [line for line in lines if not line.startswith(";")][:300]
    path = tmp_path_factory.mktemp("trace") / "kth-300.swf"
    path.write_text("\n".join(header + jobs) + "\n")
    return path


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """An in-process LocalCluster (threads, no processes): fast to start."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


def _spec(folder: Path, trace: Path, pools: list[int], policies: list[str]) -> Path:
    spec = {
        "name": "t",
        "site": "tiny",
        "traces": [str(trace)],
        "axes": {
            "policy": {"path": "scheduler.policy", "values": policies},
            "pool": {"path": "queues[batch].cpu_pool", "values": pools},
        },
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _run(spec: Path, out: Path, scheduler: str) -> list[SweepProgress]:
    seen: list[SweepProgress] = []
    run_plan(plan(spec, out), Execution(scheduler=scheduler), on_progress=seen.append)
    return seen


def test_rows_equal_single_runs(tmp_path: Path, trace: Path, scheduler: str) -> None:
    """Every cell's row holds the metrics a plain simulate() of its site gives, per queue
    too; one row per cell."""
    spec = _spec(tmp_path, trace, [144, 120], ["easy", "conservative"])
    _run(spec, tmp_path / "out", scheduler)
    table = cell_table(plan(spec, tmp_path / "out").cells, tmp_path / "out")
    assert len(table) == 4 and set(table["status"]) == {"done"}
    assert len(list((tmp_path / "out" / CELLS).glob("*.parquet"))) == 4
    for cell in plan(spec, tmp_path / "out").cells:
        direct = metrics_of(simulate(cell.site, trace))
        row = table[table["key"] == cell.key].iloc[0]
        assert row["awwt"] == pytest.approx(direct.awwt, rel=1e-12)
        assert row["nuwt_dev"] == pytest.approx(direct.nuwt_dev, rel=1e-12)
        assert row["queue.batch.mean_wait"] == pytest.approx(direct.mean_wait, rel=1e-12)


def test_resume_and_growth_run_only_missing_cells(
    tmp_path: Path, trace: Path, scheduler: str
) -> None:
    """A second run runs nothing; a lost cell file is the only cell rerun; an added axis
    value runs only its new cells and leaves the finished files untouched."""
    out = tmp_path / "out"
    spec = _spec(tmp_path, trace, [144], ["easy", "fcfs"])
    _run(spec, out, scheduler)
    assert plan(spec, out).todo == []
    files = sorted((out / CELLS).glob("*.parquet"))
    files[0].unlink()  # as if the run had been killed before this cell ended
    again = plan(spec, out)
    assert [c.key for c in again.todo] == [files[0].name.removesuffix(".parquet")]
    stamps = {f.name: f.stat().st_mtime_ns for f in files[1:]}
    assert _run(spec, out, scheduler)[-1].total == 1
    grown = _spec(tmp_path, trace, [144, 100], ["easy", "fcfs"])
    todo = plan(grown, out).todo
    assert sorted(dict(c.values)["pool"] for c in todo) == [100, 100]
    _run(grown, out, scheduler)
    assert {f.name: f.stat().st_mtime_ns for f in files[1:]} == stamps
    rows = read_rows(out)
    assert len(rows) == 4 and rows["key"].is_unique


def test_a_failing_cell_is_recorded_and_the_others_go_on(
    tmp_path: Path, trace: Path, scheduler: str
) -> None:
    """A pool too small for the trace's largest job fails its cell with the reason; the
    other cell ends; the failed cell is tried again on the next run."""
    out = tmp_path / "out"
    spec = _spec(tmp_path, trace, [144, 8], ["easy"])
    seen = _run(spec, out, scheduler)
    assert (seen[-1].done, seen[-1].failed) == (2, 1)
    table = cell_table(plan(spec, out).cells, out)
    failed = table[table["status"] == "failed"].iloc[0]
    assert failed["pool"] == 8 and "cpu_pool" in failed["error"]
    assert table[table["pool"] == 144]["status"].item() == "done"
    assert len(plan(spec, out).todo) == 1


def test_load_factor_packs_submit_times(tmp_path: Path, trace: Path, scheduler: str) -> None:
    """A load factor 2 halves every gap since the first submission: the makespan shrinks
    and the mean wait cannot be smaller than at factor 1 on this trace."""
    spec = tmp_path / "load.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "load",
                "site": "tiny",
                "traces": [str(trace)],
                "axes": {"load": {"path": "load_factor", "values": [1, 2]}},
            }
        )
    )
    _run(spec, tmp_path / "out", scheduler)
    table = cell_table(plan(spec, tmp_path / "out").cells, tmp_path / "out")
    one, two = table.iloc[0], table.iloc[1]
    assert two["first_submit"] == one["first_submit"]
    assert two["makespan"] < one["makespan"]
    assert two["mean_wait"] >= one["mean_wait"]


def test_job_scripts_for_pbs_and_slurm() -> None:
    """The scripts carry queue, account, CPUs, memory and walltime in each system's
    directives, and start one single-threaded worker per core against the scheduler."""
    jq = JobQueue(
        "pbs",
        jobs=2,
        cores=8,
        memory="16GB",
        walltime="02:00:00",
        queue="q_1d",
        account="proj1",
        prologue=("module load python",),
    )
    pbs = job_script(jq, "tcp://login1:8786")
    assert "#PBS -q q_1d" in pbs and "#PBS -A proj1" in pbs
    assert "#PBS -l select=1:ncpus=8:mem=15GB" in pbs
    assert "#PBS -l walltime=02:00:00" in pbs and "#PBS -N queuesim-sweep" in pbs
    assert "module load python" in pbs
    assert "tcp://login1:8786" in pbs and "--nthreads 1" in pbs and "--nworkers 8" in pbs
    slurm = job_script(
        JobQueue(
            "slurm", cores=4, memory="8GB", walltime="00:30:00", queue="short", account="proj2"
        ),
        "tcp://login1:8786",
    )
    for directive in (
        "#SBATCH -p short",
        "#SBATCH -A proj2",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --mem=8G",
        "#SBATCH -t 00:30:00",
    ):
        assert directive in slurm
    assert "--nworkers 4" in slurm


def test_command_line_run_show_and_report(
    tmp_path: Path,
    trace: Path,
    scheduler: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sweep run` against a scheduler writes the rows and the report; `sweep show KEY
    --site` prints a site file that loads back to the cell's site; `sweep report` writes
    the same bytes again; a dry run with
    --cluster prints the job script and runs nothing."""
    spec = _spec(tmp_path, trace, [144, 100], ["easy"])
    out = tmp_path / "out"
    assert (
        main(["sweep", "run", str(spec), "--out", str(out), "--cluster", "slurm", "--dry-run"]) == 0
    )
    assert "#SBATCH" in capsys.readouterr().out and not out.exists()
    assert main(["sweep", "run", str(spec), "--out", str(out), "--scheduler", scheduler]) == 0
    report = (out / "report" / "report.md").read_text()
    # the report model escapes Markdown in titles: nuwt_dev is written nuwt\\_dev
    assert "## Pareto front: awwt against nuwt\\_dev" in report
    assert {"pareto.png", "effects.png", "cells.csv", "report.html"} <= {
        p.name for p in (out / "report").iterdir()
    }
    again = tmp_path / "again"
    assert main(["sweep", "report", str(spec), "--out", str(out), "--to", str(again)]) == 0
    for name in ("report.md", "report.html", "cells.csv", "pareto.png", "effects.png"):
        assert (again / name).read_bytes() == (out / "report" / name).read_bytes(), name
    capsys.readouterr()
    cell = plan(spec, out).cells[1]
    assert main(["sweep", "show", cell.key[:10], "--out", str(out), "--site"]) == 0
    shown = Site.model_validate(yaml.safe_load(capsys.readouterr().out))
    assert shown == cell.site and shown.queues[0].cpu_pool == 100
    out.rename(tmp_path / "sweep-t")  # the default folder of spec `t`, found without --out
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "show", cell.key[:10], "--site"]) == 0
    assert Site.model_validate(yaml.safe_load(capsys.readouterr().out)) == cell.site


def test_site_yaml_loads_back_to_the_same_site() -> None:
    """Every bundled site written by site_yaml loads back equal (pools as %, durations)."""
    for path in sorted((REPO / "site-configs").glob("*.yaml")):
        site = load_site(path)
        assert Site.model_validate(yaml.safe_load(site_yaml(site))) == site, path.name


def test_pareto_front_and_axis_effects_hand_computed() -> None:
    """Four cells: (1, 4), (2, 2), (3, 3), (4, 1); (3, 3) is dominated by (2, 2). The axis
    effect of `a` averages over `b`."""
    from queuesim.results.sweep_analysis import axis_effects, best_cells, pareto_front

    table = pd.DataFrame(
        {
            "cell": [0, 1, 2, 3, 4],
            "a": ["x", "x", "y", "y", "y"],
            "b": [1, 2, 1, 2, 3],
            "status": ["done", "done", "done", "done", "failed"],
            "awwt": [1.0, 2.0, 3.0, 4.0, float("nan")],
            "nuwt_dev": [4.0, 2.0, 3.0, 1.0, float("nan")],
        }
    )
    assert pareto_front(table, "awwt", "nuwt_dev").tolist() == [True, True, False, True]
    effects = axis_effects(table, ["a"], "awwt")
    assert effects["mean"].tolist() == [1.5, 3.5] and effects["count"].tolist() == [2, 2]
    assert best_cells(table, "awwt", 2)["cell"].tolist() == [0, 1]


def test_other_commands_do_not_import_dask() -> None:
    """Building the command line (and `queuesim --help`) does not import Dask."""
    code = (
        "import sys, queuesim.cli as c; c.build_parser(); "
        "print(any(m.split('.')[0] in ('dask', 'distributed', 'dask_jobqueue') "
        "for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "False"


def test_api_returns_the_table_and_keeps_jobs_on_request(
    tmp_path: Path, trace: Path, scheduler: str
) -> None:
    """queuesim.sweep() returns one row per cell in the spec's order, with the axis values
    as columns; per-job tables are written only with keep_jobs, one per cell; each worker
    read the trace once, however many cells it ran."""
    from distributed import Client

    import queuesim

    spec = _spec(tmp_path, trace, [144, 120, 100], ["easy"])
    table = queuesim.sweep(spec, tmp_path / "a", scheduler=scheduler)
    assert table["cell"].tolist() == [0, 1, 2] and table["pool"].tolist() == [144, 120, 100]
    assert not (tmp_path / "a" / "jobs").exists()
    queuesim.sweep(spec, tmp_path / "b", scheduler=scheduler, keep_jobs=True)
    kept = sorted(p.name.removesuffix(".parquet") for p in (tmp_path / "b" / "jobs").iterdir())
    assert kept == sorted(table["key"])
    assert len(pd.read_parquet(tmp_path / "b" / "jobs" / f"{kept[0]}.parquet")) == 300
    with Client(scheduler) as client:
        reads = client.run(
            lambda dask_worker: (
                getattr(dask_worker, "_queuesim_cache", None)
                and (dask_worker._queuesim_cache.reads)
            )
        )
    assert 1 in reads.values() and set(reads.values()) <= {None, 1}
