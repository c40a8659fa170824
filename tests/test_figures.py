"""Each report figure draws the numbers of queuesim.results.timelines (checked on the
artists' data, not pixels) and renders as PNG and SVG, the same bytes every time."""

from __future__ import annotations

import numpy as np
import pytest
from test_timelines import ROWS, schedule

from queuesim.reports.figures import (
    diff_gantt_figure,
    fairshare_figure,
    figure_bytes,
    figure_png_svg,
    gantt_figure,
    queue_timeline_figure,
    wait_cdf_figure,
    winners_losers_figure,
)

H = 3600.0


def later() -> object:
    other = schedule(ROWS)
    other.loc[other["job_id"] == 3, ["start", "end", "wait"]] = [20.0, 35.0, 18.0]
    return other


def test_gantt_draws_one_bar_per_job_in_its_band() -> None:
    """Four jobs, four bars (one collection, one path each); job 2's bar starts at 5 s on
    CPU row 2, two CPUs high."""
    fig = gantt_figure(schedule(ROWS), 0.0, 40.0, 4)
    (bars,) = fig.axes[0].collections
    assert len(bars.get_paths()) == 4
    paths = [p.vertices for p in bars.get_paths()]
    x0, y0 = paths[1][:, 0].min(), paths[1][:, 1].min()
    assert (x0 * H, y0, paths[1][:, 1].max() - y0) == pytest.approx((5.0, 2.0, 2.0))


def test_diff_gantt_colours_the_delayed_job_red() -> None:
    fig = diff_gantt_figure(schedule(ROWS), later(), 0.0, 10.0, ("a", "b"))  # type: ignore[arg-type]
    ax = fig.axes[0]
    bars = ax.patches
    assert len(bars) == 8  # baseline and other per job
    shifted = [
        p
        for p in bars[4:]
        if p.get_facecolor()[:3] == pytest.approx((0.753, 0.224, 0.169), abs=0.01)
    ]
    assert len(shifted) == 1 and shifted[0].get_x() * H == pytest.approx(20.0)


def test_queue_timeline_stacks_waiting_jobs_per_queue() -> None:
    """At t=4 s two short jobs and one long job wait: the stack reaches 3."""
    fig = queue_timeline_figure(schedule(ROWS), ["short", "long"], 4)
    top = fig.axes[0]
    heights = [c.get_paths()[0].vertices[:, 1].max() for c in top.collections]
    assert max(heights) == pytest.approx(3.0)


def test_queue_timeline_rasterizes_its_areas_only_when_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The areas stay vector paths on a short schedule; past RASTER_POINTS change times
    they are drawn as an image in the SVG (a 100,000-job trace's would be 90 MB)."""
    import queuesim.reports.figures as figures

    fig = queue_timeline_figure(schedule(ROWS), ["short", "long"], 4)
    assert not any(c.get_rasterized() for c in fig.axes[0].collections)
    monkeypatch.setattr(figures, "RASTER_POINTS", 2)
    fig = queue_timeline_figure(schedule(ROWS), ["short", "long"], 4)
    assert all(c.get_rasterized() for ax in fig.axes[:2] for c in ax.collections)
    assert b"<image" in figure_bytes(lambda: fig, "svg")


def test_wait_cdf_lines_are_the_empirical_distribution() -> None:
    fig = wait_cdf_figure({"a": schedule(ROWS), "b": later()}, ["short", "long"])  # type: ignore[dict-item]
    everything = fig.axes[2]  # panels: short, long, all queues
    (a, b) = everything.get_lines()
    assert a.get_xdata().tolist() == [1.0, 5.0, 13.0, 27.0]  # a zero wait drawn at 1 s
    assert a.get_ydata().tolist() == [0.25, 0.5, 0.75, 1.0]
    assert 18.0 in b.get_xdata().tolist()


def test_fairshare_plots_the_heaviest_users_decayed_usage() -> None:
    fig = fairshare_figure(schedule(ROWS), 1e12, top=1, points=5)
    (line,) = fig.axes[0].get_lines()
    assert line.get_label() == "user 20"  # 65 CPU-s against user 10's 40
    assert line.get_ydata()[-1] * H == pytest.approx(65.0, rel=1e-6)


def test_winners_and_losers_places_each_user_by_change() -> None:
    fig = winners_losers_figure(schedule(ROWS), later(), ("a", "b"))  # type: ignore[arg-type]
    points = fig.axes[0].collections[0].get_offsets()
    changes = sorted(np.asarray(points)[:, 1] * H)
    assert changes == pytest.approx([0.0, 2.5])  # user 20: (13 -> 18) / 2 jobs
    assert [t.get_text() for t in fig.axes[0].texts] == ["20"]


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_figures_render_the_same_bytes_twice(fmt: str) -> None:
    def build() -> object:
        return gantt_figure(schedule(ROWS), 0.0, 40.0, 4)

    first = figure_bytes(build, fmt)
    assert first == figure_bytes(build, fmt) and len(first) > 1000


def test_a_report_figure_is_built_once_for_both_formats() -> None:
    """Building a figure (a Gantt chart's bars, its layout) costs as much as saving it, so
    a report's PNG and SVG come from one build, and twice the same bytes."""
    builds = []

    def build() -> object:
        builds.append(1)
        return gantt_figure(schedule(ROWS), 0.0, 40.0, 4)

    png, svg = figure_png_svg(build)
    assert len(builds) == 1
    assert png.startswith(b"\x89PNG") and b"<svg" in svg
    assert (png, svg) == figure_png_svg(build)
