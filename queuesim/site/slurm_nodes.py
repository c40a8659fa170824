"""Slurm nodes and partitions: ``NodeName``, ``NodeSet`` and ``PartitionName`` lines of
slurm.conf (with their ``DEFAULT`` lines), and ``gres.conf`` beside it, as
:class:`~queuesim.site.site_draft.NodeSpec` and partitions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where
from queuesim.site.slurm_conf import ConfLine, expand_hostlist, read_conf

__all__ = ["Partition", "SlurmNode", "read_gres_conf", "read_nodes", "read_partitions"]

_MIB = 1024**2
#: CPU topology keys: their product is the node's CPUs when CPUs= is not given
_TOPOLOGY = ("boards", "socketsperboard", "sockets", "corespersocket", "threadspercore")
_NODE_MAPPED = {"nodename", "cpus", "realmemory", "gres", "feature", "features", *_TOPOLOGY}


@dataclass
class SlurmNode:
    name: str
    cpus: int
    memory: int | None
    gpus: int
    features: tuple[str, ...]
    where: Where


def _whole(value: str, where: Where, key: str) -> int:
    if not re.fullmatch(r"\d+", value):
        raise ConfigError(f"{where}: {key}={value}: expected a whole number")
    return int(value)


def _gres_gpus(value: str, where: Where, report: ImportReport) -> int:
    """GPUs of a ``Gres=gpu:tesla:4,gpu:k80:2,mps:100`` value; other kinds reported."""
    gpus = 0
    for item in (i for i in value.split(",") if i.strip() and i.strip().lower() != "(null)"):
        parts = re.sub(r"\(.*\)$", "", item.strip()).split(":")
        count = 1
        if len(parts) > 1 and re.fullmatch(r"\d+[kKmMgG]?", parts[-1]):
            mult = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(parts[-1][-1].lower(), 1)
            count = int(parts[-1].rstrip("kKmMgG")) * mult
        if parts[0].lower() == "gpu":
            gpus += count
        else:
            report.skip("Gres", item.strip(), where, "a generic resource other than GPUs")
    return gpus


_NODE_REASONS = {
    "state": "node state at start-up; every node is up in queuesim",
    "weight": "node allocation order; queuesim places jobs by its own rule",
    "tmpdisk": "local disk is not modelled",
}


def _report_node_keys(line: ConfLine, report: ImportReport, note: str) -> None:
    cpus_given = line.get("cpus") is not None
    for (key, value), written in zip(line.pairs, line.keys, strict=True):
        if key == "nodename":
            continue
        if key in _TOPOLOGY and cpus_given:
            report.skip(written, value, line.where, "CPU topology; the line's CPUs= is used")
        elif key in _TOPOLOGY:
            report.map(
                written,
                value,
                line.where,
                "clusters[].cpus_per_node",
                "CPUs = product of Boards, Sockets, CoresPerSocket, ThreadsPerCore" + note,
            )
        elif key in _NODE_MAPPED:
            target = {
                "cpus": "clusters[].cpus_per_node",
                "realmemory": "clusters[].memory_per_node (MB)",
                "gres": "clusters[].gpus_per_node",
            }.get(key, "clusters[].properties")
            report.map(written, value, line.where, target, note.lstrip("; "))
        else:
            report.skip(
                written,
                value,
                line.where,
                _NODE_REASONS.get(key, "node setting the site model has no key for"),
            )


def _cpus(attrs: dict[str, str], where: Where) -> int:
    if "cpus" in attrs:
        return max(1, _whole(attrs["cpus"], where, "CPUs"))
    boards = _whole(attrs.get("boards", "1"), where, "Boards")
    sockets = _whole(
        attrs.get("socketsperboard", attrs.get("sockets", "1")), where, "SocketsPerBoard"
    )
    cores = _whole(attrs.get("corespersocket", "1"), where, "CoresPerSocket")
    threads = _whole(attrs.get("threadspercore", "1"), where, "ThreadsPerCore")
    return max(1, boards * sockets * cores * threads)


def read_nodes(lines: list[ConfLine], report: ImportReport) -> dict[str, SlurmNode]:
    """Every node of the ``NodeName`` lines, ``NodeName=DEFAULT`` applied."""
    defaults: dict[str, str] = {}
    nodes: dict[str, SlurmNode] = {}
    for line in lines:
        if line.first != "nodename":
            continue
        own = dict(line.pairs[1:])
        if line.pairs[0][1].upper() == "DEFAULT":
            defaults.update(own)
            report.map(
                line.keys[0], "DEFAULT", line.where, "(defaults for the NodeName lines after it)"
            )
            _report_node_keys(line, report, "; a default for the NodeName lines after it")
            if "gres" in own:
                _gres_gpus(own["gres"], line.where, report)
            continue
        _report_node_keys(line, report, "")
        attrs = {**defaults, **own}
        where = line.where
        memory = None
        if "realmemory" in attrs:
            memory = _whole(attrs["realmemory"], where, "RealMemory") * _MIB or None
        gpus = _gres_gpus(attrs.get("gres", ""), where, report) if "gres" in own else 0
        if "gres" not in own and "gres" in defaults:
            gpus = _gres_gpus(defaults["gres"], where, ImportReport("slurm"))
        raw = attrs.get("features", attrs.get("feature", ""))
        features = tuple(sorted({f.strip() for f in raw.split(",") if f.strip()}))
        cpus = _cpus(attrs, where)
        for name in expand_hostlist(line.pairs[0][1], where):
            nodes[name] = SlurmNode(name, cpus, memory, gpus, features, where)
        report.map(line.keys[0], line.pairs[0][1], where, "clusters[] (nodes grouped)")
    return nodes


def read_nodesets(
    lines: list[ConfLine], nodes: dict[str, SlurmNode], report: ImportReport
) -> dict[str, list[str]]:
    """``NodeSet=name Nodes=... | Feature=...``: named node sets partitions may use."""
    sets: dict[str, list[str]] = {}
    for line in lines:
        if line.first != "nodeset":
            continue
        name = line.pairs[0][1]
        members: list[str] = []
        if line.get("nodes") is not None:
            members += expand_hostlist(line.get("nodes") or "", line.where)
        if line.get("feature") is not None:
            feature = line.get("feature") or ""
            members += [n for n, node in nodes.items() if feature in node.features]
        sets[name] = list(dict.fromkeys(members))
        report.map(
            line.keys[0],
            " ".join(
                f"{k}={v}" for k, v in zip(line.keys, (v for _, v in line.pairs), strict=True)
            ),
            line.where,
            "the partitions that name it",
        )
    return sets


@dataclass
class Partition:
    name: str
    where: list[Where]
    attrs: dict[str, str]
    nodes: list[str] = field(default_factory=list)

    @property
    def default(self) -> bool:
        return self.attrs.get("default", "no").upper() == "YES"


#: partition keys the importer maps (the rest is reported as not modelled)
PARTITION_MAPPED = {
    "partitionname": "queues[]",
    "nodes": "queues[].clusters",
    "maxtime": "queues[].max_walltime",
    "defaulttime": "queues[].default_walltime",
    "prioritytier": "queues[].priority",
    "priority": "queues[].priority",
    "priorityjobfactor": "priority.partition_job_factor (with priority/multifactor)",
    "default": "the queue preferred for walltime routing",
    "qos": "queues[] per-user limits (from the QOS dump)",
}
#: partition keys whose value here is what queuesim does anyway
_PARTITION_AS_QUEUESIM = {
    "state": {"UP"},
    "oversubscribe": {"NO"},
    "shared": {"NO"},
    "hidden": {"NO"},
    "rootonly": {"NO"},
    "reqresv": {"NO"},
    "exclusiveuser": {"NO"},
}


_PARTITION_REASONS = (
    (
        {"oversubscribe", "shared"},
        "whole nodes per job (EXCLUSIVE) or CPUs shared by jobs "
        "(YES, FORCE); queuesim shares nodes by CPU",
    ),
    (
        {
            "allowaccounts",
            "allowgroups",
            "allowqos",
            "denyaccounts",
            "denyqos",
            "allowedrootonly",
            "rootonly",
            "exclusiveuser",
            "reqresv",
        },
        "who may submit; queuesim has no access control",
    ),
    (
        {
            "maxnodes",
            "minnodes",
            "maxcpuspernode",
            "maxmempercpu",
            "maxmempernode",
            "defmempercpu",
            "defmempernode",
            "maxcpuspersocket",
        },
        "a per-job size or memory limit; "
        "queuesim has none (jobs larger than the queue's nodes are rejected)",
    ),
    ({"state", "hidden"}, "partition state; every queuesim queue is up and visible"),
    ({"preemptmode", "gracetime"}, "preemption is not modelled"),
)


def _report_partition_keys(line: ConfLine, report: ImportReport, note: str) -> None:
    for (key, value), written in zip(line.pairs, line.keys, strict=True):
        if key == "partitionname":
            continue
        same = _PARTITION_AS_QUEUESIM.get(key)
        if key in PARTITION_MAPPED:
            report.map(written, value, line.where, PARTITION_MAPPED[key], note)
        elif same is not None and value.upper().split(":")[0] in same:
            report.map(written, value, line.where, "(as in queuesim)", note)
        else:
            reason = next(
                (r for keys, r in _PARTITION_REASONS if key in keys),
                "partition setting the site model has no key for",
            )
            report.skip(written, value, line.where, reason + (f" ({note})" if note else ""))


def read_partitions(
    lines: list[ConfLine],
    nodes: dict[str, SlurmNode],
    nodesets: dict[str, list[str]],
    report: ImportReport,
) -> list[Partition]:
    """Every partition, ``PartitionName=DEFAULT`` applied, with the nodes it names."""
    defaults: dict[str, str] = {}
    default_where: list[Where] = []
    partitions: list[Partition] = []
    for line in lines:
        if line.first != "partitionname":
            continue
        own = dict(line.pairs[1:])
        if line.pairs[0][1].upper() == "DEFAULT":
            defaults.update(own)
            default_where.append(line.where)
            report.map(
                line.keys[0], "DEFAULT", line.where, "(defaults for the partitions after it)"
            )
            _report_partition_keys(line, report, "a default for the partitions after it")
            continue
        _report_partition_keys(line, report, "")
        attrs = {**defaults, **own}
        where = [line.where, *(w for w in default_where if set(defaults) - set(own))]
        part = Partition(line.pairs[0][1], where, attrs)
        spec = attrs.get("nodes", "")
        if spec.upper() == "ALL":
            part.nodes = list(nodes)
        else:
            for item in (i for i in re.split(r",(?![^\[]*\])", spec) if i):
                if item in nodesets:
                    part.nodes += nodesets[item]
                    continue
                for name in expand_hostlist(item, line.where):
                    if name in nodes:
                        part.nodes.append(name)
                    else:
                        report.unknown(
                            line.where,
                            f"Nodes={spec}",
                            f"node {name} is defined by no NodeName line",
                        )
        part.nodes = list(dict.fromkeys(part.nodes))
        report.map(line.keys[0], part.name, line.where, f"queues[{part.name}]")
        partitions.append(part)
    return partitions


def read_gres_conf(path: Path, nodes: dict[str, SlurmNode], report: ImportReport) -> None:
    """Check gres.conf's GPU lines against slurm.conf's ``Gres=`` counts (which are used);
    anything else in it is reported."""
    for line in read_conf(path, report, "gres.conf"):
        text = " ".join(
            f"{k}={v}" for k, v in zip(line.keys, (v for _, v in line.pairs), strict=True)
        )
        name = (line.get("name") or "").lower()
        if name != "gpu":
            report.skip(
                "gres.conf",
                text,
                line.where,
                "not a GPU line: device binding, autodetection or another generic resource",
            )
            continue
        count: int | None = None
        if line.get("count") is not None:
            count = _whole(line.get("count") or "", line.where, "Count")
        elif line.get("file") is not None:
            count = len(expand_hostlist(line.get("file") or "", line.where))
        names = (
            expand_hostlist(line.get("nodename") or "", line.where)
            if line.get("nodename")
            else list(nodes)
        )
        differ = sorted(
            n for n in names if n in nodes and count is not None and nodes[n].gpus != count
        )
        if differ:
            report.skip(
                "gres.conf",
                text,
                line.where,
                f"says {count} GPUs per node where slurm.conf's Gres= says otherwise "
                f"({', '.join(differ[:4])}); slurm.conf's count is used",
            )
        else:
            report.map(
                "gres.conf",
                text,
                line.where,
                "clusters[].gpus_per_node",
                "agrees with slurm.conf's Gres=; device files and core binding are not modelled",
            )
