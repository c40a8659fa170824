"""Is the baseline faithful? The comparison of a simulated schedule with the one a log
recorded (``queuesim fidelity``; :func:`queuesim.studies.fidelity.fidelity` runs it).

Per job (jobs of the prepared workload, joined to the log's rows by their ``line``):
logged start = submit + the wait the log records; simulated start = the run's start;
``delta`` = simulated start - logged start, seconds (positive: the simulation started the
job later than the real system). Jobs whose logged wait is unknown (SWF -1: never
started, or the log does not say) are left out and counted.

Summary: median and 90th percentile of ``|delta|``; the share of jobs within 1 min, 10 min
and 1 h; Spearman's rank correlation of logged and simulated waits (pandas, ties
averaged); per queue the mean and median wait, logged and simulated; busy CPUs and
waiting jobs over time, logged and simulated (:func:`timeline`); the ``top`` jobs with
the largest ``|delta|`` with the queue limits that held them in the run (``held_by``) and,
when the policy records reservations (EASY, conservative), the first reservation the run
gave them; and the causes the log holds that the simulation cannot know
(:mod:`queuesim.results.fidelity_causes`).

Both schedules use the same jobs and the same runtimes (the prepared workload's), so the
comparison measures the scheduling alone: the site model and the policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from queuesim.results.fidelity_causes import Cause, step_values
from queuesim.results.output import json_rows, json_value

__all__ = ["JOB_COLUMNS", "WITHIN", "Fidelity", "largest", "queue_waits", "summarise", "timeline"]

#: the shares of jobs reported: |delta| within each of these many seconds
WITHIN = {"1 min": 60.0, "10 min": 600.0, "1 h": 3600.0}
#: bins of the time grid of :func:`timeline`
TIMELINE_BINS = 400

#: the columns of :attr:`Fidelity.jobs`, in order (``first_reservation`` only when recorded)
JOB_COLUMNS = (
    "job_id",
    "log_id",
    "line",
    "user",
    "queue",
    "cpus",
    "submit",
    "logged_start",
    "simulated_start",
    "logged_wait",
    "simulated_wait",
    "delta",
    "held_by",
)


@dataclass(frozen=True)
class Fidelity:
    """What :func:`fidelity` found; times in seconds since the log's origin
    (``unix_start_time``)."""

    site: str
    log: str
    policy: str
    params: dict[str, Any]
    unix_start_time: int
    total_cpus: int
    jobs: pd.DataFrame  #: one row per compared job, JOB_COLUMNS (+ first_reservation)
    excluded: dict[str, int]  #: jobs of the run not compared, by reason
    summary: dict[str, float]  #: jobs, median/p90 |delta|, within_*, spearman, ...
    queues: pd.DataFrame  #: queue, jobs, logged/simulated mean and median wait
    timeline: pd.DataFrame  #: time, logged/simulated busy CPUs and waiting jobs
    top: pd.DataFrame  #: the jobs with the largest |delta|
    causes: list[Cause] = field(default_factory=list)
    #: what the site's configuration uses that the run does not model (the site's
    #: ``not_modelled``): setting, value, source
    not_modelled: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def reservations(self) -> bool:
        """Whether the run recorded first reservations (shown in :attr:`top`)."""
        return "first_reservation" in self.jobs.columns

    def as_dict(self) -> dict[str, Any]:
        """Everything but the per-job frame, JSON-ready (stable snake_case keys)."""
        return {
            "site": self.site,
            "log": self.log,
            "policy": self.policy,
            "params": {k: json_value(v) for k, v in sorted(self.params.items())},
            "unix_start_time": self.unix_start_time,
            "total_cpus": self.total_cpus,
            "excluded": dict(sorted(self.excluded.items())),
            "summary": {k: json_value(v) for k, v in sorted(self.summary.items())},
            "queues": json_rows(self.queues),
            "top": json_rows(self.top),
            "causes": [cause.as_dict() for cause in self.causes],
            "not_modelled": [
                {"setting": k, "value": v, "source": w} for k, v, w in self.not_modelled
            ],
            "timeline": {str(c): [json_value(v) for v in self.timeline[c]] for c in self.timeline},
        }


def summarise(jobs: pd.DataFrame) -> dict[str, float]:
    """The summary figures of the compared ``jobs`` (module docstring)."""
    delta = jobs["delta"].to_numpy(dtype=np.float64)
    gap = np.abs(delta)
    out: dict[str, float] = {
        "jobs": float(len(jobs)),
        "median_abs_delta": float(np.median(gap)),
        "p90_abs_delta": float(np.percentile(gap, 90)),
        "median_delta": float(np.median(delta)),
        "mean_delta": float(delta.mean()),
        "share_simulated_later": float((delta > 0).mean()),
        "share_simulated_earlier": float((delta < 0).mean()),
        "spearman_wait": float(jobs["logged_wait"].corr(jobs["simulated_wait"], method="spearman")),
        "logged_mean_wait": float(jobs["logged_wait"].mean()),
        "simulated_mean_wait": float(jobs["simulated_wait"].mean()),
    }
    for label, seconds in WITHIN.items():
        out["within_" + label.replace(" ", "")] = float((gap <= seconds).mean())
    return out


def queue_waits(jobs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Per queue (site order, queues with compared jobs) the mean and median wait, logged
    and simulated."""
    grouped = jobs.groupby("queue", sort=False)
    table = pd.DataFrame(
        {
            "jobs": grouped.size(),
            "logged_mean_wait": grouped["logged_wait"].mean(),
            "simulated_mean_wait": grouped["simulated_wait"].mean(),
            "logged_median_wait": grouped["logged_wait"].median(),
            "simulated_median_wait": grouped["simulated_wait"].median(),
        }
    )
    present = [q for q in order if q in table.index]
    return table.loc[present].rename_axis("queue").reset_index()


def largest(jobs: pd.DataFrame, top: int) -> pd.DataFrame:
    """The ``top`` jobs with the largest ``|delta|`` (ties: the earlier job first)."""
    gap = jobs["delta"].abs()
    order = np.lexsort((jobs["job_id"].to_numpy(), -gap.to_numpy()))[:top]
    columns = ["job_id", "log_id", "user", "queue", "cpus", "logged_wait", "simulated_wait"]
    columns += ["delta", "held_by"]
    picked = jobs.iloc[order]
    out = picked.loc[:, columns].reset_index(drop=True)
    if "first_reservation" in jobs.columns:
        # as a wait: how long after submit the run first promised the job a start
        out["first_reservation_wait"] = (picked["first_reservation"] - picked["submit"]).to_numpy()
    return out


def timeline(jobs: pd.DataFrame, bins: int = TIMELINE_BINS) -> pd.DataFrame:
    """Busy CPUs and waiting jobs, logged and simulated, at the middle of ``bins`` equal
    bins from the first submit to the last end (``time``: the bin's middle).

    Both schedules run each job for the same ``runtime``."""
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    runtime = jobs["runtime"].to_numpy(dtype=np.float64)
    cpus = jobs["cpus"].to_numpy(dtype=np.float64)
    starts = {
        "logged": jobs["logged_start"].to_numpy(dtype=np.float64),
        "simulated": jobs["simulated_start"].to_numpy(dtype=np.float64),
    }
    first = float(submit.min())
    last = max(float((s + runtime).max()) for s in starts.values())
    width = max(last - first, 1.0) / bins
    time = first + width * (np.arange(bins) + 0.5)
    frame = {"time": time}
    for name, start in starts.items():
        frame[f"{name}_busy_cpus"] = step_values(time, start, start + runtime, cpus)
        frame[f"{name}_waiting_jobs"] = step_values(time, submit, start, np.ones_like(cpus))
    return pd.DataFrame(frame)
