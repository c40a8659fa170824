"""From a trace to the jobs a simulation replays: explicit, counted cleaning.

:func:`prepare` turns the raw fields of a trace (see :mod:`queuesim.traces.swf`) into one row per
job with the values the engine needs, for one site: CPUs, queue, requested walltime, the
scheduler's runtime estimate, memory per CPU. Every job that is dropped or repaired is
recorded with its trace line and the reason, and counted; nothing is dropped silently.

Cleaning rules, in order (the reason keys are those of the run report and metrics.json):

* ``malformed_line`` - lines skipped because the user asked to skip bad lines;
* ``cancelled`` - dropped: cancelled (status 5) before running, or at all with
  ``drop_cancelled``;
* ``zero_runtime`` - dropped: the job has no positive runtime;
* ``no_submit_time`` - dropped: the submit time is missing;
* ``no_cpus`` - dropped: neither requested (field 8) nor allocated (field 5) processors;
* ``cpus_from_allocated`` - repaired: requested processors missing, allocated used;
* ``walltime_from_queue`` / ``walltime_from_runtime`` - repaired: requested time missing,
  the queue's default walltime (else its limit) is used, else the runtime;
* ``routed_by_runtime`` - repaired: requested time missing where the site routes jobs by
  walltime, so the job went to the queue its actual runtime fits - what no real scheduler
  can know at submission (e.g. METACENTRUM-2009, which records no requested walltimes);
* ``memory_missing`` - repaired: memory is modelled but the job gives none; it asks 0;
* ``no_queue`` - rejected: no queue accepts the job (its walltime, or its shape where the
  queue takes single-node jobs only);
* ``too_large`` - rejected: no node set its queue may use could ever hold it;
* ``over_limit`` - rejected: it asks for more CPUs than its queue's ``cpu_pool`` or
  ``max_cpus_per_user``, so it could never start;
* the requirements of :mod:`queuesim.core.requirements` - rejected:
  ``no_node_with_properties``, ``no_node_with_gpus``; repaired:
  ``exclusive_whole_nodes``; warnings (the job runs, the requirement is not honoured in
  full): ``exclusive_one_node_size``, ``gpus_rounded_up``, ``gpu_job_shape_rounded``,
  ``host_requirement_not_modelled``, ``resource_not_modelled``.

Rejections are errors unless the caller passes ``reject_unrunnable``: a job that cannot
run on the site usually means the wrong site file for the trace.

A log reader may also have dropped, repaired or warned about records before (a PBS array
parent, a Slurm job still pending at the end of the log; see the reader's docstring):
those reader notes (:attr:`~queuesim.traces.swf.SwfTrace.notes`) come first in the counts,
under the reader's reason keys, with the action the reader gave.

Job shapes: a job normally takes its CPUs from any nodes. A job of a ``single_node`` queue
takes all its CPUs on one node, and a job of Alea's extended SWF whose nodespec asks for
``N:ppn=P`` nodes takes exactly ``P`` CPUs on each of ``N`` nodes (column ``ppn``; 0 for a
free spread). Jobs with shapes make the profile track every node.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from queuesim.common.errors import WorkloadError
from queuesim.core.cluster import ClusterState
from queuesim.core.requirements import REQUIREMENT_REASONS, resolve
from queuesim.site.enums import DfrsAnnotation, EstimateSource, MemoryModel, Routing
from queuesim.site.model import Site
from queuesim.traces.registry import read_trace
from queuesim.traces.swf import SwfHeader, SwfTrace

CLEANING_REASONS: tuple[str, ...] = (
    "malformed_line",
    "cancelled",
    "zero_runtime",
    "no_submit_time",
    "no_cpus",
    "cpus_from_allocated",
    "walltime_from_queue",
    "walltime_from_runtime",
    "routed_by_runtime",
    "memory_missing",
    "no_queue",
    "too_large",
    "over_limit",
    *REQUIREMENT_REASONS,
)
DROPPED = ("malformed_line", "cancelled", "zero_runtime", "no_submit_time", "no_cpus")
REJECTED = (
    "no_queue",
    "too_large",
    "over_limit",
    *(r for r, action in REQUIREMENT_REASONS.items() if action == "rejected"),
)
#: what cleaning does to the jobs a reason names
ACTIONS: dict[str, str] = {
    **dict.fromkeys(CLEANING_REASONS, "repaired"),
    **dict.fromkeys(DROPPED, "dropped"),
    **REQUIREMENT_REASONS,
    **dict.fromkeys(REJECTED, "rejected"),
}

#: what time-shared nodes need of every job: its tasks, CPU need and memory fraction (a DFRS
#: annotation adds them to the job table, see :mod:`queuesim.traces.dfrs_annotation`)
TIME_SHARED_COLUMNS = ("tasks", "cpu_need", "mem_fraction")
#: the SWF header line that names a trace's DFRS annotation file
DFRS_HEADER_KEY = "QueuesimDfrs"
JOB_COLUMNS = (
    "job_id",
    "line",
    "user",
    "group",
    "queue",
    "submit",
    "runtime",
    "walltime",
    "estimate",
    "cpus",
    "mem_per_cpu",
    "ppn",
    "gpn",
    "node_set",
)

STATUS_CANCELLED = 5


@dataclass(frozen=True)
class CleaningOptions:
    """What the user allows cleaning to do beyond the always-on rules."""

    skip_bad_lines: bool = False
    drop_cancelled: bool = False
    reject_unrunnable: bool = False
    #: the trace format by name (:data:`queuesim.traces.registry.FORMATS`); None: sniffed
    trace_format: str | None = None


@dataclass(frozen=True)
class Cleaning:
    """What cleaning did: counts by reason and one record per affected job."""

    counts: dict[str, int]
    records: pd.DataFrame  # columns: job_id, line, reason, action
    #: reason -> what was done (dropped, repaired, rejected, warning); every key of counts
    actions: dict[str, str] = field(default_factory=lambda: dict(ACTIONS))

    def _total(self, action: str) -> int:
        return sum(n for r, n in self.counts.items() if self.actions.get(r) == action)

    @property
    def dropped(self) -> int:
        return self._total("dropped")

    @property
    def rejected(self) -> int:
        return self._total("rejected")

    @property
    def repaired(self) -> int:
        return self._total("repaired")

    @property
    def warned(self) -> int:
        return self._total("warning")

    def detail(self, per_reason: int = 5) -> dict[str, tuple[str, list[int]]]:
        """Per reason that applies: what was done, and its first trace lines."""
        lines = self.first_lines(per_reason)
        return {
            reason: (self.actions.get(reason, ""), lines.get(reason, []))
            for reason, count in self.counts.items()
            if count
        }

    def first_lines(self, per_reason: int = 5) -> dict[str, list[int]]:
        """The first trace lines of every reason that applies (to show where to look)."""
        records = self.records
        return {
            str(reason): [int(x) for x in np.sort(group["line"].to_numpy())[:per_reason]]
            for reason, group in records.groupby("reason", sort=False)
        }


@dataclass(frozen=True)
class Workload:
    """The jobs of one trace, prepared for one site, in submit order."""

    jobs: pd.DataFrame  # JOB_COLUMNS
    cleaning: Cleaning
    source: str
    header: SwfHeader | None = None
    queue_names: list[str] = field(default_factory=list)
    #: the clusters jobs' requirements allow (column ``node_set`` indexes it; None: all)
    node_sets: list[frozenset[str] | None] = field(default_factory=lambda: [None])

    @property
    def annotated(self) -> bool:
        """Every job has its tasks, CPU need and memory fraction (``TIME_SHARED_COLUMNS``)."""
        return all(c in self.jobs.columns for c in TIME_SHARED_COLUMNS)

    @property
    def shaped(self) -> bool:
        """Some job takes a fixed number of CPUs per node (so nodes must be tracked)."""
        return bool((self.jobs["ppn"].to_numpy() > 0).any())


class _Recorder:
    def __init__(self, notes: pd.DataFrame) -> None:
        """``notes``: what the trace's reader did (see the module docstring)."""
        reasons = list(dict.fromkeys(notes["reason"].astype(str)))
        self.counts = dict.fromkeys([*reasons, *CLEANING_REASONS], 0)
        self.actions = dict(ACTIONS)
        self.parts: list[pd.DataFrame] = []
        for reason, group in notes.groupby("reason", sort=False):
            self.counts[str(reason)] += len(group)
            self.actions[str(reason)] = str(group["action"].iloc[0])
            self.parts.append(
                pd.DataFrame(
                    {
                        "job_id": np.full(len(group), -1, dtype=np.int64),
                        "line": group["line"].to_numpy(dtype=np.int64),
                        "reason": str(reason),
                        "action": group["action"].to_numpy(dtype=object),
                    }
                )
            )

    def add(self, frame: pd.DataFrame, mask: np.ndarray, reason: str, action: str) -> None:
        n = int(mask.sum())
        self.counts[reason] += n
        if n:
            self.parts.append(
                pd.DataFrame(
                    {
                        "job_id": frame["job_id"].to_numpy()[mask],
                        "line": frame["line"].to_numpy()[mask],
                        "reason": reason,
                        "action": action,
                    }
                )
            )

    def result(self) -> Cleaning:
        columns = ["job_id", "line", "reason", "action"]
        records = (
            pd.concat(self.parts, ignore_index=True)
            if self.parts
            else pd.DataFrame(
                {
                    c: pd.Series(dtype="int64" if c != "reason" and c != "action" else "object")
                    for c in columns
                }
            )
        )
        return Cleaning(counts=self.counts, records=records, actions=self.actions)


def load_workload(path: str | Path, site: Site, options: CleaningOptions | None = None) -> Workload:
    """Read a trace file and prepare it for ``site``."""
    options = options or CleaningOptions()
    return prepare_trace(read_workload_trace(path, options), site, options)


def read_workload_trace(path: str | Path, options: CleaningOptions | None = None) -> SwfTrace:
    """Read a trace or site log in any format (named by ``options.trace_format`` or
    sniffed), as every entry point does before :func:`prepare_trace`."""
    options = options or CleaningOptions()
    return read_trace(path, skip_bad_lines=options.skip_bad_lines, format=options.trace_format)


def prepare_trace(trace: SwfTrace, site: Site, options: CleaningOptions | None = None) -> Workload:
    """A trace already read, prepared for ``site`` as :func:`load_workload` prepares it: its
    DFRS annotation attached (from the file its header names, or by the site's rule), then
    cleaned and routed (:func:`prepare`). Every entry point that reads a trace once for
    several sites (``compare``) goes through here."""
    return prepare(_with_dfrs_annotation(trace, site), site, options)


def _with_dfrs_annotation(trace: SwfTrace, site: Site) -> SwfTrace:
    """``trace`` with every job's DFRS tasks, CPU need and memory fraction (columns of
    :data:`queuesim.traces.dfrs_annotation.ANNOTATION_COLUMNS`) when its header names an annotation
    file, or by the site's ``dfrs.annotation`` rule; unchanged otherwise."""
    # imported only when a trace is annotated (with the Lublin-Feitelson model it uses)
    if DFRS_HEADER_KEY in trace.header.fields:
        from queuesim.traces import dfrs_annotation as annotate

        annotated = annotate.read_annotated(trace.path).jobs
        return replace(trace, jobs=annotated)
    if site.dfrs.annotation is DfrsAnnotation.HPC2N:
        from queuesim.traces import dfrs_annotation as annotate

        return replace(trace, jobs=annotate.annotate_hpc2n(trace.jobs))
    return trace


def prepare(trace: SwfTrace, site: Site, options: CleaningOptions | None = None) -> Workload:
    """Clean and route the jobs of ``trace`` for ``site`` (see the module docstring)."""
    options = options or CleaningOptions()
    rec = _Recorder(trace.notes)
    rec.counts["malformed_line"] = len(trace.bad_lines)
    if trace.bad_lines:
        rec.parts.append(
            pd.DataFrame(
                {
                    "job_id": -1,
                    "line": [b.line for b in trace.bad_lines],
                    "reason": "malformed_line",
                    "action": "dropped",
                }
            )
        )
    raw = trace.jobs
    if raw.empty:
        raise WorkloadError(f"{trace.path}: the workload has no jobs")

    keep = np.ones(len(raw), dtype=bool)
    for reason, mask in site_free_cleaning(raw, options).items():
        rec.add(raw, mask, reason, ACTIONS[reason])
        if ACTIONS[reason] == "dropped":
            keep &= ~mask

    jobs = raw.loc[keep].reset_index(drop=True)
    cpus = np.where(jobs["req_procs"] > 0, jobs["req_procs"], jobs["alloc_procs"]).astype(np.int64)
    runtime = jobs["runtime"].to_numpy(dtype=np.float64)
    requested = jobs["req_time"].to_numpy(dtype=np.float64)
    has_walltime = requested > 0

    resolved = resolve(jobs, site, cpus, _trace_ppn(jobs, cpus))
    cpus, ppn, gpn = resolved.cpus, resolved.ppn, resolved.gpn
    single = _single_node_fit(site, cpus, ppn)
    queue_index = _route(trace, jobs, site, np.where(has_walltime, requested, runtime), single)
    no_queue = queue_index < 0
    queues = site.queues
    # walltime for jobs that requested none: the queue's default, else its limit, else runtime
    fallback = np.array(
        [
            q.default_walltime
            if q.default_walltime is not None
            else (q.max_walltime if q.max_walltime is not None else np.nan)
            for q in queues
        ]
        + [np.nan]
    )[queue_index]
    from_queue = ~has_walltime & ~np.isnan(fallback) & ~no_queue
    from_runtime = ~has_walltime & ~from_queue & ~no_queue
    rec.add(jobs, from_queue, "walltime_from_queue", "repaired")
    rec.add(jobs, from_runtime, "walltime_from_runtime", "repaired")
    by_runtime = ~has_walltime & ~no_queue & (site.routing is Routing.WALLTIME)
    rec.add(jobs, by_runtime, "routed_by_runtime", "repaired")
    walltime = np.where(has_walltime, requested, np.where(from_queue, fallback, runtime))

    mem_per_cpu = np.zeros(len(jobs), dtype=np.int64)
    if site.memory is MemoryModel.PER_CPU:
        req_mem = jobs["req_memory"].to_numpy(dtype=np.float64)  # KB per processor in SWF
        missing = ~(req_mem > 0)
        rec.add(jobs, missing & ~no_queue, "memory_missing", "repaired")
        mem_per_cpu = np.where(missing, 0, np.ceil(req_mem * 1024)).astype(np.int64)

    rec.add(jobs, no_queue, "no_queue", "rejected")
    unmet = np.zeros(len(jobs), dtype=bool)
    for reason, flagged in resolved.flags.items():
        action = REQUIREMENT_REASONS[reason]
        mine = flagged & ~no_queue & ~unmet
        rec.add(jobs, mine, reason, action)
        if action == "rejected":
            unmet |= mine
    queue_names = [q.name for q in queues]
    # a single-node queue's jobs take all their CPUs on one node
    in_single = np.array([q.single_node for q in queues] + [False])[queue_index]
    ppn = np.where(in_single, cpus, ppn)
    state = ClusterState(
        site, queue_names, per_node=bool((ppn > 0).any()), node_sets=resolved.node_sets
    )
    # the most CPUs each (memory per CPU, pools, shape) combination could ever get
    placeable = ~no_queue & ~unmet
    rows = state.mask_row(queue_index, resolved.node_set)
    shapes = pd.DataFrame(
        {
            "mem": mem_per_cpu[placeable],
            "row": rows[placeable],
            "ppn": ppn[placeable],
            "gpn": gpn[placeable],
        }
    )
    # groups numbered in order of first appearance, as drop_duplicates keeps them
    # (numpy's unique over rows sorts them as void records: ten times slower)
    which = shapes.groupby(list(shapes.columns), sort=False).ngroup().to_numpy()
    combos = shapes.drop_duplicates().to_numpy()
    limits = np.array(
        [state.max_placeable(int(m), int(r), int(p), int(g)) for m, r, p, g in combos],
        dtype=np.int64,
    )
    most = np.zeros(len(jobs), dtype=np.int64)  # what each job's queue could ever hold
    most[placeable] = limits[which.reshape(-1)]
    too_large = placeable & (cpus > most)
    rec.add(jobs, too_large, "too_large", "rejected")
    unlimited = np.iinfo(np.int64).max
    cap = np.array(
        [
            min(
                (c for c in (site.pool_cpus(q), q.max_cpus_per_user) if c is not None),
                default=unlimited,
            )
            for q in queues
        ]
        + [unlimited]
    )[queue_index]
    over_limit = placeable & ~too_large & (cpus > cap)
    rec.add(jobs, over_limit, "over_limit", "rejected")
    rejected = no_queue | unmet | too_large | over_limit
    if rejected.any() and not options.reject_unrunnable:
        names = [site.queues[q].name if q >= 0 else "-" for q in queue_index.tolist()]
        raise WorkloadError(
            _rejection_message(
                trace,
                site,
                jobs,
                no_queue,
                too_large,
                over_limit,
                cpus,
                ppn,
                mem_per_cpu,
                most,
                names,
                _unmet_parts(jobs, resolved.flags, unmet),
            )
        )

    estimate = _estimates(site, queue_index, walltime, runtime)
    prepared = pd.DataFrame(
        {
            "job_id": jobs["job_id"].to_numpy(dtype=np.int64),
            "line": jobs["line"].to_numpy(dtype=np.int64),
            "user": jobs["user"].to_numpy(dtype=np.int64),
            "group": jobs["group"].to_numpy(dtype=np.int64),
            "queue": pd.Categorical.from_codes(
                np.where(rejected, 0, queue_index), categories=pd.Index(queue_names)
            ),
            "submit": jobs["submit"].to_numpy(dtype=np.float64),
            "runtime": runtime,
            "walltime": walltime,
            "estimate": estimate,
            "cpus": cpus,
            "mem_per_cpu": mem_per_cpu,
            "ppn": ppn,
            "gpn": gpn,
            "node_set": resolved.node_set,
            **{c: jobs[c].to_numpy() for c in TIME_SHARED_COLUMNS if c in jobs.columns},
        }
    ).loc[~rejected]
    prepared = prepared.sort_values(["submit", "line"], kind="mergesort").reset_index(drop=True)
    if prepared.empty:
        raise WorkloadError(f"{trace.path}: no job is left after cleaning ({rec.counts})")
    return Workload(
        jobs=prepared,
        cleaning=rec.result(),
        source=str(trace.path),
        header=trace.header,
        queue_names=queue_names,
        node_sets=resolved.node_sets,
    )


def site_free_cleaning(raw: pd.DataFrame, options: CleaningOptions) -> dict[str, np.ndarray]:
    """The cleaning rules that do not depend on the site, in order, each with the jobs of
    ``raw`` (SWF columns) it drops or repairs; a job dropped by one rule is not counted by
    the later ones (``queuesim inspect`` shows them before any site exists)."""
    status = raw["status"].to_numpy()
    runtime = raw["runtime"].to_numpy(dtype=np.float64)
    cancelled = status == STATUS_CANCELLED
    masks: dict[str, np.ndarray] = {}
    masks["cancelled"] = cancelled & ((runtime <= 0) | options.drop_cancelled)
    keep = ~masks["cancelled"]
    masks["zero_runtime"] = keep & ~(runtime > 0)
    keep &= ~masks["zero_runtime"]
    masks["no_submit_time"] = keep & (raw["submit"].to_numpy() < 0)
    keep &= ~masks["no_submit_time"]
    req_procs = raw["req_procs"].to_numpy()
    masks["no_cpus"] = keep & (req_procs <= 0) & (raw["alloc_procs"].to_numpy() <= 0)
    keep &= ~masks["no_cpus"]
    masks["cpus_from_allocated"] = keep & (req_procs <= 0)
    return masks


def _trace_ppn(jobs: pd.DataFrame, cpus: np.ndarray) -> np.ndarray:
    """CPUs per node of every job whose trace gives its shape (Alea's nodespec ``N:ppn=P``
    with N x P equal to its CPUs); 0: any spread."""
    if "ppn" not in jobs.columns:
        return np.zeros(len(jobs), dtype=np.int64)
    ppn = jobs["ppn"].to_numpy(dtype=np.int64)
    nodes = jobs["nodes"].to_numpy(dtype=np.int64)
    return np.where((ppn > 0) & (nodes * ppn == cpus), ppn, 0).astype(np.int64)


def _single_node_fit(site: Site, cpus: np.ndarray, ppn: np.ndarray) -> np.ndarray:
    """Per job and queue: whether a single-node queue could take it (it fits one node of
    the queue's clusters and asks for no more than one node); True for other queues."""
    fit = np.ones((len(cpus), len(site.queues)), dtype=bool)
    for i, q in enumerate(site.queues):
        if q.single_node:
            allowed = q.clusters
            largest = max(
                c.cpus_per_node for c in site.clusters if allowed is None or c.name in allowed
            )
            fit[:, i] = (cpus <= largest) & ((ppn == 0) | (ppn == cpus))
    return fit


def _route(
    trace: SwfTrace, jobs: pd.DataFrame, site: Site, walltime: np.ndarray, single: np.ndarray
) -> np.ndarray:
    """Queue index of every job (-1: no queue accepts it). ``single``: per job and queue,
    whether the queue's shape rule lets it in."""
    queues = site.queues
    if site.routing is Routing.WALLTIME:
        index = np.full(len(jobs), -1, dtype=np.int64)
        limits = [np.inf if q.max_walltime is None else q.max_walltime for q in queues]
        for i in sorted(range(len(queues)), key=limits.__getitem__, reverse=True):
            if queues[i].route_by_walltime:  # smaller limits overwrite larger ones
                index = np.where((walltime <= limits[i]) & single[:, i], i, index)
        return index
    mapping = site.trace_queue_map()
    column = "queue_name" if "queue_name" in jobs.columns else "queue"
    trace_queue = jobs[column].to_numpy()
    index = np.empty(len(jobs), dtype=np.int64)
    for value in pd.unique(trace_queue):
        key = str(value)
        if key not in mapping:
            if len(queues) == 1 and not mapping:
                mapping[key] = 0
            else:
                line = int(jobs["line"].to_numpy()[np.argmax(trace_queue == value)])
                known = ", ".join(sorted(mapping)) or "none"
                shown = value.item() if isinstance(value, np.generic) else value
                raise WorkloadError(
                    f"{trace.path}:{line}: trace queue {shown!r} is not mapped to any queue of "
                    f"site {site.name!r} (mapped trace queues: {known}); add it to a queue's "
                    "trace_queues or to queue_map"
                )
        mine = trace_queue == value
        index[mine] = np.where(single[mine, mapping[key]], mapping[key], -1)
    return index


def _estimates(
    site: Site, queue_index: np.ndarray, walltime: np.ndarray, runtime: np.ndarray
) -> np.ndarray:
    if site.estimate is EstimateSource.EXACT:
        # what the job will really run: killed at its walltime when the site kills
        return np.minimum(runtime, walltime) if site.kill_at_walltime else runtime.copy()
    if site.estimate is EstimateSource.REQUESTED:
        return walltime.copy()
    limits = np.array(
        [np.nan if q.max_walltime is None else q.max_walltime for q in site.queues] + [np.nan]
    )[queue_index]
    return np.where(np.isnan(limits), walltime, limits)


def _rejection_message(
    trace: SwfTrace,
    site: Site,
    jobs: pd.DataFrame,
    no_queue: np.ndarray,
    too_large: np.ndarray,
    over_limit: np.ndarray,
    cpus: np.ndarray,
    ppn: np.ndarray,
    mem_per_cpu: np.ndarray,
    most: np.ndarray,
    queue_names: list[str],
    unmet: list[str],
) -> str:
    """The error for jobs the site cannot run. A too-large job's line gives its CPUs per
    node (``ppn``; 0: any spread), memory per CPU and the most CPUs the nodes its queue
    may use could ever give it (``most``): what fits, not only the site's total."""
    lines = jobs["line"].to_numpy()
    parts = list(unmet)
    if too_large.any():
        first = np.flatnonzero(too_large)[:5]

        def ask(i: int) -> str:
            memory = f" with {mem_per_cpu[i]:,} bytes of memory each" if mem_per_cpu[i] else ""
            if ppn[i] == cpus[i]:
                per_node = f", {ppn[i]} on one node"
            elif ppn[i] > 0:
                per_node = f", {ppn[i]} per node"
            else:
                per_node = ""
            return (
                f"line {lines[i]} ({cpus[i]} CPUs{per_node}{memory}, queue "
                f"{queue_names[i]!r}: at most {most[i]} can ever be placed)"
            )

        parts.append(
            f"{int(too_large.sum())} jobs ask for more than the nodes their queue may use can "
            f"ever hold (site {site.name!r} has {site.total_cpus} CPUs in all): "
            + ", ".join(ask(int(i)) for i in first)
        )
    if over_limit.any():
        first = np.flatnonzero(over_limit)[:5]
        examples = ", ".join(
            f"line {lines[i]} ({cpus[i]} CPUs, queue {queue_names[i]!r})" for i in first
        )
        parts.append(
            f"{int(over_limit.sum())} jobs ask for more CPUs than their queue's cpu_pool or "
            f"max_cpus_per_user allows: {examples}"
        )
    if no_queue.any():
        first = np.flatnonzero(no_queue)[:5]
        examples = ", ".join(f"line {lines[i]}" for i in first)
        parts.append(
            f"{int(no_queue.sum())} jobs fit no queue of site {site.name!r} (walltime over "
            f"every limit, or a multi-node job for a single-node queue): {examples}"
        )
    return (
        f"{trace.path}: "
        + "; ".join(parts)
        + ". Is this the right site file for this trace? To reject such jobs and simulate "
        "the rest, pass --reject-unrunnable (they are counted and listed in the report)."
    )


def _unmet_parts(jobs: pd.DataFrame, flags: dict[str, np.ndarray], unmet: np.ndarray) -> list[str]:
    """What the rejection message says about requirements no node group meets."""
    lines = jobs["line"].to_numpy()
    parts = []
    for reason, what in (
        ("no_node_with_properties", "node properties no node group of the site has"),
        ("no_node_with_gpus", "more GPUs per node than any node group of the site has"),
    ):
        hit = flags[reason] & unmet
        if hit.any():
            shown = ", ".join(f"line {lines[i]}" for i in np.flatnonzero(hit)[:5])
            parts.append(
                f"{int(hit.sum())} jobs ask for {what} ({reason}; clusters take `properties` "
                f"and `gpus_per_node` in the site file): {shown}"
            )
    return parts
