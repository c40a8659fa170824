"""A site file being built by an importer, and its rendering as commented YAML.

Importers read nodes one by one (:class:`NodeSpec`); :func:`group_nodes` turns nodes with
identical CPUs, memory, GPUs, properties and queue membership into one cluster each. A
:class:`DraftSite` holds clusters, queues and the site-wide choices, each with the lines
it came from, and :func:`render_site_yaml` writes it with a comment per block saying
where it came from, after the import report. The text is checked with the site loader's
own validation before it is returned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, NotModelled, Where, format_where
from queuesim.site.loading import site_errors

__all__ = [
    "DraftCluster",
    "DraftQueue",
    "DraftSite",
    "NodeSpec",
    "compress_hostlist",
    "group_nodes",
    "render_site_yaml",
]

_GIB = 1024**3
_MIB = 1024**2


@dataclass(frozen=True)
class NodeSpec:
    """One node as a configuration describes it."""

    name: str
    cpus: int
    memory: int | None
    """bytes; None: not given"""
    gpus: int
    properties: tuple[str, ...]
    queues: frozenset[str] | None
    """the queues (partitions) that may use the node; None: any queue without nodes of
    its own (PBS nodes bound to no queue)"""
    where: Where


@dataclass
class DraftCluster:
    name: str
    nodes: list[str]
    cpus_per_node: int
    memory_per_node: int | None
    gpus_per_node: int
    properties: tuple[str, ...]
    queues: frozenset[str] | None
    where: list[Where]

    def entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "nodes": len(self.nodes),
            "cpus_per_node": self.cpus_per_node,
        }
        if self.memory_per_node is not None:
            out["memory_per_node"] = format_memory(self.memory_per_node)
        if self.properties:
            out["properties"] = list(self.properties)
        if self.gpus_per_node:
            out["gpus_per_node"] = self.gpus_per_node
        return out


@dataclass
class DraftQueue:
    name: str
    where: list[Where]
    max_walltime: float | None = None
    default_walltime: float | None = None
    priority: int = 0
    clusters: list[str] | None = None
    route_by_walltime: bool = True
    max_running_per_user: int | None = None
    max_cpus_per_user: int | None = None
    cpu_pool: int | None = None
    notes: list[str] = field(default_factory=list)

    def entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.max_walltime is not None:
            out["max_walltime"] = format_seconds(self.max_walltime)
        if self.default_walltime is not None:
            out["default_walltime"] = format_seconds(self.default_walltime)
        if self.priority:
            out["priority"] = self.priority
        if self.clusters is not None:
            out["clusters"] = list(self.clusters)
        out["trace_queues"] = [self.name]
        if not self.route_by_walltime:
            out["route_by_walltime"] = False
        for key in ("max_running_per_user", "max_cpus_per_user", "cpu_pool"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class DraftSite:
    name: str
    system: str
    clusters: list[DraftCluster] = field(default_factory=list)
    queues: list[DraftQueue] = field(default_factory=list)
    memory: str = "ignore"
    ordering: str = "fcfs"
    ordering_where: list[Where] = field(default_factory=list)
    #: the PBS job order (``ordering: pbs``)
    pbs_order: dict[str, Any] = field(default_factory=dict)
    fairshare: dict[str, Any] = field(default_factory=dict)
    fairshare_where: list[Where] = field(default_factory=list)
    #: Slurm's multifactor weights (the site's ``priority`` block), if any
    priority: dict[str, Any] = field(default_factory=dict)
    priority_where: list[Where] = field(default_factory=list)
    policy: str = "easy"
    params: dict[str, Any] = field(default_factory=dict)
    scheduler_where: list[Where] = field(default_factory=list)
    scheduler_note: str = ""


def format_memory(size: int) -> str:
    """Bytes as ``<n>GB`` when whole GiB, else ``<n>MB``, else bytes (exact)."""
    if size % _GIB == 0:
        return f"{size // _GIB}GB"
    if size % _MIB == 0:
        return f"{size // _MIB}MB"
    return str(size)


def format_seconds(seconds: float) -> str:
    """Seconds as the site file's ``h:mm:ss`` (exact; hours may exceed 24)."""
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def format_span(seconds: float) -> str:
    """Whole seconds in the largest unit that divides them: ``14d``, ``36h``, ``90m``."""
    s = round(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s and s % size == 0:
            return f"{s // size}{unit}"
    return f"{s}s"


_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def compress_hostlist(names: Iterable[str]) -> str:
    """Node names as a Slurm-style host list: ``node[001-004,010],bigmem01``."""
    ranges: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = _TRAILING_NUMBER.match(name)
        if match:
            ranges.setdefault((match.group(1), len(match.group(2))), []).append(int(match.group(2)))
        else:
            plain.append(name)
    parts = list(dict.fromkeys(plain))
    for (prefix, width), numbers in ranges.items():
        numbers = sorted(set(numbers))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        spans: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            spans.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(spans)}]")
    return ",".join(parts)


def _base_name(nodes: Sequence[str]) -> str:
    stems = {re.sub(r"[\d\-_.]+$", "", n.split(".")[0]) for n in nodes}
    stem = stems.pop() if len(stems) == 1 else ""
    return stem or "nodes"


def _hardware(c: DraftCluster) -> tuple[Any, ...]:
    return (_base_name(c.nodes), c.cpus_per_node, c.gpus_per_node)


def group_nodes(nodes: Sequence[NodeSpec]) -> list[DraftCluster]:
    """One cluster per set of nodes alike in CPUs, memory, GPUs, properties and queues, in
    the order the first node of each appears; named by the nodes' common name stem,
    suffixed where two groups share it."""
    groups: dict[tuple[Any, ...], DraftCluster] = {}
    for node in nodes:
        key = (node.cpus, node.memory, node.gpus, node.properties, node.queues)
        group = groups.get(key)
        if group is None:
            groups[key] = DraftCluster(
                "", [], node.cpus, node.memory, node.gpus, node.properties, node.queues, []
            )
            group = groups[key]
        group.nodes.append(node.name)
        if node.where not in group.where:
            group.where.append(node.where)
    clusters = list(groups.values())
    bases = [_base_name(c.nodes) for c in clusters]
    used: set[str] = set()
    for cluster, base in zip(clusters, bases, strict=True):
        name = base
        if bases.count(base) > 1:
            name = f"{base}-{cluster.cpus_per_node}c"
            if cluster.gpus_per_node:
                name += f"-{cluster.gpus_per_node}g"
            if sum(_hardware(c) == _hardware(cluster) for c in clusters) > 1:
                first = _TRAILING_NUMBER.match(cluster.nodes[0])
                name = f"{base}-{first.group(2) if first else cluster.nodes[0]}"
        k = 2
        unique = name
        while unique in used:
            unique = f"{name}-{k}"
            k += 1
        cluster.name = unique
        used.add(unique)
    return clusters


def _dump(value: object) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6)
    return text.strip().removesuffix("...").strip()


def _comment(text: str, indent: str = "") -> list[str]:
    return [f"{indent}# {line}".rstrip() for line in text.splitlines()]


def render_site_yaml(draft: DraftSite, report: ImportReport, command: str) -> str:
    """The site file: the import report as a comment header, then every block with a
    comment saying where it came from. Raises :class:`ConfigError` if the result would
    not load (which would be a bug of the importer)."""
    out = [f"# Site file made by queuesim from the {draft.system} configuration of:"]
    out += [f"#   {f}" for f in report.files]
    out.append(f"# Made with: {command}")
    out.append("#")
    out += _comment("\n".join(report.text_lines()))
    out.append("")
    out.append(f"name: {_dump(draft.name)}")
    out.append(f"description: {_dump(f'imported from {draft.system} configuration')}")
    out.append("")
    out.append("# One cluster per group of nodes alike in CPUs, memory, GPUs, properties and")
    out.append("# the queues that may use them.")
    out.append("clusters:")
    for c in draft.clusters:
        out.append(f"  # {compress_hostlist(c.nodes)}: {format_where(c.where, most=6)}")
        out.append(f"  - {_dump(c.entry())}")
    out.append("")
    out.append("# Queues: walltime limits, priority, clusters and per-user limits. Each lists")
    out.append("# its own name in trace_queues: with a site log as the trace, 'routing: trace'")
    out.append("# sends every job to the queue it was logged in.")
    out.append("queues:")
    for q in draft.queues:
        out.append(f"  # {q.name}: {format_where(q.where, most=6)}")
        out += _comment("\n".join(q.notes), "  ")
        out.append(f"  - {_dump(q.entry())}")
    out.append("routing: walltime")
    out.append("")
    if draft.memory != "ignore":
        out.append("# Memory is a scheduled resource at the site (see the report).")
        out.append(f"memory: {draft.memory}")
    out.append(f"# ordering: {format_where(draft.ordering_where)}")
    out.append(f"ordering: {draft.ordering}")
    if draft.pbs_order:
        out.append(f"pbs_order: {_dump(draft.pbs_order)}")
    if draft.fairshare:
        out.append(f"# fairshare: {format_where(draft.fairshare_where)}")
        out.append(f"fairshare: {_dump(draft.fairshare)}")
    if draft.priority:
        out.append(f"# priority: {format_where(draft.priority_where)}")
        out.append(f"priority: {_dump(draft.priority)}")
    out.append(f"# scheduler: {format_where(draft.scheduler_where)}")
    out += _comment(draft.scheduler_note)
    scheduler: dict[str, Any] = {"policy": draft.policy}
    if draft.params:
        scheduler["params"] = draft.params
    out.append(f"scheduler: {_dump(scheduler)}")
    out += _not_modelled(report)
    text = "\n".join(out) + "\n"
    problems = site_errors(yaml.safe_load(text))
    if problems:
        raise ConfigError(
            "the imported site does not validate (a bug of the importer): " + "; ".join(problems)
        )
    return text


def _not_modelled(report: ImportReport) -> list[str]:
    """The settings read but not modelled, as the site's ``not_modelled`` list (printed
    with every run of the site)."""
    merged: dict[str, list[NotModelled]] = {}
    for n in report.not_modelled:
        if n.setting:
            merged.setdefault(n.key, []).append(n)
    if not merged:
        return []
    out = ["", "# What the configuration uses that queuesim does not model (see the report)."]
    out.append("not_modelled:")
    for key, entries in merged.items():
        entry = {
            "setting": key,
            "value": "; ".join(dict.fromkeys(n.value for n in entries)),
            "source": format_where([w for n in entries for w in n.where]),
            "reason": "; ".join(dict.fromkeys(n.reason for n in entries)),
        }
        out.append(f"  - {_dump(entry)}")
    return out


def assign_clusters(draft: DraftSite) -> list[DraftQueue]:
    """Give every queue the clusters whose nodes it may use (None: all of them); return
    the queues that have no nodes at all (dropped from the draft)."""
    bound = {q for c in draft.clusters if c.queues is not None for q in c.queues}
    names = [c.name for c in draft.clusters]
    kept, empty = [], []
    for q in draft.queues:
        mine = [
            c.name
            for c in draft.clusters
            if (c.queues is not None and q.name in c.queues)
            or (c.queues is None and q.name not in bound)
        ]
        if not mine:
            empty.append(q)
            continue
        q.clusters = None if mine == names else mine
        kept.append(q)
    draft.queues = kept
    return empty


def settle_queues(draft: DraftSite, report: ImportReport, preferred: Sequence[str]) -> None:
    """Make the queues a valid site: drop limits the model would refuse (reported), and
    keep the walltime routing table unambiguous - where two routable queues have the same
    limit, the one first in ``preferred`` (then in file order) stays routable."""
    cpus = {c.name: len(c.nodes) * c.cpus_per_node for c in draft.clusters}
    for q in draft.queues:
        if (
            q.default_walltime is not None
            and q.max_walltime is not None
            and q.default_walltime > q.max_walltime
        ):
            report.skip(
                f"queue {q.name} default walltime",
                format_seconds(q.default_walltime),
                q.where,
                f"larger than the queue's maximum {format_seconds(q.max_walltime)}; dropped",
            )
            q.default_walltime = None
        total = sum(cpus[c] for c in (q.clusters or cpus))
        for key in ("max_cpus_per_user", "cpu_pool"):
            value = getattr(q, key)
            if value is not None and value > total:
                report.skip(
                    f"queue {q.name} {key}",
                    value,
                    q.where,
                    f"more than the {total} CPUs of the queue's nodes: no effect; dropped",
                )
                setattr(q, key, None)
    rank = {name: i for i, name in enumerate(preferred)}
    order = sorted(
        (q for q in draft.queues if q.route_by_walltime),
        key=lambda q: (rank.get(q.name, len(rank)), draft.queues.index(q)),
    )
    seen: dict[float | None, str] = {}
    for q in order:
        if q.max_walltime in seen:
            q.route_by_walltime = False
            q.notes.append(
                f"route_by_walltime: false - same walltime limit as queue {seen[q.max_walltime]},"
                "\nwhich takes the jobs routed by walltime"
            )
        else:
            seen[q.max_walltime] = q.name
