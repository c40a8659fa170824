"""``queuesim import slurm``: a Slurm configuration as a site file and an import report.

Read: ``slurm.conf`` (nodes, partitions, the scheduler and the priority settings),
``gres.conf`` and ``topology.conf`` beside it, and optionally ``sacctmgr show assoc -P``
and ``sacctmgr show qos -P`` dumps. What becomes what:

* nodes alike in CPUs, RealMemory, GPUs (``Gres=gpu...``), features and partitions ->
  one cluster each; partitions -> queues (MaxTime, DefaultTime, PriorityTier, the nodes);
* ``SchedulerType=sched/backfill`` -> conservative backfilling (Slurm's backfill starts a
  lower-priority job only if it delays no higher-priority job's expected start);
  ``sched/builtin`` -> fcfs;
* partition tiers -> ``ordering: queue-priority``; ``priority/multifactor`` with a
  fairshare weight -> ``ordering: fairshare``; ``PriorityDecayHalfLife`` -> the half-life;
* ``SelectTypeParameters=CR_*_Memory`` -> ``memory: per-cpu`` (when every node gives
  RealMemory);
* QOS and association limits -> per-queue limits (:mod:`queuesim.site.slurm_accounts`).

Everything else read is in the report as not modelled, with its value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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

_SCHED_PARAMS = {
    "bf_interval": "how often the backfill loop runs; queuesim plans at every event",
    "bf_window": "how far ahead backfill plans reservations; queuesim plans without horizon",
    "bf_resolution": "time resolution of backfill plans; queuesim plans to the second",
    "bf_max_job_test": "jobs backfill considers per cycle; queuesim considers all",
    "bf_max_job_user": "jobs per user backfill considers per cycle",
    "bf_continue": "backfill resumes after releasing locks; queuesim's pass is atomic",
    "default_queue_depth": "jobs the main scheduler tries per pass; queuesim tries all",
    "sched_interval": "how often the main scheduler runs; queuesim runs at every event",
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


def _ordering(
    draft: DraftSite,
    partitions: list[Partition],
    settings: dict[str, tuple[str, str, Where]],
    report: ImportReport,
) -> None:
    """Partition tiers, the priority plugin and its weights -> ordering and fairshare."""
    queues = {q.name: q for q in draft.queues}
    parts = [p for p in partitions if p.name in queues]
    tier = {
        p.name: _int(
            p.attrs.get("prioritytier", p.attrs.get("priority", "1")), p.where[0], "PriorityTier"
        )
        for p in parts
    }
    factor = {
        p.name: _int(
            p.attrs.get("priorityjobfactor", p.attrs.get("priority", "1")),
            p.where[0],
            "PriorityJobFactor",
        )
        for p in parts
    }
    ptype = settings.get("prioritytype", ("PriorityType", "priority/basic", None))
    multifactor = ptype[1].lower() == "priority/multifactor"
    weights = {k: settings[k] for k in settings if k.startswith("priorityweight")}

    def weight(key: str) -> int:
        """A PriorityWeight* setting (0 when absent)."""
        if key.lower() not in weights:
            return 0
        _, value, where = weights[key.lower()]
        return _int(value, where, key)

    wfs = weight("PriorityWeightFairshare")
    wpart = weight("PriorityWeightPartition")
    where = [p.where[0] for p in parts]
    fairshare = multifactor and wfs > 0
    if len(set(tier.values())) > 1:
        for name, t in tier.items():
            queues[name].priority = t
        draft.ordering = "queue-priority"
        note = "partitions of a higher PriorityTier are scheduled first"
        if not fairshare:
            note += "; within a tier queuesim orders by fairshare, Slurm by the other factors"
    elif multifactor and wpart > 0 and len(set(factor.values())) > 1:
        for name, f in factor.items():
            queues[name].priority = f
        draft.ordering = "queue-priority"
        note = (
            "approximately: PriorityJobFactor x PriorityWeightPartition is one term of "
            "Slurm's priority sum; queuesim orders by it first, then by fairshare"
        )
    elif fairshare:
        draft.ordering, note = "fairshare", "PriorityWeightFairshare > 0"
        where = []
    else:
        draft.ordering, note = "fcfs", "no fairshare weight and no partition tiers"
        where = []
    draft.ordering_where = where + ([ptype[2]] if ptype[2] else [])
    report.map(ptype[0], ptype[1], ptype[2] or [], f"ordering: {draft.ordering}", note)
    for key, (written, value, w) in weights.items():
        used = (key == "priorityweightfairshare" and fairshare) or (
            key == "priorityweightpartition"
            and draft.ordering == "queue-priority"
            and not len(set(tier.values())) > 1
        )
        if used or value.strip() == "0" or not multifactor:
            why = (
                "used"
                if used
                else (
                    "no effect, as in queuesim"
                    if value.strip() == "0"
                    else "no effect without priority/multifactor"
                )
            )
            report.map(written, value, w, f"ordering: {draft.ordering}", why)
        else:
            report.skip(
                written,
                value,
                w,
                "a term of Slurm's priority sum; queuesim orders "
                "by queue priority and fairshare only",
            )
    if draft.ordering in ("fairshare", "queue-priority"):
        half = settings.get("prioritydecayhalflife")
        seconds = slurm_time(half[1], half[2], half[0]) if half else 7 * 86400.0
        if half and not seconds:
            report.skip(
                half[0],
                half[1],
                half[2],
                "no decay; queuesim's fairshare always "
                "decays (the 7-day default half-life is used)",
            )
        else:
            draft.fairshare["half_life"] = format_span(seconds or 0)
            draft.fairshare_where = [half[2]] if half else []
            if half:
                report.map(half[0], half[1], half[2], "fairshare.half_life")
    for key in ("prioritytype", "prioritydecayhalflife", *weights):
        settings.pop(key, None)


def _scheduler(
    draft: DraftSite, settings: dict[str, tuple[str, str, Where]], report: ImportReport
) -> None:
    stype = settings.pop("schedulertype", ("SchedulerType", "sched/backfill", None))
    value = stype[1].lower()
    if value == "sched/builtin":
        draft.policy = "fcfs"
        draft.scheduler_note = "sched/builtin: strict priority order, no backfilling"
    else:
        draft.policy = "conservative"
        draft.scheduler_note = (
            "sched/backfill: a lower-priority job starts only if it delays\n"
            "no higher-priority job's expected start (conservative)"
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
        report.map(stype[0], stype[1], stype[2], f"scheduler.policy: {draft.policy}")
    params = settings.pop("schedulerparameters", None)
    if params:
        for item in (i.strip() for i in params[1].split(",") if i.strip()):
            name = item.split("=")[0].lower()
            report.skip(
                f"{params[0]} {name}",
                item,
                params[2],
                _SCHED_PARAMS.get(name, "a scheduler tuning the site model has no key for"),
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
            else "a multifactor priority setting; queuesim orders by queue priority and "
            "fairshare only"
            if key.startswith("priority")
            else "preemption is not modelled"
            if key.startswith("preempt")
            else "a setting the site model has no key for"
        )
        report.skip(written, value, where, reason)
    preferred = [p.name for p in partitions if p.default]
    settle_queues(draft, report, preferred)
    return SlurmImport(draft, report)
