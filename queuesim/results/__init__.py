"""What is computed from a :class:`~queuesim.core.result.Result`: metrics, comparisons against a
baseline, heatmap grids, stretch bounds, and the run's output files. Knows no policy."""

# the built-in metric families register themselves with the metric registry
from queuesim.results import families as _families  # noqa: F401
