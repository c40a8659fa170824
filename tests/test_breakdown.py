"""Wait figures per queue and per user, with percentiles (issue 14, item 3): defined once,
equal to numpy's percentiles, consistent with the whole run's metrics, and compared
against a baseline queue by queue."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from builders import J, run_jobs
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.results.breakdown import ALL, by_queue, by_user
from queuesim.results.comparison import Comparison
from queuesim.results.metrics import WAIT_FIGURES, compute_metrics, per_user, wait_figures
from queuesim.site.model import Site


def table(waits: list[float], queues: list[str] | None = None) -> pd.DataFrame:
    n = len(waits)
    runtime = np.full(n, 100.0)
    return pd.DataFrame(
        {
            "user": [k % 3 for k in range(n)],
            "queue": queues or ["q"] * n,
            "submit": np.zeros(n),
            "wait": np.asarray(waits, dtype=np.float64),
            "runtime": runtime,
            "end": np.asarray(waits, dtype=np.float64) + runtime,
            "cpus": np.ones(n),
            "status": ["completed"] * n,
        }
    )


def test_percentiles_interpolate_linearly_between_the_nearest_waits() -> None:
    """Hand-computed: waits 0, 10, 20, 3700 s. Median: halfway between 10 and 20; p90:
    h = 3 x 0.9 = 2.7, so 20 + 0.7 x (3700 - 20) = 2596; p99: 20 + 0.97 x 3680."""
    jobs = table([0, 10, 20, 3700])
    figures = wait_figures(
        jobs["wait"].to_numpy(), jobs["runtime"].to_numpy(), jobs["cpus"].to_numpy(), 10.0
    )
    assert figures["median_wait"] == 15.0
    assert figures["p90_wait"] == pytest.approx(2596.0)
    assert figures["p99_wait"] == pytest.approx(20 + 0.97 * 3680)
    assert figures["max_wait"] == 3700.0
    assert figures["waited_over_1h"] == 0.25  # 3700 s > 1 h; exactly 1 h would not count
    assert figures["waited_over_24h"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60))
def test_wait_percentiles_are_numpys_default_percentiles(waits: list[float]) -> None:
    jobs = table(waits)
    metrics = compute_metrics(jobs, total_cpus=4)
    expected = np.percentile(np.asarray(waits), [50, 90, 99])
    assert [metrics.median_wait, metrics.p90_wait, metrics.p99_wait] == pytest.approx(expected)
    assert metrics.max_wait == max(waits)
    assert metrics.waited_over_1h == pytest.approx(np.mean(np.asarray(waits) > 3600))
    assert metrics.waited_over_24h == pytest.approx(np.mean(np.asarray(waits) > 86400))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1e5, allow_nan=False), st.sampled_from(["a", "b", "c"])),
        min_size=1,
        max_size=50,
    )
)
def test_queue_rows_split_the_run_and_the_all_row_is_the_runs_metrics(
    rows: list[tuple[float, str]],
) -> None:
    jobs = table([w for w, _ in rows], [q for _, q in rows])
    queues = by_queue(jobs, ["c", "b", "a"])
    present = [q for q in ("c", "b", "a") if q in set(jobs["queue"])]
    assert list(queues.index) == [*present, ALL]  # the site's order, empty queues left out
    assert queues.loc[present, "jobs"].sum() == len(jobs)
    whole = compute_metrics(jobs, total_cpus=4).as_dict()
    for figure in WAIT_FIGURES:
        assert queues.loc[ALL, figure] == pytest.approx(whole[figure]), figure
    for q in present:
        mine = jobs[jobs["queue"] == q]
        assert queues.loc[q, "p90_wait"] == pytest.approx(np.percentile(mine["wait"], 90))


def test_user_rows_carry_each_users_nuwt() -> None:
    jobs = table([0, 100, 200, 300, 4000, 90000])
    users = by_user(jobs)
    assert users["nuwt"].to_dict() == pytest.approx(per_user(jobs)["nuwt"].to_dict())
    assert users.loc[0, "max_wait"] == 300.0  # user 0 ran jobs 0 and 3
    assert users.loc[2, "waited_over_24h"] == 0.5  # user 2: waits 200 and 90,000 s


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e6, allow_nan=False),
            st.floats(1, 1e5, allow_nan=False),
            st.integers(1, 64),
            st.sampled_from([3, 1, 20, 7]),
        ),
        min_size=1,
        max_size=60,
    ),
    st.booleans(),
)
def test_user_rows_are_those_of_each_users_own_jobs_to_the_bit(
    rows: list[tuple[float, float, int, int]], named: bool
) -> None:
    """The per-user figures, computed from one sort of the whole table, equal to the last
    bit the figures of each user's jobs taken apart in row order (as a groupby does)."""
    users = [f"u{u}" if named else u for *_, u in rows]
    jobs = pd.DataFrame(
        {
            "user": users,
            "wait": [w for w, *_ in rows],
            "runtime": [r for _, r, *_ in rows],
            "cpus": [float(c) for *_, c, _ in rows],
        }
    )
    table_ = by_user(jobs, tau=10.0)
    assert list(table_.index) == sorted(set(users))
    for user, group in jobs.groupby("user", sort=True):
        arrays = (group[c].to_numpy(dtype=np.float64) for c in ("wait", "runtime", "cpus"))
        expected = wait_figures(*arrays, 10.0)
        assert table_.loc[user, list(WAIT_FIGURES)].to_dict() == expected


def test_comparison_shows_each_queues_change_against_the_baseline() -> None:
    """Two queues; FCFS keeps the short job behind the long one, EASY backfills it."""
    site = Site.model_validate(
        {
            "name": "two-queues",
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
            "queues": [{"name": "short", "max_walltime": "1m"}, {"name": "long"}],
        }
    )
    jobs = [J(1, 0, 100, 3), J(2, 1, 100, 4), J(3, 2, 10, 1)]
    results = {p: run_jobs(jobs, site, p).result for p in ("fcfs", "easy")}
    comp = Comparison.from_results(results, "fcfs")
    table_ = comp.per_queue
    assert list(table_.index) == [
        ("short", "fcfs"),
        ("short", "easy"),
        ("long", "fcfs"),
        ("long", "easy"),
        (ALL, "fcfs"),
        (ALL, "easy"),
    ]
    # job 3 (short) waits 198 s under FCFS (behind job 2) and 0 s under EASY
    assert table_.loc[("short", "fcfs"), "max_wait"] == 198.0
    assert table_.loc[("short", "easy"), "max_wait_change"] == -198.0
    assert (table_.xs("fcfs", level="setup")["awwt_change"] == 0).all()
