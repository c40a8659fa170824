"""DPSA (paper 001): the paper's example, the search against brute force, the variants'
tie-breaks, the bounds, the head's reservation, and the command line and study.

Schedules are built with :mod:`builders` as in ``test_golden_schedules.py``: jobs are
``J(id, submit, runtime, cpus, requested=..., user=..., mem=...)``, the scheduler plans
with the requested time (= the runtime unless given), one column of a chart is one second
and one row one CPU.
"""

from __future__ import annotations

import gzip
import itertools
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import J, Run, make_site, make_workload, run_jobs, simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.cli import main
from queuesim.common.errors import ConfigError
from queuesim.core.workload import load_workload
from queuesim.policies.dpsa_search import best_subset, search_order
from queuesim.policies.registry import make_policy
from queuesim.site.enums import MemoryModel
from queuesim.site.loading import load_site
from queuesim.site.model import Site

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
VARIANTS = ("p", "n", "w")

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def busy_cpus_at(run: Run, t: float) -> int:
    """CPUs held at instant ``t`` (a job holds its CPUs over [start, end))."""
    table = run.table
    held = (table["start"] <= t) & (t < table["end"])
    return int(table.loc[held, "cpus"].sum())


def assert_valid_schedule(run: Run, site: Site) -> None:
    """Every job ran once, after its submit, and no node ever held more CPUs or memory than
    it has (rebuilt from the allocations at every start instant)."""
    table = run.table
    assert np.isfinite(table["start"]).all() and np.isfinite(table["end"]).all()
    assert (table["start"] >= table["submit"]).all()
    allocations = run.result.allocations
    assert allocations is not None and sorted(allocations) == list(range(len(table)))
    start = table["start"].to_numpy()
    end = table["end"].to_numpy()
    for t in np.unique(start):
        cpus = np.zeros_like(site.node_cpus())
        mem = np.zeros_like(site.node_memory())
        for k in np.flatnonzero((start <= t) & (t < end)).tolist():
            alloc = allocations[k]
            np.add.at(cpus, alloc.nodes, alloc.cpus)
            np.add.at(mem, alloc.nodes, alloc.cpus * alloc.mem_per_cpu)
        assert (cpus <= site.node_cpus()).all(), f"t={t}: CPUs over capacity"
        assert (mem <= site.node_memory()).all(), f"t={t}: memory over capacity"


# ------------------------------------------------------------------- the paper's Fig. 1

# Fig. 1 of the paper is an image; its numbers are rebuilt here from the text (section
# III.A): two jobs run at t=0, four wait (J1 highest priority); at t=2 one running job ends;
# EASY reserves for J1 at 7 and starts J2 at 2, J3 and J4 do not fit; J1 starts at 7 and J3
# gets the reservation; J3 and J4 start at 9. DPSA instead runs J3 and J4 together at 2,
# which fills the machine.
#
# One node of 6 CPUs. R1 4 CPUs 0..2, R2 2 CPUs 0..7 (both submitted, and started, at 0);
# J1 6 CPUs 2 s; J2 3 CPUs 3 s; J3 and J4 2 CPUs 5 s each; all submitted at 0.
FIG1_SITE = make_site(((1, 6),))
FIG1 = [
    J(101, 0, 2, 4),  # R1
    J(102, 0, 7, 2),  # R2
    J(1, 0, 2, 6),
    J(2, 0, 3, 3),
    J(3, 0, 5, 2),
    J(4, 0, 5, 2),
]


def test_fig1_easy_starts_j2_in_the_hole_and_j3_j4_at_9():
    """EASY (left of Fig. 1): J1 reserved at 7; J2 (3 CPUs, ends at 5) backfilled at 2;
    J3, J4 (2 CPUs each) do not fit beside J2 (1 CPU left) and, 5 s long, would run past 7
    at t=5; J1 runs 7..9, then J3 and J4 start at 9.

      t     0    5    10   15
      cpu   RRJJJ..1133333      (R = R1 0..2, J = J2 2..5, 1 = J1 7..9, 3 = J3 9..14)
      cpu   RRJJJ..1133333
      cpu   RRJJJ..1144444      (4 = J4 9..14)
      cpu   RR.....1144444
      cpu   SSSSSSS11.....      (S = R2 0..7)
      cpu   SSSSSSS11.....
    """
    run = run_jobs(FIG1, FIG1_SITE, "easy", {"record_reservations": True})
    assert run.starts == {101: 0, 102: 0, 1: 7, 2: 2, 3: 9, 4: 9}
    assert run.reservations() == {1: 7, 3: 9}
    assert busy_cpus_at(run, 2) == 5  # R2 + J2: 5 of 6 CPUs
    assert max(run.ends.values()) == 14


@pytest.mark.parametrize("variant", VARIANTS)
def test_fig1_dpsa_starts_j3_and_j4_together_and_fills_the_machine_at_2(variant: str):
    """DPSA (right of Fig. 1): at t=2 J1 is reserved at 7 with no extra CPUs; the free
    CPUs are 4 and the eligible jobs J2 (3), J3 (2), J4 (2) all end by 7; the subset that
    fills the most is {J3, J4} (4 CPUs, against 3 for {J2}). J1 still starts at 7, J2 at 9.

      t     0    5    10
      cpu   RR33333112222       (3 = J3 2..7, 1 = J1 7..9, 2 = J2 9..12)
      cpu   RR33333112222
      cpu   RR44444112222       (4 = J4 2..7)
      cpu   RR4444411...
      cpu   SSSSSSS11...
      cpu   SSSSSSS11...

    Utilization at t=2 goes from 5/6 to 6/6, the makespan from 14 to 12, and the mean
    slowdown of J1..J4 from 2.94 to 2.83 (the paper: better utilization, makespan and
    slowdown)."""
    run = run_jobs(FIG1, FIG1_SITE, "dpsa", {"variant": variant, "record_reservations": True})
    assert run.starts == {101: 0, 102: 0, 1: 7, 2: 9, 3: 2, 4: 2}
    assert run.reservations() == {1: 7, 2: 9}  # J1 is never delayed
    assert busy_cpus_at(run, 2) == 6
    assert max(run.ends.values()) == 12
    easy = run_jobs(FIG1, FIG1_SITE, "easy")

    def mean_slowdown(r: Run) -> float:
        t = r.table[r.table["job_id"] < 100]
        return float(((t["wait"] + t["runtime"]) / t["runtime"]).mean())

    assert mean_slowdown(run) == pytest.approx((4.5 + 4 + 1.4 + 1.4) / 4)
    assert mean_slowdown(easy) == pytest.approx((4.5 + 5 / 3 + 2.8 + 2.8) / 4)
    # the counters: one search at t=2 (at t=0 and t=7 nothing else fits beside the head)
    assert run.result.counters.get("dpsa_searches") == 1
    assert "dpsa_bound_hit" not in run.result.counters


# ----------------------------------------------------------- the search against brute force


def brute_force(cpus: list[int], long: list[bool], free: int, extra: int) -> tuple[int, tuple]:
    """The most CPUs a feasible subset uses, and the first such subset in the order the
    search visits them (sorted index tuples, lexicographically; a prefix first)."""
    best, first = 0, ()
    for size in range(1, len(cpus) + 1):
        for subset in itertools.combinations(range(len(cpus)), size):
            used = sum(cpus[i] for i in subset)
            used_long = sum(cpus[i] for i in subset if long[i])
            feasible = used <= free and used_long <= extra
            if feasible and (used > best or (used == best and subset < first)):
                best, first = used, subset
    return best, first


search_cases = st.integers(0, 11).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 9), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.integers(0, 40),
        st.integers(0, 40),
    )
)


@PROPERTY
@given(case=search_cases)
def test_unbounded_search_uses_as_many_free_cpus_as_the_best_subset(case: Any) -> None:
    """Exhaustive search (no bound) = brute force over the eligible jobs, in CPUs used and
    in which subset it picks among equals (the first in the search order: the tie-break)."""
    cpus, long, free, extra = case
    found = best_subset(np.array(cpus, dtype=np.int64), np.array(long, dtype=bool), free, extra)
    best, first = brute_force(cpus, long, free, min(extra, free))
    assert found.used == best
    assert tuple(found.chosen.tolist()) == first
    assert not found.bound_hit


@PROPERTY
@given(case=search_cases, bound=st.integers(1, 20))
def test_bounded_search_returns_a_feasible_subset_and_flags_the_bound(
    case: Any, bound: int
) -> None:
    cpus, long, free, extra = case
    c, lg = np.array(cpus, dtype=np.int64), np.array(long, dtype=bool)
    found = best_subset(c, lg, free, extra, bound_nodes=bound)
    chosen = found.chosen
    assert int(c[chosen].sum()) == found.used <= free
    assert int(c[chosen][lg[chosen]].sum()) <= extra
    assert found.nodes <= bound
    exhaustive = best_subset(c, lg, free, extra)
    assert found.used <= exhaustive.used
    if not found.bound_hit:
        assert tuple(chosen.tolist()) == tuple(exhaustive.chosen.tolist())


def test_search_of_many_identical_jobs_stays_small():
    """Dominance: 60 identical jobs that cannot fill the free CPUs form one subset per
    count, not 2^60; mixed sizes whose gcd cannot reach the free CPUs stop at the bound
    rounded to the gcd."""
    found = best_subset(np.full(60, 2), np.zeros(60, dtype=bool), 1001, 0)
    assert found.used == 120 and found.nodes == 60 and not found.bound_hit
    sizes = np.array([4, 8, 12, 16, 20, 24, 28, 32] * 8)
    found = best_subset(sizes, np.zeros(sizes.size, dtype=bool), 1002, 0)
    assert found.used == 1000 and not found.bound_hit
    assert found.nodes < 200


# ------------------------------------------------------------------------- tie-breaks

# Five eligible jobs in priority order, all ending before the shadow time, 6 CPUs free:
#   P1 3, P2 3, S1 1, S2 2, W 4 CPUs.  Subsets that fill all 6: {P1, P2}, {P1, S1, S2},
#   {P2, S1, S2}, {S2, W}.
TIE_CPUS = np.array([3, 3, 1, 2, 4])
TIE_EXPECTED = {
    # priority order: the best job of {P1, P2} and {P1, S1, S2} is P1, the second best
    # P2 against S1: P2 has the higher priority
    "p": [0, 1],
    # smallest first (S1, S2, P1, P2, W): the first full subset holds S1, S2 and then P1
    "n": [0, 2, 3],
    # widest first (W, P1, P2, S2, S1): W, and S2 to fill the last 2 CPUs
    "w": [3, 4],
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_tie_break_on_subsets_that_fill_the_same_cpus(variant: str):
    order = search_order(TIE_CPUS, variant)
    found = best_subset(TIE_CPUS[order], np.zeros(5, dtype=bool), 6, 0)
    assert found.used == 6
    assert sorted(order[found.chosen].tolist()) == TIE_EXPECTED[variant]


def test_search_orders_of_the_variants():
    assert search_order(TIE_CPUS, "p").tolist() == [0, 1, 2, 3, 4]
    assert search_order(TIE_CPUS, "n").tolist() == [2, 3, 0, 1, 4]
    assert search_order(TIE_CPUS, "w").tolist() == [4, 0, 1, 3, 2]


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_tie_break_in_a_simulation(variant: str):
    """The same tie in a schedule: one node of 8 CPUs, R holds 2 until 100; H (8 CPUs) is
    reserved at 100 with no extra CPUs; P1, P2, S1, S2, W (10 s each) arrive with H, so at
    t=1 the 6 free CPUs can be filled four ways and each variant picks its own."""
    jobs = [
        J(1, 0, 100, 2),  # R
        J(2, 1, 10, 8),  # H
        J(10, 1, 10, 3),  # P1
        J(11, 1, 10, 3),  # P2
        J(12, 1, 10, 1),  # S1
        J(13, 1, 10, 2),  # S2
        J(14, 1, 10, 4),  # W
    ]
    run = run_jobs(jobs, make_site(((1, 8),)), "dpsa", {"variant": variant})
    at_one = sorted(j for j, s in run.starts.items() if s == 1)
    assert at_one == [10 + k for k in TIE_EXPECTED[variant]]
    assert busy_cpus_at(run, 1) == 8
    assert run.starts[2] == 100


@pytest.mark.parametrize(
    ("ordering", "first"),
    [("fcfs", 3), ("fairshare", 4), ("queue-priority", 4)],
)
def test_dpsa_p_takes_its_priorities_from_the_sites_ordering(ordering: str, first: int):
    """DPSAp breaks ties by the order ``ctx.waiting()`` gives. A (user 1, who is using
    CPUs) and B (user 2, no usage yet) arrive together and only one fits: submit order
    picks A; fairshare orderings pick B."""
    doc = make_site(((1, 4),)).model_dump(mode="json")
    doc.update({"ordering": ordering, "fairshare": {"half_life": 10**9}})
    site = Site.model_validate(doc)
    jobs = [
        J(1, 0, 100, 2, user=1),  # running: user 1 accrues usage
        J(2, 10, 10, 4, user=3),  # head: reserved at 100
        J(3, 20, 10, 2, user=1),  # A
        J(4, 20, 10, 2, user=2),  # B
    ]
    run = simulate(site, make_workload(jobs, site), "dpsa", {"variant": "p"})
    assert run.starts[first] == 20
    assert run.starts[2] == 100


# ------------------------------------------------------------------ bounds and parameters


def kth_sample() -> tuple[Site, Any]:
    site = load_site(KTH_SITE)
    return site, load_workload(KTH_SAMPLE, site)


def test_node_bound_of_one_is_hit_and_the_schedule_stays_valid():
    site, workload = kth_sample()
    run = simulate(site, workload, "dpsa", {"variant": "p", "bound_nodes": 1})
    counters = run.result.counters
    assert counters["dpsa_bound_hit"] > 0
    assert counters["dpsa_searches"] >= counters["dpsa_bound_hit"]
    assert_valid_schedule(run, site)


def test_default_bound_is_not_hit_on_the_kth_sample():
    site, workload = kth_sample()
    run = simulate(site, workload, "dpsa", {"variant": "n"})
    assert run.result.counters["dpsa_searches"] > 0
    assert run.result.counters.get("dpsa_bound_hit", 0) == 0
    assert run.result.counters.get("dpsa_pool_misfit", 0) == 0  # one pool: totals exact


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"variant": "x"}, "variant"),
        ({"bound_ms": "-1"}, "bound_ms"),
        ({"bound_nodes": "-5"}, "bound_nodes"),
        ({"bound_nodes": "many"}, "bound_nodes"),
    ],
)
def test_bad_dpsa_parameters_are_config_errors(params: dict[str, str], message: str):
    with pytest.raises(ConfigError, match=message):
        make_policy("dpsa", params)


# --------------------------------------------------------------- the head's reservation


@st.composite
def dpsa_scenarios(draw: st.DrawFn, *, memory: bool, exact: bool) -> tuple[Site, list[J]]:
    """1-3 clusters of 1-4 nodes x 1-8 CPUs (memory per node when ``memory``), 1-30 jobs
    with tied submits. ``exact``: estimates are the runtimes; else requests are random and
    jobs are killed at them, so every job ends at or before its estimate."""
    clusters = [
        (
            draw(st.integers(1, 4)),
            draw(st.integers(1, 8)),
            draw(st.integers(4, 32)) if memory else None,
        )
        for _ in range(draw(st.integers(1, 3)))
    ]
    site = make_site(clusters, estimate="exact" if exact else "requested", kill_at_walltime=True)
    node_mem_kib = int(site.node_memory().min() // 1024) if memory else 0
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 30))):
        t += draw(st.just(0) | st.integers(0, 200))
        runtime = draw(st.integers(1, 600))
        mem = draw(st.integers(1, node_mem_kib)) if memory else 0
        cpus_per_node = site.node_cpus()
        if memory:
            cpus_per_node = np.minimum(cpus_per_node, site.node_memory() // (mem * 1024))
        most = int(cpus_per_node.sum())
        jobs.append(
            J(
                id=i + 1,
                submit=t,
                runtime=runtime,
                cpus=draw(st.integers(1, max(1, most // 3)) | st.integers(1, most)),
                requested=runtime if exact else draw(st.integers(1, 1200)),
                mem=mem or None,
            )
        )
    return site, jobs


def late_heads(run: Run) -> dict[int, tuple[float, float]]:
    promised = run.reservations()
    starts = run.starts
    return {j: (promised[j], starts[j]) for j in promised if starts[j] > promised[j]}


MEMORY = pytest.mark.parametrize("memory", [False, True], ids=["cpus", "memory"])


@MEMORY
@pytest.mark.parametrize("variant", VARIANTS)
@PROPERTY
@given(data=st.data())
def test_dpsa_never_starts_the_head_later_than_its_reservation(
    memory: bool, variant: str, data: st.DataObject
) -> None:
    """Exact estimates: the first reservation each head job gets is never broken, and the
    schedule is feasible; on one pool of CPUs no chosen job ever misfits."""
    site, jobs = data.draw(dpsa_scenarios(memory=memory, exact=True))
    run = run_jobs(jobs, site, "dpsa", {"variant": variant, "record_reservations": True})
    assert late_heads(run) == {}
    assert_valid_schedule(run, site)
    if len(site.clusters) == 1 and site.memory is MemoryModel.IGNORE:
        assert run.result.counters.get("dpsa_pool_misfit", 0) == 0


@MEMORY
@PROPERTY
@given(data=st.data())
def test_dpsa_never_delays_the_head_when_jobs_end_early(memory: bool, data: st.DataObject) -> None:
    """Requested-time estimates with kill at walltime: jobs end at or before their
    estimates, so re-planning can only bring the head's reservation forward."""
    site, jobs = data.draw(dpsa_scenarios(memory=memory, exact=False))
    variant = data.draw(st.sampled_from(VARIANTS))
    run = run_jobs(jobs, site, "dpsa", {"variant": variant, "record_reservations": True})
    assert late_heads(run) == {}
    assert_valid_schedule(run, site)


# ------------------------------------------------------------------ command line and study


def test_cli_runs_dpsa_n_with_a_time_bound_on_the_kth_sample(capsys: pytest.CaptureFixture[str]):
    code = main(
        [
            "run",
            str(KTH_SITE),
            str(KTH_SAMPLE),
            "--policy",
            "dpsa",
            "--param",
            "variant=n",
            "--param",
            "bound_ms=5",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    flat = " ".join(out.split())
    assert "dpsa (bound_ms=5, variant=n)" in flat
    assert "dpsa searches" in flat


def test_cli_lists_dpsa_with_its_parameters(capsys: pytest.CaptureFixture[str]):
    assert main(["policies"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "dpsa" in out
    for shown in ("variant (str) = 'p'", "bound_ms (float) = 0.0", "bound_nodes (int) = 100000"):
        assert shown in out


@pytest.fixture
def kth_as_full_trace(tmp_path: Path) -> Path:
    """A workloads folder whose KTH-SP2 trace is the shipped 2,000-job sample."""
    folder = tmp_path / "workloads"
    folder.mkdir()
    with (
        KTH_SAMPLE.open("rb") as src,
        gzip.open(folder / "KTH-SP2-1996-2.1-cln.swf.gz", "wb") as dst,
    ):
        shutil.copyfileobj(src, dst)
    return folder


def test_study_command_writes_the_table_and_the_command(
    kth_as_full_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = tmp_path / "study"
    args = [
        "study",
        "dpsa",
        "--trace",
        "KTH-SP2",
        "--workloads",
        str(kth_as_full_trace),
        "--site-configs",
        str(REPO / "site-configs"),
        "--out",
        str(out),
        "--workers",
        "2",
    ]
    assert main(args) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "DPSA against EASY" in printed and "KTH-SP" in printed
    md = (out / "study.md").read_text(encoding="utf-8")
    assert "queuesim study dpsa --trace KTH-SP2 --bound-nodes 100000" in md
    assert "| KTH-SP2-1996 | 2,000 | 100 |" in md
    assert "Search bound: 100,000 subsets formed per search." in md
    assert "**DPSAn** - paper:" in md
    assert "Reading the results" not in md  # written for the default seven traces only
    assert (out / "study.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    csv = pd.read_csv(out / "study.csv")
    assert csv["policy"].tolist() == ["EASY", "DPSAp", "DPSAn", "DPSAw"]
    assert csv.loc[0, "d_bsld_pct"] == 0
    for column in ("utilization", "sim_seconds", "searches", "bound_hits", "d_wait_pct"):
        assert column in csv.columns
    assert (csv.loc[1:, "searches"] > 0).all()
    assert not list(out.glob(".*.tmp")), "no temporary file left behind"


def test_study_rejects_an_unknown_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    code = main(["study", "dpsa", "--trace", "NOPE", "--workloads", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "'NOPE' is not a known trace" in err
