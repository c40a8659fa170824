"""What must hold of every run, checked from its per-job output alone (issue 20; the
reliability list of DESIGN.md): no job starts before it is submitted; CPUs, memory and
GPUs in use never exceed the site's at any instant; every job of the prepared workload
runs exactly once, and every job the site could not run is counted with a reason; queue
limits (running jobs and CPUs per user, CPU pools) are never exceeded; and with FCFS order
and the ``fcfs`` policy no job starts before one submitted earlier (no overtaking).

Each in-use figure is a sweep line over the jobs' (start, end) intervals: at one instant
ends are counted before starts, as the engine applies them (a job may start at the very
second another ends on its CPUs). The engine checks each start as it makes it (its
``PolicyViolation``); this module checks the output independently, after the fact, so a
bug in the engine's own bookkeeping is found too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from queuesim.core.result import Result
from queuesim.site.enums import MemoryModel, Ordering

#: how many violations of one kind a report lists (the count is always complete)
SHOWN = 3


def peak_in_use(
    start: np.ndarray, end: np.ndarray, amount: np.ndarray, group: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sweep line: for each instant a job starts, what all running jobs (of its
    ``group``) hold then. Returns (group, time, in use) of every start event."""
    n = len(start)
    group = np.zeros(n, dtype=np.int64) if group is None else group
    times = np.concatenate([start, end])
    deltas = np.concatenate([amount, -amount])
    groups = np.concatenate([group, group])
    # by group, then time, then ends (negative) before starts
    order = np.lexsort((deltas, times, groups))
    times, deltas, groups = times[order], deltas[order], groups[order]
    running = np.cumsum(deltas)
    first = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    base = np.repeat(running[first] - deltas[first], np.diff(np.r_[first, len(groups)]))
    in_use = running - base
    starts = deltas > 0
    return groups[starts], times[starts], in_use[starts]


def _over(
    what: str,
    start: np.ndarray,
    end: np.ndarray,
    amount: np.ndarray,
    cap: np.ndarray | int,
    group: np.ndarray | None = None,
    names: Sequence[str] = ("site",),
) -> list[str]:
    groups, times, in_use = peak_in_use(start, end, amount, group)
    caps = np.asarray(cap)[groups] if np.ndim(cap) else np.full(len(groups), cap)
    bad = np.flatnonzero(in_use > caps)
    shown = [
        f"{what}: {names[groups[i]]} holds {in_use[i]:g} at t={times[i]:g} (cap {caps[i]:g})"
        for i in bad[:SHOWN]
    ]
    return [f"{what}: exceeded at {len(bad)} instants", *shown] if len(bad) else []


def invariant_violations(result: Result) -> list[str]:
    """Every invariant of the module docstring that ``result`` breaks, one line each
    (with up to :data:`SHOWN` examples); an empty list when all hold."""
    jobs, site, prepared = result.jobs, result.site, result.workload.jobs
    problems = _runs_once(jobs, prepared, result)
    if problems:
        return problems  # the sweeps below need one row per job
    start = jobs["start"].to_numpy(dtype=float)
    end = jobs["end"].to_numpy(dtype=float)
    cpus = jobs["cpus"].to_numpy(dtype=np.int64)
    early = np.flatnonzero(start < jobs["submit"].to_numpy(dtype=float))
    if len(early):
        ids = jobs["job_id"].to_numpy()[early[:SHOWN]].tolist()
        problems.append(f"start before submit: {len(early)} jobs (e.g. job ids {ids})")
    problems += _over("CPUs in use", start, end, cpus, site.total_cpus)
    row = pd.Index(prepared["job_id"]).get_indexer(jobs["job_id"])
    if site.memory != MemoryModel.IGNORE:
        memory = prepared["mem_per_cpu"].to_numpy(dtype=np.int64)[row] * cpus
        problems += _over("memory in use", start, end, memory, int(site.node_memory().sum()))
    total_gpus = int(site.node_gpus().sum())
    if total_gpus and "gpn" in prepared:
        ppn = prepared["ppn"].to_numpy(dtype=np.int64)[row]
        nodes = np.where(ppn > 0, -(-cpus // np.maximum(ppn, 1)), 1)
        gpus = prepared["gpn"].to_numpy(dtype=np.int64)[row] * nodes
        problems += _over("GPUs in use", start, end, gpus, total_gpus)
    problems += _limits(result, start, end, cpus)
    if result.policy == "fcfs" and site.ordering == Ordering.FCFS:
        problems += _fcfs_order(jobs, prepared)
    return problems


def _runs_once(jobs: pd.DataFrame, prepared: pd.DataFrame, result: Result) -> list[str]:
    """Each prepared job exactly once, started and ended after its runtime (or killed at
    its walltime); each job cleaning rejected counted with a reason."""
    problems = []
    ids = jobs["job_id"]
    if ids.duplicated().any():
        problems.append(f"jobs run twice: {ids[ids.duplicated()].head(SHOWN).tolist()}")
    missing = set(prepared["job_id"]) - set(ids)
    extra = set(ids) - set(prepared["job_id"])
    if missing or extra:
        problems.append(
            f"jobs never run: {len(missing)} (e.g. {sorted(missing)[:SHOWN]}); jobs run that "
            f"the workload lacks: {len(extra)} (e.g. {sorted(extra)[:SHOWN]})"
        )
    start, end = jobs["start"].to_numpy(dtype=float), jobs["end"].to_numpy(dtype=float)
    if not (np.isfinite(start).all() and np.isfinite(end).all()):
        problems.append("jobs without a start or an end")
    else:
        ran = end - start
        runtime = jobs["runtime"].to_numpy(dtype=float)
        killed = (jobs["status"] == "killed").to_numpy()
        wrong = ~killed & ~np.isclose(ran, runtime, rtol=0, atol=1e-6)
        wrong |= killed & (ran > runtime + 1e-6)
        if wrong.any():
            shown = jobs["job_id"][wrong].head(SHOWN).tolist()
            problems.append(f"jobs that ran other than their runtime: {int(wrong.sum())} {shown}")
    records = result.workload.cleaning.records
    rejected = records[records["action"] == "rejected"]
    if len(rejected) != result.workload.cleaning.rejected:
        problems.append(
            f"rejected jobs: {result.workload.cleaning.rejected} counted, {len(rejected)} listed"
        )
    if (rejected["reason"].astype(str).str.len() == 0).any():
        problems.append("rejected jobs without a reason")
    return problems


def _limits(result: Result, start: np.ndarray, end: np.ndarray, cpus: np.ndarray) -> list[str]:
    """Per queue: running jobs and CPUs per user, and the CPU pool."""
    site, jobs = result.site, result.jobs
    names = [q.name for q in site.queues]
    queue = pd.Categorical(jobs["queue"], categories=names).codes.astype(np.int64)
    pools = [site.pool_cpus(q) for q in site.queues]
    problems: list[str] = []
    if any(p is not None for p in pools):
        caps = np.array([p if p is not None else np.iinfo(np.int64).max for p in pools])
        problems += _over("queue CPU pool", start, end, cpus, caps, queue, names)
    users = jobs["user"].to_numpy()
    pairs, pair = np.unique(np.stack([queue, users], axis=1), axis=0, return_inverse=True)
    pair = pair.reshape(-1)
    labels = [f"user {u} in queue {names[q]}" for q, u in pairs]
    big = np.iinfo(np.int64).max
    for key, amount, what in (
        ("max_running_per_user", np.ones_like(cpus), "running jobs per user"),
        ("max_cpus_per_user", cpus, "CPUs per user"),
    ):
        per_queue = [getattr(q, key) for q in site.queues]
        if any(v is not None for v in per_queue):
            caps = np.array([per_queue[q] if per_queue[q] is not None else big for q, _ in pairs])
            problems += _over(what, start, end, amount, caps, pair, labels)
    return problems


def _fcfs_order(jobs: pd.DataFrame, prepared: pd.DataFrame) -> list[str]:
    """Under FCFS no job starts before a job ahead of it (the prepared order: submit time,
    then trace line)."""
    starts = jobs.set_index("job_id")["start"].reindex(prepared["job_id"]).to_numpy()
    ahead = np.maximum.accumulate(starts)
    overtakes = np.flatnonzero(starts < ahead)
    if not len(overtakes):
        return []
    ids = prepared["job_id"].to_numpy()[overtakes[:SHOWN]].tolist()
    return [f"FCFS overtaken: {len(overtakes)} jobs started before one ahead of them {ids}"]
