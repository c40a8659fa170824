"""Tests of queuesim.results.metrics: hand-computed cases, preconditions and properties."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.results.metrics import Metrics, compute_metrics, per_user

# ---------------------------------------------------------------------------------------------
# A small case worked out by hand.
#
# Machine of 4 CPUs, tau = 10 s (default). Three jobs of two users:
#
#   job  user  cpus  submit  start   end   wait w  runtime r  weight e = c*r  status
#    1     1     2      0       0    100      0       100          200        completed
#    2     1     1     10     100    105     90         5            5        killed
#    3     2     2     20      50    250     30       200          400        completed
#
# (At most 4 CPUs are busy at once: jobs 1 and 3 overlap on 50..100 with 2 + 2 CPUs.)
#
# sum e = 605
# AWWT = (200*0 + 5*90 + 400*30) / 605            = 12450 / 605  = 20.578512...
# AWRT = (200*100 + 5*95 + 400*230) / 605         = 112475 / 605 = 185.909090...
# slowdowns s = (w + r) / r: 100/100 = 1, 95/5 = 19, 230/200 = 1.15
# AWSD = (200*1 + 5*19 + 400*1.15) / 605          = 755 / 605    = 1.247933...
# bounded b = max(1, (w + r) / max(r, 10)):
#   job 1: 100/100 = 1;  job 2 (shorter than tau): 95/10 = 9.5;  job 3: 230/200 = 1.15
#   mean = 11.65 / 3 = 3.883333...,  max = 9.5
# NUWT: user 1 = (0 + 90) / (200 + 5) = 90/205 = 0.439024...;  user 2 = 30/400 = 0.075
# ANUWT    = (90/205 + 0.075) / 2                              = 0.257012...
# NUWT-dev = population std of two values = |90/205 - 0.075| / 2 = 0.182012...
# mean wait = (0 + 90 + 30) / 3 = 40
# makespan = max(end) - min(submit) = 250 - 0 = 250
# utilization = 605 / (4 * 250) = 0.605
# ---------------------------------------------------------------------------------------------

#: examples per metric property (CI's time is bounded; each draws a whole schedule)
PROPERTY = settings(max_examples=40)


def three_jobs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "user": [1, 1, 2],
            "group": [10, 10, 20],
            "queue": ["normal", "short", "normal"],
            "submit": [0.0, 10.0, 20.0],
            "start": [0.0, 100.0, 50.0],
            "end": [100.0, 105.0, 250.0],
            "wait": [0.0, 90.0, 30.0],
            "runtime": [100.0, 5.0, 200.0],
            "cpus": [2, 1, 2],
            "status": ["completed", "killed", "completed"],
        }
    )


def test_hand_computed_three_jobs_of_two_users() -> None:
    m = compute_metrics(three_jobs(), total_cpus=4)

    assert (m.jobs, m.completed, m.killed, m.users) == (3, 2, 1, 2)
    assert m.awwt == pytest.approx(12450 / 605)
    assert m.awrt == pytest.approx(112475 / 605)
    assert m.awsd == pytest.approx(755 / 605)
    assert m.mean_bounded_slowdown == pytest.approx(11.65 / 3)
    assert m.max_bounded_slowdown == pytest.approx(9.5)
    assert m.bounded_slowdown_tau == 10.0
    assert m.anuwt == pytest.approx((90 / 205 + 0.075) / 2)
    assert m.nuwt_dev == pytest.approx((90 / 205 - 0.075) / 2)
    assert m.mean_wait == pytest.approx(40.0)
    assert m.makespan == pytest.approx(250.0)
    assert m.first_submit == 0.0
    assert m.last_end == 250.0
    assert m.utilization == pytest.approx(0.605)


def test_tau_is_configurable_and_reported() -> None:
    # tau = 1 s: job 2 (5 s) is no longer shorter than tau, so b_2 = 95/5 = 19;
    # mean = (1 + 19 + 1.15) / 3 = 7.05, max = 19.
    m = compute_metrics(three_jobs(), total_cpus=4, tau=1.0)
    assert m.bounded_slowdown_tau == 1.0
    assert m.mean_bounded_slowdown == pytest.approx(21.15 / 3)
    assert m.max_bounded_slowdown == pytest.approx(19.0)
    # tau = 1000 s: every job counts as 1000 s long; b = max(1, 100/1000, 95/1000, 230/1000) = 1.
    m = compute_metrics(three_jobs(), total_cpus=4, tau=1000.0)
    assert m.mean_bounded_slowdown == 1.0
    assert m.max_bounded_slowdown == 1.0


def test_awsd_uses_the_unbounded_slowdown() -> None:
    # AWSD is independent of tau: job 2 keeps its plain slowdown 19 whatever tau is.
    assert compute_metrics(three_jobs(), total_cpus=4, tau=1000.0).awsd == pytest.approx(755 / 605)


def test_per_user_hand_computed() -> None:
    table = per_user(three_jobs())
    assert list(table.index) == [1, 2]
    assert table.index.name == "user"
    assert list(table.columns) == ["jobs", "total_wait", "cpu_time", "nuwt", "mean_wait"]
    assert list(table["jobs"]) == [2, 1]
    assert list(table["total_wait"]) == [90.0, 30.0]
    assert list(table["cpu_time"]) == [205.0, 400.0]
    assert table["nuwt"].tolist() == pytest.approx([90 / 205, 30 / 400])
    assert list(table["mean_wait"]) == [45.0, 30.0]


def test_nuwt_dev_is_the_population_std() -> None:
    # Three users with NUWT 0, 1 and 2 (1-CPU jobs of 100 s waiting 0, 100, 200 s):
    # population std = sqrt(2/3) = 0.8165, sample std would be 1.
    jobs = pd.DataFrame(
        {
            "user": [1, 2, 3],
            "submit": [0.0, 0.0, 0.0],
            "end": [100.0, 200.0, 300.0],
            "wait": [0.0, 100.0, 200.0],
            "runtime": [100.0, 100.0, 100.0],
            "cpus": [1, 1, 1],
            "status": ["completed"] * 3,
        }
    )
    m = compute_metrics(jobs, total_cpus=1)
    assert m.anuwt == pytest.approx(1.0)
    assert m.nuwt_dev == pytest.approx(math.sqrt(2 / 3))


def test_input_frame_is_not_modified() -> None:
    jobs = three_jobs()
    before = jobs.copy(deep=True)
    compute_metrics(jobs, total_cpus=4)
    per_user(jobs)
    pd.testing.assert_frame_equal(jobs, before)


def test_as_dict_keys_are_the_field_names_in_order() -> None:
    m = compute_metrics(three_jobs(), total_cpus=4)
    d = m.as_dict()
    assert list(d) == [f.name for f in dataclasses.fields(Metrics)]
    assert list(d)[:4] == ["jobs", "completed", "killed", "users"]
    assert d["awwt"] == m.awwt
    # Plain Python numbers, so the dict serialises to JSON as is.
    assert all(type(v) in (int, float) for v in d.values())
    assert all(type(d[k]) is int for k in ("jobs", "completed", "killed", "users"))


def test_metrics_are_immutable() -> None:
    m = compute_metrics(three_jobs(), total_cpus=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.awwt = 0.0  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Preconditions
# ---------------------------------------------------------------------------------------------


def test_empty_frame_is_rejected() -> None:
    with pytest.raises(ValueError, match="empty job table"):
        compute_metrics(three_jobs().iloc[:0], total_cpus=4)
    with pytest.raises(ValueError, match="empty job table"):
        per_user(three_jobs().iloc[:0])


@pytest.mark.parametrize("bad_runtime", [0.0, -5.0])
def test_non_positive_runtime_is_rejected(bad_runtime: float) -> None:
    jobs = three_jobs()
    jobs.loc[1, "runtime"] = bad_runtime
    with pytest.raises(ValueError, match=r"runtime must be > 0 .* first is job_id 2"):
        compute_metrics(jobs, total_cpus=4)
    with pytest.raises(ValueError, match="runtime must be > 0"):
        per_user(jobs)


def test_negative_wait_is_rejected() -> None:
    jobs = three_jobs()
    jobs.loc[2, "wait"] = -1.0
    with pytest.raises(ValueError, match=r"wait must be >= 0 .* first is job_id 3 \(got -1.0\)"):
        compute_metrics(jobs, total_cpus=4)
    with pytest.raises(ValueError, match="wait must be >= 0"):
        per_user(jobs)


@pytest.mark.parametrize("total_cpus", [0, -4])
def test_non_positive_total_cpus_is_rejected(total_cpus: int) -> None:
    with pytest.raises(ValueError, match="total_cpus must be a positive number"):
        compute_metrics(three_jobs(), total_cpus=total_cpus)


def test_missing_column_is_rejected_by_name() -> None:
    with pytest.raises(ValueError, match=r"lacks required column.* runtime"):
        compute_metrics(three_jobs().drop(columns="runtime"), total_cpus=4)


def test_missing_value_is_rejected() -> None:
    jobs = three_jobs()
    jobs.loc[0, "wait"] = np.nan
    with pytest.raises(ValueError, match="'wait' has a missing or non-finite value"):
        compute_metrics(jobs, total_cpus=4)


def test_zero_cpus_is_rejected() -> None:
    jobs = three_jobs()
    jobs.loc[0, "cpus"] = 0
    with pytest.raises(ValueError, match=r"cpus must be >= 1 .* \(got 0\)"):
        compute_metrics(jobs, total_cpus=4)


def test_unknown_status_is_rejected() -> None:
    jobs = three_jobs()
    jobs.loc[0, "status"] = "rejected"
    with pytest.raises(ValueError, match="status must be one of completed, killed"):
        compute_metrics(jobs, total_cpus=4)


def test_negative_tau_is_rejected() -> None:
    with pytest.raises(ValueError, match="tau must be"):
        compute_metrics(three_jobs(), total_cpus=4, tau=-1.0)


# ---------------------------------------------------------------------------------------------
# Properties on generated schedules
# ---------------------------------------------------------------------------------------------


@st.composite
def feasible_schedules(draw: st.DrawFn) -> tuple[pd.DataFrame, int]:
    """A job table that never uses more CPUs than the machine has, and its machine size.

    The machine is cut into lanes of a few CPUs each; jobs in a lane run one after another
    on at most the lane's CPUs, so the lanes together never exceed the machine. Times are
    whole seconds, as in SWF traces, which keeps the arithmetic exact.
    """
    lanes = draw(st.lists(st.integers(1, 64), min_size=1, max_size=4))
    free_at = [0] * len(lanes)
    rows: list[dict[str, Any]] = []
    for job_id in range(draw(st.integers(1, 25))):
        lane = draw(st.integers(0, len(lanes) - 1))
        submit = draw(st.integers(0, 100_000))
        start = max(submit, free_at[lane]) + draw(st.integers(0, 50_000))
        runtime = draw(st.integers(1, 200_000))
        free_at[lane] = start + runtime
        rows.append(
            {
                "job_id": job_id,
                "user": draw(st.integers(0, 3)),
                "group": 0,
                "queue": draw(st.sampled_from(["short", "long"])),
                "submit": float(submit),
                "start": float(start),
                "end": float(start + runtime),
                "wait": float(start - submit),
                "runtime": float(runtime),
                "cpus": draw(st.integers(1, lanes[lane])),
                "status": draw(st.sampled_from(["completed", "killed"])),
            }
        )
    return pd.DataFrame(rows), sum(lanes)


taus = st.sampled_from([0.0, 1.0, 10.0, 60.0, 3600.0])


@PROPERTY
@given(feasible_schedules(), taus)
def test_weighted_averages_lie_between_the_extremes(
    case: tuple[pd.DataFrame, int], tau: float
) -> None:
    jobs, cpus = case
    m = compute_metrics(jobs, total_cpus=cpus, tau=tau)
    wait, response = jobs["wait"], jobs["wait"] + jobs["runtime"]
    slack = 1e-9 * max(1.0, float(response.max()))
    assert wait.min() - slack <= m.awwt <= wait.max() + slack
    assert wait.min() - slack <= m.mean_wait <= wait.max() + slack
    assert response.min() - slack <= m.awrt <= response.max() + slack
    assert m.awrt >= m.awwt


@PROPERTY
@given(feasible_schedules(), taus)
def test_slowdowns_are_at_least_one(case: tuple[pd.DataFrame, int], tau: float) -> None:
    jobs, cpus = case
    m = compute_metrics(jobs, total_cpus=cpus, tau=tau)
    assert m.awsd >= 1.0 - 1e-12
    assert 1.0 <= m.mean_bounded_slowdown <= m.max_bounded_slowdown + 1e-12
    # Bounding only ever lowers a job's slowdown: b_j <= s_j = (w_j + r_j) / r_j.
    plain = (jobs["wait"] + jobs["runtime"]) / jobs["runtime"]
    assert m.max_bounded_slowdown <= plain.max() * (1 + 1e-12)


@PROPERTY
@given(feasible_schedules())
def test_utilization_is_in_unit_interval_when_capacity_is_respected(
    case: tuple[pd.DataFrame, int],
) -> None:
    jobs, cpus = case
    m = compute_metrics(jobs, total_cpus=cpus)
    assert 0.0 < m.utilization <= 1.0
    assert m.makespan == jobs["end"].max() - jobs["submit"].min()


@PROPERTY
@given(feasible_schedules())
def test_fairness_figures_summarise_per_user_nuwt(case: tuple[pd.DataFrame, int]) -> None:
    jobs, cpus = case
    m = compute_metrics(jobs, total_cpus=cpus)
    table = per_user(jobs)
    assert m.users == len(table) == jobs["user"].nunique()
    assert int(table["jobs"].sum()) == m.jobs == m.completed + m.killed
    assert m.anuwt == pytest.approx(table["nuwt"].mean())
    assert m.nuwt_dev == pytest.approx(table["nuwt"].std(ddof=0), abs=1e-12)
    assert m.anuwt >= 0.0
    assert m.nuwt_dev >= 0.0
    if m.users == 1:
        assert m.nuwt_dev == 0.0


@PROPERTY
@given(feasible_schedules(), st.randoms(use_true_random=False))
def test_metrics_do_not_depend_on_row_order(case: tuple[pd.DataFrame, int], rnd: Any) -> None:
    jobs, cpus = case
    order = list(range(len(jobs)))
    rnd.shuffle(order)
    shuffled = jobs.iloc[order]
    a = compute_metrics(jobs, total_cpus=cpus).as_dict()
    b = compute_metrics(shuffled, total_cpus=cpus).as_dict()
    assert b == pytest.approx(a)


@PROPERTY
@given(feasible_schedules(), st.sampled_from([0.25, 2.0, 1024.0]), taus)
def test_rescaling_time_rescales_times_and_keeps_ratios(
    case: tuple[pd.DataFrame, int], k: float, tau: float
) -> None:
    # Multiplying every time (and tau) by k multiplies the time metrics by k and leaves the
    # dimensionless ones unchanged; NUWT is wait over CPU time, so it is unchanged too.
    jobs, cpus = case
    scaled = jobs.copy()
    for col in ("submit", "start", "end", "wait", "runtime"):
        scaled[col] = jobs[col] * k
    a = compute_metrics(jobs, total_cpus=cpus, tau=tau)
    b = compute_metrics(scaled, total_cpus=cpus, tau=tau * k)
    for name in ("mean_wait", "awwt", "awrt", "makespan", "first_submit", "last_end"):
        assert getattr(b, name) == pytest.approx(getattr(a, name) * k), name
    for name in ("awsd", "mean_bounded_slowdown", "max_bounded_slowdown", "utilization"):
        assert getattr(b, name) == pytest.approx(getattr(a, name)), name
    assert b.anuwt == pytest.approx(a.anuwt)
    assert b.nuwt_dev == pytest.approx(a.nuwt_dev, abs=1e-12)


@PROPERTY
@given(feasible_schedules())
def test_generated_input_frame_is_not_modified(case: tuple[pd.DataFrame, int]) -> None:
    jobs, cpus = case
    before = jobs.copy(deep=True)
    compute_metrics(jobs, total_cpus=cpus)
    per_user(jobs)
    pd.testing.assert_frame_equal(jobs, before)
