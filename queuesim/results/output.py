"""Files a run writes: metrics.json, jobs.parquet (or jobs.csv), schedule.swf, cleaning.csv,
queues.csv, users.csv.

Every file is written atomically and deterministically. ``metrics.json`` is the run's
completion marker: :func:`write_run` removes it first and writes it last, so a folder
whose writing was interrupted (even by ``kill -9``) has no ``metrics.json`` and readers
(:mod:`queuesim.reports.run_dir`) refuse it as incomplete; the next run into the folder
removes the temporaries a killed run left. Deterministically: the same inputs give the same
bytes (no timestamps, no wall-clock figures, sorted keys where order is not meaningful).

``metrics.json`` keys (stable, snake_case):

* the metrics of :class:`queuesim.results.metrics.Metrics` at the top level (``mean_wait``,
  ``awwt``, ``awrt``, ``awsd``, ``mean_bounded_slowdown``, ``max_bounded_slowdown``,
  ``bounded_slowdown_tau``, ``anuwt``, ``nuwt_dev``, ``utilization``, ``makespan``, ``jobs``,
  ``completed``, ``killed``, ...), all times in seconds;
* ``queues``: per queue that ran jobs (in the site's order), then ``(all)``, the wait
  figures of :mod:`queuesim.results.breakdown` - also written as ``queues.csv``; ``users``:
  the same per user, with NUWT - also ``users.csv``;
* ``rejected``: jobs the site could not run (also counted under ``cleaning``);
* ``cleaning``: count per cleaning reason (see :mod:`queuesim.core.workload`);
* at the top level too, the values of every other metric family of
  :mod:`queuesim.results.registry` that applies to the run (for a workload with a DFRS
  annotation: ``max_stretch``, ``stretch_bound`` and ``degradation_from_bound`` - null when
  the bound was not computed -, ``underutilization``, ``preemptions``, ``migrations``,
  ``resumes``, ``moved_memory_gb``, ``bandwidth_gb_per_s``, ``stretch_tau``), without those
  that change from run to run;
* ``counters``: policy counters (e.g. passes that hit a search bound);
* ``not_modelled``: what the site's own configuration uses that the simulation does not
  model (the site file's ``not_modelled``, written by ``queuesim import``): a list of
  ``{setting, value, source, reason}``, empty for a site without;
* ``run``: site, workload, policy and its parameters, scheduling passes, total CPUs, the
  trace's ``unix_start_time`` and ``time_zone`` (its SWF header's ``UnixStartTime`` and
  ``TimeZoneString``, null when absent) and the site's ``queues`` in file order, so that a
  saved run can be drawn with dates and its queues in order (``queuesim heatmap DIR``).

With the site's ``fairshare.usage_log``, ``fairshare-usage.csv`` holds every account's
effective fairshare usage at each log time (``time, account, usage``), for plotting.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from queuesim.common.atomic import atomic_path, atomic_write_text, remove_stale_temporaries
from queuesim.common.version import __version__
from queuesim.core.result import Result
from queuesim.results.breakdown import by_queue, by_user
from queuesim.results.metrics import Metrics
from queuesim.results.registry import file_values
from queuesim.traces.export import write_parquet
from queuesim.traces.swf import write_swf
from queuesim.traces.text_columns import csv_bytes

#: the file written last into a run folder: without it the folder is incomplete
COMPLETION_MARKER = "metrics.json"

#: the formats of the job table, the default first: ``jobs.parquet`` or ``jobs.csv``
JOBS_FORMATS = ("parquet", "csv")

JOB_CSV_COLUMNS = (
    "job_id",
    "user",
    "group",
    "queue",
    "submit",
    "start",
    "end",
    "wait",
    "runtime",
    "cpus",
    "estimate",
    "walltime",
    "status",
)


def json_value(value: Any) -> Any:
    """``value`` as JSON takes it: a plain Python number, None for NaN and infinities."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return json_value(value.item())
    return value


def json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-ready records (see :func:`json_value`)."""
    return [
        {str(k): json_value(v) for k, v in record.items()}
        for record in frame.to_dict(orient="records")
    ]


def metrics_document(
    result: Result,
    metrics: Metrics,
    extras: Mapping[str, Any] | None = None,
    queues: pd.DataFrame | None = None,
    users: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The content of ``metrics.json``: the base ``metrics`` and the ``extras`` of
    :func:`~queuesim.results.registry.extra_metrics`, the figures per queue and per user
    (:mod:`~queuesim.results.breakdown`), then the run's facts."""
    cleaning = result.workload.cleaning
    header = result.workload.header
    document: dict[str, Any] = {k: json_value(v) for k, v in metrics.as_dict().items()}
    document.update({k: json_value(v) for k, v in file_values(extras or {}).items()})
    for key, frame in (("queues", queues), ("users", users)):
        if frame is not None:
            document[key] = {
                str(name): {k: json_value(v) for k, v in row.items()}
                for name, row in frame.to_dict(orient="index").items()
            }
    document["rejected"] = cleaning.rejected
    document["cleaning"] = dict(cleaning.counts)
    document["cleaning_detail"] = {
        reason: {"action": action, "jobs": cleaning.counts[reason], "first_lines": lines}
        for reason, (action, lines) in cleaning.detail().items()
    }
    document["counters"] = dict(sorted(result.counters.items()))
    document["not_modelled"] = [n.model_dump() for n in result.site.not_modelled]
    document["run"] = {
        "queuesim_version": __version__,
        "site": result.site.name,
        "workload": Path(result.workload.source).name,
        "policy": result.policy,
        "params": {k: json_value(v) for k, v in sorted(result.params.items())},
        "passes": result.passes,
        "total_cpus": result.site.total_cpus,
        "unix_start_time": header.unix_start_time if header else None,
        "time_zone": header.time_zone_string if header else None,
        "queues": [q.name for q in result.site.queues],
    }
    return document


def write_metrics(
    path: Path,
    result: Result,
    metrics: Metrics,
    extras: Mapping[str, Any] | None = None,
    queues: pd.DataFrame | None = None,
    users: pd.DataFrame | None = None,
) -> None:
    document = metrics_document(result, metrics, extras, queues, users)
    text = json.dumps(document, indent=2, allow_nan=False)
    atomic_write_text(path, text + "\n")


def write_csv(path: Path, table: pd.DataFrame) -> None:
    """``table`` (not its index) as CSV, atomically: the bytes of pandas' ``to_csv``, laid
    out a column at a time (:func:`~queuesim.traces.text_columns.csv_bytes`; pandas itself
    for a column of another type), ten times faster."""
    data = csv_bytes(table)
    with atomic_path(path) as tmp:
        if data is None:
            table.to_csv(tmp, index=False, lineterminator="\n")
        else:
            tmp.write_bytes(data)


def write_jobs_csv(path: Path, jobs: pd.DataFrame) -> None:
    """The job table as CSV (:func:`write_csv`), the columns of :data:`JOB_CSV_COLUMNS`."""
    write_csv(path, jobs.loc[:, list(JOB_CSV_COLUMNS)])


def write_jobs_parquet(path: Path, jobs: pd.DataFrame) -> None:
    """The job table as Parquet through pyarrow, the columns of jobs.csv with their types
    (integers, float seconds, text)."""
    write_parquet(path, jobs.loc[:, list(JOB_CSV_COLUMNS)])


def write_schedule_swf(path: Path, result: Result) -> None:
    """The simulated schedule as SWF: submit, wait and runtime as simulated, the rest from
    the trace, so other SWF tools can read it."""
    jobs = result.jobs
    names = list(result.workload.queue_names)
    # each job's queue as its index in the workload's names (-1: none of them), by Arrow's
    # hash lookup: a tenth of pandas' Categorical on HPC2N's 202,871 str
    text = pa.large_string()
    found = pc.index_in(
        pa.array(jobs["queue"], type=text, from_pandas=True), value_set=pa.array(names, text)
    )
    codes = found.fill_null(-1).to_numpy()
    if len(codes) and codes.min() < 0:
        unknown = sorted(set(jobs["queue"].astype(str)) - set(names))
        raise ValueError(f"jobs in queues the workload does not name: {unknown}")
    frame = pd.DataFrame(
        {
            "job_id": jobs["job_id"],
            "submit": jobs["submit"],
            "wait": jobs["wait"],
            "runtime": jobs["runtime"],
            "alloc_procs": jobs["cpus"],
            "req_procs": jobs["cpus"],
            "req_time": jobs["walltime"],
            "status": np.where(jobs["status"] == "killed", 0, 1),
            "user": jobs["user"],
            "group": jobs["group"],
            "queue": codes.astype(np.int64) + 1,
        }
    )
    header = [
        f"Note: schedule simulated by queuesim {__version__}",
        f"Note: site {result.site.name}, policy {result.policy}, "
        f"workload {Path(result.workload.source).name}",
        f"MaxProcs: {result.site.total_cpus}",
        f"MaxNodes: {result.site.total_nodes}",
    ]
    header += [f"Queue: {i + 1} {name}" for i, name in enumerate(result.workload.queue_names)]
    write_swf(path, frame, header)


def breakdowns(result: Result, metrics: Metrics) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's wait figures per queue (site order, then the whole run) and per user."""
    tau = metrics.bounded_slowdown_tau
    names = [q.name for q in result.site.queues]
    return by_queue(result.jobs, names, tau=tau), by_user(result.jobs, tau=tau)


def _write_frame(path: Path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, lineterminator="\n")


def write_cleaning_csv(path: Path, result: Result) -> None:
    write_csv(path, result.workload.cleaning.records)


def write_run(
    out: Path,
    result: Result,
    metrics: Metrics,
    *,
    jobs_format: str = JOBS_FORMATS[0],
    extras: Mapping[str, Any] | None = None,
    breakdown: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> list[Path]:
    """Write the whole bundle of one run into ``out``; returns the files written.
    ``extras``: the run's other metrics (:func:`~queuesim.results.registry.extra_metrics`);
    ``breakdown``: the run's :func:`breakdowns` when the caller has them already.

    The job table is ``jobs.parquet`` unless ``jobs_format="csv"`` asks for ``jobs.csv``.
    ``metrics.json``, the completion marker, is removed first and written last.
    """
    if jobs_format not in JOBS_FORMATS:
        raise ValueError(f"jobs_format must be one of {JOBS_FORMATS}, got {jobs_format!r}")
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out)
    (out / COMPLETION_MARKER).unlink(missing_ok=True)
    files = [
        out / "metrics.json",
        out / f"jobs.{jobs_format}",
        out / "schedule.swf",
        out / "cleaning.csv",
        out / "queues.csv",
        out / "users.csv",
    ]
    queues, users = breakdown if breakdown is not None else breakdowns(result, metrics)
    if jobs_format == "parquet":
        write_jobs_parquet(files[1], result.jobs)
    else:
        write_jobs_csv(files[1], result.jobs)
    write_schedule_swf(files[2], result)
    write_cleaning_csv(files[3], result)
    _write_frame(files[4], queues)
    _write_frame(files[5], users)
    if result.fairshare_usage is not None:
        files.append(out / "fairshare-usage.csv")
        write_csv(files[-1], result.fairshare_usage)
    write_metrics(files[0], result, metrics, extras, queues, users)  # last: the run is complete
    return files
