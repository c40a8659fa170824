"""Tests of queuesim.reports.summary: the terminal summary shows the key figures in 80 columns."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from rich.cells import cell_len
from rich.console import Console

from queuesim.reports.summary import print_summary, summary_renderable
from queuesim.results.metrics import Metrics

METRICS = Metrics(
    jobs=376_722,
    completed=370_001,
    killed=6_721,
    users=302,
    mean_wait=7_500.0,  # 2h 5m
    awwt=33_795.4,  # 9h 23m 15s
    awrt=629_448.0,  # 7d 6h 50m
    awsd=2.3215,
    mean_bounded_slowdown=14.567,
    max_bounded_slowdown=10_432.1,
    bounded_slowdown_tau=10.0,
    anuwt=0.10987,
    nuwt_dev=13.517,
    utilization=0.8734,
    makespan=15_552_000.0,  # 180 days
    first_submit=0.0,
    last_end=15_552_000.0,
    median_wait=600.0,  # 10m
    p90_wait=21_600.0,  # 6h
    p99_wait=172_800.0,  # 2d
    max_wait=1_209_600.0,  # 14d
    waited_over_1h=0.25,
    waited_over_24h=0.02,
)

FACTS = {
    "site": "metacentrum-complex",
    "workload": "METACENTRUM-2013-3.swf (376,722 jobs after cleaning)",
    "policy": "easy",
    "jobs/s": "41,200",
}

CLEANING = {"zero_runtime": 123, "negative_wait": 0, "cpus_over_capacity": 7}


def render(
    *,
    width: int = 80,
    title: str = "metacentrum-complex with easy",
    metrics: Metrics = METRICS,
    cleaning: Mapping[str, int] = CLEANING,
    facts: Mapping[str, str] = FACTS,
) -> str:
    console = Console(width=width, record=True, color_system=None)
    print_summary(console, title=title, metrics=metrics, cleaning=cleaning, facts=facts)
    return console.export_text()


def test_summary_shows_title_and_facts() -> None:
    text = render()
    assert "metacentrum-complex with easy" in text
    for key, value in FACTS.items():
        assert key in text
        assert value in text


def test_summary_shows_job_counts() -> None:
    text = render()
    for figure in ("376,722", "370,001", "6,721", "302"):
        assert figure in text


def test_summary_shows_waits_as_durations_with_raw_seconds() -> None:
    text = render()
    for human, raw in [("2h 5m", "7,500 s"), ("9h 23m", "33,795 s"), ("7d 6h", "629,448 s")]:
        line = next(line for line in text.splitlines() if human in line)
        assert raw in line, line


def test_summary_shows_slowdowns_with_two_decimals_and_tau() -> None:
    text = render()
    assert "2.32" in text
    assert "14.57" in text
    assert "10,432.10" in text
    assert "tau 10 s" in text


def test_summary_shows_fairness_with_three_significant_digits() -> None:
    text = render()
    anuwt = next(line for line in text.splitlines() if "ANUWT" in line)
    dev = next(line for line in text.splitlines() if "NUWT-dev" in line)
    assert "0.110" in anuwt
    assert "13.5" in dev
    assert "13.52" not in dev


def test_summary_shows_utilization_as_percentage_and_makespan_as_duration() -> None:
    text = render()
    assert "87.3 %" in text
    makespan = next(line for line in text.splitlines() if "makespan" in line)
    assert "180d" in makespan
    assert "15,552,000 s" in makespan


def test_summary_lists_only_nonzero_cleaning_counts() -> None:
    text = render()
    assert "zero_runtime" in text
    assert "123" in text
    assert "cpus_over_capacity" in text
    assert "negative_wait" not in text
    assert "no jobs dropped or repaired" not in text


@pytest.mark.parametrize("cleaning", [{}, {"zero_runtime": 0, "negative_wait": 0}])
def test_summary_says_nothing_was_cleaned_when_all_counts_are_zero(
    cleaning: Mapping[str, int],
) -> None:
    text = render(cleaning=cleaning)
    assert "no jobs dropped or repaired" in text
    assert "zero_runtime" not in text


@pytest.mark.parametrize("width", [80, 100])
def test_summary_fits_the_terminal_width(width: int) -> None:
    long_facts = {**FACTS, "workload": "a/very/long/path/to/" + "x" * 120 + ".swf.gz"}
    for facts in (FACTS, long_facts):
        text = render(width=width, facts=facts)
        widest = max(cell_len(line) for line in text.splitlines())
        assert widest <= width, f"a line is {widest} columns wide"


def test_summary_is_not_stretched_to_a_wide_terminal() -> None:
    # The panel sizes to its content, so the layout at 100 columns is the one at 80.
    assert render(width=100) == render(width=80)


def test_summary_without_facts_still_shows_metrics() -> None:
    text = render(facts={})
    assert "AWWT" in text
    assert "9h 23m" in text


def test_summary_renderable_matches_print_summary() -> None:
    console = Console(width=80, record=True, color_system=None)
    console.print(
        summary_renderable(
            title="metacentrum-complex with easy",
            metrics=METRICS,
            cleaning=CLEANING,
            facts=FACTS,
        )
    )
    assert console.export_text() == render()


def test_small_values_are_readable() -> None:
    tiny = Metrics(
        jobs=1,
        completed=1,
        killed=0,
        users=1,
        mean_wait=0.0,
        awwt=0.0,
        awrt=2.5,
        awsd=1.0,
        mean_bounded_slowdown=1.0,
        max_bounded_slowdown=1.0,
        bounded_slowdown_tau=10.0,
        anuwt=0.0,
        nuwt_dev=0.0,
        utilization=1.0,
        makespan=2.5,
        first_submit=0.0,
        last_end=2.5,
        median_wait=0.0,
        p90_wait=0.0,
        p99_wait=0.0,
        max_wait=0.0,
        waited_over_1h=0.0,
        waited_over_24h=0.0,
    )
    text = render(metrics=tiny)
    assert "100.0 %" in text
    assert "2.5 s" in text
    assert "0 s" in text


def test_the_summary_shows_each_queue_and_the_users_who_waited_most() -> None:
    """Issue 14: per queue, the tail of the wait (percentiles, long waits) next to the
    means; the top users by NUWT. One queue alone is the whole run: no table then."""
    import pandas as pd

    queues = pd.DataFrame(
        {
            "jobs": [27_070, 12_857, 39_927],
            "awwt": [81_240.0, 7200.0, 5000.0],  # 22h 34m
            "mean_wait": [30.0, 3600.0, 2700.0],
            "median_wait": [2554.0, 1800.0, 900.0],  # 42m 34s
            "p90_wait": [120.0, 36_000.0, 30_000.0],
            "p99_wait": [300.0, 90_000.0, 86_000.0],
            "max_wait": [310.0, 100_000.0, 100_000.0],
            "waited_over_1h": [0.0, 0.5, 0.375],
            "waited_over_24h": [0.0, 0.1, 0.075],
        },
        index=pd.Index(["q_2w_plus", "long", "(all)"], name="queue"),
    )
    users = pd.DataFrame(
        {
            "jobs": [5, 7, 9],
            "nuwt": [0.5, 3.0, 1.0],
            "mean_wait": [10.0, 20.0, 30.0],
            "p90_wait": [10.0, 20.0, 30.0],
            "max_wait": [10.0, 20.0, 30.0],
            "waited_over_24h": [0.0, 0.0, 0.0],
        },
        index=pd.Index([11, 22, 33], name="user"),
    )
    console = Console(width=80, record=True, color_system=None)
    print_summary(
        console,
        title="t",
        metrics=METRICS,
        cleaning=CLEANING,
        facts=FACTS,
        queues=queues,
        users=users,
        top=2,
    )
    text = console.export_text()
    assert "Wait per queue" in text
    long_row = next(line for line in text.splitlines() if line.startswith("long "))
    assert "1d 3h" in long_row and "10.0%" in long_row
    assert "The 2 users who waited most per CPU-second (NUWT)" in text
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("22 "))
    second = next(i for i, line in enumerate(lines) if line.startswith("33 "))
    assert first < second and not any(line.startswith("11 ") for line in lines)  # top 2 only
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text  # nothing cut off at 80 columns, long names and counts included
    one_queue = queues.loc[["q_2w_plus", "(all)"]]
    console = Console(width=80, record=True, color_system=None)
    print_summary(
        console, title="t", metrics=METRICS, cleaning=CLEANING, facts=FACTS, queues=one_queue
    )
    assert "Wait per queue" not in console.export_text()
