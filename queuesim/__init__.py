"""queuesim: replay a job trace against a site model and a scheduling policy, and report
what changes for whom.

The Python API mirrors the command line: :func:`simulate` returns a :class:`Result`
(per-job table and run facts); :func:`metrics_of` computes its metrics; :func:`compare`
runs one workload through several setups and returns a :class:`Comparison` (tables,
wait changes against a baseline, heatmaps: see :mod:`queuesim.results.comparison` and
:func:`queuesim.results.heatmap.wait_grid`).
"""

from __future__ import annotations

from queuesim.common.version import __version__
from queuesim.core.result import Result
from queuesim.core.workload import CleaningOptions, Workload, load_workload
from queuesim.results.comparison import Comparison
from queuesim.results.metrics import Metrics, compute_metrics
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.studies.compare import Setup, compare
from queuesim.studies.simulate import metrics_of, simulate

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
