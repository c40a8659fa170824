"""The DFRS metrics of one run, for ``metrics.json`` and the run summary.

For a run on a DFRS-annotated workload (any policy: batch runs are measured the same way),
from Stillwell, Vivien and Casanova (``002``): the maximum bounded stretch (section 2), the
offline lower bound on its optimum and the degradation from that bound (sections 3 and 5.1),
the normalised underutilization (section 5.3.1), and the preemptions, migrations and the
memory they moved (section 5.2), with the average bandwidth that takes over the makespan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd

from queuesim.core.result import Result
from queuesim.results.stretch import max_stretch, normalized_underutilization
from queuesim.results.stretch_bound import DEFAULT_TAU, max_stretch_lower_bound

#: above this many jobs the stretch bound (an LP per binary-search step) is not computed
#: unless asked for: it takes seconds for 1,000 jobs and grows faster than linearly
BOUND_MAX_JOBS = 5_000


@dataclass(frozen=True)
class DfrsMetrics:
    max_stretch: float
    #: the offline lower bound on the optimal maximum stretch; None when not computed
    stretch_bound: float | None
    degradation_from_bound: float | None
    underutilization: float
    preemptions: int
    migrations: int
    resumes: int
    moved_memory_gb: float
    bandwidth_gb_per_s: float
    stretch_tau: float
    bound_seconds: float | None


def annotated_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """The DFRS job table (:data:`~.stretch_bound.JOB_COLUMNS`: submit, runtime, tasks,
    cpu_need, memory) of a job frame with the annotation columns, e.g. a workload's."""
    table = jobs[["submit", "runtime", "tasks", "cpu_need", "mem_fraction"]]
    return table.rename(columns={"mem_fraction": "memory"})


def dfrs_table(result: Result) -> pd.DataFrame:
    """The run's jobs as the DFRS metrics read them, with each job's runtime as the run
    reports it (its work)."""
    return annotated_table(result.workload.jobs.assign(runtime=result.jobs["runtime"].to_numpy()))


def dfrs_metrics(
    result: Result, *, tau: float = DEFAULT_TAU, bound: bool | None = None
) -> DfrsMetrics | None:
    """The DFRS metrics of ``result``, or None when its workload has no DFRS annotation.

    ``bound``: compute the stretch bound (True), skip it (False), or compute it for at most
    :data:`BOUND_MAX_JOBS` jobs (None).
    """
    if not result.workload.annotated:
        return None
    table = dfrs_table(result)
    end = result.jobs["end"].to_numpy()
    hosts = result.site.total_nodes
    stretch = max_stretch(table, end, tau=tau)
    lower: float | None = None
    seconds: float | None = None
    if bound or (bound is None and len(table) <= BOUND_MAX_JOBS):
        started = time.perf_counter()
        lower = max_stretch_lower_bound(table, hosts, tau=tau)
        seconds = time.perf_counter() - started
    counters = result.counters
    moved_gb = counters.get("moved_memory_mb", 0) / 1024
    makespan = float(end.max() - table["submit"].min())
    return DfrsMetrics(
        max_stretch=stretch,
        stretch_bound=lower,
        degradation_from_bound=None if lower is None else stretch / lower,
        underutilization=normalized_underutilization(table, end, hosts),
        preemptions=counters.get("preemptions", 0),
        migrations=counters.get("migrations", 0),
        resumes=counters.get("resumes", 0),
        moved_memory_gb=moved_gb,
        bandwidth_gb_per_s=moved_gb / makespan if makespan > 0 else 0.0,
        stretch_tau=tau,
        bound_seconds=seconds,
    )
