"""One cell of a sweep, as a Dask worker runs it: the trace read and prepared once per
worker, the simulation, and the cell's row (whole-run and per-queue metrics).

A row is a function of the cell's content only (resolved site, trace, load factor,
cleaning, tau, version) plus the run's own timing (``wall_seconds``), so the same cell
gives the same row on any worker, cluster or day. A failing cell returns a row with
``status`` ``failed`` and the error, and the sweep goes on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.errors import QueuesimError, WorkloadError
from queuesim.common.version import __version__
from queuesim.core.workload import CleaningOptions, Workload, prepare_trace, read_workload_trace
from queuesim.results.breakdown import ALL, by_queue
from queuesim.results.metrics import WAIT_FIGURES, compute_metrics
from queuesim.site.model import Site
from queuesim.studies.simulate import simulate
from queuesim.traces.swf import SwfTrace

__all__ = ["QUEUE_PREFIX", "CellTask", "run_cell", "scale_load"]

#: per-queue columns are named ``queue.<name>.<figure>``
QUEUE_PREFIX = "queue."
#: prepared workloads a worker keeps (sites that route the trace differently)
_PREPARED_KEPT = 4
#: site keys that do not change how a trace is prepared (cleaned, routed, estimated)
_NOT_PREPARATION = {"name", "description", "ordering", "fairshare", "scheduler"}


@dataclass(frozen=True)
class CellTask:
    """What a worker needs to run one cell (small, pickled to the worker)."""

    key: str
    site: Site
    trace: str  #: path as the workers see it (a shared file system on a cluster)
    checksum: str
    load_factor: float
    cleaning: CleaningOptions
    tau: float
    keep_jobs: bool = False


def scale_load(trace: SwfTrace, factor: float) -> SwfTrace:
    """The trace with submit times packed by ``factor`` around the first submission:
    ``s' = s0 + (s - s0) / factor``, so a factor 1.25 offers the same jobs in 80 % of the
    time (the load scaling of Lublin and Feitelson's model, applied to a recorded trace).
    Unknown submit times (negative) stay as they are; a factor 1 returns ``trace``."""
    if factor == 1.0:
        return trace
    submit = trace.jobs["submit"].to_numpy(dtype=np.float64)
    known = submit >= 0
    if not known.any():
        return trace
    first = submit[known].min()
    scaled = np.where(known, first + (submit - first) / factor, submit)
    jobs = trace.jobs.assign(submit=np.floor(scaled))
    return dataclasses.replace(trace, jobs=jobs)


class _WorkerCache:
    """A worker's traces (by checksum) and prepared workloads (few, least recent out)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.traces: dict[str, SwfTrace] = {}
        self.prepared: OrderedDict[str, Workload] = OrderedDict()
        self.reads = 0
        self.preparations = 0

    def workload(self, task: CellTask) -> Workload:
        with self.lock:
            trace = self.traces.get(task.checksum)
            if trace is None:
                trace = self._read(task)
                self.traces[task.checksum] = trace
                self.reads += 1
            key = _preparation_key(task)
            workload = self.prepared.get(key)
            if workload is None:
                workload = prepare_trace(
                    scale_load(trace, task.load_factor), task.site, task.cleaning
                )
                self.prepared[key] = workload
                self.preparations += 1
                while len(self.prepared) > _PREPARED_KEPT:
                    self.prepared.popitem(last=False)
            self.prepared.move_to_end(key)
            return workload

    @staticmethod
    def _read(task: CellTask) -> SwfTrace:
        path = Path(task.trace)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != task.checksum:
            raise WorkloadError(
                f"{path}: the trace on this worker differs from the one the sweep was given "
                "(checksum); workers must see the same file"
            )
        return read_workload_trace(path, task.cleaning)


_LOCAL = _WorkerCache()


def _cache() -> _WorkerCache:
    """The cache of the Dask worker running this task (one per worker, also for threaded
    workers sharing a process); this module's own outside a worker."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return _LOCAL
    cache = getattr(worker, "_queuesim_cache", None)
    if not isinstance(cache, _WorkerCache):
        cache = _WorkerCache()
        worker._queuesim_cache = cache
    return cache


def _preparation_key(task: CellTask) -> str:
    site = task.site.model_dump(mode="json", exclude=_NOT_PREPARATION)
    text = json.dumps([site, task.checksum, task.load_factor], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_cell(task: CellTask) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """Run one cell; its row, and its per-job table when ``keep_jobs``. Never raises for a
    cell's own failure: the row then has ``status`` ``failed`` and the error."""
    started = time.perf_counter()
    row: dict[str, Any] = {
        "key": task.key,
        "status": "done",
        "error": "",
        "trace": Path(task.trace).name,
        "trace_checksum": task.checksum,
        "load_factor": task.load_factor,
        "policy": task.site.scheduler.policy,
        "params": json.dumps(task.site.scheduler.params, sort_keys=True),
        "site": json.dumps(task.site.model_dump(mode="json"), sort_keys=True),
        "version": __version__,
    }
    jobs: pd.DataFrame | None = None
    try:
        workload = _cache().workload(task)
        result = simulate(task.site, workload)
        metrics = compute_metrics(result.jobs, total_cpus=task.site.total_cpus, tau=task.tau)
        row.update(metrics.as_dict())
        row["rejected"] = workload.cleaning.rejected
        row["dropped"] = workload.cleaning.dropped
        queues = by_queue(result.jobs, workload.queue_names, tau=task.tau)
        for queue, figures in queues.drop(index=ALL).iterrows():
            for figure in WAIT_FIGURES:
                row[f"{QUEUE_PREFIX}{queue}.{figure}"] = figures[figure]
        if task.keep_jobs:
            jobs = result.jobs
    except Exception as exc:  # recorded with the cell; the others go on
        row["status"] = "failed"
        kind = "" if isinstance(exc, QueuesimError) else f"{type(exc).__name__}: "
        row["error"] = f"{kind}{exc}"
        if not isinstance(exc, QueuesimError):
            row["error"] += "\n" + traceback.format_exc(limit=-3)
    row["wall_seconds"] = time.perf_counter() - started
    return row, jobs
