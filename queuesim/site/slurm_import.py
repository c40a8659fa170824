"""``queuesim import slurm``: a Slurm configuration as a site file and an import report.

Read: ``slurm.conf`` (nodes, partitions, the scheduler and the priority settings),
``gres.conf`` and ``topology.conf`` beside it, and optionally ``sacctmgr show assoc -P``
and ``sacctmgr show qos -P`` dumps. What becomes what:

* nodes alike in CPUs, RealMemory, GPUs (``Gres=gpu...``), features and partitions ->
  one cluster each; partitions -> queues (MaxTime, DefaultTime, PriorityTier, the nodes);
* ``SchedulerType`` -> the ``slurm`` policy (``sched/builtin``: without its backfill
  cycle), and the ``SchedulerParameters`` it models (bf_interval, bf_window,
  bf_resolution, bf_max_job_test, bf_max_job_user, default_queue_depth, sched_interval)
  -> its parameters of the same names;
* ``PriorityType=priority/multifactor`` -> ``ordering: slurm-multifactor`` with the
  ``priority`` block (PriorityWeightAge/Fairshare/JobSize/Partition, PriorityMaxAge,
  PriorityFavorSmall, the partitions' PriorityJobFactor), ``PriorityDecayHalfLife`` ->
  the fairshare half-life; partition tiers -> queue priorities (``queue-priority`` under
  priority/basic);
* ``SelectTypeParameters=CR_*_Memory`` -> ``memory: per-cpu`` (when every node gives
  RealMemory);
* QOS and association limits -> per-queue limits (:mod:`queuesim.site.slurm_accounts`).

Everything else read is in the report as not modelled, with its value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where
from queuesim.site.site_draft import (
    DraftQueue,
    DraftSite,
    NodeSpec,
    assign_clusters,
    format_span,
    group_nodes,
    settle_queues,
)
from queuesim.site.slurm_accounts import apply_assoc, apply_qos
from queuesim.site.slurm_conf import ConfLine, read_conf, read_sacctmgr, slurm_time
from queuesim.site.slurm_nodes import (
    Partition,
    read_gres_conf,
    read_nodes,
    read_nodesets,
    read_partitions,
)

__all__ = ["SlurmImport", "import_slurm"]

_LINE_KINDS = {"nodename", "partitionname", "nodeset"}
#: daemon, path, logging and plumbing settings: read, no bearing on scheduling decisions
_INFRASTRUCTURE = re.compile(
    r"(?i)^(slurmctld|slurmd|slurmdbd|auth|cred|control|backup|accountingstorage(?!enforce)|"
    r"jobacct|jobcomp|acctgather|mpi|proctrack|task|launch|switch|prolog|epilog|"
    r"statesave|mail|health|plugin|tmpfs|cluster_?name$|returntoservice|.*(dir|file|log|"
    r"port|program|path|timeout|debug|syslog|logfmt)$)"
)

#: SchedulerParameters the ``slurm`` policy takes, under the same names
_SCHED_PARAMS = (
    "bf_interval",
    "bf_window",
    "bf_resolution",
    "bf_max_job_test",
    "bf_max_job_user",
    "default_queue_depth",
    "sched_interval",
)
_SCHED_NOT_MODELLED = {
    "bf_continue": "backfill resumes after releasing locks; a simulated cycle is never "
    "interrupted, so every cycle runs to its end",
}


#: global settings whose value here is what queuesim does anyway
_AS_QUEUESIM = {
    "grestypes": ("gpu", "declares GPUs; their counts come from the nodes' Gres="),
    "preempttype": ("preempt/none", "no preemption"),
}


@dataclass
class SlurmImport:
    draft: DraftSite
    report: ImportReport


def _conf_path(path: Path) -> Path:
    conf = path / "slurm.conf" if path.is_dir() else path
    if not conf.is_file():
        what = "no slurm.conf in the folder" if path.is_dir() else "no such file"
        raise ConfigError(f"{path}: {what} (expected a slurm.conf or the folder holding it)")
    return conf


def _settings(lines: list[ConfLine]) -> dict[str, tuple[str, str, Where]]:
    """The global ``Key=Value`` settings: lower key -> (key as written, value, where)."""
    out: dict[str, tuple[str, str, Where]] = {}
    for line in lines:
        if line.first in _LINE_KINDS:
            continue
        for (key, value), written in zip(line.pairs, line.keys, strict=True):
            out[key] = (written, value, line.where)
    return out


def _other_lines(lines: list[ConfLine], report: ImportReport) -> None:
    for line in lines:
        if line.first in ("downnodes", "frontendname"):
            report.skip(
                line.keys[0],
                " ".join(v for _, v in line.pairs),
                line.where,
                "node state and front ends are not modelled",
            )


def _queues(partitions: list[Partition], report: ImportReport) -> list[DraftQueue]:
    queues = []
    for p in partitions:
        where = p.where[0]
        q = DraftQueue(p.name, list(p.where))
        if "maxtime" in p.attrs:
            q.max_walltime = slurm_time(p.attrs["maxtime"], where, "MaxTime")
        if "defaulttime" in p.attrs:
            q.default_walltime = slurm_time(p.attrs["defaulttime"], where, "DefaultTime")
        if not p.nodes:
            report.skip(
                f"partition {p.name}",
                "no nodes",
                where,
                "a partition without nodes runs nothing; left out",
            )
            continue
        queues.append(q)
    return queues


def _int(value: str, where: Where, key: str) -> int:
    if not re.fullmatch(r"-?\d+", value):
        raise ConfigError(f"{where}: {key}={value}: expected a whole number")
    return int(value)


#: the PriorityWeight* settings the priority block maps, and its keys
_WEIGHTS = {
    "priorityweightage": "weight_age",
    "priorityweightfairshare": "weight_fairshare",
    "priorityweightjobsize": "weight_job_size",
    "priorityweightpartition": "weight_partition",
}


def _ordering(
    draft: DraftSite,
    partitions: list[Partition],
    settings: dict[str, tuple[str, str, Where]],
    report: ImportReport,
) -> None:
    """Partition tiers, the priority plugin and its weights -> ordering and priority."""
    queues = {q.name: q for q in draft.queues}
    parts = [p for p in partitions if p.name in queues]
    tier = {
        p.name: _int(
            p.attrs.get("prioritytier", p.attrs.get("priority", "1")), p.where[0], "PriorityTier"
        )
        for p in parts
    }
    ptype = settings.pop("prioritytype", ("PriorityType", "priority/basic", None))
    multifactor = ptype[1].lower() == "priority/multifactor"
    tiers = len(set(tier.values())) > 1
    if tiers:
        for name, t in tier.items():
            queues[name].priority = t
    where = [p.where[0] for p in parts] if tiers else []
    if multifactor:
        draft.ordering = "slurm-multifactor"
        note = "partitions by PriorityTier, then the weighted sum of the factors (priority:)"
        _multifactor(draft, parts, settings, report)
    elif tiers:
        draft.ordering, note = "queue-priority", "partitions of a higher PriorityTier first"
    else:
        draft.ordering, note = "fcfs", "priority/basic: by submit time"
    draft.ordering_where = where + ([ptype[2]] if ptype[2] else [])
    report.map(ptype[0], ptype[1], ptype[2] or [], f"ordering: {draft.ordering}", note)
    for key in [k for k in settings if k.startswith("priorityweight")]:
        written, value, w = settings.pop(key)
        if value.strip() == "0" or not multifactor:
            why = "no effect, as in queuesim" if value.strip() == "0" else "no effect"
            report.map(written, value, w, f"ordering: {draft.ordering}", why)
        else:
            report.skip(
                written,
                value,
                w,
                "a priority factor queuesim does not model (QOS: a trace does not give "
                "each job's QOS; TRES, association, nice: not modelled)",
            )


def _multifactor(
    draft: DraftSite,
    parts: list[Partition],
    settings: dict[str, tuple[str, str, Where]],
    report: ImportReport,
) -> None:
    """priority/multifactor's weights, PriorityMaxAge, PriorityFavorSmall, the partitions'
    PriorityJobFactor and PriorityDecayHalfLife -> the priority block and the half-life."""
    prio: dict[str, Any] = {}
    for key, name in _WEIGHTS.items():
        if key in settings:
            written, value, w = settings.pop(key)
            prio[name] = _int(value, w, written)
            draft.priority_where.append(w)
            note = "CPUs over the site's CPUs (Slurm also averages in nodes)" * (
                name == "weight_job_size"
            )
            report.map(written, value, w, f"priority.{name}", note)
    if "prioritymaxage" in settings:
        written, value, w = settings.pop("prioritymaxage")
        seconds = slurm_time(value, w, written)
        prio["max_age"] = format_span(seconds) if seconds else "1s"
        draft.priority_where.append(w)
        report.map(written, value, w, "priority.max_age")
    if "priorityfavorsmall" in settings:
        written, value, w = settings.pop("priorityfavorsmall")
        prio["favor_small"] = value.strip().lower() in ("yes", "1", "true")
        draft.priority_where.append(w)
        report.map(written, value, w, "priority.favor_small")
    factors = {}
    for p in parts:
        if "priorityjobfactor" in p.attrs:
            factors[p.name] = _int(p.attrs["priorityjobfactor"], p.where[0], "PriorityJobFactor")
    if factors:
        prio["partition_job_factor"] = factors
    draft.priority = prio
    half = settings.pop("prioritydecayhalflife", None)
    seconds = slurm_time(half[1], half[2], half[0]) if half else 7 * 86400.0
    if half and not seconds:
        report.skip(
            half[0],
            half[1],
            half[2],
            "no decay; queuesim's fairshare always decays (the 7-day default half-life is used)",
        )
    else:
        draft.fairshare["half_life"] = format_span(seconds or 0)
        draft.fairshare_where = [half[2]] if half else []
        if half:
            report.map(half[0], half[1], half[2], "fairshare.half_life")
    flags = settings.pop("priorityflags", None)
    fair_tree = flags is None or "no_fair_tree" not in flags[1].lower()
    if prio.get("weight_fairshare") and fair_tree:
        written, value, w = flags or (
            "PriorityFlags",
            "(not set: Fair Tree, Slurm's default since 19.05)",
            draft.priority_where[0],
        )
        report.skip(
            written,
            value,
            w,
            "Fair Tree fair-share is not modelled; queuesim computes the classic "
            "2^(-U/S) factor over users",
        )
    elif flags and {f.strip().lower() for f in flags[1].split(",")} == {"no_fair_tree"}:
        report.map(*flags, "ordering: slurm-multifactor", "the classic fair-share factor")
    elif flags:
        report.skip(*flags, "priority flags other than NO_FAIR_TREE are not modelled")


def _int_param(item: str, where: Where, key: str) -> int:
    """A ``name=value`` SchedulerParameters item's whole number."""
    value = item.partition("=")[2].strip()
    if not re.fullmatch(r"\d+", value):
        raise ConfigError(f"{where}: SchedulerParameters {item}: expected {key}=<whole number>")
    return int(value)


def _scheduler(
    draft: DraftSite, settings: dict[str, tuple[str, str, Where]], report: ImportReport
) -> None:
    """SchedulerType and SchedulerParameters -> the ``slurm`` policy and its parameters."""
    stype = settings.pop("schedulertype", ("SchedulerType", "sched/backfill", None))
    value = stype[1].lower()
    draft.policy = "slurm"
    if value == "sched/builtin":
        draft.params["backfill"] = False
        draft.scheduler_note = "sched/builtin: the main scheduler only, no backfill cycle"
    else:
        draft.scheduler_note = (
            "sched/backfill: the main scheduler at every submit and end, and\n"
            "a backfill cycle every bf_interval seconds"
        )
        if value != "sched/backfill":
            report.skip(
                stype[0],
                stype[1],
                stype[2] or [],
                "unknown scheduler plugin; Slurm's default sched/backfill is assumed",
            )
    draft.scheduler_where = [stype[2]] if stype[2] else []
    if stype[2] and value in ("sched/builtin", "sched/backfill"):
        report.map(stype[0], stype[1], stype[2], "scheduler.policy: slurm")
    params = settings.pop("schedulerparameters", None)
    if params:
        for item in (i.strip() for i in params[1].split(",") if i.strip()):
            name = item.split("=")[0].strip().lower()
            if name in _SCHED_PARAMS:
                draft.params[name] = _int_param(item, params[2], name)
                report.map(f"{params[0]} {name}", item, params[2], f"scheduler.params.{name}")
            else:
                report.skip(
                    f"{params[0]} {name}",
                    item,
                    params[2],
                    _SCHED_NOT_MODELLED.get(
                        name, "a scheduler tuning the site model has no key for"
                    ),
                )


def _memory(
    draft: DraftSite, settings: dict[str, tuple[str, str, Where]], report: ImportReport
) -> None:
    select = settings.pop("selecttype", None)
    params = settings.pop("selecttypeparameters", None)
    if select:
        if select[1].lower() in ("select/cons_tres", "select/cons_res"):
            report.map(
                select[0], select[1], select[2], "(as in queuesim)", "jobs share nodes by CPU"
            )
        else:
            report.skip(
                select[0],
                select[1],
                select[2],
                "whole-node allocation is not modelled; jobs share nodes by CPU",
            )
    if params:
        memory = "memory" in params[1].lower()
        if memory and all(c.memory_per_node for c in draft.clusters):
            draft.memory = "per-cpu"
            report.map(
                params[0],
                params[1],
                params[2],
                "memory: per-cpu",
                "memory is a consumable resource",
            )
        else:
            report.skip(
                params[0],
                params[1],
                params[2],
                "memory is not scheduled here"
                if not memory
                else "memory is consumable, but not every node gives "
                "RealMemory; memory left unmodelled",
            )


def _topology(path: Path, report: ImportReport) -> None:
    for line in read_conf(path, report, "topology.conf"):
        text = " ".join(
            f"{k}={v}" for k, v in zip(line.keys, (v for _, v in line.pairs), strict=True)
        )
        report.skip(
            "topology.conf",
            text,
            line.where,
            "network topology: queuesim places jobs without regard to switches",
        )


def import_slurm(path: Path, assoc: Path | None = None, qos: Path | None = None) -> SlurmImport:
    """Read a Slurm configuration (``path``: a slurm.conf or its folder)."""
    conf = _conf_path(Path(path))
    report = ImportReport("slurm")
    lines = read_conf(conf, report)
    settings = _settings(lines)
    nodes = read_nodes(lines, report)
    if not nodes:
        raise ConfigError(f"{conf}: no NodeName lines: the site needs nodes")
    if (conf.parent / "gres.conf").is_file():
        read_gres_conf(conf.parent / "gres.conf", nodes, report)
    if (conf.parent / "topology.conf").is_file():
        _topology(conf.parent / "topology.conf", report)
    nodesets = read_nodesets(lines, nodes, report)
    partitions = read_partitions(lines, nodes, nodesets, report)
    _other_lines(lines, report)
    member: dict[str, list[str]] = {}
    for p in partitions:
        for n in p.nodes:
            member.setdefault(n, []).append(p.name)
    specs = [
        NodeSpec(
            n.name, n.cpus, n.memory, n.gpus, n.features, frozenset(member.get(n.name, ())), n.where
        )
        for n in nodes.values()
    ]
    name = settings.get("clustername", ("", conf.parent.name or "slurm", None))
    draft = DraftSite(name[1] or "slurm", "Slurm", group_nodes(specs))
    if name[2]:
        report.map(name[0], name[1], name[2], "name")
    settings.pop("clustername", None)
    draft.queues = _queues(partitions, report)
    for q in assign_clusters(draft):
        report.skip(f"partition {q.name}", "no nodes", q.where, "left out")
    for c in draft.clusters:
        if c.queues == frozenset():
            report.skip(
                "nodes",
                ",".join(c.nodes[:4]),
                c.where,
                f"in no partition: cluster {c.name} is kept but no queue uses it",
            )
    _ordering(draft, partitions, settings, report)
    queues = {q.name: q for q in draft.queues}
    partition_qos = {p.name: p.attrs["qos"] for p in partitions if p.attrs.get("qos")}
    if qos is not None:
        apply_qos(
            read_sacctmgr(qos, report, "sacctmgr show qos -P dump"), partition_qos, queues, report
        )
    if assoc is not None:
        shares = apply_assoc(
            read_sacctmgr(assoc, report, "sacctmgr show assoc -P dump"),
            queues,
            report,
            fairshare=draft.ordering != "fcfs",
        )
        if shares:
            draft.fairshare["shares"] = shares
    _scheduler(draft, settings, report)
    _memory(draft, settings, report)
    for key, (written, value, where) in settings.items():
        if key in _AS_QUEUESIM and value.lower() == _AS_QUEUESIM[key][0]:
            report.map(written, value, where, "(as in queuesim)", _AS_QUEUESIM[key][1])
            continue
        reason = (
            "daemon, path, logging or accounting plumbing: no bearing on scheduling decisions"
            if _INFRASTRUCTURE.match(key)
            else "a priority setting queuesim does not model (priorities are computed "
            "afresh at every pass)"
            if key.startswith("priority")
            else "preemption is not modelled"
            if key.startswith("preempt")
            else "a setting the site model has no key for"
        )
        report.skip(written, value, where, reason)
    preferred = [p.name for p in partitions if p.default]
    settle_queues(draft, report, preferred)
    return SlurmImport(draft, report)
