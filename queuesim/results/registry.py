"""One registry of the metrics queuesim reports: what each is called, means and is measured
in, and which runs it applies to.

Metrics come in families computed together: the base family (:mod:`.metrics`: AWWT, AWRT,
AWSD, bounded slowdown, ANUWT ...) applies to every run; a family of extras, such as the
time-shared metrics of :mod:`.time_shared`, registers itself with a predicate on the
:class:`~queuesim.core.result.Result`'s own data (a DFRS-annotated workload), never on the
name of the policy that produced it. Files, summaries and reports ask the registry for the
extras of a run (:func:`extra_metrics`) and describe each value by its
:class:`MetricDef`, so a new family needs no change downstream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from queuesim.core.result import Result


class Unit(StrEnum):
    """What a metric's value counts."""

    SECONDS = "s"
    RATIO = "ratio"  #: a dimensionless factor (slowdown, stretch, degradation)
    FRACTION = "fraction"  #: a share in [0, 1]
    COUNT = "count"
    GIGABYTES = "GB"
    GIGABYTES_PER_SECOND = "GB/s"
    #: seconds of wait per CPU-second consumed (NUWT and its mean and deviation)
    WAIT_PER_CPU_SECOND = "s/CPU-s"


@dataclass(frozen=True)
class MetricDef:
    """One metric: its key in ``metrics.json`` and exports, what it means, its unit."""

    name: str
    definition: str
    unit: Unit
    #: written to files; False for a value that changes from run to run (a wall time)
    in_files: bool = True
    #: shown among a run's summary lines (False where another line already shows it)
    in_summary: bool = True

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")


@dataclass(frozen=True)
class MetricOptions:
    """What a run's reader chose: the bounded-slowdown threshold ``tau`` (seconds) and
    whether to compute costly bounds (True, False, or None: where cheap enough)."""

    tau: float = 10.0
    bounds: bool | None = None


@dataclass(frozen=True)
class MetricFamily:
    """Metrics computed together, for the runs ``applies`` accepts. ``compute`` returns
    their values by name, in the order of ``metrics`` (None: not computed)."""

    name: str
    metrics: tuple[MetricDef, ...]
    applies: Callable[[Result], bool]
    compute: Callable[[Result, MetricOptions], Mapping[str, Any]]


_FAMILIES: dict[str, MetricFamily] = {}


def register_family(family: MetricFamily) -> MetricFamily:
    """Add ``family``; a metric name may belong to one family only."""
    if family.name in _FAMILIES:
        raise ValueError(f"metric family {family.name!r} is already registered")
    taken = {m.name for f in _FAMILIES.values() for m in f.metrics}
    clash = sorted(taken & {m.name for m in family.metrics})
    if clash:
        raise ValueError(f"metric family {family.name!r}: {', '.join(clash)} already registered")
    _FAMILIES[family.name] = family
    return family


def families() -> list[MetricFamily]:
    """Every registered family, in registration order (the built-in ones, base first, are
    registered by :mod:`queuesim.results.families` when the package is imported)."""
    return list(_FAMILIES.values())


def definition(name: str) -> MetricDef:
    """The definition of the metric ``name``; KeyError if no family has it."""
    for family in families():
        for metric in family.metrics:
            if metric.name == name:
                return metric
    raise KeyError(f"no metric named {name!r}")


def extra_metrics(result: Result, options: MetricOptions | None = None) -> dict[str, Any]:
    """The values of every family beyond the base one that applies to ``result``, by name
    (the base metrics are :func:`~.metrics.compute_metrics`'s)."""
    options = options or MetricOptions()
    values: dict[str, Any] = {}
    for family in families():
        if family.name != BASE and family.applies(result):
            values.update(family.compute(result, options))
    return values


def file_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` without those that are not written to files."""
    return {k: v for k, v in values.items() if definition(k).in_files}


#: the family every run has
BASE = "base"
