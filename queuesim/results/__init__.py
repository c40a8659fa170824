"""What is computed from a :class:`~queuesim.core.result.Result`: metrics, comparisons against a
baseline, heatmap grids, stretch bounds, and the run's output files. Knows no policy."""
