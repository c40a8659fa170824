"""From the jobs a batch system's log records to the trace every reader returns.

The PBS and Slurm readers (:mod:`queuesim.traces.pbs`, :mod:`queuesim.traces.slurm`) each
parse their format into one :class:`LogJobs` - plain per-job arrays in the log's own terms
(epoch times, names, totals per job) - and :func:`log_trace` turns it into an
:class:`~queuesim.traces.swf.SwfTrace`: the 18 SWF columns in SWF units, so that cleaning
and routing (:mod:`queuesim.core.workload`) treat every format alike, and the columns of
:data:`LOG_COLUMNS`, which keep what SWF cannot say (names, requirements, the log's ids).

SWF columns from a log:

* ``job_id``: 1, 2, ... in the order of :class:`LogJobs` (the log's own id is ``source_id``);
* ``submit``: seconds since the earliest submit time, which becomes the header's
  ``UnixStartTime``; ``wait`` = start - submit and ``runtime`` = end - start (-1 when the
  job never started);
* ``alloc_procs`` / ``req_procs``: CPUs allocated / requested (-1 unknown);
* ``req_time``: the requested walltime in seconds (-1 unknown or unlimited);
* ``req_memory`` / ``used_memory``: KB (1024 bytes) per CPU, from the job's total over the
  requested (else allocated) CPUs (-1 unknown);
* ``avg_cpu_time``: CPU time over allocated CPUs (-1 unknown);
* ``status``: SWF's codes, 1 completed, 0 failed (or killed), 5 cancelled;
* ``user``, ``group``, ``queue``: numbers from 1 in the order names first appear (-1 for
  an empty name); the header has one ``; Queue: n name`` line per queue, and comment lines
  ``; User: n name`` and ``; Group: n name``, so that a converted SWF keeps the mapping;
* ``executable``, ``partition``, ``prev_job``, ``think_time``: -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from queuesim.common.text_arrays import pandas_text
from queuesim.traces.swf import (
    INT_FIELDS,
    SWF_FIELDS,
    BadLine,
    SwfTrace,
    parse_header,
    reader_notes,
)

__all__ = [
    "LOG_COLUMNS",
    "STATUS_CANCELLED",
    "STATUS_COMPLETED",
    "STATUS_FAILED",
    "LogJobs",
    "log_trace",
    "numbered",
    "text_column",
]

STATUS_FAILED = 0
STATUS_COMPLETED = 1
STATUS_CANCELLED = 5

LOG_COLUMNS: tuple[str, ...] = (
    "source_id",
    "queue_name",
    "user_name",
    "group_name",
    "account",
    "eligible",
    "nodes",
    "ppn",
    "properties",
    "exclusive",
    "gpus",
    "exit_status",
    "state",
    "hosts",
)
"""The columns a log reader adds after ``line`` (see :class:`LogJobs` for each)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
TextArray = npt.NDArray[np.object_]
#: a text column: an object array of str, or a categorical (see :func:`text_column`)
Text = npt.NDArray[np.object_] | pd.Categorical


@dataclass
class LogJobs:
    """The jobs of a log, one entry per job, in the log's terms; unknown numbers are NaN
    (floats) or 0 (counts), unknown names ``""``."""

    line: IntArray  #: 1-based line of the record that completes the job
    #: the job id as the log writes it (``123[4].server``, ``77_3``); Arrow strings too
    source_id: Text | pa.Array
    submit: FloatArray  #: epoch seconds
    eligible: FloatArray  #: epoch seconds the job became eligible to run (NaN unknown)
    start: FloatArray  #: epoch seconds (NaN: never started)
    end: FloatArray  #: epoch seconds (NaN: unknown)
    req_walltime: FloatArray  #: seconds (NaN: unknown or unlimited)
    req_cpus: IntArray
    alloc_cpus: IntArray
    req_mem_kb: FloatArray  #: whole job
    used_mem_kb: FloatArray  #: whole job
    cpu_time: FloatArray  #: seconds, all CPUs
    status: IntArray  #: SWF status (STATUS_*)
    exit_status: IntArray
    state: Text  #: the log's own word for how the job ended
    user_name: Text
    group_name: Text
    account: Text
    queue_name: Text
    nodes: IntArray  #: nodes requested (else used)
    ppn: IntArray  #: CPUs on each node when the request fixes it, else 0
    properties: Text  #: required node properties joined by ``:``; ``^p``: must lack p
    exclusive: npt.NDArray[np.bool_]  #: whole nodes asked for
    gpus: IntArray  #: GPUs, whole job
    hosts: Text  #: the nodes it ran on, ``+``-joined host names (``""``: unknown)
    notes: pd.DataFrame = field(default_factory=reader_notes)
    bad_lines: tuple[BadLine, ...] = ()


def text_column(
    codes: npt.NDArray[np.integer[Any]], values: Sequence[str] | npt.NDArray[np.object_]
) -> pd.Categorical:
    """A text column from ``codes`` into ``values`` (-1: ``""``; values may repeat):
    categorical, so that a million rows of a few hundred names cost a million small
    integers."""
    table = np.empty(len(values) + 1, dtype=object)
    table[:-1] = values
    table[-1] = ""
    inverse, categories = pd.factorize(table)
    column: pd.Categorical = pd.Categorical.from_codes(
        inverse[codes].astype(np.int64), categories=pd.Index(categories), validate=False
    )
    return column


def _text(values: Text) -> pd.Categorical:
    if isinstance(values, pd.Categorical):
        return values
    return pd.Categorical(np.asarray(values, dtype=object))


def numbered(names: Text) -> tuple[IntArray, list[str]]:
    """Numbers from 1 for names in the order they first appear (-1 for ``""``), and the
    names in number order."""
    column = _text(names)
    present = np.unique(column.codes[column.codes >= 0], return_index=False)
    first = np.full(len(column.categories), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, column.codes, np.arange(len(column.codes), dtype=np.int64))
    by_appearance = present[np.argsort(first[present], kind="mergesort")]
    rank = np.zeros(len(column.categories), dtype=np.int64)
    rank[by_appearance] = np.arange(by_appearance.shape[0])
    codes = rank[column.codes]
    uniques = column.categories[by_appearance]
    order = [str(u) for u in uniques]
    numbers = codes.astype(np.int64) + 1
    if "" in order:
        empty = order.index("") + 1
        numbers = np.where(numbers == empty, -1, np.where(numbers > empty, numbers - 1, numbers))
        order.remove("")
    return numbers.astype(np.int64), order


def _ids(values: Text | pa.Array) -> Any:
    """The ``source_id`` column: what pandas makes of an array of str (its string dtype,
    object before pandas 3), built from Arrow strings without a Python object per id."""
    if isinstance(values, pa.Array) and len(values):
        return pandas_text(values)
    return np.asarray(values, dtype=object)


def _or(values: FloatArray, missing: float = -1.0) -> FloatArray:
    return np.where(np.isfinite(values), values, missing)


def log_trace(path: Path, jobs: LogJobs, log_format: str) -> SwfTrace:
    """The trace of ``jobs`` read from ``path`` in ``log_format`` (module docstring)."""
    n = jobs.line.shape[0]
    known_submit = jobs.submit[np.isfinite(jobs.submit)]
    origin = int(known_submit.min()) if known_submit.size else 0
    user_text, group_text, queue_text = (
        _text(jobs.user_name),
        _text(jobs.group_name),
        _text(jobs.queue_name),
    )
    users, user_names = numbered(user_text)
    groups, group_names = numbered(group_text)
    queues, queue_names = numbered(queue_text)
    cpus_for_memory = np.where(jobs.req_cpus > 0, jobs.req_cpus, jobs.alloc_cpus).astype(float)
    per_cpu = np.where(cpus_for_memory > 0, cpus_for_memory, np.nan)
    alloc = np.where(jobs.alloc_cpus > 0, jobs.alloc_cpus, np.nan).astype(float)
    started = np.isfinite(jobs.start)
    values = {
        "job_id": np.arange(1, n + 1, dtype=np.int64),
        "submit": _or(jobs.submit - origin),
        "wait": _or(np.where(started, jobs.start - jobs.submit, np.nan)),
        "runtime": _or(np.where(started, jobs.end - jobs.start, np.nan)),
        "alloc_procs": np.where(jobs.alloc_cpus > 0, jobs.alloc_cpus, -1),
        "avg_cpu_time": _or(jobs.cpu_time / alloc),
        "used_memory": _or(jobs.used_mem_kb / per_cpu),
        "req_procs": np.where(jobs.req_cpus > 0, jobs.req_cpus, -1),
        "req_time": _or(np.where(jobs.req_walltime > 0, jobs.req_walltime, np.nan)),
        "req_memory": _or(np.where(jobs.req_mem_kb > 0, jobs.req_mem_kb, np.nan) / per_cpu),
        "status": jobs.status,
        "user": users,
        "group": groups,
        "queue": queues,
    }
    columns: dict[str, npt.NDArray[np.int64] | npt.NDArray[np.float64]] = {}
    for name in SWF_FIELDS:
        column = values.get(name)
        if name in INT_FIELDS:
            columns[name] = (
                np.full(n, -1, dtype=np.int64)
                if column is None
                else np.asarray(column, dtype=np.int64)
            )
        else:
            columns[name] = np.full(n, -1.0) if column is None else column
    columns_all: dict[str, Any] = dict(columns)
    columns_all["line"] = np.asarray(jobs.line, dtype=np.int64)
    columns_all.update(
        # ids are distinct: a categorical would only add a code per row
        source_id=_ids(jobs.source_id),
        queue_name=queue_text,
        user_name=user_text,
        group_name=group_text,
        account=_text(jobs.account),
        eligible=_or(jobs.eligible - origin),
        nodes=np.asarray(jobs.nodes, dtype=np.int64),
        ppn=np.asarray(jobs.ppn, dtype=np.int64),
        properties=_text(jobs.properties),
        exclusive=np.asarray(jobs.exclusive, dtype=bool),
        gpus=np.asarray(jobs.gpus, dtype=np.int64),
        exit_status=np.asarray(jobs.exit_status, dtype=np.int64),
        state=_text(jobs.state),
        hosts=_text(jobs.hosts),
    )
    frame = pd.DataFrame(columns_all, copy=False)
    header = [
        f"; UnixStartTime: {origin}",
        f"; Note: read by queuesim from the {log_format} log {path.name}; job numbers follow "
        "the log's order (its ids are in source_id), users, groups and queues are numbered "
        "from 1 in the order they first appear",
        *(f"; Queue: {i} {name}" for i, name in enumerate(queue_names, start=1)),
        *(f"; User: {i} {name}" for i, name in enumerate(user_names, start=1)),
        *(f"; Group: {i} {name}" for i, name in enumerate(group_names, start=1)),
    ]
    return SwfTrace(
        path=path,
        header=parse_header(header),
        jobs=frame,
        bad_lines=jobs.bad_lines,
        notes=jobs.notes,
    )
