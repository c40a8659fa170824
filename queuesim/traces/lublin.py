"""Synthetic rigid-job traces from the Lublin-Feitelson workload model.

The model is that of U. Lublin and D. G. Feitelson, "The workload on parallel
supercomputers: modeling the characteristics of rigid jobs", J. Parallel and Distributed
Computing 63(11):1105-1122, 2003. Its parameter values are the published ones, listed with
the procedure in ``shared/workloads/LUBLIN_FEITELSON_MODEL_PARAMS.md``; the code here is
written from that description. Each job gets three things:

* a **size** (nodes): serial with probability ``serial_prob``; otherwise ``2**x`` rounded,
  where ``x`` is drawn from a two-stage uniform distribution (``[u_low, u_med]`` with
  probability ``u_prob``, else ``[u_med, u_hi]``) and, for a share ``pow2_prob`` of all jobs,
  ``x`` is first rounded to a whole number so that the size is a power of two;
* a **runtime**: its natural logarithm follows a hyper-gamma distribution (two gammas mixed
  with a probability that falls linearly with the size), truncated at ``log runtime <= 12``;
* a **submit time**: the logarithm of an inter-arrival time is gamma-distributed (truncated
  at 13); the inter-arrival is then spent on a clock that runs faster in the busy hours of
  a day (see :func:`daily_cycle_weights` and :func:`_arrival_times`), which gives the daily
  cycle of arrivals.

The paper fits two job classes, *interactive* and *batch*, with their own parameters
(:data:`INTERACTIVE`, :data:`BATCH`), and a single "typeless" set (:data:`TYPELESS`).
:func:`generate` uses the typeless set by default, like the reference trace
``lublin_256.swf`` in the shared workloads; with ``job_classes=True`` it draws the two
classes as independent streams and merges them by submit time (queue field 0 =
interactive, 1 = batch).

The published size ranges are for a 128-node machine (``u_hi = 7``). For ``nodes`` other
than 128, every class's ``u_low .. u_hi`` range is shifted by ``log2(nodes) - 7`` (so the
typeless set keeps ``u_med = u_hi - 2.5``, as the authors suggest), then clamped to
``[0, log2(nodes)]``; a power-of-two size larger than the machine is rounded down to the
largest power of two that fits, and sizes never exceed ``nodes``. The runtime model is
used as published (its size dependence uses the absolute size).

Offered load. :func:`offered_load` is the total work (runtime x nodes over all jobs)
divided by the machine's capacity over the submission span, ``nodes * (last submit - first
submit)``: the arrival rate times the mean work per job, over the capacity. Multiplying
all inter-arrival times by one constant (what Stillwell, Vivien and Casanova did to make
their 0.1 ... 0.9 load levels, "Dynamic fractional resource scheduling for HPC workloads",
conference paper, section IV.C) divides this load by the same constant, so
:func:`scale_to_load` reaches the target exactly, up to rounding submit times to whole
seconds; the job mix is untouched.

Reproducibility: the same ``nodes``, ``jobs``, ``seed`` and options always give the same
frame, value for value (all draws come from one :class:`numpy.random.Generator`, in a fixed
order), hence the same bytes when written with :func:`queuesim.traces.swf.write_swf`.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, fields
from importlib.resources import files
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.traces.swf import INT_FIELDS, SWF_FIELDS

__all__ = [
    "BATCH",
    "INTERACTIVE",
    "TYPELESS",
    "ClassParams",
    "daily_cycle_weights",
    "generate",
    "header_lines",
    "offered_load",
    "scale_to_load",
    "size_range",
]

REFERENCE_NODES = 128
"""Machine size the published size parameters were fitted for (``u_hi = log2(128) = 7``)."""
MAX_LOG_RUNTIME = 12.0
"""Runtime draws with ``log(seconds)`` above this are drawn again (about 1.9 days)."""
MAX_LOG_INTERARRIVAL = 13.0
"""Inter-arrival draws with ``log(seconds)`` above this are drawn again (about 5 days)."""
BUCKET_SECONDS = 1800
"""The daily cycle has one weight per half hour."""
BUCKETS_PER_DAY = 48

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ClassParams:
    """The model parameters of one job class (names as in the parameter table)."""

    name: str
    queue: int
    """SWF queue number written for jobs of this class."""
    # job size
    serial_prob: float
    pow2_prob: float
    u_low: float
    u_med: float
    u_hi: float
    u_prob: float
    # runtime: log(runtime) ~ p*gamma(a1, b1) + (1-p)*gamma(a2, b2), p = pa*size + pb
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    # arrivals: log(inter-arrival) ~ gamma(aarr*arar, barr); daily cycle gamma(anum, bnum)
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


def _parameters() -> dict[str, list[str]]:
    """The model's parameter table (``lublin-parameters.csv`` beside this module, the
    values of the model's published parameter table): per parameter, its value for the
    batch, the interactive and the typeless job class, as written."""
    text = (files("queuesim.traces") / "lublin-parameters.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    return {row[0]: row[1:] for row in rows[1:]}


def _job_class(name: str, column: int) -> ClassParams:
    """The parameters of one job class, each converted to its field's type."""
    types = {f.name: f.type for f in fields(ClassParams)}
    values: dict[str, Any] = {
        key: int(row[column]) if types[key] == "int" else float(row[column])
        for key, row in _parameters().items()
    }
    return ClassParams(name, **values)


BATCH = _job_class("batch", 0)
INTERACTIVE = _job_class("interactive", 1)
TYPELESS = _job_class("typeless", 2)


# --------------------------------------------------------------------------- model parts


def size_range(params: ClassParams, nodes: int) -> tuple[float, float, float]:
    """``(u_low, u_med, u_hi)`` of ``params`` for a ``nodes``-node machine (log2 sizes).

    The published range is shifted by ``log2(nodes) - 7`` and clamped to
    ``0 <= u_low <= u_med <= u_hi <= log2(nodes)``.
    """
    _check_nodes(nodes)
    top = math.log2(nodes)
    shift = top - math.log2(REFERENCE_NODES)
    hi = min(max(params.u_hi + shift, 0.0), top)
    med = min(max(params.u_med + shift, 0.0), hi)
    low = min(params.u_low, med)
    return low, med, hi


def daily_cycle_weights(params: ClassParams) -> FloatArray:
    """The 48 half-hour weights of the daily arrival cycle, normalised to mean 1.

    Bucket ``b`` covers ``[b * 30 min, (b + 1) * 30 min)`` after midnight. Following the
    model, the weight of bucket ``(i - 1) mod 48`` for ``i = 11 ... 58`` is the probability
    that a gamma(``anum``, ``bnum``) variable, in half-hour units, falls within
    ``i +- 0.5``. A weight above 1 marks a busier than average half hour.
    """
    from scipy.special import gammainc  # only the generator needs scipy (slow to import)

    i = np.arange(11, 11 + BUCKETS_PER_DAY, dtype=np.float64)
    mass = gammainc(params.anum, (i + 0.5) / params.bnum) - gammainc(
        params.anum, (i - 0.5) / params.bnum
    )
    weights = np.empty(BUCKETS_PER_DAY, dtype=np.float64)
    weights[(i.astype(np.int64) - 1) % BUCKETS_PER_DAY] = mass
    result: FloatArray = weights * (BUCKETS_PER_DAY / weights.sum())
    return result


def _truncated_gamma(
    rng: np.random.Generator, shape: FloatArray, scale: FloatArray, limit: float
) -> FloatArray:
    """One gamma(shape[k], scale[k]) draw per element, drawn again while above ``limit``."""
    out = np.empty(shape.shape, dtype=np.float64)
    todo = np.arange(shape.size)
    while todo.size:
        draw = rng.gamma(shape[todo], scale[todo])
        ok = draw <= limit
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return out


def _sizes(rng: np.random.Generator, params: ClassParams, nodes: int, n: int) -> IntArray:
    low, med, hi = size_range(params, nodes)
    branch = rng.random(n)
    serial = branch <= params.serial_prob
    pow2 = ~serial & (branch <= params.serial_prob + params.pow2_prob)
    lower_stage = rng.random(n) <= params.u_prob
    v = rng.random(n)
    x = np.where(lower_stage, low + v * (med - low), med + v * (hi - med))
    x = np.where(pow2, np.minimum(np.floor(x + 0.5), math.floor(math.log2(nodes))), x)
    sizes = np.floor(np.exp2(x) + 0.5).astype(np.int64)
    sizes[serial] = 1
    result: IntArray = np.clip(sizes, 1, nodes)
    return result


def _runtimes(rng: np.random.Generator, params: ClassParams, sizes: IntArray) -> FloatArray:
    """Whole seconds, at least 1: ``round(exp(hyper-gamma draw))``."""
    n = sizes.size
    p_first = np.clip(params.pa * sizes + params.pb, 0.0, 1.0)
    log_runtime = np.empty(n, dtype=np.float64)
    todo = np.arange(n)
    # Redraw the whole hyper-gamma (branch and value) for draws above the cap: this samples
    # the hyper-gamma conditioned on log(runtime) <= MAX_LOG_RUNTIME.
    while todo.size:
        first = rng.random(todo.size) < p_first[todo]
        draw = rng.gamma(
            np.where(first, params.a1, params.a2), np.where(first, params.b1, params.b2)
        )
        ok = draw <= MAX_LOG_RUNTIME
        log_runtime[todo[ok]] = draw[ok]
        todo = todo[~ok]
    result: FloatArray = np.maximum(np.floor(np.exp(log_runtime) + 0.5), 1.0)
    return result


def _arrival_times(rng: np.random.Generator, params: ClassParams, n: int) -> FloatArray:
    """Submit times (seconds after midnight of day 0, not rounded) of ``n`` jobs.

    Each inter-arrival ``d`` seconds is a budget of ``d / 1800`` points, spent on a clock
    on which crossing half-hour bucket ``b`` costs ``weights[b]`` points: busy half hours
    (weight above 1) take more points, so for the same budget less wall-clock time
    passes there and arrivals are denser. A day costs 48 points, as many as without the
    cycle. The clock is continuous, so what one job leaves of a bucket the next one uses.
    """
    weights = daily_cycle_weights(params)
    shape = np.full(n, params.aarr * params.arar)
    scale = np.full(n, params.barr)
    gaps = np.exp(_truncated_gamma(rng, shape, scale, MAX_LOG_INTERARRIVAL))
    points = np.cumsum(gaps / BUCKET_SECONDS)
    # invert the piecewise-linear point clock, one day (48 points) at a time
    edges = np.concatenate(([0.0], np.cumsum(weights)))
    days = np.floor(points / edges[-1])
    rest = points - days * edges[-1]
    bucket = np.clip(np.searchsorted(edges, rest, side="right") - 1, 0, BUCKETS_PER_DAY - 1)
    within = np.clip((rest - edges[bucket]) / weights[bucket], 0.0, 1.0)
    result: FloatArray = (days * BUCKETS_PER_DAY + bucket + within) * BUCKET_SECONDS
    return result


def _check_nodes(nodes: int) -> None:
    if isinstance(nodes, bool) or not isinstance(nodes, int | np.integer) or nodes < 1:
        raise ValueError(f"nodes must be a positive integer, got {nodes!r}")


# --------------------------------------------------------------------------- public API


def generate(
    nodes: int,
    jobs: int,
    seed: int | np.random.Generator,
    *,
    job_classes: bool = False,
) -> pd.DataFrame:
    """A Lublin-Feitelson trace of ``jobs`` jobs for a ``nodes``-node machine.

    ``seed`` is an integer (the same integer always gives the same trace) or a
    :class:`numpy.random.Generator`, which is advanced. With ``job_classes`` the
    interactive and batch classes are drawn as two independent streams and merged by
    submit time (ties: interactive first), else the typeless parameters are used.

    The frame has the columns of :data:`queuesim.traces.swf.SWF_FIELDS`, as
    :func:`queuesim.traces.swf.read_swf` gives them, in submit order: ``job_id`` 1, 2, ...;
    ``submit`` (whole seconds after midnight of day 0; the first job arrives after one
    inter-arrival time); ``runtime`` (whole seconds, >= 1); ``alloc_procs`` and
    ``req_procs`` the size in nodes; ``status`` 1; ``queue`` 0 (typeless or interactive)
    or 1 (batch); every other field -1 (the model gives no waits, estimates, memory or
    users).
    """
    _check_nodes(nodes)
    if isinstance(jobs, bool) or not isinstance(jobs, int | np.integer) or jobs < 0:
        raise ValueError(f"jobs must be a non-negative integer, got {jobs!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    classes = (INTERACTIVE, BATCH) if job_classes else (TYPELESS,)

    submit_parts: list[FloatArray] = []
    size_parts: list[IntArray] = []
    runtime_parts: list[FloatArray] = []
    queue_parts: list[IntArray] = []
    for params in classes:
        submit_parts.append(np.floor(_arrival_times(rng, params, jobs) + 0.5))
        sizes = _sizes(rng, params, nodes, jobs)
        size_parts.append(sizes)
        runtime_parts.append(_runtimes(rng, params, sizes))
        queue_parts.append(np.full(jobs, params.queue, dtype=np.int64))
    submit = np.concatenate(submit_parts)
    # Each stream is already in time order; a stable sort merges them (earlier stream
    # first on ties), and the first ``jobs`` arrivals of the merged stream are kept.
    order = np.argsort(submit, kind="stable")[:jobs]
    size = np.concatenate(size_parts)[order]

    columns: dict[str, npt.NDArray[np.int64] | npt.NDArray[np.float64]] = {}
    for name in SWF_FIELDS:
        if name in INT_FIELDS:
            columns[name] = np.full(jobs, -1, dtype=np.int64)
        else:
            columns[name] = np.full(jobs, -1.0, dtype=np.float64)
    columns["job_id"] = np.arange(1, jobs + 1, dtype=np.int64)
    columns["submit"] = submit[order]
    columns["runtime"] = np.concatenate(runtime_parts)[order]
    columns["alloc_procs"] = size
    columns["req_procs"] = size.copy()
    columns["status"] = np.ones(jobs, dtype=np.int64)
    columns["queue"] = np.concatenate(queue_parts)[order]
    return pd.DataFrame(columns)


def offered_load(jobs: pd.DataFrame, nodes: int) -> float:
    """Total work over capacity: ``sum(runtime * alloc_procs) / (nodes * submit span)``.

    The submit span is last submit minus first submit; a trace whose jobs all arrive at
    the same time has no defined load (``ValueError``).
    """
    _check_nodes(nodes)
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    span = float(submit.max() - submit.min()) if submit.size else 0.0
    if not span > 0:
        raise ValueError("the offered load needs at least two distinct submit times")
    work = jobs["runtime"].to_numpy(dtype=np.float64) * jobs["alloc_procs"].to_numpy(
        dtype=np.float64
    )
    return float(work.sum()) / (nodes * span)


def scale_to_load(jobs: pd.DataFrame, nodes: int, load: float) -> pd.DataFrame:
    """A copy of ``jobs`` whose inter-arrival times are all multiplied by one constant so
    that :func:`offered_load` is ``load``.

    The first submit time is kept, later ones become ``first + factor * (submit - first)``
    rounded to whole seconds (the load is then exact up to that rounding: well under 1%
    for any trace spanning more than a few minutes). Order, sizes and runtimes are
    unchanged. Raises ``ValueError`` for a load that is not positive and finite, or when
    the rounded submit times would all coincide.
    """
    if not (math.isfinite(load) and load > 0):
        raise ValueError(f"load must be a positive number, got {load!r}")
    factor = offered_load(jobs, nodes) / load
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    first = float(submit.min())
    scaled = first + np.floor(factor * (submit - first) + 0.5)
    if not scaled.max() > first:
        raise ValueError(
            f"load {load} would put every job in the same second: the trace has too "
            "little work for whole-second submit times"
        )
    out = jobs.copy()
    out["submit"] = scaled
    return out


def header_lines(
    jobs: pd.DataFrame,
    *,
    nodes: int,
    seed: int,
    load: float | None = None,
    job_classes: bool = False,
) -> list[str]:
    """SWF header lines describing a generated trace (for :func:`queuesim.traces.swf.write_swf`)."""
    lines = [
        "Version: 2.2",
        "Computer: synthetic (Lublin & Feitelson 2003 rigid-job model)",
        "Acknowledge: U. Lublin and D. G. Feitelson, JPDC 63(11):1105-1122, 2003",
        f"Note: generated by queuesim.traces.lublin: nodes={nodes} jobs={len(jobs)} seed={seed} "
        f"job_classes={'yes' if job_classes else 'no'}",
    ]
    if load is not None:
        lines.append(
            f"Note: inter-arrival times scaled to an offered load of {load:g} "
            "(total work / (nodes x submit span))"
        )
    runtime = jobs["runtime"].to_numpy(dtype=np.float64)
    lines += [
        f"MaxJobs: {len(jobs)}",
        f"MaxRecords: {len(jobs)}",
        f"MaxNodes: {nodes}",
        f"MaxProcs: {nodes}",
        f"MaxRuntime: {int(runtime.max()) if runtime.size else 0}",
    ]
    if job_classes:
        lines += ["MaxQueues: 2", "Queue: 0 interactive", "Queue: 1 batch"]
    else:
        lines += ["MaxQueues: 1", "Queue: 0 typeless"]
    return lines
