"""Is the baseline faithful? Replay a site's log through its site model and compare the
simulated schedule with the one the log recorded (``queuesim fidelity``).

:func:`fidelity` reads the log, prepares it for the site, runs it (recording each job's
first reservation when the policy can) and hands the run to
:mod:`queuesim.results.fidelity`, whose docstring says what is compared and how.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.errors import WorkloadError
from queuesim.core.engine import Simulation
from queuesim.core.workload import CleaningOptions, prepare_trace, read_workload_trace
from queuesim.policies.registry import make_policy
from queuesim.results.fidelity import (
    JOB_COLUMNS,
    TIMELINE_BINS,
    Fidelity,
    largest,
    queue_waits,
    summarise,
    timeline,
)
from queuesim.results.fidelity_causes import causes_of
from queuesim.site.loading import load_site
from queuesim.site.model import Site

__all__ = ["Fidelity", "fidelity"]


def fidelity(
    site: Site | str | Path,
    log: str | Path,
    *,
    cleaning: CleaningOptions | None = None,
    policy: str | None = None,
    params: dict[str, Any] | None = None,
    top: int = 20,
) -> Fidelity:
    """Replay ``log`` through ``site`` (its policy unless ``policy``) and compare the
    simulated starts with the logged ones (module docstring)."""
    if top < 0:
        raise ValueError(f"top expects a number of jobs >= 0, got {top}")
    cleaning = cleaning or CleaningOptions()
    if not isinstance(site, Site):
        site = load_site(site)
    site = site.with_scheduler(policy, dict(params) if params else None)
    scheduler = make_policy(site.scheduler.policy, site.scheduler.params)
    if getattr(scheduler, "record_reservations", None) is False:
        scheduler.record_reservations = True  # type: ignore[attr-defined]
    trace = read_workload_trace(log, cleaning)
    workload = prepare_trace(trace, site, cleaning)
    result = Simulation(site, workload, scheduler, params=site.scheduler.params).run()

    raw = trace.jobs.set_index("line")
    prepared = workload.jobs
    lines = prepared["line"].to_numpy()
    logged_wait = raw.loc[lines, "wait"].to_numpy(dtype=np.float64)
    sim = result.jobs
    frame = pd.DataFrame(
        {
            "job_id": prepared["job_id"].to_numpy(),
            "log_id": _text(raw, "source_id", lines, prepared["job_id"].to_numpy()),
            "line": lines,
            "user": _text(raw, "user_name", lines, prepared["user"].to_numpy()),
            "queue": prepared["queue"].astype(str).to_numpy(),
            "cpus": prepared["cpus"].to_numpy(),
            "submit": prepared["submit"].to_numpy(dtype=np.float64),
            "logged_start": prepared["submit"].to_numpy(dtype=np.float64) + logged_wait,
            "simulated_start": sim["start"].to_numpy(dtype=np.float64),
            "logged_wait": logged_wait,
            "simulated_wait": sim["start"].to_numpy(dtype=np.float64)
            - prepared["submit"].to_numpy(dtype=np.float64),
            "runtime": prepared["runtime"].to_numpy(dtype=np.float64),
            "held_by": sim["held_by"].to_numpy(),
        }
    )
    frame["delta"] = frame["simulated_start"] - frame["logged_start"]
    # job number -> the first start the run reserved for it (policies that record them)
    records = bool(getattr(scheduler, "record_reservations", False))
    recorded: dict[int, float] | None = scheduler.reservations if records else None  # type: ignore[attr-defined]
    if recorded is not None:
        first = np.full(len(frame), np.nan)
        for job, when in recorded.items():
            first[job] = when
        frame["first_reservation"] = first
    known = logged_wait >= 0
    compared = frame.loc[known].reset_index(drop=True)
    if compared.empty:
        raise WorkloadError(f"{log}: no job has a logged start to compare with")
    grid = timeline(compared, TIMELINE_BINS)
    columns = [*JOB_COLUMNS, *(["first_reservation"] if recorded is not None else [])]
    return Fidelity(
        site=site.name,
        log=str(log),
        policy=result.policy,
        params=dict(result.params),
        unix_start_time=int(trace.header.unix_start_time or 0),
        total_cpus=site.total_cpus,
        jobs=compared.loc[:, columns],
        excluded={"unknown_logged_wait": int((~known).sum())},
        summary=summarise(compared),
        queues=queue_waits(compared, workload.queue_names),
        timeline=grid,
        top=largest(compared, top),
        causes=causes_of(trace, workload, compared, site.total_cpus),
        not_modelled=[(n.setting, n.value, n.source) for n in site.not_modelled],
    )


def _text(raw: pd.DataFrame, column: str, lines: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """A log's name column for the prepared jobs, else the SWF number as text."""
    if column in raw.columns:
        return np.asarray(raw.loc[lines, column].astype(str).to_numpy(dtype=object))
    return np.asarray([str(v) for v in fallback.tolist()], dtype=object)
