"""The built-in metric families, registered with :mod:`queuesim.results.registry`.

* ``base`` -- every run: the metrics of :func:`~queuesim.results.metrics.compute_metrics`
  (Klusáček et al., paper 004; Feitelson's bounded slowdown as in papers 001 and 002).
* ``time-shared`` -- runs whose workload carries a DFRS annotation (tasks, CPU need,
  memory fraction per job), whatever the policy: Stillwell, Vivien and Casanova's maximum
  bounded stretch, its offline lower bound and the degradation from it, the normalised
  underutilization, and the preemptions, migrations and memory they moved (paper 002).

The definitions live here, the computations in :mod:`.metrics` and :mod:`.time_shared`
(imported when a family is computed, so that reading the definitions costs nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from queuesim.core.result import Result
from queuesim.results.registry import BASE, MetricDef, MetricFamily, MetricOptions, Unit
from queuesim.results.registry import register_family as _register

S, RATIO, FRACTION, COUNT = Unit.SECONDS, Unit.RATIO, Unit.FRACTION, Unit.COUNT

BASE_METRICS = (
    MetricDef("jobs", "jobs in the run", COUNT),
    MetricDef("completed", "jobs that ran to their end", COUNT),
    MetricDef("killed", "jobs killed at their requested walltime", COUNT),
    MetricDef("users", "distinct users", COUNT),
    MetricDef("mean_wait", "mean wait w_j = start - submit over jobs", S),
    MetricDef("awwt", "average wait weighted by CPU-seconds: sum(e_j w_j) / sum(e_j)", S),
    MetricDef("awrt", "average response time weighted by CPU-seconds", S),
    MetricDef("awsd", "average slowdown (w_j + r_j) / r_j weighted by CPU-seconds", RATIO),
    MetricDef("mean_bounded_slowdown", "mean of max(1, (w_j + r_j) / max(r_j, tau))", RATIO),
    MetricDef("max_bounded_slowdown", "largest bounded slowdown of a job", RATIO),
    MetricDef("bounded_slowdown_tau", "tau of the bounded slowdown", S),
    MetricDef(
        "anuwt", "mean over users of NUWT_u = sum w_j / sum c_j r_j", Unit.WAIT_PER_CPU_SECOND
    ),
    MetricDef("nuwt_dev", "population deviation of NUWT_u over users", Unit.WAIT_PER_CPU_SECOND),
    MetricDef("utilization", "sum(c_j r_j) / (total CPUs x makespan)", FRACTION),
    MetricDef("makespan", "last end - first submit", S),
    MetricDef("first_submit", "first submit time", S),
    MetricDef("last_end", "last end time", S),
    MetricDef("median_wait", "median wait (50th percentile, linear interpolation)", S),
    MetricDef("p90_wait", "90th percentile of the wait (linear interpolation)", S),
    MetricDef("p99_wait", "99th percentile of the wait (linear interpolation)", S),
    MetricDef("max_wait", "longest wait", S),
    MetricDef("waited_over_1h", "share of jobs that waited more than one hour", FRACTION),
    MetricDef("waited_over_24h", "share of jobs that waited more than 24 hours", FRACTION),
)


def _base(result: Result, options: MetricOptions) -> Mapping[str, Any]:
    from queuesim.results.metrics import compute_metrics

    total_cpus = result.site.total_cpus
    return compute_metrics(result.jobs, total_cpus=total_cpus, tau=options.tau).as_dict()


TIME_SHARED_METRICS = (
    MetricDef("max_stretch", "largest bounded stretch of a job (paper 002, section 2)", RATIO),
    MetricDef(
        "stretch_bound",
        "offline lower bound on the optimal maximum stretch (paper 002, section 3); "
        "null when not computed",
        RATIO,
    ),
    MetricDef("degradation_from_bound", "max_stretch / stretch_bound (paper 002, 5.1)", RATIO),
    MetricDef("underutilization", "normalised underutilization (paper 002, 5.3.1)", FRACTION),
    MetricDef("preemptions", "jobs paused", COUNT, in_summary=False),
    MetricDef("migrations", "jobs moved to other nodes", COUNT, in_summary=False),
    MetricDef("resumes", "paused jobs resumed", COUNT, in_summary=False),
    MetricDef("moved_memory_gb", "memory moved by preemptions and migrations", Unit.GIGABYTES),
    MetricDef(
        "bandwidth_gb_per_s",
        "moved memory over the makespan",
        Unit.GIGABYTES_PER_SECOND,
    ),
    MetricDef("stretch_tau", "tau of the bounded stretch", S),
    MetricDef("bound_seconds", "time taken to compute the stretch bound", S, in_files=False),
)


def _annotated(result: Result) -> bool:
    return result.workload.annotated


def _time_shared(result: Result, options: MetricOptions) -> Mapping[str, Any]:
    from dataclasses import asdict

    from queuesim.results.time_shared import dfrs_metrics

    values = dfrs_metrics(result, tau=options.tau, bound=options.bounds)
    assert values is not None  # the family applies to annotated workloads only
    return asdict(values)


_register(MetricFamily(BASE, BASE_METRICS, lambda result: True, _base))
_register(MetricFamily("time-shared", TIME_SHARED_METRICS, _annotated, _time_shared))
