"""The data behind each report figure, on a small hand-made schedule (issue 18): queue
length and busy CPUs, wait CDF, Gantt placement, start shifts, decayed usage, per-user
changes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from queuesim.results.timelines import (
    decayed_usage,
    gantt_rows,
    queue_timeline,
    start_shifts,
    user_changes,
    wait_cdf,
)

# job, user, queue, submit, start, end, cpus  (a 4-CPU machine)
ROWS = [
    (1, 10, "short", 0.0, 0.0, 10.0, 2),
    (2, 10, "short", 0.0, 5.0, 15.0, 2),
    (3, 20, "long", 2.0, 15.0, 30.0, 4),
    (4, 20, "short", 3.0, 30.0, 35.0, 1),
]


def schedule(rows: list[tuple[int, int, str, float, float, float, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(
        rows, columns=["job_id", "user", "queue", "submit", "start", "end", "cpus"]
    )
    frame["wait"] = frame["start"] - frame["submit"]
    frame["runtime"] = frame["end"] - frame["start"]
    return frame


def at(timeline: pd.DataFrame, queue: str, t: float) -> tuple[int, float]:
    """(waiting, busy CPUs) of ``queue`` at ``t`` from the step function."""
    mine = timeline[(timeline["queue"] == queue) & (timeline["time"] <= t)]
    last = mine.iloc[-1]
    return int(last["waiting"]), float(last["busy_cpus"])


def test_queue_timeline_counts_waiting_jobs_and_busy_cpus() -> None:
    """Hand-counted: at t=4 queue short has jobs 2 and 4 waiting and job 1 on 2 CPUs."""
    timeline = queue_timeline(schedule(ROWS), ["short", "long"])
    assert list(dict.fromkeys(timeline["queue"])) == ["short", "long"]
    assert at(timeline, "short", 4.0) == (2, 2.0)
    assert at(timeline, "short", 12.0) == (1, 2.0)
    assert at(timeline, "long", 5.0) == (1, 0.0)
    assert at(timeline, "long", 10.0) == (1, 0.0)
    assert at(timeline, "long", 15.0) == (0, 4.0)
    assert at(timeline, "short", 40.0) == (0, 0.0)


def test_wait_cdf_is_the_share_of_jobs_waiting_at_most_each_value() -> None:
    values, share = wait_cdf(schedule(ROWS)["wait"])
    assert values.tolist() == [0.0, 5.0, 13.0, 27.0]
    assert share.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_gantt_splits_a_job_rather_than_draw_a_valid_schedule_above_the_machine() -> None:
    """Rows 0 and 1 hold two 1-CPU jobs; when the first ends, a 3-CPU job fits the machine
    only in rows 0, 2 and 3: it gets two bands there, not one band reaching row 4."""
    rows = [(0, 1, "q", 0.0, 0.0, 1.0, 1), (1, 1, "q", 0.0, 0.0, 2.0, 1)]
    rows.append((2, 1, "q", 1.0, 1.0, 2.0, 3))
    g = gantt_rows(schedule(rows), 0.0, 10.0, total_cpus=4).set_index("job_id")
    assert g.loc[2, "bands"] == ((0, 1), (2, 4))
    assert not g["above"].any()


def test_gantt_bands_never_overlap_and_stay_under_the_machine() -> None:
    """Jobs 1 and 2 overlap in time: different CPU rows; job 3 reuses rows after them."""
    rows = gantt_rows(schedule(ROWS), 0.0, 40.0, total_cpus=4)
    by_id = rows.set_index("job_id")
    assert by_id.loc[1, "bands"] == ((0, 2),) and by_id.loc[2, "bands"] == ((2, 4),)
    assert by_id.loc[3, "bands"] == ((0, 4),)
    assert not rows["above"].any()
    window = gantt_rows(schedule(ROWS), 12.0, 20.0, total_cpus=4)
    assert window["job_id"].tolist() == [2, 3]  # running within [12, 20)


@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 20), st.integers(1, 4)),
        min_size=1,
        max_size=12,
    )
)
@example(jobs=[(0, 1, 1), (0, 2, 1), (1, 1, 3)])  # once drew a valid schedule above
@settings(max_examples=40, deadline=None)
def test_gantt_bands_are_disjoint_for_any_schedule(jobs: list[tuple[int, int, int]]) -> None:
    """Whatever the jobs, each gets exactly its CPUs in rows, two jobs that overlap in
    time never share a row, and a schedule within the machine stays under it."""
    rows = [(i, 1, "q", float(s), float(s), float(s + d), c) for i, (s, d, c) in enumerate(jobs)]
    g = gantt_rows(schedule(rows), 0.0, 100.0, total_cpus=4)
    held = {r.job_id: {x for a, b in r.bands for x in range(a, b)} for r in g.itertuples()}
    for r in g.itertuples():
        assert len(held[r.job_id]) == r.cpus
        for o in g.itertuples():
            if r.job_id < o.job_id and r.start < o.end and o.start < r.end:
                assert not held[r.job_id] & held[o.job_id]
    busy = max(
        sum(c for s2, e2, c in ((float(s), float(s + d), c) for s, d, c in jobs) if s2 <= t < e2)
        for t in range(0, 80)
    )
    assert g["above"].any() == (busy > 4)


def test_start_shifts_match_jobs_by_id() -> None:
    base = schedule(ROWS)
    other = base.copy()
    other.loc[other["job_id"] == 3, ["start", "end"]] = [17.0, 32.0]
    shifts = start_shifts(base, other, 0.0, 3.0)  # jobs submitted before t=3
    assert shifts["job_id"].tolist() == [1, 2, 3]
    assert shifts["shift"].tolist() == [0.0, 0.0, 2.0]


def test_decayed_usage_halves_every_half_life() -> None:
    """One job of 2 CPUs for 10 s: usage 20 at its end (decay negligible over 10 s with a
    huge half-life), and with h = 10 s exactly 2*10/ln2*(1-1/2) at the end, halved 10 s
    later."""
    jobs = schedule([(1, 7, "q", 0.0, 0.0, 10.0, 2)])
    assert decayed_usage(jobs, 1e12, np.array([10.0]))[7].iloc[0] == pytest.approx(20.0)
    usage = decayed_usage(jobs, 10.0, np.array([-1.0, 10.0, 20.0]))[7].to_numpy()
    exact = 2 * 10 / np.log(2) * 0.5
    assert usage == pytest.approx([0.0, exact, exact / 2])


def test_user_changes_are_per_user_mean_wait_differences() -> None:
    """User 20's jobs wait 2 s longer on average; user 10's do not change."""
    base = schedule(ROWS)
    other = base.copy()
    other.loc[other["job_id"] == 3, "wait"] += 4.0
    changes = user_changes(base, other).set_index("user")
    assert changes.loc[20, "change"] == pytest.approx(2.0)
    assert changes.loc[10, "change"] == 0.0
    assert changes.loc[20, "cpu_time"] == 4 * 15 + 1 * 5
