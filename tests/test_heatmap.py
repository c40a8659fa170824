"""Heatmaps: binning by submit time, empty bins and queues, calendar bins, the colour scale,
PNG / SVG rendering without a display and byte for byte, and the terminal rendering."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len
from rich.console import Console

from queuesim.reports.heatmap_plot import COLORBAR_LABEL, EMPTY_LABEL, render_heatmap, write_heatmap
from queuesim.reports.terminal import BLOCKS, EMPTY_CELL, heatmap_renderable
from queuesim.results.heatmap import (
    DAY,
    WEEK,
    BinSpec,
    HeatmapError,
    TraceClock,
    bin_edges,
    parse_bin,
    scale_forward,
    scale_inverse,
    wait_grid,
)
from queuesim.studies.simulate import simulate

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"


def table(rows: list[tuple[str, float, float]], queues: list[str] | None = None) -> pd.DataFrame:
    """Jobs from (queue, submit, wait) rows, queue categorical in ``queues`` order if given."""
    frame = pd.DataFrame(rows, columns=["queue", "submit", "wait"])
    if queues is not None:
        frame["queue"] = pd.Categorical(frame["queue"], categories=queues)
    return frame


# --- binning ---------------------------------------------------------------------------------


def test_job_submitted_on_a_bin_edge_goes_to_the_later_bin() -> None:
    # day bins [0, 86400) and [86400, 172800): the job at exactly 86400 is in the second
    grid = wait_grid(table([("q", 0, 60), ("q", 86_399, 120), ("q", 86_400, 600)]), "day")
    assert grid.edges.tolist() == [0.0, DAY, 2 * DAY]
    assert grid.jobs.tolist() == [[2, 1]]
    assert grid.mean_minutes.tolist() == [[1.5, 10.0]]


def test_empty_bin_is_nan_and_zero_wait_is_zero() -> None:
    # jobs on day 0 (waited 0) and day 2: day 1 had no job -> NaN, not 0
    grid = wait_grid(table([("q", 10, 0), ("q", 2 * DAY + 5, 300)]), "day")
    means = grid.mean_minutes[0]
    assert means[0] == 0.0
    assert math.isnan(means[1])
    assert means[2] == 5.0
    frame = grid.frame()
    assert frame.isna().to_numpy().tolist() == [[False, True, False]]


def test_queue_with_no_jobs_is_still_an_empty_row_in_the_given_order() -> None:
    jobs = table([("long", 0, 60), ("short", 100, 0)])
    grid = wait_grid(jobs, "day", queues=["short", "debug", "long"])
    assert grid.queues == ("short", "debug", "long")
    assert grid.jobs.tolist() == [[1], [0], [1]]
    assert np.isnan(grid.mean_minutes[1]).all()
    assert grid.queue_jobs().tolist() == [1, 0, 1]


def test_rows_follow_the_categorical_order_else_names() -> None:
    rows = [("b", 0, 0), ("a", 0, 0)]
    assert wait_grid(table(rows, ["b", "c", "a"])).queues == ("b", "c", "a")
    assert wait_grid(table(rows)).queues == ("a", "b")


def test_result_rows_are_the_site_queues_and_dates_come_from_the_header() -> None:
    result = simulate(KTH_SITE, KTH_SAMPLE, policy="fcfs")
    grid = wait_grid(result, "day")
    assert grid.queues == ("batch",)
    assert grid.clock == TraceClock(843480031, "Europe/Stockholm")
    assert grid.jobs.sum() == len(result.jobs)
    # the first bin starts at local midnight of the first submit's day
    first = grid.clock.to_datetime(float(grid.edges[0]))
    assert (first.hour, first.minute, first.second) == (0, 0, 0)


def test_job_in_a_queue_not_among_the_rows_is_refused() -> None:
    with pytest.raises(HeatmapError, match="queue"):
        wait_grid(table([("gpu", 0, 0)]), queues=["cpu"])


def test_empty_job_table_is_refused() -> None:
    with pytest.raises(HeatmapError, match="empty"):
        wait_grid(table([]))


def test_calendar_days_start_at_local_midnight_and_follow_daylight_saving() -> None:
    # Europe/Stockholm switched to summer time on 2021-03-28: that day has 23 hours
    zone = ZoneInfo("Europe/Stockholm")
    start = int(datetime(2021, 3, 27, 12, tzinfo=zone).timestamp())
    clock = TraceClock(start, "Europe/Stockholm")
    edges = bin_edges(0, 2 * DAY, parse_bin("day"), clock)
    lengths = np.diff(edges) / 3600
    assert lengths.tolist() == [24.0, 23.0, 24.0]
    assert edges[0] == -12 * 3600  # midnight before the trace's noon start


def test_week_bins_start_on_monday() -> None:
    zone = ZoneInfo("UTC")
    start = int(datetime(2021, 3, 3, tzinfo=zone).timestamp())  # a Wednesday
    clock = TraceClock(start, "UTC")
    edges = bin_edges(0, 10 * DAY, parse_bin("week"), clock)
    mondays = [clock.to_datetime(float(e)) for e in edges]
    assert all(d.weekday() == 0 and d.hour == 0 for d in mondays)
    assert np.diff(edges).tolist() == [WEEK] * (len(edges) - 1)


def test_unknown_time_zone_falls_back_to_utc() -> None:
    assert TraceClock(0, "Mars/Olympus_Mons").zone_name == "UTC"


def test_width_bins_count_from_the_trace_start() -> None:
    edges = bin_edges(7_000, 20_000, parse_bin("6h"), TraceClock())
    assert edges.tolist() == [0.0, 21_600.0]
    assert parse_bin("3600") == BinSpec("seconds", 3600.0)
    assert parse_bin(90) == BinSpec("seconds", 90.0)
    assert parse_bin("week") == BinSpec("week", WEEK)


@pytest.mark.parametrize("width", [0, -1, "0", "-3600", "0s", "soon", float("nan"), True])
def test_bin_width_zero_or_negative_or_unreadable_is_refused(width: object) -> None:
    with pytest.raises(HeatmapError, match="'day', 'week' or a positive width"):
        parse_bin(width)  # type: ignore[arg-type]


def test_merging_bins_sums_jobs_and_waits_exactly() -> None:
    grid = wait_grid(
        table([("q", 0, 60), ("q", DAY, 180), ("q", 2 * DAY, 600), ("q", 2 * DAY, 0)]), "day"
    )
    merged = grid.coarsen(2)
    assert merged.edges.tolist() == [0.0, 2 * DAY, 3 * DAY]
    assert merged.jobs.tolist() == [[2, 2]]
    assert merged.mean_minutes.tolist() == [[2.0, 5.0]]  # (1 + 3) / 2 and (10 + 0) / 2


def test_colour_scale_is_linear_below_a_minute_and_logarithmic_above() -> None:
    assert scale_forward([0, 0.5, 1, 10, 1000]).tolist() == [0, 0.5, 1, 2, 4]
    minutes = np.array([0, 0.3, 1, 7, 12_345.0])
    assert np.allclose(scale_inverse(scale_forward(minutes)), minutes)


# --- images ----------------------------------------------------------------------------------


def grids_with_an_empty_queue() -> dict[str, object]:
    base = table([("short", 0, 60), ("long", 2 * DAY, 6000)])
    other = table([("short", 0, 0), ("long", 2 * DAY, 60)])
    return {
        name: wait_grid(jobs, "day", queues=["short", "debug", "long"])
        for name, jobs in (("site/easy", base), ("site/fcfs", other))
    }


def test_png_and_svg_render_without_a_display(tmp_path: Path) -> None:
    # a fresh interpreter with no DISPLAY and no backend chosen: nothing may try a GUI
    script = (
        "import sys; from pathlib import Path;"
        "sys.path.insert(0, sys.argv[1]);"
        "from test_heatmap import grids_with_an_empty_queue;"
        "from queuesim.reports.heatmap_plot import write_heatmap;"
        "g = grids_with_an_empty_queue();"
        "write_heatmap(Path(sys.argv[2]) / 'h.png', g);"
        "write_heatmap(Path(sys.argv[2]) / 'h.svg', g);"
        "import matplotlib; print(matplotlib.get_backend())"
    )
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "h.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    svg = (tmp_path / "h.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert COLORBAR_LABEL in svg  # text kept as text
    assert EMPTY_LABEL in svg
    assert "debug (0)" in svg  # the empty queue has its row
    assert "days since trace start" in svg  # no UnixStartTime: no dates


def test_images_are_byte_identical_across_renders_and_carry_no_date() -> None:
    grids = grids_with_an_empty_queue()
    for fmt in ("png", "svg"):
        first = render_heatmap(grids, fmt)  # type: ignore[arg-type]
        assert render_heatmap(grids, fmt) == first  # type: ignore[arg-type]
    svg = render_heatmap(grids, "svg").decode("utf-8")  # type: ignore[arg-type]
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    png = render_heatmap(grids, "png")  # type: ignore[arg-type]
    assert b"Software" not in png and b"Creation Time" not in png


def test_large_grids_are_byte_identical_too() -> None:
    # past the cell count where the SVG embeds the cells as a bitmap
    rng = np.random.default_rng(7)
    submit = np.sort(rng.uniform(0, 400 * DAY, 3000))
    jobs = pd.DataFrame(
        {"queue": rng.choice(["a", "b", "c", "d", "e", "f"], 3000), "submit": submit,
         "wait": rng.exponential(3600, 3000)}
    )  # fmt: skip
    grids = {"x": wait_grid(jobs, "day")}
    for fmt in ("png", "svg"):
        assert render_heatmap(grids, fmt) == render_heatmap(grids, fmt)


def test_dated_image_labels_the_axis_with_dates(tmp_path: Path) -> None:
    result = simulate(KTH_SITE, KTH_SAMPLE, policy="fcfs")
    svg = write_heatmap(tmp_path / "h.svg", {"kth": wait_grid(result, "day")}).read_text()
    assert "submit date (Europe/Stockholm)" in svg
    assert "1996" in svg  # the date formatter's year


# --- terminal --------------------------------------------------------------------------------


def render_text(width: int, grids: dict[str, object]) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(heatmap_renderable(grids, width))  # type: ignore[arg-type]
    return console.export_text()


def test_terminal_heatmap_shows_empty_bins_and_queues_and_a_legend() -> None:
    text = render_text(80, grids_with_an_empty_queue())
    lines = text.splitlines()
    debug = next(line for line in lines if line.startswith("debug (0)"))
    assert set(debug.split(maxsplit=2)[2].strip()) == {EMPTY_CELL}
    short = next(line for line in lines if line.startswith("short (1)"))
    cells = short.split(maxsplit=2)[2].strip()
    assert cells[0] in BLOCKS and EMPTY_CELL in cells  # day 0 has a job, day 1 none
    assert "mean wait (minutes):" in text and "none" in text
    assert "day 0" in text  # undated: days since the trace's start


@pytest.mark.parametrize("width", [60, 80, 100])
def test_terminal_heatmap_fits_the_width_by_merging_bins(width: int) -> None:
    jobs = table([("q", k * 3600.0, 60.0 * k) for k in range(24 * 200)])  # 200 days
    text = render_text(width, {"x": wait_grid(jobs, "day")})
    assert max(cell_len(line) for line in text.splitlines()) <= width
    assert "one column per" in text and "days" in text  # says how many days a column holds
