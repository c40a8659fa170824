"""Invariants of the engine and the batch policies, on generated sites and workloads.

Sites have 1-3 clusters of 1-6 nodes with 1-8 CPUs each, optionally with memory per node
(``memory: per-cpu``); workloads have 1-40 jobs with tied submit times, runtimes 1..1000 s,
CPUs up to what the site can hold, memory per CPU that fits a node. Every check rebuilds
what it needs from the inputs and the job table / allocations, never from the engine's own
counters.

At the end, plain regression tests on one fixed seeded workload of 200 jobs assert only
what must hold there (an independent FCFS reference, and what follows from theorems).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, Run, make_site, make_workload, run_jobs, simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.site.enums import MemoryModel
from queuesim.site.model import Site

POLICIES = ("fcfs", "easy", "conservative")

#: examples per property; raise it for a deeper search, e.g. QUEUESIM_PROPERTY_EXAMPLES=2000
EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "40"))

PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------------------ strategies


@st.composite
def sites(
    draw: st.DrawFn,
    *,
    memory: bool | None = None,
    estimate: str | None = None,
    kill: bool | None = None,
    max_clusters: int = 3,
) -> Site:
    """1-3 clusters x 1-6 nodes x 1-8 CPUs, memory per node (KiB) when ``memory``."""
    with_memory = draw(st.booleans()) if memory is None else memory
    clusters = []
    for _ in range(draw(st.integers(1, max_clusters))):
        nodes = draw(st.integers(1, 6))
        cpus_per_node = draw(st.integers(1, 8))
        mem = draw(st.integers(1, 64)) if with_memory else None
        clusters.append((nodes, cpus_per_node, mem))
    return make_site(
        clusters,
        estimate=draw(st.sampled_from(["requested", "exact"])) if estimate is None else estimate,
        kill_at_walltime=draw(st.booleans()) if kill is None else kill,
    )


def _placeable(site: Site, mem_kib: int) -> int:
    """CPUs of a job with ``mem_kib`` KiB per CPU the empty site can hold."""
    cpus = site.node_cpus()
    if site.memory is MemoryModel.PER_CPU and mem_kib > 0:
        cpus = np.minimum(cpus, site.node_memory() // (mem_kib * 1024))
    return int(cpus.sum())


@st.composite
def job_lists(draw: st.DrawFn, site: Site, *, requests_cover_runtime: bool) -> list[J]:
    """1-40 jobs for ``site``, in a shuffled trace order, with ties in submit time.

    ``requests_cover_runtime``: every requested time is >= the runtime (no job is killed and
    an "exact" estimate is the truth); otherwise requests are random (some jobs are killed,
    or overrun their estimate when the site does not kill)."""
    n = draw(st.integers(1, 40))
    memory = site.memory is MemoryModel.PER_CPU
    min_node_mem_kib = int(site.node_memory().min() // 1024) if memory else 0
    jobs = []
    t = 0
    for i in range(n):
        t += draw(st.just(0) | st.integers(0, 300))
        runtime = draw(st.integers(1, 1000))
        if requests_cover_runtime:
            requested = runtime + draw(st.just(0) | st.integers(0, 1000))
        else:
            requested = draw(st.integers(1, 2000))
        # 0: no memory given (the job asks none); else anything up to a whole small node
        mem = draw(st.just(0) | st.integers(1, min_node_mem_kib)) if memory else 0
        most = _placeable(site, mem)
        cpus = draw(st.integers(1, max(1, most // 4)) | st.integers(1, most))
        jobs.append(
            J(
                id=i + 1,
                submit=t,
                runtime=runtime,
                cpus=cpus,
                requested=requested,
                user=draw(st.integers(1, 5)),
                mem=mem if mem > 0 else None,
            )
        )
    return draw(st.permutations(jobs))  # prepare() must sort by submit, then line


@st.composite
def scenarios(
    draw: st.DrawFn,
    *,
    memory: bool | None = None,
    estimate: str | None = None,
    kill: bool | None = None,
    requests_cover_runtime: bool = False,
    max_clusters: int = 3,
) -> tuple[Site, list[J]]:
    site = draw(sites(memory=memory, estimate=estimate, kill=kill, max_clusters=max_clusters))
    return site, draw(job_lists(site, requests_cover_runtime=requests_cover_runtime))


# ------------------------------------------------------------------------------ helpers


def by_id(jobs: Sequence[J]) -> dict[int, J]:
    return {j.id: j for j in jobs}


def expected_duration(job: J, site: Site) -> float:
    requested = job.runtime if job.requested is None else job.requested
    return min(job.runtime, requested) if site.kill_at_walltime else job.runtime


def starts_in_queue_order(run: Run) -> np.ndarray:
    """Start times by job number (the prepared workload's row = submit order, then line)."""
    ids = run.workload.jobs["job_id"].to_numpy()
    starts = run.starts
    return np.array([starts[int(i)] for i in ids])


def assert_within_node_capacity(run: Run, site: Site) -> None:
    """Rebuild every node's CPUs and memory in use at every instant from the allocations."""
    allocations = run.result.allocations
    assert allocations is not None
    workload = run.workload.jobs
    table = run.table
    n = len(workload)
    assert sorted(allocations) == list(range(n)), "every job has exactly one allocation"
    cap_cpus = site.node_cpus()
    cap_mem = site.node_memory()
    start = table["start"].to_numpy()
    end = table["end"].to_numpy()
    cpus_wanted = workload["cpus"].to_numpy()
    mem_wanted = workload["mem_per_cpu"].to_numpy()
    for k, alloc in allocations.items():
        assert int(alloc.cpus.sum()) == int(cpus_wanted[k]), f"job {k} got the CPUs it asked"
        assert (alloc.cpus > 0).all()
        assert len(set(alloc.nodes.tolist())) == len(alloc.nodes), f"job {k}: a node twice"
        assert alloc.mem_per_cpu == int(mem_wanted[k])
    # usage only grows when a job starts, so the starts are the instants to check
    for t in np.unique(start):
        cpus_used = np.zeros_like(cap_cpus)
        mem_used = np.zeros_like(cap_mem)
        for k in np.flatnonzero((start <= t) & (t < end)):
            alloc = allocations[int(k)]
            np.add.at(cpus_used, alloc.nodes, alloc.cpus)
            np.add.at(mem_used, alloc.nodes, alloc.cpus * alloc.mem_per_cpu)
        over = np.flatnonzero(cpus_used > cap_cpus)
        assert over.size == 0, f"t={t}: nodes {over} over CPU capacity: {cpus_used[over]}"
        over = np.flatnonzero(mem_used > cap_mem)
        assert over.size == 0, f"t={t}: nodes {over} over memory: {mem_used[over]}"


# ------------------------------------------------------------------------------ properties


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY
@given(scenario=scenarios())
def test_cpus_and_memory_in_use_never_exceed_any_node(policy: str, scenario: Any) -> None:
    site, jobs = scenario
    run = run_jobs(jobs, site, policy)
    assert_within_node_capacity(run, site)


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY
@given(scenario=scenarios())
def test_no_job_starts_before_its_submit_time(policy: str, scenario: Any) -> None:
    site, jobs = scenario
    run = run_jobs(jobs, site, policy)
    submitted = by_id(jobs)
    early = {i: (submitted[i].submit, s) for i, s in run.starts.items() if s < submitted[i].submit}
    assert early == {}


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY
@given(scenario=scenarios())
def test_every_job_starts_once_and_ends_once_after_its_runtime(policy: str, scenario: Any) -> None:
    """Every job of the trace has one row with a finite start and end; it ran its runtime,
    or its requested time when the site kills at walltime and it would have run longer."""
    site, jobs = scenario
    run = run_jobs(jobs, site, policy)
    table = run.table
    assert sorted(table["job_id"].tolist()) == sorted(j.id for j in jobs)
    assert np.isfinite(table["start"]).all() and np.isfinite(table["end"]).all()
    ends, starts, status = run.ends, run.starts, run.status
    for job in jobs:
        assert ends[job.id] - starts[job.id] == pytest.approx(expected_duration(job, site))
        requested = job.runtime if job.requested is None else job.requested
        killed = site.kill_at_walltime and job.runtime > requested
        assert status[job.id] == ("killed" if killed else "completed")
    allocations = run.result.allocations
    assert allocations is not None and len(allocations) == len(jobs)


@PROPERTY
@given(scenario=scenarios())
def test_fcfs_starts_jobs_in_queue_order(scenario: Any) -> None:
    """Start times are non-decreasing in submit order, also when memory keeps the head from
    being placed although enough CPUs are idle (nothing may pass it then)."""
    site, jobs = scenario
    starts = starts_in_queue_order(run_jobs(jobs, site, "fcfs"))
    assert (np.diff(starts) >= 0).all(), starts


def _late_against_reservations(run: Run) -> dict[int, tuple[float, float]]:
    promised = run.reservations()
    starts = run.starts
    return {j: (promised[j], starts[j]) for j in promised if starts[j] > promised[j]}


# Reservations are planned in an availability profile of pools (a pool per node when memory
# is modelled, per cluster otherwise), so they are exact with memory as well; the
# reservation properties run on CPU-only sites and on sites with memory per CPU.
MEMORY = pytest.mark.parametrize("memory", [False, True], ids=["cpus", "memory"])


@MEMORY
@PROPERTY
@given(data=st.data())
def test_easy_never_delays_head_reservation(memory: bool, data: st.DataObject) -> None:
    """Exact estimates: EASY never starts a job later than the first reservation it got."""
    site, jobs = data.draw(scenarios(memory=memory, estimate="exact", requests_cover_runtime=True))
    run = run_jobs(jobs, site, "easy", {"record_reservations": True})
    assert _late_against_reservations(run) == {}


@MEMORY
@PROPERTY
@given(data=st.data())
def test_easy_never_delays_head_reservation_when_jobs_end_early(
    memory: bool, data: st.DataObject
) -> None:
    """Requested-time estimates with kill_at_walltime: every job ends at or before its
    estimate, so a running job can only free resources earlier than planned. Backfilled
    jobs never take what the head needs at its reservation (its CPUs and memory on the
    nodes it was planned on stay free for it), hence re-planning can only move the head's
    reservation forward, and EASY never starts the head later than promised."""
    site, jobs = data.draw(scenarios(memory=memory, estimate="requested", kill=True))
    run = run_jobs(jobs, site, "easy", {"record_reservations": True})
    assert _late_against_reservations(run) == {}


@MEMORY
@PROPERTY
@given(data=st.data())
def test_conservative_never_delays_any_reservation(memory: bool, data: st.DataObject) -> None:
    """Exact estimates: conservative never starts any job later than its first reservation."""
    site, jobs = data.draw(scenarios(memory=memory, estimate="exact", requests_cover_runtime=True))
    run = run_jobs(jobs, site, "conservative", {"record_reservations": True})
    assert _late_against_reservations(run) == {}


@MEMORY
@PROPERTY
@given(data=st.data())
def test_conservative_never_delays_any_reservation_when_jobs_end_early(
    memory: bool, data: st.DataObject
) -> None:
    """Requested-time estimates with kill_at_walltime, so every job ends at or before its
    estimate: compression may move reservations forward, never back (DESIGN.md:
    "conservative reservations never delayed"), and with memory a reservation keeps its
    nodes (see test_conservative_keeps_node_level_promises_when_a_job_ends_early)."""
    site, jobs = data.draw(scenarios(memory=memory, estimate="requested", kill=True))
    run = run_jobs(jobs, site, "conservative", {"record_reservations": True})
    assert _late_against_reservations(run) == {}


@PROPERTY
@given(
    scenario=scenarios(memory=False, estimate="exact", requests_cover_runtime=True, max_clusters=1)
)
def test_conservative_with_exact_estimates_never_starts_a_job_later_than_fcfs(
    scenario: Any,
) -> None:
    """A theorem for one pool of CPUs (one cluster, memory not modelled: a job may take
    any free CPUs), with exact estimates; with several pools a job keeps the share it got in
    each, which the argument below does not cover. Induction on the queue: if jobs
    before k start no later under conservative than under FCFS (s'_i), they also end no
    later, so at any t >= s'_k the jobs before k running under conservative are a subset of
    those running under FCFS; FCFS fits k at s'_k beside them, so conservative's earliest
    slot for k (planned with those jobs only: later jobs never take a reservation's CPUs) is
    at or before s'_k, and exact estimates make it keep that slot."""
    site, jobs = scenario
    workload = make_workload(jobs, site)
    fcfs = starts_in_queue_order(simulate(site, workload, "fcfs"))
    conservative = starts_in_queue_order(simulate(site, workload, "conservative"))
    later = np.flatnonzero(conservative > fcfs)
    assert later.size == 0, {int(k): (fcfs[k], conservative[k]) for k in later}


@pytest.mark.parametrize("policy", POLICIES)
@PROPERTY
@given(scenario=scenarios())
def test_every_policy_is_deterministic(policy: str, scenario: Any) -> None:
    site, jobs = scenario
    first = run_jobs(jobs, site, policy)
    second = run_jobs(jobs, site, policy)
    pd.testing.assert_frame_equal(first.table, second.table)
    a, b = first.result.allocations, second.result.allocations
    assert a is not None and b is not None and a.keys() == b.keys()
    for k in a:
        assert a[k].nodes.tolist() == b[k].nodes.tolist()
        assert a[k].cpus.tolist() == b[k].cpus.tolist()


# ------------------------------------------------------------------------------ regression
#
# One fixed seeded workload: 200 jobs on one cluster of 128 CPUs (16 nodes x 8), CPU-only
# (one pool), exact estimates, requests >= runtimes, arrivals dense enough that a queue
# builds up.
#
# There is deliberately NO assertion that EASY's mean wait is <= FCFS's: that is not a
# theorem. EASY protects only the head, so a backfilled job may delay the second waiting
# job and everything queued behind it (test_easy_mean_wait_can_exceed_fcfs is a small
# instance where EASY's mean wait is worse). What must hold is asserted below.


def seeded_workload(seed: int = 20240611, n: int = 200) -> tuple[Site, list[J]]:
    rng = np.random.default_rng(seed)
    site = make_site(((16, 8),), estimate="exact", kill_at_walltime=True)
    gaps = rng.exponential(60.0, n).round()
    gaps[rng.random(n) < 0.15] = 0  # bursts: several jobs submitted at the same second
    submit = np.cumsum(gaps)
    runtime = np.maximum(1, rng.lognormal(6.0, 1.2, n).round()).astype(int)
    cpus = np.minimum(128, 2 ** rng.integers(0, 8, n)) - rng.integers(0, 2, n)
    cpus = np.maximum(cpus, 1)
    requested = runtime + rng.integers(0, 3600, n)
    jobs = [
        J(
            id=i + 1,
            submit=float(submit[i]),
            runtime=int(runtime[i]),
            cpus=int(cpus[i]),
            requested=int(requested[i]),
            user=int(rng.integers(1, 12)),
        )
        for i in range(n)
    ]
    return site, jobs


def reference_fcfs(jobs: Sequence[J], site: Site) -> dict[int, float]:
    """Strict FCFS on a pool of CPUs, written independently of the engine: each job starts
    at the first instant >= its submit and >= the previous start with enough free CPUs."""
    order = sorted(range(len(jobs)), key=lambda k: (jobs[k].submit, k))
    total = site.total_cpus
    running: list[tuple[float, int]] = []  # (end, cpus)
    starts: dict[int, float] = {}
    previous = 0.0
    for k in order:
        job = jobs[k]
        t = max(float(job.submit), previous)
        while total - sum(c for end, c in running if end > t) < job.cpus:
            t = min(end for end, _ in running if end > t)
        starts[job.id] = t
        running.append((t + expected_duration(job, site), job.cpus))
        previous = t
    return starts


@pytest.fixture(scope="module")
def seeded_runs() -> dict[str, Any]:
    site, jobs = seeded_workload()
    workload = make_workload(jobs, site)
    runs = {
        name: simulate(site, workload, name, params)
        for name, params in (
            ("fcfs", {}),
            ("easy", {"record_reservations": True}),
            ("conservative", {"record_reservations": True}),
        )
    }
    return {"site": site, "jobs": jobs, **runs}


def test_seeded_workload_builds_a_queue_and_gets_backfilled(seeded_runs: dict[str, Any]) -> None:
    """Not a theorem: a check that the fixed workload exercises what the tests below guard
    (jobs wait under FCFS, and EASY starts some job ahead of an earlier one)."""
    assert seeded_runs["fcfs"].table["wait"].mean() > 0
    easy = starts_in_queue_order(seeded_runs["easy"])
    assert (np.diff(easy) < 0).any()
    assert len(seeded_runs["conservative"].reservations()) > 10


def test_fcfs_matches_an_independent_reference_on_seeded_workload(
    seeded_runs: dict[str, Any],
) -> None:
    assert seeded_runs["fcfs"].starts == reference_fcfs(seeded_runs["jobs"], seeded_runs["site"])


def test_conservative_never_waits_longer_than_fcfs_on_seeded_workload(
    seeded_runs: dict[str, Any],
) -> None:
    """Per job, hence in mean: the theorem of
    test_conservative_with_exact_estimates_never_starts_a_job_later_than_fcfs."""
    fcfs = starts_in_queue_order(seeded_runs["fcfs"])
    conservative = starts_in_queue_order(seeded_runs["conservative"])
    assert (conservative <= fcfs).all()
    assert (
        seeded_runs["conservative"].table["wait"].mean() <= seeded_runs["fcfs"].table["wait"].mean()
    )


def test_backfilling_keeps_reservations_on_seeded_workload(seeded_runs: dict[str, Any]) -> None:
    """Exact estimates: EASY keeps its head reservations, conservative all of them."""
    assert _late_against_reservations(seeded_runs["easy"]) == {}
    assert _late_against_reservations(seeded_runs["conservative"]) == {}


def test_easy_mean_wait_can_exceed_fcfs() -> None:
    """Why the ranking EASY <= FCFS is not asserted: a hand-made counterexample.

    4 CPUs. A: 2 CPUs 0..10.  H1 (t=1): 3 CPUs 10 s.  H2..H7 (t=2): 4 CPUs 10 s each.
    B (t=3): 1 CPU 30 s.
    FCFS: A 0, H1 10, H2..H7 20, 30, ..., 70, B 80.
          waits 0 + 9 + (18 + 28 + ... + 68) + 77 = 344.
    EASY: B is backfilled at 3 on H1's extra CPU (runs 3..33) and delays H2..H7 by 13 s
          each: H2..H7 at 33, 43, ..., 83.  waits 0 + 9 + (31 + 41 + ... + 81) + 0 = 345.
    """
    site = make_site(((1, 4),))
    jobs = [J(1, 0, 10, 2), J(2, 1, 10, 3)]
    jobs += [J(3 + k, 2, 10, 4) for k in range(6)]
    jobs += [J(9, 3, 30, 1)]
    fcfs = run_jobs(jobs, site, "fcfs")
    easy = run_jobs(jobs, site, "easy")
    assert fcfs.starts == {1: 0, 2: 10, 3: 20, 4: 30, 5: 40, 6: 50, 7: 60, 8: 70, 9: 80}
    assert easy.starts == {1: 0, 2: 10, 3: 33, 4: 43, 5: 53, 6: 63, 7: 73, 8: 83, 9: 3}
    assert fcfs.table["wait"].sum() == 344
    assert easy.table["wait"].sum() == 345
