"""DFRS job annotations: tasks, CPU need and memory per task, and week-long instances.

Dynamic fractional resource scheduling (DFRS) sees a job as ``tasks`` identical tasks, each
placed on one node, each with a **CPU need** (the share of a node's CPU it uses at full
speed, in (0, 1]) and a **memory fraction** (the share of a node's memory it holds, in
[0, 1]). Batch traces give neither, so Stillwell, Vivien and Casanova add them, in
"Dynamic fractional resource scheduling for HPC workloads" (conference version, section IV.C;
paper 000 in ``shared/papers``) and in the journal version "Dynamic fractional resource
scheduling versus batch scheduling" (IEEE TPDS 2012, section 5; paper 002):

* :func:`annotate_synthetic` - Lublin-Feitelson traces (:mod:`queuesim.traces.lublin`) on
  quad-core nodes: a job of ``n`` nodes has ``n`` tasks; a one-task job is sequential
  (CPU need 1/4, one core of four), every other task multi-threaded and CPU-bound (CPU
  need 1); the memory model follows Setia et al.: 55% of the jobs have tasks that need
  10% of a node's memory, the others ``10 x %`` with ``x`` uniform on ``{2, ..., 10}``.
  The job's processor count becomes the CPUs a batch scheduler gives it, ``tasks x
  cpu_need x node_cpus`` (see *Processors* below).
* :func:`annotate_hpc2n` - the HPC2N trace (120 dual-core nodes with 2 GB of memory):
  memory per processor is the larger of requested and used memory as a fraction of the
  node's 2 GB, at least 10% (and 10% when the trace gives neither); a job with an even
  processor count and less than 50% memory per processor runs ``procs / 2`` two-threaded
  tasks (CPU need 1, twice the memory), any other job ``procs`` single-threaded tasks (CPU
  need 1/2, the memory as it is).
* :func:`split_weeks` - the week-long instances the HPC2N trace is cut into.
* :func:`synthetic_trace` - generate, scale to a load and annotate in one call, as for the
  papers' synthetic trace sets; :func:`write_synthetic_trace` also writes it, and
  :func:`offered_node_load` gives the load it was scaled to.

Processors. The papers replay the same synthetic trace under batch policies (FCFS, EASY)
on the same platform, 128 quad-core nodes (512 cores), as under DFRS. A batch scheduler
hands out cores: a sequential task one core, a multi-threaded task a whole node. So the SWF
processor count of a synthetic job (``alloc_procs`` and ``req_procs``) is ``tasks x
cpu_need x node_cpus``: 1 for a one-task job, ``n x node_cpus`` for a job of ``n`` tasks.
The HPC2N annotation keeps the same identity with the trace's own processors
(``tasks x cpu_need x 2``). The Lublin model's size in nodes stays available as ``tasks``;
the offered load a trace is scaled to counts one node per task
(:func:`offered_node_load`), whereas :func:`queuesim.traces.lublin.offered_load` on the annotated
frame and ``nodes x node_cpus`` gives the load in cores a batch scheduler sees (lower, since
a sequential job takes one core rather than a node).

File representation. SWF has no field for a CPU need or a memory fraction, and its memory
fields are per processor, which a task is not. So an annotated trace is two files:

* ``NAME`` - an ordinary SWF file (any SWF tool can read it) with the frame's
  :data:`~queuesim.traces.swf.SWF_FIELDS` as they are, plus the header line
  ``; QueuesimDfrs: annotation=NAME.dfrs.csv node_cpus=4`` (and ``node_memory_kb=...``
  when known) that names the companion file;
* ``NAME.dfrs.csv`` (``.gz`` dropped from ``NAME`` first) - the annotation: a CSV file with
  the header row ``job_id,tasks,cpu_need,mem_fraction`` and one row per job line of the
  SWF file, in the same order; floats are written in Python's shortest round-trip form, so
  reading back gives the very same values.

:func:`write_annotated` writes both, :func:`read_annotated` reads both back and checks that
they match job for job. The annotated frame itself is the SWF frame plus the columns
``tasks`` (int64), ``cpu_need`` and ``mem_fraction`` (float64).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.common.atomic import atomic_write_text
from queuesim.common.errors import WorkloadError
from queuesim.common.files import read_bytes
from queuesim.traces import lublin
from queuesim.traces.swf import SwfHeader, read_swf, write_swf

__all__ = [
    "ANNOTATION_COLUMNS",
    "HPC2N_NODES",
    "HPC2N_NODE_CPUS",
    "HPC2N_NODE_MEMORY_KB",
    "SYNTHETIC_NODE_CPUS",
    "WEEK_SECONDS",
    "AnnotatedTrace",
    "WeekInstance",
    "annotate_hpc2n",
    "annotate_synthetic",
    "annotation_path",
    "offered_node_load",
    "read_annotated",
    "split_weeks",
    "synthetic_trace",
    "write_annotated",
    "write_synthetic_trace",
]

ANNOTATION_COLUMNS = ("tasks", "cpu_need", "mem_fraction")
"""Columns an annotation adds to a job frame."""

SYNTHETIC_NODE_CPUS = 4
"""Cores per node assumed for synthetic traces (paper 000, section IV.C: quad-core)."""
HPC2N_NODES = 120
"""Nodes of the HPC2N cluster ("Seth"): 120 dual-core nodes (paper 000, section IV.C)."""
HPC2N_NODE_CPUS = 2
HPC2N_NODE_MEMORY_KB = 2 * 1024 * 1024
"""Memory of an HPC2N node: 2 GB, in the SWF unit (KB)."""
WEEK_SECONDS = 7 * 24 * 3600

MIN_MEMORY_FRACTION = 0.1
"""Smallest memory fraction per task in both annotations (paper 000, section IV.C)."""
_SMALL_JOB_SHARE = 0.55
_HEADER_KEY = "QueuesimDfrs"
_SIDECAR_SUFFIX = ".dfrs.csv"
_SIDECAR_HEADER = "job_id,tasks,cpu_need,mem_fraction"
_SETTING = re.compile(r"(\w+)=(\S+)")


# --------------------------------------------------------------------------- annotations


def annotate_synthetic(
    jobs: pd.DataFrame,
    seed: int | np.random.Generator,
    *,
    node_cpus: int = SYNTHETIC_NODE_CPUS,
) -> pd.DataFrame:
    """A copy of ``jobs`` (a synthetic trace) with ``tasks``, ``cpu_need``, ``mem_fraction``.

    As in paper 000, section IV.C: ``tasks`` is the job size in nodes, ``alloc_procs`` of
    the Lublin-Feitelson frame (one task per node); a one-task job is sequential with CPU
    need ``1 / node_cpus``, other tasks are multi-threaded with CPU need 1 (all CPU-bound,
    the pessimistic case for DFRS); the memory fraction of a job's tasks is 0.1 with
    probability 0.55, else ``x / 10`` with ``x`` uniform on ``{2, ..., 10}``. ``seed`` (an
    integer, or a Generator that is advanced) fixes the memory draws: the same seed gives
    the same annotation.

    ``alloc_procs`` and ``req_procs`` of the copy are then the cores a batch scheduler
    gives the job, ``tasks x cpu_need x node_cpus``: 1 for a sequential job, ``tasks x
    node_cpus`` otherwise (module docstring, *Processors*). Since that replaces the size
    in nodes, a frame that is already annotated is refused (``ValueError``).
    """
    if node_cpus < 1:
        raise ValueError(f"node_cpus must be at least 1, got {node_cpus!r}")
    done = [c for c in ANNOTATION_COLUMNS if c in jobs.columns]
    if done:
        raise ValueError(
            f"the frame already has the annotation column {done[0]!r}: annotate_synthetic "
            "takes the Lublin-Feitelson frame, whose alloc_procs is the size in nodes"
        )
    tasks = jobs["alloc_procs"].to_numpy(dtype=np.int64)
    if (tasks < 1).any():
        first = int(np.argmax(tasks < 1))
        raise ValueError(f"job at position {first} has no size (alloc_procs {tasks[first]})")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n = len(jobs)
    small = rng.random(n) < _SMALL_JOB_SHARE
    tenths = rng.integers(2, 11, size=n)
    out = jobs.copy()
    # tasks x cpu_need x node_cpus, in integers: one core, or node_cpus cores per task
    procs = np.where(tasks == 1, 1, tasks * node_cpus).astype(np.int64)
    out["alloc_procs"] = procs
    out["req_procs"] = procs.copy()
    out["tasks"] = tasks
    out["cpu_need"] = np.where(tasks == 1, 1.0 / node_cpus, 1.0)
    out["mem_fraction"] = np.where(small, MIN_MEMORY_FRACTION, tenths / 10.0)
    return out


def annotate_hpc2n(
    jobs: pd.DataFrame,
    *,
    node_memory_kb: float = HPC2N_NODE_MEMORY_KB,
) -> pd.DataFrame:
    """A copy of ``jobs`` (HPC2N SWF fields) with ``tasks``, ``cpu_need``, ``mem_fraction``.

    The rules of paper 000, section IV.C (no randomness, so no seed), on 2-core nodes:

    * processors: ``req_procs``, or ``alloc_procs`` where no request is given (as in
      :func:`queuesim.core.workload.prepare`); a job with neither is an error;
    * memory per processor: ``max(req_memory, used_memory) / node_memory_kb`` (both are KB
      per processor in SWF), raised to at least 0.1; 0.1 when neither is given (2,137 jobs
      of the 2.2 cleaned log), and capped at 1;
    * an even processor count with memory per processor below 0.5: ``procs / 2`` tasks of
      CPU need 1 (two threads on the two cores) and twice the memory per processor;
    * otherwise (odd count, or 0.5 and more): ``procs`` tasks of CPU need 0.5 (one core)
      with the memory per processor.
    """
    if not node_memory_kb > 0:
        raise ValueError(f"node_memory_kb must be positive, got {node_memory_kb!r}")
    requested = jobs["req_procs"].to_numpy(dtype=np.int64)
    procs = np.where(requested > 0, requested, jobs["alloc_procs"].to_numpy(dtype=np.int64))
    if (procs < 1).any():
        first = int(np.argmax(procs < 1))
        raise ValueError(
            f"job {int(jobs['job_id'].iloc[first])} gives neither requested nor allocated "
            "processors"
        )
    memory_kb = np.maximum(
        jobs["req_memory"].to_numpy(dtype=np.float64),
        jobs["used_memory"].to_numpy(dtype=np.float64),
    )
    per_proc = np.clip(memory_kb / node_memory_kb, MIN_MEMORY_FRACTION, 1.0)
    paired = (procs % 2 == 0) & (per_proc < 0.5)
    out = jobs.copy()
    out["tasks"] = np.where(paired, procs // 2, procs).astype(np.int64)
    out["cpu_need"] = np.where(paired, 1.0, 0.5)
    out["mem_fraction"] = np.where(paired, 2.0 * per_proc, per_proc)
    return out


# --------------------------------------------------------------------------- weeks


@dataclass(frozen=True)
class WeekInstance:
    """The jobs submitted during one week of a trace."""

    index: int
    """Week number: the week covers ``[origin + index * week, origin + (index + 1) * week)``
    of the original trace's time."""
    start: float
    """Start of the week in the original trace's time: add it to a ``submit`` of
    :attr:`jobs` to get the original submit time."""
    jobs: pd.DataFrame
    """The week's jobs, ``submit`` re-based so that the week starts at time 0."""


def split_weeks(
    jobs: pd.DataFrame, *, origin: float = 0.0, week: float = WEEK_SECONDS
) -> list[WeekInstance]:
    """Cut a trace into week-long instances, as paper 000 (section IV.C) does with HPC2N.

    A job belongs to the week in which it is **submitted**, whole, even when it waits or
    runs past the end of that week (paper 002 simulates "the weekly submission activity");
    so every job is in exactly one instance and no job is cut. Weeks start at ``origin``
    (default 0, the trace's own time origin, i.e. its ``UnixStartTime``: this gives the
    papers' 182 weeks for HPC2N); each instance's ``submit`` is re-based by subtracting its
    week's start, so it lies in ``[0, week)``; other columns and the job order are kept.
    Only weeks with at least one job are returned, in time order; jobs submitted before
    ``origin`` are an error.
    """
    if not (math.isfinite(week) and week > 0):
        raise ValueError(f"week must be a positive number of seconds, got {week!r}")
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    if (submit < origin).any():
        raise ValueError(f"{int((submit < origin).sum())} jobs are submitted before the origin")
    index = np.floor((submit - origin) / week).astype(np.int64)
    instances: list[WeekInstance] = []
    for number in np.unique(index).tolist():
        rows = index == number
        start = origin + number * week
        part = jobs.loc[rows].reset_index(drop=True)
        part["submit"] = submit[rows] - start
        instances.append(WeekInstance(index=int(number), start=start, jobs=part))
    return instances


# --------------------------------------------------------------------------- synthetic


class SyntheticOptions(TypedDict, total=False):
    """How :func:`synthetic_trace` draws a trace: ``load`` to scale to (None: as drawn),
    with the model's two ``job_classes`` (else one), on nodes of ``node_cpus`` cores
    (default :data:`SYNTHETIC_NODE_CPUS`)."""

    load: float | None
    job_classes: bool
    node_cpus: int


def _synthetic_options(options: SyntheticOptions) -> tuple[float | None, bool, int]:
    """``load``, ``job_classes`` and ``node_cpus`` of ``options``, defaults filled in."""
    return (
        options.get("load"),
        options.get("job_classes", False),
        options.get("node_cpus", SYNTHETIC_NODE_CPUS),
    )


def synthetic_trace(
    nodes: int, jobs: int, seed: int, **options: Unpack[SyntheticOptions]
) -> pd.DataFrame:
    """A DFRS-annotated Lublin-Feitelson trace: generate, scale to ``load``, annotate.

    :func:`queuesim.traces.lublin.generate` draws the jobs; with ``load`` (e.g. 0.1 ... 0.9) the
    inter-arrival times are scaled by :func:`queuesim.traces.lublin.scale_to_load` (the load in
    nodes, :func:`offered_node_load`); then :func:`annotate_synthetic` adds tasks, CPU
    needs and memory and sets the processors to ``tasks x cpu_need x node_cpus``. The
    seed is split into two independent streams, one for the model and one for the
    annotation, so the same seed gives the same jobs and the same annotation at every load.
    """
    load, job_classes, node_cpus = _synthetic_options(options)
    model_seed, annotation_seed = np.random.SeedSequence(seed).spawn(2)
    frame = lublin.generate(nodes, jobs, np.random.default_rng(model_seed), job_classes=job_classes)
    if load is not None:
        frame = lublin.scale_to_load(frame, nodes, load)
    return annotate_synthetic(frame, np.random.default_rng(annotation_seed), node_cpus=node_cpus)


def write_synthetic_trace(
    path: str | Path, nodes: int, jobs: int, seed: int, **options: Unpack[SyntheticOptions]
) -> pd.DataFrame:
    """:func:`synthetic_trace`, written to ``path`` (and its annotation file) by
    :func:`write_annotated` with a header describing the model; returns the frame.

    The header's ``MaxProcs`` is the platform's cores, ``nodes x node_cpus``, the unit of
    the processor fields."""
    frame = synthetic_trace(nodes, jobs, seed, **options)
    load, job_classes, node_cpus = _synthetic_options(options)
    header = [
        f"MaxProcs: {nodes * node_cpus}" if line.startswith("MaxProcs:") else line
        for line in lublin.header_lines(
            frame, nodes=nodes, seed=seed, load=load, job_classes=job_classes
        )
    ]
    header += [
        "Note: DFRS annotation (Stillwell, Vivien, Casanova, DFRS for HPC workloads, IV.C): "
        f"{node_cpus}-core nodes, one task per node of the job",
        f"Note: processors = tasks x cpu_need x {node_cpus}, the cores a batch scheduler "
        f"gives the job: 1 for a sequential job, {node_cpus} per task otherwise; the offered "
        "load counts one node per task",
    ]
    write_annotated(path, frame, node_cpus=node_cpus, header_lines=header)
    return frame


def offered_node_load(jobs: pd.DataFrame, nodes: int) -> float:
    """The offered load of an annotated synthetic trace in the model's unit, one node per
    task: :func:`queuesim.traces.lublin.offered_load` with the job sizes taken from ``tasks``
    (the load :func:`synthetic_trace` scales to; ``alloc_procs`` now counts cores)."""
    if "tasks" not in jobs.columns:
        raise ValueError("the frame has no column 'tasks'; annotate it first")
    return lublin.offered_load(jobs.assign(alloc_procs=jobs["tasks"]), nodes)


# --------------------------------------------------------------------------- files


@dataclass(frozen=True, eq=False)
class AnnotatedTrace:
    """An annotated trace read back by :func:`read_annotated`."""

    jobs: pd.DataFrame
    """The SWF frame of :func:`queuesim.traces.swf.read_swf` plus :data:`ANNOTATION_COLUMNS`."""
    node_cpus: int
    node_memory_kb: int | None
    header: SwfHeader


def annotation_path(path: str | Path) -> Path:
    """The annotation file that goes with SWF file ``path``: ``x.swf`` and ``x.swf.gz``
    both give ``x.swf.dfrs.csv``."""
    path = Path(path)
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    return path.with_name(name + _SIDECAR_SUFFIX)


def write_annotated(
    path: str | Path,
    jobs: pd.DataFrame,
    *,
    node_cpus: int,
    node_memory_kb: int | None = None,
    header_lines: Sequence[str] = (),
) -> Path:
    """Write an annotated frame as ``path`` (SWF) and :func:`annotation_path` (CSV).

    The SWF file gets ``header_lines`` and then the ``QueuesimDfrs`` line naming the
    annotation file and the node's cores (and memory, when given); see the module
    docstring for both formats. Values are checked first (``ValueError`` naming the job):
    ``tasks >= 1``, ``0 < cpu_need <= 1``, ``0 <= mem_fraction <= 1``. Both files are
    written atomically and deterministically. Returns the annotation file's path.
    """
    path = Path(path)
    missing = [c for c in ("job_id", *ANNOTATION_COLUMNS) if c not in jobs.columns]
    if missing:
        raise ValueError(f"the frame has no column {missing[0]!r}; annotate it first")
    job_id = jobs["job_id"].to_numpy(dtype=np.int64)
    tasks = jobs["tasks"].to_numpy(dtype=np.int64)
    cpu_need = jobs["cpu_need"].to_numpy(dtype=np.float64)
    mem = jobs["mem_fraction"].to_numpy(dtype=np.float64)
    problem = _check_annotation(tasks, cpu_need, mem)
    if problem is not None:
        row, what = problem
        raise ValueError(f"job {int(job_id[row])}: {what}")
    sidecar = annotation_path(path)
    settings = f"annotation={sidecar.name} node_cpus={int(node_cpus)}"
    if node_memory_kb is not None:
        settings += f" node_memory_kb={int(node_memory_kb)}"
    lines = [
        f"{j},{t},{c!r},{m!r}\n"
        for j, t, c, m in zip(
            job_id.tolist(), tasks.tolist(), cpu_need.tolist(), mem.tolist(), strict=True
        )
    ]
    atomic_write_text(sidecar, _SIDECAR_HEADER + "\n" + "".join(lines))
    write_swf(path, jobs, [*header_lines, f"{_HEADER_KEY}: {settings}"])
    return sidecar


def read_annotated(path: str | Path) -> AnnotatedTrace:
    """Read an annotated trace written by :func:`write_annotated`.

    The SWF file must have the ``QueuesimDfrs`` header line; its annotation file is looked
    for beside it. Both must list the same jobs in the same order, with valid values;
    anything else is a :class:`~queuesim.common.errors.WorkloadError` naming the file and line.
    """
    path = Path(path)
    trace = read_swf(path)
    value = trace.header.fields.get(_HEADER_KEY)
    if value is None:
        raise WorkloadError(
            f"{path}: no '; {_HEADER_KEY}:' header line, so no DFRS annotation is known for "
            "this trace (annotate it with queuesim.traces.dfrs_annotation first)"
        )
    settings = dict(_SETTING.findall(value))
    try:
        node_cpus = int(settings["node_cpus"])
        memory = settings.get("node_memory_kb")
        node_memory_kb = None if memory is None else int(memory)
        sidecar = path.with_name(settings["annotation"])
    except (KeyError, ValueError):
        raise WorkloadError(
            f"{path}: the '{_HEADER_KEY}:' header line must read 'annotation=FILE "
            f"node_cpus=N [node_memory_kb=M]', found {value!r}"
        ) from None

    data = read_bytes(sidecar, "DFRS annotation file")
    first_line = data.split(b"\n", 1)[0].strip().decode("utf-8", errors="replace")
    if first_line != _SIDECAR_HEADER:
        raise WorkloadError(f"{sidecar}:1: expected the header {_SIDECAR_HEADER!r}")
    try:
        # floats are read as text and converted by numpy, which rounds correctly, so
        # the shortest round-trip text written by write_annotated gives the same value
        table = pd.read_csv(
            io.BytesIO(data),
            dtype={"job_id": np.int64, "tasks": np.int64, "cpu_need": str, "mem_fraction": str},
            na_filter=False,
        )
        cpu_need = table["cpu_need"].to_numpy(dtype=str).astype(np.float64)
        mem = table["mem_fraction"].to_numpy(dtype=str).astype(np.float64)
    except (ValueError, pd.errors.ParserError) as exc:
        raise WorkloadError(f"{sidecar}: not a valid annotation table ({exc})") from None
    jobs = trace.jobs
    if len(table) != len(jobs):
        raise WorkloadError(
            f"{sidecar}: {len(table)} annotation rows for the {len(jobs)} jobs of {path.name}"
        )
    job_id = jobs["job_id"].to_numpy(dtype=np.int64)
    mismatch = np.flatnonzero(table["job_id"].to_numpy(dtype=np.int64) != job_id)
    if mismatch.size:
        row = int(mismatch[0])
        raise WorkloadError(
            f"{sidecar}:{row + 2}: job {int(table['job_id'].iloc[row])} where {path.name} "
            f"line {int(jobs['line'].iloc[row])} has job {int(job_id[row])}"
        )
    tasks = table["tasks"].to_numpy(dtype=np.int64)
    problem = _check_annotation(tasks, cpu_need, mem)
    if problem is not None:
        row, what = problem
        raise WorkloadError(f"{sidecar}:{row + 2}: {what}")
    out = jobs.copy()
    out["tasks"] = tasks
    out["cpu_need"] = cpu_need
    out["mem_fraction"] = mem
    return AnnotatedTrace(
        jobs=out, node_cpus=node_cpus, node_memory_kb=node_memory_kb, header=trace.header
    )


def _check_annotation(
    tasks: npt.NDArray[np.int64],
    cpu_need: npt.NDArray[np.float64],
    mem: npt.NDArray[np.float64],
) -> tuple[int, str] | None:
    """The first row with an invalid value and what is wrong, or None."""
    checks = (
        (tasks >= 1, "tasks must be at least 1, found {}", tasks),
        ((cpu_need > 0) & (cpu_need <= 1), "cpu_need must be in (0, 1], found {}", cpu_need),
        ((mem >= 0) & (mem <= 1), "mem_fraction must be in [0, 1], found {}", mem),
    )
    for ok, message, values in checks:
        if not ok.all():
            row = int(np.argmin(ok))
            return row, message.format(values[row])
    return None
