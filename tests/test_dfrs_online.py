"""The DFRS online policy (queuesim.policies.dfrs.online) on the engine's progress rates.

Hand-computed schedules check Greedy, GreedyP, GreedyPM, the back-off and the rescheduling
penalty; hypothesis checks on generated workloads that memory is never overcommitted,
rates stay in [0, 1], every job's completion is its integrated rate, and no algorithm beats
the offline lower bound on the maximum stretch (papers 000 and 002).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from builders import J, make_site, make_trace
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from queuesim.common.errors import ConfigError, QueuesimWarning
from queuesim.core.engine import Simulation
from queuesim.core.result import Result
from queuesim.core.workload import Workload, prepare
from queuesim.policies.dfrs.names import Algorithm, OnSubmit, Opt, Periodic, parse_algorithm
from queuesim.policies.dfrs.online import backoff_delay, priority, removal_order
from queuesim.policies.registry import make_policy
from queuesim.results.stretch import max_stretch
from queuesim.results.stretch_bound import max_stretch_lower_bound
from queuesim.results.time_shared import dfrs_metrics, dfrs_table
from queuesim.site.model import Site


@dataclass(frozen=True)
class T:
    """A DFRS job: id, submit, runtime (work at rate 1), tasks, CPU need, memory."""

    id: int
    submit: float
    runtime: float
    tasks: int = 1
    need: float = 1.0
    mem: float = 0.5


def dfrs_workload(jobs: Sequence[T], site: Site) -> Workload:
    # the batch view: a task takes its share of a node's 4 cores (as queuesim generate does)
    cpus = [max(1, round(j.tasks * j.need * 4)) for j in jobs]
    trace = make_trace([J(j.id, j.submit, j.runtime, c) for j, c in zip(jobs, cpus, strict=True)])
    frame = trace.jobs.copy()
    frame["tasks"] = np.array([j.tasks for j in jobs], dtype=np.int64)
    frame["cpu_need"] = np.array([j.need for j in jobs])
    frame["mem_fraction"] = np.array([j.mem for j in jobs])
    return prepare(type(trace)(trace.path, trace.header, frame, ()), site)


class Recording(Simulation):
    """A simulation that logs every rate change and checks the nodes after every pass."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rate_log: list[tuple[float, int, float]] = []
        self.snapshots: list[tuple[np.ndarray, np.ndarray]] = []
        schedule = self.policy.schedule
        state = self.state

        def checked(ctx: Any) -> None:
            schedule(ctx)
            if state.shared is not None:
                self.snapshots.append(
                    (state.shared.mem_used.copy(), state.shared.cpu_used(state.rate))
                )

        self.policy.schedule = checked  # type: ignore[method-assign]
        # the run's bookkeeping carries out the policy's actions: log them there
        set_rate, place = state.set_rate, state.place

        def logged_set_rate(job: int, rate: float) -> None:
            set_rate(job, rate)
            self.rate_log.append((state.now, job, rate))

        def logged_place(job: int, hosts: np.ndarray | None) -> None:
            was_running = state.job_state[job] == 2
            place(job, hosts)
            if hosts is None or not was_running:
                self.rate_log.append((state.now, job, 0.0))

        state.set_rate = logged_set_rate  # type: ignore[method-assign]
        state.place = logged_place  # type: ignore[method-assign]


def run(
    jobs: Sequence[T], hosts: int, algorithm: str, penalty: float = 0.0, **params: Any
) -> tuple[Recording, Result]:
    site = make_site(((hosts, 4),), estimate="exact", kill_at_walltime=False)
    workload = dfrs_workload(jobs, site)
    batch = algorithm in ("easy", "fcfs")
    policy = make_policy(algorithm, params if batch else {"penalty": penalty, **params})
    sim = Recording(site, workload, policy)
    return sim, sim.run()


def ends(result: Result) -> dict[int, float]:
    return dict(zip(result.jobs["job_id"].tolist(), result.jobs["end"].tolist(), strict=True))


# --------------------------------------------------------------------------- names


def test_paper_names_parse_into_their_parts() -> None:
    algo = parse_algorithm("GreedyPM*/per/OPT=MIN/MINVT=600")
    assert algo == Algorithm(OnSubmit.GREEDY_PM, True, Periodic.PER, Opt.MIN, 600.0, None)
    assert algo.name == "GreedyPM*/per/OPT=MIN/MINVT=600"
    assert parse_algorithm("greedy*").name == "Greedy*/OPT=AVG"
    assert parse_algorithm("/per/OPT=MIN").name == "/per/OPT=MIN"
    assert parse_algorithm("DynMCB8-stretch-per").name == "/stretch-per/OPT=MAX"


@pytest.mark.parametrize(
    ("conference", "journal"),
    [
        ("DynMCB8", "MCB8*/OPT=AVG"),
        ("DynMCB8-per", "/per/OPT=AVG"),
        ("DynMCB8-asap-per", "Greedy/per/OPT=AVG"),
        ("DynMCB8-stretch-per", "/stretch-per/OPT=MAX"),
        ("GREEDY-PMTN", "GreedyP*/OPT=AVG"),
        ("Greedy-PMTN-MIGR/OPT=MIN", "GreedyPM*/OPT=MIN"),
    ],
)
def test_conference_names_map_to_the_journal_scheme(conference: str, journal: str) -> None:
    assert parse_algorithm(conference).name == journal


@pytest.mark.parametrize(
    ("name", "part", "why"),
    [
        ("GreedyQ*", "GreedyQ*", "unknown part"),
        ("Greedy*/perr", "perr", "unknown part"),
        ("Greedy*/OPT=MEAN", "OPT=MEAN", "OPT must be AVG, MIN or MAX"),
        ("Greedy*/per/MINVT=soon", "MINVT=soon", "number of seconds"),
        ("Greedy*/OPT=MAX", "OPT=MAX", "belongs to stretch-per"),
        ("GreedyP*/MINVT=600", "MINVT", "only limits MCB8"),
        ("Greedy/stretch-per", "Greedy", "stretch-per runs alone"),
        ("Greedy/per/per", "per", "only one periodic part"),
        ("MCB8/per/MINVT=1/MINFT=2", "MINFT", "exclude each other"),
    ],
)
def test_a_bad_name_says_which_part_is_wrong_and_lists_the_valid_parts(
    name: str, part: str, why: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_algorithm(name)
    message = str(caught.value)
    assert repr(part) in message and why in message
    assert "valid parts: first part: Greedy, GreedyP, GreedyPM or MCB8" in message


def test_a_period_shorter_than_the_penalty_warns_of_thrashing() -> None:
    with pytest.warns(QueuesimWarning, match="thrash"):
        make_policy("GreedyPM*/per", {"penalty": 300, "period": 120})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_policy("GreedyPM*/per", {"penalty": 300, "period": 600})
        make_policy("GreedyPM*", {"penalty": 300, "period": 120})  # no period in use


def test_an_unknown_policy_error_mentions_the_dfrs_names() -> None:
    with pytest.raises(ConfigError, match="DFRS algorithms by their paper names"):
        make_policy("fair-share-magic")


# --------------------------------------------------------------------------- priority


def test_priority_is_floored_flow_over_squared_virtual_time() -> None:
    got = priority(np.array([10.0, 100.0, 50.0, 5.0]), np.array([5.0, 5.0, 0.0, 10.0]))
    assert got.tolist() == [30 / 25, 100 / 25, np.inf, 30 / 100]


@dataclass
class Scripted:
    """A policy that plays a fixed script of (time, hosts or None, rate) for job 0."""

    script: list[tuple[float, list[int] | None, float]]
    name: str = "scripted"
    every_event: bool = True

    def __post_init__(self) -> None:
        self.seen: dict[float, float] = {}

    def schedule(self, ctx: Any) -> None:
        self.seen[ctx.now] = float(ctx.work_done(np.array([0]))[0])
        for when, hosts, rate in self.script:
            if when == ctx.now:
                ctx.place(0, None if hosts is None else np.array(hosts))
                if rate:
                    ctx.set_rate(0, rate)
        later = [w for w, _, _ in self.script if w > ctx.now]
        if later:
            ctx.wake_at(min(later))


def test_virtual_time_is_the_integrated_rate_as_in_paper_002s_example() -> None:
    # 10 s at yield 1, paused 120 s, then 30 s at yield 0.5: 25 s of virtual time (002, 4.1)
    site = make_site(((1, 4),), estimate="exact", kill_at_walltime=False)
    workload = dfrs_workload([T(1, 0, 1000)], site)
    policy = Scripted([(0, [0], 1.0), (10, None, 0.0), (130, [0], 0.5), (160, [0], 0.5)])
    result = Simulation(site, workload, policy).run()
    assert policy.seen[160] == 25.0
    assert priority(np.array([160.0]), np.array([policy.seen[160]]))[0] == 160 / 625
    # the rest (975 s of work) at rate 0.5 from 160
    assert result.jobs["end"].tolist() == [160 + 975 / 0.5]


def test_a_job_that_has_not_started_has_done_no_work_and_infinite_priority() -> None:
    # B waits behind A (memory) from 50 to 100; while it waits, its virtual time is 0
    site = make_site(((1, 4),), estimate="exact", kill_at_walltime=False)
    workload = dfrs_workload([T(1, 0, 100, mem=0.6), T(2, 50, 10, mem=0.6)], site)
    seen: list[float] = []
    policy = make_policy("Greedy*", {"penalty": 0})
    schedule = policy.schedule

    def watch(ctx: Any) -> None:
        if ctx.now == 99.0 or ctx.now == 60.0:
            seen.append(float(ctx.work_done(np.array([1]))[0]))
        schedule(ctx)
        if ctx.now == 50.0:
            ctx.wake_at(60.0)

    policy.schedule = watch  # type: ignore[method-assign]
    Simulation(site, workload, policy).run()
    assert seen == [0.0]
    assert priority(np.array([10.0]), np.array([0.0]))[0] == np.inf


def test_ties_in_priority_drop_the_later_submission_first() -> None:
    assert removal_order(np.array([2.0, 1.0, 1.0, np.inf, np.inf])).tolist() == [2, 1, 0, 4, 3]


def test_backoff_doubles_up_to_two_to_the_twelfth_seconds() -> None:
    assert [backoff_delay(k) for k in (1, 2, 3, 12, 13, 40)] == [2, 4, 8, 4096, 4096, 4096]
    with pytest.raises(ValueError):
        backoff_delay(0)


# --------------------------------------------------------------------------- hand schedules


def test_two_jobs_sharing_a_node_progress_at_half_speed() -> None:
    # A alone until 50 (50 done); A and B at 0.5 until A's last 50 are done at 150; B then
    # has 50 done and finishes alone at 200.
    _, result = run([T(1, 0, 100), T(2, 50, 100)], 1, "Greedy*/OPT=MIN")
    assert ends(result) == {1: 150.0, 2: 200.0}


def test_greedy_postpones_with_exponential_backoff() -> None:
    # B (memory 0.6) cannot join A (0.6) at 50: retried at 52, 56, 64, 80, 112; A ends at
    # 100, so B starts at 112 and ends at 122.
    jobs = [T(1, 0, 100, mem=0.6), T(2, 50, 10, mem=0.6)]
    _, result = run(jobs, 1, "Greedy")
    assert ends(result) == {1: 100.0, 2: 122.0}
    assert result.jobs["start"].tolist() == [0.0, 112.0]


def test_greedy_star_starts_a_postponed_job_at_the_next_completion() -> None:
    jobs = [T(1, 0, 100, mem=0.6), T(2, 50, 10, mem=0.6)]
    _, result = run(jobs, 1, "Greedy*")
    assert ends(result) == {1: 100.0, 2: 110.0}


@pytest.mark.parametrize(("penalty", "a_end"), [(0.0, 110.0), (300.0, 410.0)])
def test_greedyp_pauses_the_running_job_and_resumes_it_after_the_penalty(
    penalty: float, a_end: float
) -> None:
    # at 50 the new job B has infinite priority, A (vt 50) is paused; B runs 50..60; at 60
    # A resumes, idle for the penalty, then does its last 50 s
    jobs = [T(1, 0, 100, mem=0.6), T(2, 50, 10, mem=0.6)]
    _, result = run(jobs, 1, "GreedyP*", penalty=penalty)
    assert ends(result) == {1: a_end, 2: 60.0}
    assert result.counters["preemptions"] == 1 and result.counters["resumes"] == 1


def test_greedypm_moves_the_job_it_would_pause_when_it_fits_elsewhere() -> None:
    # A (0.5) on node 0, D (0.5) on node 1; B (0.8) arrives at 50. A has the lower priority
    # (50/50**2 < 40/40**2), is taken off node 0 for B, then GreedyPM re-places it on
    # node 1 beside D: a migration, no preemption. A and D then share node 1 at 0.5.
    jobs = [T(1, 0, 100), T(4, 10, 1000), T(2, 50, 20, mem=0.8)]
    _, moved = run(jobs, 2, "GreedyPM*")
    assert moved.counters.get("migrations") == 1 and "preemptions" not in moved.counters
    assert ends(moved) == {1: 150.0, 4: 1060.0, 2: 70.0}
    # GreedyP pauses A instead and resumes it on node 0 when B ends at 70
    _, paused = run(jobs, 2, "GreedyP*")
    assert paused.counters["preemptions"] == 1 and "migrations" not in paused.counters
    assert ends(paused) == {1: 120.0, 4: 1010.0, 2: 70.0}


def test_periodic_mcb8_waits_for_the_period_and_packs_everything_then() -> None:
    # nothing happens on submission: both jobs start at the first period, 600
    _, result = run([T(1, 10, 100), T(2, 20, 100, mem=0.2)], 1, "DynMCB8-per")
    assert result.jobs["start"].tolist() == [600.0, 600.0]
    assert ends(result) == {1: 800.0, 2: 800.0}


def test_mcb8_drops_the_lowest_priority_job_when_nothing_fits() -> None:
    # three jobs of memory 0.6 on two nodes: at the period the job with the lowest
    # priority (the later one, all at infinite priority) waits for the next period
    jobs = [T(1, 0, 100, mem=0.6), T(2, 1, 100, mem=0.6), T(3, 2, 100, mem=0.6)]
    _, result = run(jobs, 2, "/per/OPT=MIN")
    assert result.jobs["start"].tolist() == [600.0, 600.0, 1200.0]


# --------------------------------------------------------------------------- the run


def test_time_shared_jobs_report_their_work_as_runtime_and_stretch_as_slowdown() -> None:
    _, result = run([T(1, 0, 100), T(2, 50, 100)], 1, "Greedy*/OPT=MIN")
    assert result.jobs["runtime"].tolist() == [100.0, 100.0]
    assert result.jobs["wait"].tolist() == [50.0, 50.0]
    metrics = dfrs_metrics(result, bound=True)
    assert metrics is not None
    assert metrics.max_stretch == pytest.approx(1.5)
    assert metrics.stretch_bound is not None and metrics.stretch_bound <= 1.5 + 1e-6


def test_a_dfrs_policy_on_a_trace_without_annotation_says_how_to_get_one() -> None:
    site = make_site(((2, 4),))
    workload = prepare(make_trace([J(1, 0, 10, 1)]), site)
    with pytest.raises(ConfigError, match="no annotation file"):
        Simulation(site, workload, make_policy("Greedy*")).run()


def test_a_job_too_big_for_the_platform_is_an_error_naming_it() -> None:
    site = make_site(((2, 4),))
    workload = dfrs_workload([T(7, 0, 10, tasks=3, need=0.25, mem=0.6)], site)
    with pytest.raises(
        ConfigError, match=re.escape("job 7 (3 tasks of memory 0.6, at most 1 per node)")
    ):
        Simulation(site, workload, make_policy("Greedy*")).run()


ALGORITHMS = [
    "Greedy",
    "Greedy*/OPT=MIN",
    "GreedyP*",
    "GreedyPM*/OPT=MIN",
    "GreedyPM",
    "MCB8*/OPT=MIN",
    "DynMCB8-per",
    "DynMCB8-asap-per",
    "GreedyPM*/per/OPT=MIN/MINVT=600",
    "GreedyP*/per/OPT=MIN/MINFT=300",
    "DynMCB8-stretch-per",
]


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[T], int]:
    hosts = draw(st.integers(1, 4))
    n = draw(st.integers(1, 9))
    jobs = []
    for k in range(n):
        mem = draw(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.6, 0.9, 1.0]))
        need = draw(st.sampled_from([0.25, 0.5, 1.0, 0.3]))
        # fits the nodes' memory, and the batch view (need x 4 cores per task) fits the cores
        most = min(hosts * (int(1 / mem) if mem > 0 else 4), int(hosts / need), 6)
        submit = float(draw(st.integers(0, 3000)))
        runtime = float(draw(st.integers(1, 3000)))
        jobs.append(T(k + 1, submit, runtime, draw(st.integers(1, most)), need, mem))
    return sorted(jobs, key=lambda j: j.submit), hosts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=workloads(),
    algorithm=st.sampled_from(ALGORITHMS),
    penalty=st.sampled_from([0.0, 300.0]),
)
def test_nodes_are_never_overcommitted_and_completion_is_the_integrated_rate(
    case: tuple[list[T], int], algorithm: str, penalty: float
) -> None:
    jobs, hosts = case
    sim, result = run(jobs, hosts, algorithm, penalty)
    for mem_used, cpu_used in sim.snapshots:
        assert (mem_used <= 1 + 1e-9).all()
        assert (cpu_used <= 1 + 1e-9).all()
    assert all(0.0 <= rate <= 1.0 for _, _, rate in sim.rate_log)
    # integrate each job's rate from its log: the work done by its end is its runtime
    end = result.jobs["end"].to_numpy()
    work = result.jobs["runtime"].to_numpy()
    done = np.zeros(len(jobs))
    last = {}
    for now, job, rate in sim.rate_log:
        if job in last:
            then, old = last[job]
            done[job] += (now - then) * old
        last[job] = (now, rate)
    for job, (then, rate) in last.items():
        done[job] += (end[job] - then) * rate
    np.testing.assert_allclose(done, work, rtol=1e-9, atol=1e-6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=workloads(), algorithm=st.sampled_from([*ALGORITHMS, "easy", "fcfs"]))
def test_no_algorithm_beats_the_offline_stretch_bound(
    case: tuple[list[T], int], algorithm: str
) -> None:
    jobs, hosts = case
    # batch jobs get whole cores: keep to CPU needs that are whole cores of a 4-core node
    assume(algorithm not in ("easy", "fcfs") or all(j.need in (0.25, 0.5, 1.0) for j in jobs))
    _, result = run(jobs, hosts, algorithm, 0.0)
    table = dfrs_table(result)
    achieved = max_stretch(table, result.jobs["end"].to_numpy())
    assert max_stretch_lower_bound(table, hosts) <= achieved * (1 + 1e-6)
