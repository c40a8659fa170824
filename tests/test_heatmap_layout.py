"""The heatmap's layout adapts to the number of queues: a one-queue site draws one panel
with a row per setup (not thin strips), forty queues draw forty rows; values are written
in the cells only when they fit (issue 18)."""

from __future__ import annotations

import numpy as np
import pytest

from queuesim.reports.heatmap_plot import (
    ANNOTATE_MAX_ROWS,
    cell_labels,
    heatmap_panels,
    render_heatmap,
    short_minutes,
)
from queuesim.results.heatmap import TraceClock, WaitGrid, parse_bin

DAY = 86400.0


def grid(queues: list[str], jobs: list[list[int]], waits_min: list[list[float]]) -> WaitGrid:
    j = np.array(jobs, dtype=np.int64)
    return WaitGrid(
        queues=tuple(queues),
        edges=np.arange(j.shape[1] + 1, dtype=np.float64) * DAY,
        jobs=j,
        wait_sum=np.array(waits_min, dtype=np.float64) * 60.0 * j,
        spec=parse_bin("day"),
        clock=TraceClock(None, None),
    )


def test_one_queue_sites_draw_one_panel_with_a_row_per_setup() -> None:
    """Two setups on a one-queue site: one panel, rows = setups with their job counts,
    values = each setup's mean wait per day."""
    grids = {
        "a": grid(["batch"], [[2, 0, 1]], [[10.0, 0.0, 90.0]]),
        "b": grid(["batch"], [[2, 0, 1]], [[20.0, 0.0, 3000.0]]),
    }
    (panel,) = heatmap_panels(grids)
    assert panel.labels == ("a (3)", "b (3)")
    np.testing.assert_allclose(panel.minutes[:, [0, 2]], [[10.0, 90.0], [20.0, 3000.0]])
    assert np.isnan(panel.minutes[:, 1]).all()  # no job submitted: no value, not 0
    (cells,) = cell_labels([panel])
    assert cells == [(0, 0, "10m"), (0, 2, "1.5h"), (1, 0, "20m"), (1, 2, "2.1d")]


def test_many_queues_keep_one_panel_per_setup_and_skip_cell_values() -> None:
    """Forty queues: one panel per setup with forty rows, too many to write values in."""
    names = [f"q{i}" for i in range(40)]
    g = grid(names, [[1, 1]] * 40, [[float(i), 1.0] for i in range(40)])
    panels = heatmap_panels({"x": g, "y": g})
    assert [len(p.labels) for p in panels] == [40, 40]
    assert ANNOTATE_MAX_ROWS < 80 and cell_labels(panels) == [[], []]
    assert render_heatmap({"x": g}, "png").startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("minutes", "text"), [(0.5, "30s"), (12.0, "12m"), (90.0, "1.5h"), (600.0, "10h")]
)
def test_cell_values_are_short(minutes: float, text: str) -> None:
    """A cell value is at most four characters, in the unit that reads best."""
    assert short_minutes(minutes) == text


def test_linear_scale_draws_a_different_image() -> None:
    """--scale linear is an option, not the same picture."""
    g = {"x": grid(["q"], [[1, 1, 1]], [[1.0, 100.0, 10000.0]])}
    assert render_heatmap(g, "png", log=False) != render_heatmap(g, "png")
