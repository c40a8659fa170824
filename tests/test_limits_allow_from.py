"""When a job held by its queue's limits may start (:func:`queuesim.core.planning.
_limits_allow_from`): the time its user's and queue's running jobs, and the jobs the pass
starts, free enough, as the definition says - every such job sorted by its expected end,
counted off one by one - whether the running jobs come in order of their ends (the
compiled run keeps them so, and the kernel walks them without a sort) or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.core.planning import Planning, _limits_allow_from, new_pass_plan
from queuesim.core.profile import NEVER, JobArrays, LimitState, ProfileState, new_profile

# (queue, user, CPUs, expected end or estimate) of a job
Job = tuple[int, int, int, float]
jobs_drawn = st.tuples(
    st.integers(0, 1),
    st.integers(0, 2),
    st.integers(1, 4),
    st.sampled_from([5.0, 10.0, 12.5, 20.0]),
)


def _by_definition(
    held: Job,
    running: list[Job],
    started: list[Job],
    now: float,
    caps: tuple[int, int, int],
    counts: tuple[int, int, int],
) -> float:
    """Every running or started job of the held job's queue, by expected end (a stable
    sort), counted off until the user's jobs and CPUs and the queue's CPUs fit."""
    q, u, c, _ = held
    user_jobs = counts[0] + 1 - caps[0]
    user_cpus = counts[1] + c - caps[1]
    queue_cpus = counts[2] + c - caps[2]
    ending = [(end, user, cpus) for queue, user, cpus, end in running if queue == q]
    ending += [(now + est, user, cpus) for queue, user, cpus, est in started if queue == q]
    for end, user, cpus in sorted(ending, key=lambda e: e[0]):
        if user == u:
            user_jobs -= 1
            user_cpus -= cpus
        queue_cpus -= cpus
        if user_jobs <= 0 and user_cpus <= 0 and queue_cpus <= 0:
            return end
    return NEVER


@settings(max_examples=300, deadline=None)
@given(
    held=jobs_drawn,
    running=st.lists(jobs_drawn, max_size=12),
    started=st.lists(jobs_drawn, max_size=4),
    caps=st.tuples(st.integers(1, 4), st.integers(1, 8), st.integers(1, 12)),
    counts=st.tuples(st.integers(0, 5), st.integers(0, 10), st.integers(0, 14)),
    in_order=st.booleans(),
)
def test_a_held_job_may_start_when_the_jobs_ending_first_free_its_limits(
    held: Job,
    running: list[Job],
    started: list[Job],
    caps: tuple[int, int, int],
    counts: tuple[int, int, int],
    in_order: bool,
) -> None:
    now = 1.0
    if in_order:
        running = sorted(running, key=lambda j: j[3])
    everyone = [held, *running, *started]
    n = len(everyone)
    queue = np.array([j[0] for j in everyone], dtype=np.int64)
    user = np.array([j[1] for j in everyone], dtype=np.int64)
    cpus = np.array([j[2] for j in everyone], dtype=np.int64)
    estimate = np.array([j[3] for j in everyone])
    run_jobs = np.arange(1, 1 + len(running), dtype=np.int64)
    run_ends = np.array([j[3] for j in running])
    # waiting: the held job, then those the pass starts (their start is now)
    waiting = np.array([0, *range(1 + len(running), n)], dtype=np.int64)
    plan = new_pass_plan(waiting.shape[0], 1)
    plan.starts[1:] = now
    zero = np.zeros(n, dtype=np.int64)
    one = np.ones(1, dtype=np.int64)
    state = ProfileState(
        now, one, one, run_ends, run_jobs, zero, zero, zero, zero, zero, zero, one, one,
        zero[:0], zero[:0],
    )  # fmt: skip
    jobs = JobArrays(cpus, queue, estimate, zero, np.ones((1, 1), dtype=np.bool_), zero)
    q, u = held[0], held[1]
    user_jobs = np.zeros((3, 2), dtype=np.int64)
    user_cpus = np.zeros((3, 2), dtype=np.int64)
    queue_cpus = np.zeros(2, dtype=np.int64)
    user_jobs[u, q], user_cpus[u, q], queue_cpus[q] = counts
    cap = np.full(2, 10**9, dtype=np.int64)
    jobs_cap, cpus_cap, pool = cap.copy(), cap.copy(), cap.copy()
    jobs_cap[q], cpus_cap[q], pool[q] = caps
    limits = LimitState(user, jobs_cap, cpus_cap, pool, user_jobs, user_cpus, queue_cpus)
    pl = Planning(new_profile(2, 1, 0), state, jobs, limits, waiting, plan)
    expected = _by_definition(held, running, started, now, caps, counts)
    assert _limits_allow_from.py_func(pl, 0) == expected
