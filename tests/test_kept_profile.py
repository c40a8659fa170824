"""The profile conservative backfilling keeps from pass to pass (core/kept_profile.py)
equals the one a pass would rebuild, and the runs that keep it equal the runs that
rebuild it."""

from __future__ import annotations

from typing import Any

import numpy as np
from builders import J, make_site
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_batch_run import assert_same_run

from queuesim.core.kept_profile import bring_up_to_date
from queuesim.core.profile import Profile, ProfileState, Promises, _take, fill, new_profile

GRACE = 1.0


def _state(now: float, caps: np.ndarray, mem_caps: np.ndarray, running: list[Any]) -> Any:
    """The ProfileState of ``running`` (job, est end, per-pool CPUs, memory per CPU) at
    ``now``, each expected to end at its estimate or ``now + GRACE``; and the arrays of
    where they run."""
    pools = caps.shape[0]
    n = 1 + max((job for job, *_ in running), default=0)
    alloc_start = np.zeros(n, dtype=np.int64)
    alloc_len = np.zeros(n, dtype=np.int64)
    job_mem = np.zeros(n, dtype=np.int64)
    alloc_pool: list[int] = []
    alloc_cpus: list[int] = []
    free, free_mem = caps.copy(), mem_caps.copy()
    for job, _end, cpus, per_cpu in running:
        alloc_start[job] = len(alloc_pool)
        job_mem[job] = per_cpu
        for p in range(pools):
            if cpus[p]:
                alloc_pool.append(p)
                alloc_cpus.append(cpus[p])
                free[p] -= cpus[p]
                free_mem[p] -= cpus[p] * per_cpu
        alloc_len[job] = len(alloc_pool) - alloc_start[job]
    none = np.zeros(0, dtype=np.int64)
    state = ProfileState(
        now,
        free,
        free_mem,
        np.array([max(end, now + GRACE) for _, end, _, _ in running], dtype=np.float64),
        np.array([job for job, *_ in running], dtype=np.int64),
        alloc_start,
        alloc_len,
        np.array(alloc_pool, dtype=np.int64),
        np.array(alloc_cpus, dtype=np.int64),
        job_mem,
        np.zeros(n, dtype=np.int64),
        caps,
        mem_caps,
        none,
        none,
    )
    return state


def _values(prof: Profile, t: float) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The free CPUs and memory per pool at time ``t``."""
    s = int(np.searchsorted(prof.times[: prof.size[0]], t, side="right")) - 1
    return tuple(prof.cpus[s].tolist()), tuple(prof.mem[s].tolist())


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    """Jobs running and promised at a pass, the next pass's time, the jobs ended by it and
    the promised jobs it leaves out (a queue limit sets them aside)."""
    pools = draw(st.integers(1, 2))
    caps = np.array([draw(st.integers(2, 8)) for _ in range(pools)], dtype=np.int64)
    per_cpu = draw(st.sampled_from([0, 1, 3]))
    amount = st.lists(st.integers(0, 3), min_size=pools, max_size=pools).filter(any)
    running = [
        (job, float(draw(st.integers(1, 50))), np.array(draw(amount)), per_cpu)
        for job in range(draw(st.integers(0, 4)))
    ]
    first_waiting = len(running)
    promised = [
        (
            first_waiting + k,
            float(draw(st.integers(0, 60))),
            float(draw(st.integers(1, 30))),
            np.array(draw(amount), dtype=np.int64),
        )
        for k in range(draw(st.integers(0, 5)))
    ]
    now = float(draw(st.integers(1, 40)))
    ended = [job for job, *_ in running if draw(st.booleans())]
    left_out = [job for job, *_ in promised if draw(st.booleans())]
    return {
        "caps": caps,
        "mem_caps": caps * 4,
        "per_cpu": per_cpu,
        "running": running,
        "promised": promised,
        "now": now,
        "ended": ended,
        "left_out": left_out,
    }


def _rebuilt(h: dict[str, Any]) -> tuple[Profile, bool]:
    """The profile a pass at ``now`` builds: the jobs still running, then every promise
    of a job it does not leave out, from its time or ``now``; and whether all fit."""
    still = [r for r in h["running"] if r[0] not in h["ended"]]
    state = _state(h["now"], h["caps"], h["mem_caps"], still)
    prof = new_profile(64, len(h["caps"]), 0)
    fill(prof, state)
    for job, start, duration, plan in h["promised"]:
        if job not in h["left_out"]:
            _take(prof, max(start, h["now"]), duration, h["per_cpu"], 0, plan, 1)
    fits = bool((prof.cpus[: prof.size[0]] >= 0).all() and (prof.mem[: prof.size[0]] >= 0).all())
    return prof, fits


def _kept(h: dict[str, Any]) -> tuple[Profile, bool]:
    """The profile the pass at 0 left (the running jobs, every promise), brought up to
    ``now``, the promises of the jobs left out given back."""
    state = _state(0.0, h["caps"], h["mem_caps"], h["running"])
    prof = new_profile(64, len(h["caps"]), 0)
    fill(prof, state)
    for _, start, duration, plan in h["promised"]:
        _take(prof, start, duration, h["per_cpu"], 0, plan, 1)
    assume((prof.cpus[: prof.size[0]] >= 0).all() and (prof.mem[: prof.size[0]] >= 0).all())
    n = len(h["running"]) + len(h["promised"]) + 1
    booked_end = np.full(n, np.inf)
    for job, end, _, _ in h["running"]:
        booked_end[job] = max(end, GRACE)
    estimate = np.zeros(n)
    for job, _, duration, _ in h["promised"]:
        estimate[job] = duration

    def promises_of(rows: list[Any]) -> tuple[np.ndarray, Promises]:
        jobs = np.array([job for job, *_ in rows], dtype=np.int64)
        starts = np.array([start for _, start, _, _ in rows], dtype=np.float64)
        plans = np.zeros((len(rows), len(h["caps"])), dtype=np.int64)
        for k, (_, _, _, plan) in enumerate(rows):
            plans[k] = plan
        return jobs, Promises(starts, plans)

    waiting, promises = promises_of([r for r in h["promised"] if r[0] not in h["left_out"]])
    gone, gone_promises = promises_of([r for r in h["promised"] if r[0] in h["left_out"]])
    still = [r for r in h["running"] if r[0] not in h["ended"]]
    now_state = _state(h["now"], h["caps"], h["mem_caps"], h["running"])._replace(
        run_jobs=np.array([job for job, *_ in still], dtype=np.int64),
        job_mem=np.full(n, h["per_cpu"], dtype=np.int64),
        job_gpn=np.zeros(n, dtype=np.int64),
    )
    ended = np.array(h["ended"], dtype=np.int64)
    fits = bring_up_to_date(
        prof,
        now_state,
        GRACE,
        ended,
        booked_end,
        waiting,
        promises,
        estimate,
        gone,
        gone_promises,
    )
    return prof, bool(fits)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(h=histories())
def test_kept_profile_equals_the_rebuilt_profile(h: dict[str, Any]) -> None:
    """Brought up to date, the profile a pass left has the free CPUs and memory of the one
    the next pass rebuilds at every time from now, and says so exactly when every
    promise still fits (jobs ended early, jobs past their estimate, promises passed,
    promised jobs left out)."""
    kept, kept_fits = _kept(h)
    rebuilt, rebuilt_fits = _rebuilt(h)
    assert kept_fits == rebuilt_fits
    if not kept_fits:
        return
    assert kept.times[0] == rebuilt.times[0] == h["now"]
    points = set(kept.times[: kept.size[0]].tolist()) | set(
        rebuilt.times[: rebuilt.size[0]].tolist()
    )
    for t in sorted(points):
        assert _values(kept, t) == _values(rebuilt, t), t


def _same_as_pass_by_pass(site: Any, jobs: list[Any]) -> None:
    """Conservative in one compiled call gives the pass-by-pass run of ``jobs`` on
    ``site`` (nothing to compare when every job is rejected)."""
    from builders import make_trace

    from queuesim.common.errors import WorkloadError
    from queuesim.core.workload import CleaningOptions, prepare

    try:
        workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    except WorkloadError:
        return
    assert_same_run(site, workload, "conservative", {"record_reservations": True})


def _draw_jobs(
    draw: st.DrawFn, *, cpus: int, mem: st.SearchStrategy[Any], user: st.SearchStrategy[int]
) -> list[Any]:
    """Up to 50 jobs, often submitted together, many running past their requested time
    or ending well before it."""
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 50))):
        t += draw(st.just(0) | st.integers(0, 300))
        jobs.append(
            J(
                id=i + 1,
                submit=t,
                runtime=draw(st.integers(1, 900)),
                cpus=draw(st.integers(1, cpus)),
                requested=draw(st.integers(1, 900)),
                mem=draw(mem),
                user=draw(user),
            )
        )
    return jobs


@st.composite
def unlimited_scenarios(draw: st.DrawFn) -> tuple[Any, list[Any]]:
    """A site without queue limits (one cluster, or two with memory per node) and jobs,
    many running past their requested time or ending well before it."""
    two = draw(st.booleans())
    clusters = ((2, 4, 64), (3, 2, 32)) if two else ((draw(st.integers(2, 6)), 2),)
    site = make_site(clusters, kill_at_walltime=False)
    mem = st.none() | st.integers(1, 4 * 1024) if two else st.none()
    return site, _draw_jobs(draw, cpus=6, mem=mem, user=st.just(1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=unlimited_scenarios())
def test_conservative_keeping_its_profile_runs_as_the_pass_by_pass_run(
    scenario: tuple[Any, list[Any]],
) -> None:
    """Conservative backfilling in one compiled call, keeping its profile between passes,
    gives to the last bit the run of the pass-by-pass engine, which rebuilds it every
    pass (starts, ends, passes, first reservations)."""
    _same_as_pass_by_pass(*scenario)


@st.composite
def limited_scenarios(draw: st.DrawFn) -> tuple[Any, list[Any]]:
    """A site of two clusters with queue limits (a user's running jobs and CPUs - at most
    the 4 CPUs of the smallest queue, as the site demands -, a queue's CPU pool; a queue
    on one cluster only) and a few users' jobs, so that a job promised
    a start is often set aside at a later pass: a job of its user started after it in
    the order brought the user to the limit."""
    from queuesim.site.model import Site

    def limits() -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if draw(st.booleans()):
            doc["max_running_per_user"] = draw(st.integers(1, 2))
        if draw(st.booleans()):
            doc["max_cpus_per_user"] = draw(st.integers(2, 4))
        if draw(st.booleans()):
            doc["cpu_pool"] = "75%"
        return doc

    short = {"name": "short", "max_walltime": "10m", **limits()}
    long = {"name": "long", **limits()}
    if draw(st.booleans()):
        long["clusters"] = ["c1"]
    site = Site.model_validate(
        {
            "name": "limited",
            "clusters": [
                {"name": "c0", "nodes": draw(st.integers(1, 3)), "cpus_per_node": 2},
                {"name": "c1", "nodes": draw(st.integers(1, 2)), "cpus_per_node": 4},
            ],
            "queues": [short, long],
            "kill_at_walltime": False,
        }
    )
    return site, _draw_jobs(draw, cpus=4, mem=st.none(), user=st.integers(1, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=limited_scenarios())
def test_conservative_keeping_its_profile_under_queue_limits_runs_as_the_pass_by_pass_run(
    scenario: tuple[Any, list[Any]],
) -> None:
    """Under queue limits too (promised jobs set aside by a limit at a later pass, their
    promises given back), conservative backfilling keeping its profile gives to the last
    bit the pass-by-pass run, which rebuilds it every pass."""
    _same_as_pass_by_pass(*scenario)
