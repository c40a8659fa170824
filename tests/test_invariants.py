"""The invariants every run must keep, checked from its output (results/invariants), and
`queuesim check-invariants` on KTH-SP2 (issue 20)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from queuesim.cli import main
from queuesim.core.result import Result
from queuesim.results.invariants import invariant_violations, peak_in_use
from queuesim.studies.invariants import QUICK, check_cases
from queuesim.studies.simulate import simulate

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"


@pytest.fixture(scope="module")
def fcfs_run() -> Result:
    return simulate(REPO / "site-configs" / "kth-sp2.yaml", SAMPLE, policy="fcfs")


def _with_jobs(result: Result, jobs: pd.DataFrame) -> Result:
    return dataclasses.replace(result, jobs=jobs)


def test_sweep_line_counts_ends_before_starts_at_one_instant() -> None:
    """Hand-computed: [0,10) 2 CPUs, [10,20) 3 CPUs, [5,15) 1 CPU. At t=10 the first job's
    CPUs are free again: in use at the starts are 2, 3 (2+1), 4 (3+1), never 6."""
    groups, times, in_use = peak_in_use(
        np.array([0.0, 10.0, 5.0]), np.array([10.0, 20.0, 15.0]), np.array([2, 3, 1])
    )
    assert times.tolist() == [0.0, 5.0, 10.0]
    assert in_use.tolist() == [2, 3, 4]
    # per group: the second group's count starts from zero
    groups, times, in_use = peak_in_use(
        np.array([0.0, 0.0, 1.0]),
        np.array([5.0, 5.0, 2.0]),
        np.array([2, 3, 1]),
        np.array([0, 1, 1]),
    )
    assert list(zip(groups.tolist(), in_use.tolist(), strict=True)) == [(0, 2), (1, 3), (1, 4)]


def test_a_correct_run_breaks_no_invariant(fcfs_run: Result) -> None:
    assert invariant_violations(fcfs_run) == []


def test_start_before_submit_is_found(fcfs_run: Result) -> None:
    jobs = fcfs_run.jobs.copy()
    jobs.loc[5, ["start", "end"]] = jobs.loc[5, ["submit", "end"]].to_numpy() - [1, 1]
    problems = invariant_violations(_with_jobs(fcfs_run, jobs))
    assert any(p.startswith("start before submit: 1 jobs") for p in problems), problems


def test_cpus_over_the_site_at_one_instant_are_found(fcfs_run: Result) -> None:
    """Two 60-CPU jobs moved to run at the same time on KTH's 100 CPUs."""
    jobs = fcfs_run.jobs.copy()
    late = jobs["submit"].max() + 1e6
    for k in (0, 1):
        jobs.loc[k, ["cpus", "start", "end"]] = [60, late, late + jobs.loc[k, "runtime"]]
    problems = invariant_violations(_with_jobs(fcfs_run, jobs))
    assert any(p.startswith("CPUs in use: exceeded") for p in problems), problems


def test_a_job_run_twice_or_never_is_found(fcfs_run: Result) -> None:
    jobs = fcfs_run.jobs.copy()
    jobs.loc[3, "job_id"] = jobs.loc[4, "job_id"]
    problems = invariant_violations(_with_jobs(fcfs_run, jobs))
    assert problems[0].startswith("jobs run twice"), problems
    assert "jobs never run: 1" in problems[1]


def test_a_job_that_ran_shorter_than_its_runtime_is_found(fcfs_run: Result) -> None:
    jobs = fcfs_run.jobs.copy()
    jobs.loc[7, "end"] -= 5
    problems = invariant_violations(_with_jobs(fcfs_run, jobs))
    assert any(p.startswith("jobs that ran other than their runtime: 1") for p in problems)


def test_fcfs_overtaking_is_found(fcfs_run: Result) -> None:
    """The first job that waited while the job ahead of it had not started yet, moved to
    start at its submit: before the job ahead."""
    jobs = fcfs_run.jobs.copy()
    start, submit = jobs["start"].to_numpy(), jobs["submit"].to_numpy()
    k = next(k for k in range(1, len(jobs)) if start[k - 1] > submit[k] and start[k] > submit[k])
    jobs.loc[k, ["start", "end"]] -= start[k] - submit[k]
    problems = invariant_violations(_with_jobs(fcfs_run, jobs))
    assert any(p.startswith("FCFS overtaken: 1 jobs") for p in problems), problems


def test_queue_limits_exceeded_are_found(tmp_path: Path) -> None:
    """A site with a per-user limit of 1 running job: two jobs of one user overlapping."""
    site = tmp_path / "s.yaml"
    site.write_text(
        "name: s\nclusters: [{name: c, nodes: 100, cpus_per_node: 1}]\n"
        "queues: [{name: q, max_running_per_user: 1, max_cpus_per_user: 100, cpu_pool: 90}]\n"
        "kill_at_walltime: false\n",
        encoding="utf-8",
    )
    result = simulate(site, SAMPLE, policy="easy")
    assert invariant_violations(result) == []
    jobs = result.jobs.copy()
    user = jobs.loc[0, "user"]
    other = jobs.index[(jobs["user"] == user)][1]
    jobs.loc[other, ["start", "end"]] = [
        jobs.loc[0, "start"],
        jobs.loc[0, "start"] + jobs.loc[other, "runtime"],
    ]
    jobs.loc[other, "submit"] = min(jobs.loc[other, "submit"], jobs.loc[0, "start"])
    problems = invariant_violations(_with_jobs(result, jobs))
    assert any(p.startswith("running jobs per user: exceeded") for p in problems), problems


def test_kth_sp2_keeps_every_invariant_under_every_batch_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CI check: the full KTH-SP2 trace when ../shared/workloads has it (the
    command's default run), else the 2,000-job sample under the same policies."""
    from conftest import shared_workloads_dir

    folder = shared_workloads_dir()
    if (folder / QUICK[0].trace).is_file():
        assert main(["check-invariants", "--workloads", str(folder)]) == 0
        assert "3 runs" in capsys.readouterr().out
        return
    cases = [dataclasses.replace(c, trace=SAMPLE.name) for c in QUICK]
    checked = list(check_cases(cases, SAMPLE.parent, REPO / "site-configs"))
    assert [c.violations for c in checked] == [(), (), ()]
