"""The metric registry: every reported metric is defined once, with its unit, and a family of
extras applies to a run by the run's own data, never by the name of its policy."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from builders import J, make_site, make_trace, simulate

from queuesim.core.result import Result
from queuesim.core.workload import prepare
from queuesim.reports.summary import metric_facts
from queuesim.results.metrics import Metrics, compute_metrics
from queuesim.results.output import metrics_document, write_run
from queuesim.results.registry import (
    BASE,
    MetricDef,
    MetricFamily,
    MetricOptions,
    Unit,
    definition,
    extra_metrics,
    families,
    register_family,
)

SITE = make_site(((2, 4),), estimate="exact", kill_at_walltime=False)
JOBS = [J(1, 0, 100, 4), J(2, 10, 50, 8), J(3, 20, 30, 2)]
#: keys of metrics.json that are the run's facts, not metrics
FACT_KEYS = {
    "queues",
    "users",
    "rejected",
    "cleaning",
    "cleaning_detail",
    "counters",
    "not_modelled",
    "run",
}


def run(policy: str, annotated: bool) -> Result:
    trace = make_trace(JOBS)
    if annotated:  # the DFRS annotation: tasks, CPU need, memory fraction per job
        frame = trace.jobs.copy()
        frame["tasks"] = np.array([1, 2, 1], dtype=np.int64)
        frame["cpu_need"] = np.array([1.0, 1.0, 0.5])
        frame["mem_fraction"] = np.array([0.5, 0.5, 0.2])
        trace = type(trace)(trace.path, trace.header, frame, ())
    return simulate(SITE, prepare(trace, SITE), policy).result


def test_the_base_family_defines_every_field_of_metrics_in_order() -> None:
    base = next(f for f in families() if f.name == BASE)
    assert [m.name for m in base.metrics] == [f.name for f in fields(Metrics)]


def test_the_base_family_computes_what_compute_metrics_computes() -> None:
    result = run("easy", annotated=False)
    base = next(f for f in families() if f.name == BASE)
    expected = compute_metrics(result.jobs, total_cpus=SITE.total_cpus, tau=5.0).as_dict()
    assert dict(base.compute(result, MetricOptions(tau=5.0))) == expected


@pytest.mark.parametrize("policy", ["easy", "fcfs", "conservative"])
def test_time_shared_metrics_apply_to_annotated_workloads_whatever_the_policy(
    policy: str,
) -> None:
    """A batch policy on a DFRS-annotated trace is measured like a DFRS policy."""
    extras = extra_metrics(run(policy, annotated=True), MetricOptions(bounds=True))
    assert list(extras)[:4] == [
        "max_stretch",
        "stretch_bound",
        "degradation_from_bound",
        "underutilization",
    ]
    assert extras["max_stretch"] >= 1.0
    assert extras["degradation_from_bound"] == pytest.approx(
        extras["max_stretch"] / extras["stretch_bound"]
    )


def test_a_run_without_annotation_has_no_extras() -> None:
    assert extra_metrics(run("easy", annotated=False)) == {}


def test_every_metric_written_to_metrics_json_is_registered(tmp_path: Path) -> None:
    result = run("easy", annotated=True)
    metrics = compute_metrics(result.jobs, total_cpus=SITE.total_cpus)
    extras = extra_metrics(result, MetricOptions(bounds=True))
    write_run(tmp_path, result, metrics, extras=extras)
    document = json.loads((tmp_path / "metrics.json").read_text())
    for key in set(document) - FACT_KEYS:
        assert definition(key).in_files, key
    assert list(document["queues"]) == ["default", "(all)"]  # per queue, then the whole run
    assert document["users"]["1"]["jobs"] == len(JOBS)  # per user, with NUWT
    assert "nuwt" in document["users"]["1"]
    # a wall-clock value never reaches a file: the same run writes the same bytes
    assert "bound_seconds" in extras and "bound_seconds" not in document


def test_the_document_keeps_the_base_metrics_first_then_the_extras_in_family_order() -> None:
    result = run("easy", annotated=True)
    metrics = compute_metrics(result.jobs, total_cpus=SITE.total_cpus)
    extras = extra_metrics(result, MetricOptions(bounds=False))
    keys = list(metrics_document(result, metrics, extras))
    base = [f.name for f in fields(Metrics)]
    assert keys[: len(base)] == base
    assert keys[len(base)] == "max_stretch"
    assert extras["stretch_bound"] is None and extras["degradation_from_bound"] is None


def test_summary_lines_write_each_value_in_its_unit_and_skip_hidden_metrics() -> None:
    facts = metric_facts(
        {
            "max_stretch": 12.3456,
            "stretch_bound": None,
            "underutilization": 0.123456,
            "preemptions": 7,
            "moved_memory_gb": 1234.56,
            "bandwidth_gb_per_s": 0.012345,
            "stretch_tau": 10.0,
        }
    )
    assert facts == {
        "max stretch": "12.35",
        "stretch bound": "not computed",
        "underutilization": "0.1235",
        "moved memory gb": "1,234.6 GB",
        "bandwidth gb per s": "0.0123 GB/s",
        "stretch tau": "10 s",
    }


def test_a_family_or_metric_name_is_registered_once() -> None:
    taken = MetricDef("awwt", "again", Unit.SECONDS)
    with pytest.raises(ValueError, match="awwt already registered"):
        register_family(MetricFamily("mine", (taken,), lambda r: True, lambda r, o: {}))
    with pytest.raises(ValueError, match="'base' is already registered"):
        register_family(MetricFamily(BASE, (), lambda r: True, lambda r, o: {}))


def test_an_unknown_metric_name_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no metric named 'nope'"):
        definition("nope")
