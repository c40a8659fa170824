"""queuesim: replay a job trace against a site model and a scheduling policy, and report
what changes for whom.

The Python API mirrors the command line: :func:`simulate` returns a :class:`Result`
(per-job table and run facts); :func:`metrics_of` computes its metrics; :func:`compare`
runs one workload through several setups and returns a :class:`Comparison` (tables,
wait changes against a baseline, heatmaps: see :mod:`queuesim.comparison` and
:func:`queuesim.heatmap.wait_grid`).
"""

from __future__ import annotations

__version__ = "0.1.0"

from queuesim.api import metrics_of, simulate
from queuesim.comparison import Comparison, Setup, compare
from queuesim.engine import Result
from queuesim.metrics import Metrics, compute_metrics
from queuesim.site import Site, load_site
from queuesim.workload import CleaningOptions, Workload, load_workload

__all__ = [
    "CleaningOptions",
    "Comparison",
    "Metrics",
    "Result",
    "Setup",
    "Site",
    "Workload",
    "__version__",
    "compare",
    "compute_metrics",
    "load_site",
    "load_workload",
    "metrics_of",
    "simulate",
]
