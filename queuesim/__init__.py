"""queuesim: replay a job trace against a site model and a scheduling policy, and report
what changes for whom.

The Python API mirrors the command line: :func:`simulate` returns a :class:`Result`
(per-job table and run facts); :func:`metrics_of` computes its metrics; :func:`compare`
runs one workload through several setups and returns a :class:`Comparison` (tables,
wait changes against a baseline, heatmaps: see :mod:`queuesim.results.comparison` and
:func:`queuesim.results.heatmap.wait_grid`); :func:`sweep` runs the cells of a sweep spec
on Dask and returns their table (a DataFrame).

The names are imported when first used (PEP 562), so that importing a part of queuesim -
a command of :mod:`queuesim.cli`, the trace readers - does not import the simulator,
pandas, numba and every policy with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from queuesim.common.lazy_names import lazy_names
from queuesim.common.version import __version__

if TYPE_CHECKING:
    from queuesim.core.result import Result
    from queuesim.core.workload import CleaningOptions, Workload, load_workload
    from queuesim.results.comparison import Comparison
    from queuesim.results.metrics import Metrics, compute_metrics
    from queuesim.site.loading import load_site
    from queuesim.site.model import Site
    from queuesim.studies.compare import Setup, compare
    from queuesim.studies.simulate import metrics_of, simulate
    from queuesim.studies.sweep import sweep

#: where each name of the API is defined
_HOMES = {
    "CleaningOptions": "queuesim.core.workload",
    "Comparison": "queuesim.results.comparison",
    "Metrics": "queuesim.results.metrics",
    "Result": "queuesim.core.result",
    "Setup": "queuesim.studies.compare",
    "Site": "queuesim.site.model",
    "Workload": "queuesim.core.workload",
    "compare": "queuesim.studies.compare",
    "compute_metrics": "queuesim.results.metrics",
    "load_site": "queuesim.site.loading",
    "load_workload": "queuesim.core.workload",
    "metrics_of": "queuesim.studies.simulate",
    "simulate": "queuesim.studies.simulate",
    "sweep": "queuesim.studies.sweep",
}

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
    "sweep",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
