"""The per-job files' columns, their units and meaning, in one place: queuesim's own job
table (``jobs.parquet`` / ``jobs.csv`` of a run folder) and the evalys-compatible jobs
CSV (``queuesim report RUN_DIR -o FILE.csv``), which evalys reads with
``JobSet.from_csv(FILE)`` to draw its Gantt chart and utilization and queue plots
(evalys's ``JobSet.columns``, the Batsim jobs output format).

Times are seconds since the trace's first submission (its header's ``UnixStartTime`` gives
the date), sizes are CPUs (cores).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queuesim.results.timelines import gantt_rows

__all__ = ["EVALYS_COLUMNS", "JOB_COLUMNS", "evalys_jobs"]

#: queuesim's job table: column -> (unit, meaning).
JOB_COLUMNS: dict[str, tuple[str, str]] = {
    "job_id": ("", "the trace's job number"),
    "user": ("", "user id (the trace's number)"),
    "group": ("", "group id (the trace's number)"),
    "queue": ("", "the site queue the job was routed to"),
    "submit": ("s", "submit time"),
    "start": ("s", "start time"),
    "end": ("s", "end time"),
    "wait": ("s", "start - submit"),
    "runtime": ("s", "end - start (cut at the walltime when the site kills there)"),
    "cpus": ("CPUs", "CPUs held"),
    "estimate": ("s", "the runtime the scheduler planned with (site's estimate)"),
    "walltime": ("s", "the requested walltime"),
    "status": ("", "completed, killed (at its walltime) or rejected"),
}

#: The evalys jobs CSV: column -> (unit, meaning).
EVALYS_COLUMNS: dict[str, tuple[str, str]] = {
    "job_id": ("", "job_id"),
    "workload_name": ("", "the trace's file name"),
    "submission_time": ("s", "submit"),
    "requested_number_of_resources": ("CPUs", "cpus"),
    "requested_time": ("s", "walltime"),
    "success": ("", "1 if completed, 0 if killed"),
    "starting_time": ("s", "start"),
    "execution_time": ("s", "runtime"),
    "finish_time": ("s", "end"),
    "waiting_time": ("s", "wait"),
    "turnaround_time": ("s", "end - submit"),
    "stretch": ("", "turnaround_time / execution_time (empty for a zero runtime)"),
    "allocated_resources": (
        "CPU rows",
        "CPUs as an interval set (``0-3 8-9``): rows placed for drawing, no two running "
        "jobs sharing one (queuesim does not record which CPU a job ran on; see "
        "queuesim.results.timelines.gantt_rows)",
    ),
}


def evalys_jobs(jobs: pd.DataFrame, total_cpus: int, workload: str = "") -> pd.DataFrame:
    """The jobs that ran, with the columns of :data:`EVALYS_COLUMNS`, in start order."""
    ran = jobs[jobs["status"].astype(str) != "rejected"] if "status" in jobs else jobs
    if ran.empty:
        return pd.DataFrame(columns=list(EVALYS_COLUMNS))
    bands = gantt_rows(ran, float(ran["start"].min()), float(ran["end"].max()) + 1, total_cpus)
    by_id = ran.set_index("job_id").loc[bands["job_id"]]
    runtime = (bands["end"] - bands["start"]).to_numpy(dtype=np.float64)
    turnaround = bands["end"].to_numpy(dtype=np.float64) - by_id["submit"].to_numpy(
        dtype=np.float64
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(runtime > 0, turnaround / runtime, np.nan)
    return pd.DataFrame(
        {
            "job_id": bands["job_id"].to_numpy(),
            "workload_name": workload,
            "submission_time": by_id["submit"].to_numpy(),
            "requested_number_of_resources": bands["cpus"].to_numpy(),
            "requested_time": by_id["walltime"].to_numpy() if "walltime" in by_id else np.nan,
            "success": (by_id["status"].astype(str) == "completed").astype(int).to_numpy()
            if "status" in by_id
            else 1,
            "starting_time": bands["start"].to_numpy(),
            "execution_time": runtime,
            "finish_time": bands["end"].to_numpy(),
            "waiting_time": by_id["wait"].to_numpy(),
            "turnaround_time": turnaround,
            "stretch": stretch,
            "allocated_resources": [
                " ".join(f"{a}-{b - 1}" if b - 1 > a else f"{a}" for a, b in runs)
                for runs in bands["bands"]
            ],
        }
    )
