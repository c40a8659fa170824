"""What a log holds that a simulation cannot know, counted (``queuesim fidelity``).

Each :class:`Cause` is a count with a one-line meaning. Large counts say where the logged
schedule was shaped by something the site model does not have, so a difference there is
expected rather than a fault of the model:

* ``eligible_after_submit`` - jobs the log says became eligible after they were submitted
  (PBS ``etime``, Slurm ``Eligible``): held, waiting on a dependency, a begin time or an
  array throttle. The simulation lets them start at submit.
* ``submitted_before_log`` - jobs submitted before the log's first recorded end (the
  earliest end of any job in the log). Jobs that ended before then are not in the log, so
  the machine they queued on was busier than the simulated one, which starts empty.
* ``started_before_room`` - jobs the log started more than 1 h earlier than the
  simulation while the simulated site was too full for them at their logged start: the
  real machine had room the model lacks (nodes the draft missed, CPUs per node
  underestimated, oversubscription).
* ``outages`` - intervals over 1 h in which the log shows eligible jobs waiting but none
  running:
  a downtime, a drained machine or a dedicated reservation the log does not describe;
  the simulation runs jobs through them. Its detail gives the hours.
* ``reader:<reason>`` - records the log reader folded, skipped or dropped (e.g. PBS
  ``not_a_job_record``: advance reservations and other non-job records).
* ``cleaning:<reason>`` - jobs the run's cleaning dropped, rejected or repaired (e.g.
  ``too_large`` for the site): they ran in reality, not in the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from queuesim.core.workload import ACTIONS, Workload
from queuesim.traces.swf import SwfTrace

__all__ = ["OUTAGE_SECONDS", "Cause", "causes_of", "outages", "step_values"]

#: an interval with jobs waiting and none running counts as an outage from this long
OUTAGE_SECONDS = 3600.0
#: a logged start this much earlier than the simulated one, on a full site, is counted
EARLY_SECONDS = 3600.0

MEANINGS = {
    "eligible_after_submit": "jobs the log says became eligible after submit (held, "
    "dependent, begin time, array throttle); simulated as eligible at submit",
    "submitted_before_log": "jobs submitted before the log's first recorded end: the "
    "machine they queued on held jobs the log does not show",
    "started_before_room": "jobs logged to start over 1 h before the simulation started "
    "them, while the simulated site was too full for them: the real machine had room the "
    "model lacks",
    "outages": "intervals over 1 h with eligible jobs waiting and none running in the log "
    "(downtime, drain, dedicated reservation); the simulation runs jobs through them",
}


@dataclass(frozen=True)
class Cause:
    """One count of something the simulation cannot know."""

    key: str
    count: int
    meaning: str
    #: more figures (e.g. the outages' hours), JSON-ready
    detail: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "count": self.count, "meaning": self.meaning}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


def step_values(
    times: np.ndarray, begin: np.ndarray, end: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """At each of ``times``, the total ``weight`` of the intervals ``[begin, end)`` that
    cover it."""
    b = np.argsort(begin, kind="stable")
    e = np.argsort(end, kind="stable")
    began = np.concatenate(([0.0], np.cumsum(weight[b])))
    ended = np.concatenate(([0.0], np.cumsum(weight[e])))
    at_b = np.searchsorted(begin[b], times, side="right")
    at_e = np.searchsorted(end[e], times, side="right")
    return np.asarray(began[at_b] - ended[at_e])


def outages(
    submit: np.ndarray, start: np.ndarray, end: np.ndarray, minimum: float = OUTAGE_SECONDS
) -> list[tuple[float, float]]:
    """The intervals of at least ``minimum`` seconds in which some job waits (submitted,
    not started) and none runs, from these jobs' times (merged where they touch)."""
    times = np.unique(np.concatenate((submit, start, end)))
    if times.size < 2:
        return []
    ones = np.ones_like(submit)
    running = step_values(times[:-1], start, end, ones)
    waiting = step_values(times[:-1], submit, start, ones)
    idle = (running == 0) & (waiting > 0)
    found: list[tuple[float, float]] = []
    k = 0
    n = idle.size
    while k < n:
        if not idle[k]:
            k += 1
            continue
        j = k
        while j + 1 < n and idle[j + 1]:
            j += 1
        begin, finish = float(times[k]), float(times[j + 1])
        if finish - begin >= minimum:
            found.append((begin, finish))
        k = j + 1
    return found


def causes_of(
    trace: SwfTrace, workload: Workload, jobs: pd.DataFrame, total_cpus: int
) -> list[Cause]:
    """The causes (module docstring) for the compared ``jobs`` of ``trace``."""
    raw = trace.jobs
    causes: list[Cause] = []
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    ready = submit  # when each job could start, as far as the log says
    if "eligible" in raw.columns:
        eligible = raw.set_index("line").loc[jobs["line"].to_numpy(), "eligible"].to_numpy()
        eligible = np.nan_to_num(eligible.astype(np.float64), nan=-np.inf)
        causes.append(_cause("eligible_after_submit", int((eligible > submit).sum())))
        ready = np.maximum(submit, eligible)
    causes.append(_cause("submitted_before_log", _before_log(raw, jobs)))
    causes.append(_cause("started_before_room", _early(jobs, total_cpus)))
    start = jobs["logged_start"].to_numpy(dtype=np.float64)
    # a held job waiting for its eligible time does not make an idle machine an outage
    found = outages(
        np.minimum(ready, start), start, start + jobs["runtime"].to_numpy(dtype=np.float64)
    )
    hours = sum(b - a for a, b in found) / 3600
    detail = {"hours": round(hours, 3), "intervals": [[a, b] for a, b in found[:20]]}
    causes.append(_cause("outages", len(found), detail))
    notes = trace.notes
    for (reason, action), group in notes.groupby(["reason", "action"], sort=True):
        meaning = f"records the log reader noted ({action})"
        causes.append(Cause(f"reader:{reason}", len(group), meaning))
    # cleaning counts the reader's notes too: each is listed once, as the reader's
    noted = set(notes["reason"].astype(str))
    cleaning = workload.cleaning
    for reason, count in sorted(cleaning.counts.items()):
        if count and reason not in noted:
            action = cleaning.actions.get(reason, ACTIONS.get(reason, ""))
            causes.append(
                Cause(f"cleaning:{reason}", int(count), f"jobs cleaning {action} for this site")
            )
    return causes


def _cause(key: str, count: int, detail: dict[str, Any] | None = None) -> Cause:
    return Cause(key, count, MEANINGS[key], detail)


def _before_log(raw: pd.DataFrame, jobs: pd.DataFrame) -> int:
    """Jobs submitted before the earliest end of any job in the log."""
    wait = raw["wait"].to_numpy(dtype=np.float64)
    runtime = raw["runtime"].to_numpy(dtype=np.float64)
    ended = (wait >= 0) & (runtime >= 0)
    if not ended.any():
        return 0
    first_end = float((raw["submit"].to_numpy(dtype=np.float64) + wait + runtime)[ended].min())
    return int((jobs["submit"].to_numpy() < first_end).sum())


def _early(jobs: pd.DataFrame, total_cpus: int) -> int:
    """Jobs logged to start over :data:`EARLY_SECONDS` before the simulation started them
    while the simulated site had fewer free CPUs than they use."""
    start = jobs["simulated_start"].to_numpy(dtype=np.float64)
    end = start + jobs["runtime"].to_numpy(dtype=np.float64)
    cpus = jobs["cpus"].to_numpy(dtype=np.float64)
    logged = jobs["logged_start"].to_numpy(dtype=np.float64)
    busy = step_values(logged, start, end, cpus)
    early = jobs["delta"].to_numpy() > EARLY_SECONDS
    return int((early & (busy + cpus > total_cpus)).sum())
