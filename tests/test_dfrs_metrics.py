"""DFRS metrics and the offline max-stretch bound of paper 002 (section 3).

Hand-computed values say in a comment how they were obtained. The bound is returned from
below to a relative accuracy ``rtol``, so exact hand values are checked as
``value / (1 + rtol) <= bound <= value``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from random import Random

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.results.stretch import (
    SUMMARY_COLUMNS,
    bounded_stretch,
    degradation_factors,
    degradation_from_bound,
    max_stretch,
    normalized_underutilization,
    summarize_degradation,
    underutilization,
)
from queuesim.results.stretch_bound import (
    DfrsJobs,
    max_stretch_bound_bracket,
    max_stretch_lower_bound,
    stretch_is_achievable,
)

RTOL = 1e-3

EXAMPLES = int(os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def jobs(
    submit: Sequence[float],
    runtime: Sequence[float],
    tasks: Sequence[int] | None = None,
    cpu_need: Sequence[float] | None = None,
    memory: Sequence[float] | None = None,
) -> pd.DataFrame:
    n = len(submit)
    return pd.DataFrame(
        {
            "submit": submit,
            "runtime": runtime,
            "tasks": tasks if tasks is not None else [1] * n,
            "cpu_need": cpu_need if cpu_need is not None else [1.0] * n,
            "memory": memory if memory is not None else [0.0] * n,
        }
    )


def assert_bound_is(value: float, expected: float) -> None:
    assert expected / (1 + RTOL) <= value <= expected * (1 + 1e-9)


# ------------------------------------------------------------------ bound: hand-computed


def test_bound_of_a_job_alone_is_one() -> None:
    """A job alone runs at full speed from its submission: stretch 1, whatever tau."""
    alone = jobs([5.0], [100.0])
    assert max_stretch_lower_bound(alone, 1) == 1.0
    assert max_stretch_lower_bound(alone, 1, tau=0.0) == 1.0


def test_bound_of_two_full_node_jobs_on_one_host_is_two() -> None:
    """Two jobs of 100 s needing the whole host, submitted together: (1e) on [0, 100 S)
    needs 200 <= 100 S, so S* = 2 (one job finishes at 100, the other at 200)."""
    pair = jobs([0.0, 0.0], [100.0, 100.0])
    assert_bound_is(max_stretch_lower_bound(pair, 1, tau=0.0), 2.0)
    bracket = max_stretch_bound_bracket(pair, 1, tau=0.0)
    assert bracket.lower <= 2.0 <= bracket.upper <= bracket.lower * (1 + RTOL)


def test_achievability_switches_exactly_at_the_optimal_stretch() -> None:
    """Theorem 1 is an equivalence: stretch 2 is achievable for the pair, 1.99 is not."""
    pair = jobs([0.0, 0.0], [100.0, 100.0])
    assert stretch_is_achievable(pair, 1, 2.0, tau=0.0)
    assert not stretch_is_achievable(pair, 1, 1.99, tau=0.0)


def test_bound_respects_the_per_job_rate_limit() -> None:
    """(1d): a one-task job cannot use a second host to go faster than alone, so two hosts
    do not bring its stretch below 1 -- and a late short job that can use the idle host
    keeps stretch 1 too."""
    assert max_stretch_lower_bound(jobs([0.0], [100.0]), 2) == 1.0
    assert max_stretch_lower_bound(jobs([0.0, 10.0], [100.0, 50.0]), 2) == 1.0


def test_bound_of_three_half_cpu_jobs_on_one_host_is_one_and_a_half() -> None:
    """Three 100 s jobs of CPU need 0.5 on one host: (1e) on [0, 100 S) needs
    3 * 0.5 * 100 <= 100 S, so S* = 1.5 (e.g. all three at yield 2/3)."""
    trio = jobs([0.0, 0.0, 0.0], [100.0] * 3, cpu_need=[0.5] * 3)
    assert_bound_is(max_stretch_lower_bound(trio, 1), 1.5)
    # Two of them fit side by side at full speed.
    assert max_stretch_lower_bound(trio.iloc[:2], 1) == 1.0


def test_bound_with_staggered_releases() -> None:
    """A (r=0, p=100) then B (r=50, p=10), full host each, one host. With d_A = 100 S and
    d_B = 50 + 10 S, A gets 50 on [0, 50), 10 S - 10 while B runs, 90 S - 50 after: A is
    done iff 100 S - 10 >= 100, so S* = 1.1 (B preempts A at 50; A ends at 110)."""
    staggered = jobs([0.0, 50.0], [100.0, 10.0])
    assert_bound_is(max_stretch_lower_bound(staggered, 1, tau=0.0), 1.1)


def test_bound_of_a_job_wider_than_the_platform_is_its_width_ratio() -> None:
    """Four full-CPU tasks on two hosts can only run at half speed: S* = 2 exactly, found by
    the closed-form start of the search without any bisection."""
    wide = jobs([0.0], [100.0], tasks=[4])
    bracket = max_stretch_bound_bracket(wide, 2)
    assert bracket.lower == bracket.upper == 2.0


def test_bound_uses_tau_as_in_the_bounded_stretch() -> None:
    """Three 1 s jobs at once on one host: with tau = 0 the last finishes at 3 (S* = 3);
    with tau = 10 s a turn-around under 10 s counts as 10 s, so all reach bounded stretch 1."""
    short = jobs([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    assert_bound_is(max_stretch_lower_bound(short, 1, tau=0.0), 3.0)
    assert max_stretch_lower_bound(short, 1, tau=10.0) == 1.0


def test_bound_ignores_memory_like_the_paper() -> None:
    """Section 3 of 002 drops memory (bin packing makes it strongly NP-hard): two half-CPU
    jobs that could never share a node for memory still get bound 1."""
    half = [0.5, 0.5]
    light = jobs([0.0, 0.0], [100.0, 100.0], cpu_need=half, memory=[0.0, 0.0])
    heavy = jobs([0.0, 0.0], [100.0, 100.0], cpu_need=half, memory=[0.8, 0.8])
    assert max_stretch_lower_bound(light, 1) == max_stretch_lower_bound(heavy, 1) == 1.0


def test_jobs_of_zero_runtime_need_no_cpu() -> None:
    """With tau > 0 a zero-runtime job has bounded stretch 1 at most 10 s after submission
    and adds no work; with tau = 0 its stretch is undefined and the bound refuses it."""
    mixed = jobs([0.0, 0.0], [0.0, 100.0])
    assert max_stretch_lower_bound(mixed, 1) == 1.0
    with pytest.raises(ValueError, match="runtime 0"):
        max_stretch_lower_bound(mixed, 1, tau=0.0)


def test_bound_accepts_a_mapping_of_arrays() -> None:
    """Columns may come as a dict of arrays; memory may be omitted."""
    table: dict[str, npt.ArrayLike] = {
        "submit": np.zeros(2),
        "runtime": np.full(2, 100.0),
        "tasks": [1, 1],
        "cpu_need": np.ones(2),
    }
    assert_bound_is(max_stretch_lower_bound(table, 1, tau=0.0), 2.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cpu_need": [0.0]}, "'cpu_need' must be in \\(0, 1\\]"),
        ({"cpu_need": [1.5]}, "'cpu_need' must be in \\(0, 1\\]"),
        ({"tasks": [1.5]}, "'tasks' must be an integer >= 1"),
        ({"runtime": [-1.0]}, "'runtime' must be"),
        ({"submit": [float("nan")]}, "'submit' must be a finite"),
        ({"memory": [2.0]}, "'memory' must be in \\[0, 1\\]"),
    ],
)
def test_invalid_job_values_are_rejected_with_the_column_named(
    change: dict[str, list[float]], message: str
) -> None:
    """Bad input is an error naming the column and the row, never a plausible bound."""
    table = jobs([0.0], [100.0])
    for column, values in change.items():
        table[column] = values
    with pytest.raises(ValueError, match=message):
        max_stretch_lower_bound(table, 1)


def test_missing_column_and_bad_parameters_are_rejected() -> None:
    """A missing column, hosts < 1, rtol outside (0, 1) and a negative tau are errors."""
    with pytest.raises(ValueError, match="missing column 'cpu_need'"):
        DfrsJobs.from_table(jobs([0.0], [1.0]).drop(columns="cpu_need"))
    with pytest.raises(ValueError, match="hosts"):
        max_stretch_lower_bound(jobs([0.0], [1.0]), 0)
    with pytest.raises(ValueError, match="rtol"):
        max_stretch_lower_bound(jobs([0.0], [1.0]), 1, rtol=0.0)
    with pytest.raises(ValueError, match="tau"):
        max_stretch_lower_bound(jobs([0.0], [1.0]), 1, tau=-1.0)


# ------------------------------------------------------------------ bound: properties


def list_schedule(table: pd.DataFrame, hosts: int, order: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Completion times of a non-preemptive list schedule on whole hosts.

    Jobs are placed one after the other in ``order``; each task gets a host of its own for
    the job's dedicated runtime (yield 1), starting when the job is submitted and enough hosts
    are free after every job placed before it. Valid in the paper's model: no host runs two
    jobs at once and no task gets more CPU than its need.
    """
    free_at = np.zeros(hosts)
    completion = np.empty(len(table))
    submit = table["submit"].to_numpy()
    runtime = table["runtime"].to_numpy()
    tasks = table["tasks"].to_numpy()
    for j in np.asarray(order, dtype=np.int64):
        chosen = np.argsort(free_at, kind="stable")[: tasks[j]]
        start = max(submit[j], float(free_at[chosen].max()))
        free_at[chosen] = start + runtime[j]
        completion[j] = start + runtime[j]
    return completion


@st.composite
def instances(draw: st.DrawFn) -> tuple[pd.DataFrame, int]:
    hosts = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    submit = draw(st.lists(st.integers(0, 150), min_size=n, max_size=n))
    runtime = draw(st.lists(st.floats(1.0, 100.0), min_size=n, max_size=n))
    tasks = draw(st.lists(st.integers(1, hosts), min_size=n, max_size=n))
    cpu = draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.8, 1.0]), min_size=n, max_size=n))
    return jobs([float(s) for s in submit], runtime, tasks, cpu), hosts


@PROPERTY
@given(instances(), st.sampled_from([0.0, 10.0]))
def test_bound_is_never_above_the_fcfs_max_stretch(
    instance: tuple[pd.DataFrame, int], tau: float
) -> None:
    """Any valid schedule is feasible for the relaxation, so its maximum bounded stretch is at
    least the optimum, which the bound does not exceed."""
    table, hosts = instance
    fcfs = np.argsort(table["submit"].to_numpy(), kind="stable")
    achieved = max_stretch(table, list_schedule(table, hosts, fcfs), tau=tau)
    assert 1.0 <= max_stretch_lower_bound(table, hosts, tau=tau) <= achieved * (1 + 1e-6)


@PROPERTY
@given(instances(), st.randoms(use_true_random=False))
def test_bound_is_never_above_any_list_schedule_max_stretch(
    instance: tuple[pd.DataFrame, int], random: Random
) -> None:
    """Same as for FCFS with the jobs placed in an arbitrary order, which reaches schedules
    much closer to the optimum (e.g. short jobs first)."""
    table, hosts = instance
    order = list(range(len(table)))
    random.shuffle(order)
    achieved = max_stretch(table, list_schedule(table, hosts, order))
    assert max_stretch_lower_bound(table, hosts) <= achieved * (1 + 1e-6)


@PROPERTY
@given(instances(), st.integers(0, 150), st.floats(1.0, 100.0))
def test_adding_a_job_never_lowers_the_bound(
    instance: tuple[pd.DataFrame, int], submit: int, runtime: float
) -> None:
    """Restricting a schedule of J + {k} to J is a schedule of J, so the optimum can only
    grow; the returned lower ends are each within rtol of their optimum."""
    table, hosts = instance
    bigger = pd.concat([table, jobs([float(submit)], [runtime])], ignore_index=True)
    small = max_stretch_lower_bound(table, hosts)
    assert small <= max_stretch_lower_bound(bigger, hosts) * (1 + RTOL) * (1 + 1e-6)


@PROPERTY
@given(instances(), st.sampled_from([0.01, 3.0, 3600.0]))
def test_bound_does_not_depend_on_the_time_unit(
    instance: tuple[pd.DataFrame, int], scale: float
) -> None:
    """With tau = 0 stretch is a ratio of durations: rescaling all times keeps the optimum,
    so the two lower ends agree within rtol."""
    table, hosts = instance
    scaled = table.assign(submit=table["submit"] * scale, runtime=table["runtime"] * scale)
    one = max_stretch_lower_bound(table, hosts, tau=0.0)
    other = max_stretch_lower_bound(scaled, hosts, tau=0.0)
    assert math.isclose(one, other, rel_tol=2 * RTOL)


@PROPERTY
@given(instances())
def test_bracket_ends_are_infeasible_and_feasible(instance: tuple[pd.DataFrame, int]) -> None:
    """The search returns [lower, upper] within rtol, upper achievable, and lower either the
    closed-form start (then equal to upper) or not achievable."""
    table, hosts = instance
    bracket = max_stretch_bound_bracket(table, hosts)
    assert 1.0 <= bracket.lower <= bracket.upper <= bracket.lower * (1 + RTOL)
    assert stretch_is_achievable(table, hosts, bracket.upper)
    if bracket.lower < bracket.upper:
        assert not stretch_is_achievable(table, hosts, bracket.lower)


# ------------------------------------------------------------------ stretch


def test_bounded_stretch_by_hand() -> None:
    """(C - r) / max(p, tau), at least 1: a 100 s job done 250 s after submission -> 2.5; a
    2 s job done 30 s after -> 30 / 10 = 3; a 5 s job done after 8 s -> 1 (under tau)."""
    table = jobs([0.0, 10.0, 0.0], [100.0, 2.0, 5.0])
    completion = [250.0, 40.0, 8.0]
    assert bounded_stretch(table, completion).tolist() == [2.5, 3.0, 1.0]
    assert max_stretch(table, completion) == 3.0
    # tau = 0 gives the plain stretch: 30 / 2 and 8 / 5.
    assert bounded_stretch(table, completion, tau=0.0).tolist() == [2.5, 15.0, 1.6]
    # tau = 30 as in paper 000.
    assert bounded_stretch(table, completion, tau=30.0).tolist() == [2.5, 1.0, 1.0]


def test_completion_before_dedicated_runtime_is_rejected() -> None:
    """A job cannot finish sooner than alone on the platform; that is an error naming it."""
    with pytest.raises(ValueError, match="row 1"):
        bounded_stretch(jobs([0.0, 0.0], [10.0, 10.0]), [10.0, 9.0])
    with pytest.raises(ValueError, match="2 values for 1 jobs"):
        bounded_stretch(jobs([0.0], [10.0]), [10.0, 20.0])


# ------------------------------------------------------------------ degradations


def test_degradation_factor_table_by_hand() -> None:
    """Each instance's row is divided by its best maximum stretch (000, section V); the
    summary gives mean, sample std and max per algorithm."""
    table = pd.DataFrame({"A": [2.0, 3.0], "B": [4.0, 3.0], "C": [1.0, 6.0]}, index=["i1", "i2"])
    factors = degradation_factors(table)
    expected = pd.DataFrame({"A": [2.0, 1.0], "B": [4.0, 1.0], "C": [1.0, 2.0]}, index=["i1", "i2"])
    pd.testing.assert_frame_equal(factors, expected)
    summary = summarize_degradation(factors)
    assert tuple(summary.columns) == SUMMARY_COLUMNS
    assert summary.index.tolist() == ["A", "B", "C"]
    assert summary["mean"].tolist() == [1.5, 2.5, 1.5]
    assert summary["max"].tolist() == [2.0, 4.0, 2.0]
    # Sample std of {2, 1} is 1/sqrt(2), of {4, 1} is 3/sqrt(2).
    np.testing.assert_allclose(summary["std"], [0.5**0.5, 4.5**0.5, 0.5**0.5])
    np.testing.assert_allclose(summarize_degradation(factors, ddof=0)["std"], [0.5, 1.5, 0.5])


def test_degradation_from_bound_by_hand() -> None:
    """Maximum stretch over the instance's lower bound (002, section 5.1)."""
    table = pd.DataFrame({"easy": [6.0, 9.0], "dfrs": [2.0, 3.0]}, index=["w1", "w2"])
    bounds = pd.Series({"w2": 1.5, "w1": 2.0})
    result = degradation_from_bound(table, bounds)
    expected = pd.DataFrame({"easy": [3.0, 6.0], "dfrs": [1.0, 2.0]}, index=["w1", "w2"])
    pd.testing.assert_frame_equal(result, expected)


def test_degradation_tables_reject_missing_values() -> None:
    """A missing run or bound is an error, not a silently smaller average."""
    table = pd.DataFrame({"A": [2.0, float("nan")], "B": [1.0, 1.0]}, index=["i1", "i2"])
    with pytest.raises(ValueError, match="instance 'i2', column 'A'"):
        degradation_factors(table)
    with pytest.raises(ValueError, match="no bound for instance 'i2'"):
        degradation_from_bound(table.fillna(1.0), pd.Series({"i1": 1.0}))


# ------------------------------------------------------------------ underutilization


def test_underutilization_is_zero_when_demand_always_fills_the_platform() -> None:
    """One host, two full-node jobs back to back: min(|P|, D) = 1 on [0, 200) and the host
    is busy all along; a half-CPU job alone: min = 0.5 on [0, 100), all of it used."""
    back_to_back = jobs([0.0, 0.0], [100.0, 100.0])
    assert underutilization(back_to_back, [100.0, 200.0], 1) == 0.0
    assert normalized_underutilization(jobs([0.0], [100.0], cpu_need=[0.5]), [100.0], 1) == 0.0


def test_underutilization_counts_idle_cpu_while_work_waits() -> None:
    """Two hosts, two full-node jobs at 0, the second held until 100: D = 2 on [0, 100) and
    1 on [100, 200), so the integral of min(2, D) is 300 against 200 CPU-s of work:
    underutilization 100, normalised 0.5."""
    held = jobs([0.0, 0.0], [100.0, 100.0])
    assert underutilization(held, [100.0, 200.0], 2) == 100.0
    assert normalized_underutilization(held, [100.0, 200.0], 2) == 0.5


def test_underutilization_sums_the_needs_of_all_tasks() -> None:
    """Four tasks of need 0.5 on two hosts demand 2 CPUs: done in 100 s nothing idles; run at
    yield 1/2 for 200 s, 400 CPU-s were demandable for 200 of work: normalised 1.0."""
    wide = jobs([0.0], [100.0], tasks=[4], cpu_need=[0.5])
    assert underutilization(wide, [100.0], 2) == 0.0
    assert normalized_underutilization(wide, [200.0], 2) == 1.0


def test_underutilization_with_allocated_but_unproductive_cpu() -> None:
    """If the simulator reports 250 CPU-s allocated (50 lost to a penalty) for the held
    schedule above, the idle CPU is 300 - 250 = 50."""
    held = jobs([0.0, 0.0], [100.0, 100.0])
    assert underutilization(held, [100.0, 200.0], 2, allocated_cpu_seconds=250.0) == 50.0
    with pytest.raises(ValueError, match="allocated_cpu_seconds"):
        underutilization(held, [100.0, 200.0], 2, allocated_cpu_seconds=-1.0)


@PROPERTY
@given(instances())
def test_underutilization_of_a_list_schedule_is_never_negative(
    instance: tuple[pd.DataFrame, int],
) -> None:
    """u(t) <= min(|P|, D(t)) at every instant of a valid schedule, so the integral of the
    difference is >= 0."""
    table, hosts = instance
    fcfs = np.argsort(table["submit"].to_numpy(), kind="stable")
    completion = list_schedule(table, hosts, fcfs)
    total = float((table["runtime"] * table["tasks"] * table["cpu_need"]).sum())
    assert underutilization(table, completion, hosts) >= -1e-9 * total
