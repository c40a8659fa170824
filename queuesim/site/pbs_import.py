"""``queuesim import pbs``: a PBS Pro / OpenPBS / Torque configuration as a site file and
an import report.

Read: ``qmgr -c "print server"`` output (queues, server-wide limits, and nodes when it
holds ``print node`` lines), ``pbsnodes -av`` output, the scheduler's ``sched_config`` and
the fairshare ``resource_group`` (:mod:`queuesim.site.pbs_sched`). What becomes what:

* nodes alike in ``resources_available.ncpus`` (Torque ``np``), ``.mem``, ``.ngpus``
  (Torque ``gpus``), boolean custom resources set ``True`` (Torque ``properties``) and the
  queue they are bound to (``queue = X``) -> one cluster each;
* execution queues -> queues: ``resources_max.walltime``, ``resources_default.walltime``,
  ``priority``, the nodes bound to them (else the unbound nodes), ``max_run`` /
  ``max_user_run`` and ``max_run_res.ncpus`` / ``max_user_res.ncpus`` as per-user limits,
  ``max_run_res.ncpus = [o:PBS_ALL=N]`` as the queue's CPU pool; server-wide limits apply
  to queues without their own;
* a routing queue (the server's ``default_queue``) -> walltime routing among its
  ``route_destinations``.

Everything else read is in the report as not modelled, with its value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where
from queuesim.site.pbs_conf import (
    Attr,
    Qmgr,
    pbs_size,
    pbs_walltime,
    read_pbsnodes,
    read_qmgr,
    read_resource_group,
    read_sched_config,
)
from queuesim.site.pbs_sched import apply_sched
from queuesim.site.site_draft import (
    DraftQueue,
    DraftSite,
    NodeSpec,
    assign_clusters,
    group_nodes,
    settle_queues,
)

__all__ = ["PbsFiles", "PbsImport", "import_pbs", "pbs_files"]


@dataclass(frozen=True)
class PbsFiles:
    qmgr: Path | None = None
    nodes: Path | None = None
    sched_config: Path | None = None
    resource_group: Path | None = None


@dataclass
class PbsImport:
    draft: DraftSite
    report: ImportReport


#: where a PBS_HOME-like folder holds each file, first found wins
_IN_HOME = {
    "qmgr": ("qmgr.txt", "print-server.txt", "qmgr"),
    "nodes": ("pbsnodes.txt", "pbsnodes-av.txt", "pbsnodes"),
    "sched_config": ("sched_priv/sched_config", "sched_config"),
    "resource_group": ("sched_priv/resource_group", "resource_group"),
}


def pbs_files(home: Path | None, **given: str | None) -> PbsFiles:
    """The files to read: each option given, else found in the folder ``home``."""
    if home is not None and not home.is_dir():
        raise ConfigError(f"{home}: not a folder (expected a PBS_HOME-like folder)")
    found: dict[str, Path | None] = {}
    for key, names in _IN_HOME.items():
        value = given.get(key)
        if value:
            found[key] = Path(value)
        elif home is not None:
            found[key] = next((home / n for n in names if (home / n).is_file()), None)
        else:
            found[key] = None
    for key, path in found.items():
        if path is not None and not path.is_file():
            raise ConfigError(f"{path}: no such file (given as --{key.replace('_', '-')})")
    if found["qmgr"] is None and found["nodes"] is None:
        where = f" in {home}" if home else ""
        raise ConfigError(
            f"no qmgr output and no pbsnodes output{where}: give --qmgr FILE "
            '(qmgr -c "print server") and --nodes FILE (pbsnodes -av)'
        )
    return PbsFiles(**found)


# --------------------------------------------------------------------------- nodes

_TRUE = {"true", "t", "yes", "y", "1"}
#: node attributes that describe the moment of the dump, not the configuration
_DYNAMIC = re.compile(
    r"^(state|jobs|resources_assigned\..*|last_state_change_time|last_used_time|pcpus|"
    r"Mom|Port|pbs_version|ntype|license|resv_enable|resv|comment|status|power_state|"
    r"in_multivnode_host|partition|resources_available\.(host|vnode|arch)|"
    r"current_aoe|topology_info|note|mom_service_port|mom_manager_port)$"
)
_NODE_MAPPED = {
    "resources_available.ncpus": "clusters[].cpus_per_node",
    "np": "clusters[].cpus_per_node",
    "resources_available.mem": "clusters[].memory_per_node",
    "resources_available.ngpus": "clusters[].gpus_per_node",
    "gpus": "clusters[].gpus_per_node",
    "properties": "clusters[].properties",
    "queue": "queues[].clusters (nodes bound to the queue)",
}


def _node_spec(name: str, attrs: dict[str, Attr], where: Where) -> NodeSpec:
    def get(*keys: str) -> Attr | None:
        return next((attrs[k] for k in keys if k in attrs), None)

    ncpus = get("resources_available.ncpus", "np", "pcpus")
    if ncpus is None or not ncpus.value.isdigit() or int(ncpus.value) < 1:
        raise ConfigError(
            f"{where}: node {name}: expected resources_available.ncpus (or np) "
            "= a whole number of CPUs above 0"
        )
    mem = get("resources_available.mem")
    memory = pbs_size(mem.value, mem.where, mem.name) if mem else None
    if mem is None and "status" in attrs:  # Torque: physmem=...kb inside status
        m = re.search(r"(?:^|,)physmem=(\w+)", attrs["status"].value)
        memory = pbs_size(m.group(1), attrs["status"].where, "physmem") if m else None
    gpus = get("resources_available.ngpus", "gpus")
    props = [
        k.split(".", 1)[1]
        for k, a in attrs.items()
        if k.startswith("resources_available.")
        and a.value.lower() in ("true", "t")
        and not _DYNAMIC.match(k)
    ]
    if "properties" in attrs:
        props += [p.strip() for p in attrs["properties"].value.split(",") if p.strip()]
    queue = attrs.get("queue")
    return NodeSpec(
        name,
        int(ncpus.value),
        memory or None,
        int(gpus.value) if gpus and gpus.value.isdigit() else 0,
        tuple(sorted(set(props))),
        frozenset({queue.value}) if queue else None,
        where,
    )


def _report_nodes(nodes: dict[str, dict[str, Attr]], report: ImportReport) -> None:
    """One report line per node attribute and value, over all nodes."""
    seen: dict[tuple[str, str], list[Where]] = {}
    for attrs in nodes.values():
        for a in attrs.values():
            seen.setdefault((a.name, a.value), []).append(a.where)
    for (key, value), where in seen.items():
        n = f" ({len(where)} nodes)" if len(where) > 1 else ""
        custom = key.startswith("resources_available.") and not _DYNAMIC.match(key)
        if key in _NODE_MAPPED:
            report.map(key, value + n, where, _NODE_MAPPED[key])
        elif key == "sharing" and value == "default_shared":
            report.map(key, value + n, where, "(as in queuesim)", "jobs share nodes by CPU")
        elif key == "sharing":
            report.skip(
                key,
                value + n,
                where,
                "exclusive or ignored node sharing; queuesim "
                "shares nodes by CPU unless a job asks for whole nodes",
            )
        elif custom and value.lower() in ("true", "t"):
            report.map(
                key,
                value + n,
                where,
                "clusters[].properties",
                f"boolean resource: property {key.split('.', 1)[1]}",
            )
        elif custom and value.lower() in ("false", "f"):
            report.map(key, value + n, where, "clusters[].properties", "absent property")
        elif custom:
            report.skip(
                key,
                value + n,
                where,
                "a custom resource with a value; only boolean "
                "resources set True become node properties",
            )
        elif key == "status" and "physmem=" in value:
            report.map(
                key,
                "physmem=...",
                where,
                "clusters[].memory_per_node",
                "Torque's physmem (the rest of status is the moment's state)",
            )
        elif _DYNAMIC.match(key):
            report.skip(
                key,
                value + n,
                where,
                "the node's state or identity at the time of "
                "the dump; every node is up and alike within its group in queuesim",
                setting=False,
            )
        else:
            report.skip(key, value + n, where, "a node attribute the site model has no key for")


# --------------------------------------------------------------------------- queues

_GENERIC_USER = re.compile(r"^\[u:PBS_GENERIC=(\d+)\]$")
_ALL = re.compile(r"^\[o:PBS_ALL=(\d+)\]$")
_QUEUE_MAPPED = {
    "queue_type": "queues[] (Execution) or walltime routing (Route)",
    "resources_max.walltime": "queues[].max_walltime",
    "resources_default.walltime": "queues[].default_walltime",
    "priority": "queues[].priority",
    "route_destinations": "the queues routed to by walltime",
}


def _limit(q: DraftQueue, key: str, value: str) -> str | None:
    """Set a queue limit from a PBS limit attribute; the site key it became, or None."""
    users = _GENERIC_USER.fullmatch(value.strip())
    everyone = _ALL.fullmatch(value.strip())
    plain = value.strip().isdigit()
    if key in ("max_run", "max_user_run") and (users or (plain and key == "max_user_run")):
        q.max_running_per_user = int(users.group(1) if users else value)
        return "max_running_per_user"
    if key in ("max_run_res.ncpus", "max_user_res.ncpus") and (
        users or (plain and key == "max_user_res.ncpus")
    ):
        q.max_cpus_per_user = int(users.group(1) if users else value)
        return "max_cpus_per_user"
    if key == "max_run_res.ncpus" and everyone:
        q.cpu_pool = int(everyone.group(1))
        return "cpu_pool"
    return None


_QUEUE_REASONS = (
    (
        "resources_max.",
        "a per-job size limit; queuesim has none (jobs larger than the queue's nodes are rejected)",
    ),
    (
        "resources_min.",
        "a per-job minimum; walltime routing sends a job to the smallest limit that holds it",
    ),
    ("resources_default.", "a default request other than walltime"),
    ("max_queued", "a limit on queued jobs; queuesim queues every job"),
    (
        "max_run",
        "a limit form other than [u:PBS_GENERIC=N] (per queue user) or "
        "[o:PBS_ALL=N] (the queue's CPUs)",
    ),
    ("acl_", "who may submit; queuesim has no access control"),
)


def _queue(
    name: str, attrs: dict[str, Attr], where: list[Where], report: ImportReport
) -> DraftQueue:
    q = DraftQueue(name, list(where))
    for key, a in attrs.items():
        label = f"queue {name} {key}"
        if key == "resources_max.walltime":
            q.max_walltime = pbs_walltime(a.value, a.where, key)
        elif key == "resources_default.walltime":
            q.default_walltime = pbs_walltime(a.value, a.where, key)
        elif key == "priority":
            if not re.fullmatch(r"-?\d+", a.value):
                raise ConfigError(f"{a.where}: {key} = {a.value}: expected a whole number")
            q.priority = int(a.value)
        if key in _QUEUE_MAPPED:
            report.map(label, a.value, a.lines, _QUEUE_MAPPED[key].replace("[]", f"[{name}]"))
            continue
        target = _limit(q, key, a.value)
        if target:
            report.map(label, a.value, a.lines, f"queues[{name}].{target}")
        elif key in ("enabled", "started") and a.value.lower() in _TRUE:
            report.map(label, a.value, a.lines, "(as in queuesim)", "the queue runs jobs")
        else:
            reason = next(
                (r for p, r in _QUEUE_REASONS if key.startswith(p)),
                "a queue attribute the site model has no key for",
            )
            report.skip(label, a.value, a.lines, reason)
    return q


_SERVER_FOR_QUEUES = (
    "max_run",
    "max_user_run",
    "max_run_res.ncpus",
    "max_user_res.ncpus",
    "resources_max.walltime",
    "resources_default.walltime",
)


def _server(qmgr: Qmgr, queues: list[DraftQueue], report: ImportReport) -> None:
    """Server-wide walltime defaults and per-user limits onto queues without their own."""
    for key, a in qmgr.server.items():
        label = f"server {key}"
        if key in _SERVER_FOR_QUEUES:
            changed = []
            for q in queues:
                if key in qmgr.queues.get(q.name, {}):
                    continue
                if key.startswith("resources_"):
                    attr = "max_walltime" if "max" in key else "default_walltime"
                    if getattr(q, attr) is None:
                        setattr(q, attr, pbs_walltime(a.value, a.where, key))
                        changed.append(q.name)
                else:
                    probe = DraftQueue(q.name, [])
                    target = _limit(probe, key, a.value)
                    if target and getattr(q, target) is None:
                        setattr(q, target, getattr(probe, target))
                        changed.append(q.name)
            if changed:
                report.map(
                    label,
                    a.value,
                    a.where,
                    f"queues[{','.join(changed)}]",
                    "server-wide; approximately for user limits: PBS counts a user's "
                    "jobs over the server, queuesim per queue",
                )
                continue
        if key in ("scheduling",) and a.value.lower() in _TRUE:
            report.map(label, a.value, a.lines, "(as in queuesim)", "the scheduler runs")
        elif key in ("default_queue", "backfill_depth"):
            continue  # mapped where used
        else:
            report.skip(
                label,
                a.value,
                a.where,
                "a server attribute the site model has no key for"
                if key not in _SERVER_FOR_QUEUES
                else "every queue sets its own, or a limit form not modelled",
            )


def _routing(qmgr: Qmgr, report: ImportReport) -> list[str]:
    """The queues preferred for walltime routing: the default queue's destinations."""
    default = qmgr.server.get("default_queue")
    if default is None:
        return []
    attrs = qmgr.queues.get(default.value, {})
    kind = attrs.get("queue_type")
    if kind is not None and kind.value.lower().startswith("r"):
        dests = [
            d.split("@")[0].strip()
            for d in attrs.get("route_destinations", Attr("", "", default.where)).value.split(",")
            if d.strip()
        ]
        report.map(
            "server default_queue",
            default.value,
            default.where,
            f"routing: walltime among {', '.join(dests)}",
            "a routing queue: jobs go to the destination whose walltime range holds them",
        )
        return dests
    report.map(
        "server default_queue",
        default.value,
        default.where,
        "the queue preferred for walltime routing",
    )
    return [default.value]


def _execution(qmgr: Qmgr) -> Iterable[str]:
    for name, attrs in qmgr.queues.items():
        kind = attrs.get("queue_type")
        if kind is None or kind.value.lower().startswith("e"):
            yield name


def import_pbs(files: PbsFiles) -> PbsImport:
    """Read a PBS configuration from the files found by :func:`pbs_files`."""
    report = ImportReport("pbs")
    qmgr = read_qmgr(files.qmgr, report) if files.qmgr else Qmgr()
    nodes = dict(qmgr.nodes)
    where_of = dict(qmgr.node_where)
    if files.nodes:
        more, more_where = read_pbsnodes(files.nodes, report)
        for name, attrs in more.items():
            nodes[name] = {**nodes.get(name, {}), **attrs}
            where_of.setdefault(name, more_where[name])
    if not nodes:
        raise ConfigError(
            "no nodes: give --nodes FILE (pbsnodes -av output) or qmgr output "
            "with 'print node' lines"
        )
    _report_nodes(nodes, report)
    specs = [_node_spec(n, attrs, where_of[n]) for n, attrs in nodes.items()]
    draft = DraftSite("pbs", "PBS", group_nodes(specs))
    for name, resource in qmgr.resources.items():
        for a in resource.values():
            report.map(
                f"resource {name} {a.name}",
                a.value,
                a.where,
                "(resource definition)",
                "boolean host resources set True on nodes become node properties",
            )
    draft.queues = [
        _queue(n, qmgr.queues[n], qmgr.queue_where[n], report) for n in _execution(qmgr)
    ]
    for name in set(qmgr.queues) - set(_execution(qmgr)):
        for key, a in qmgr.queues[name].items():
            if key not in ("queue_type", "route_destinations"):
                report.skip(
                    f"queue {name} {key}", a.value, a.where, "an attribute of a routing queue"
                )
            else:
                report.map(f"queue {name} {key}", a.value, a.lines, "routing: walltime")
    if not draft.queues:
        draft.queues = [DraftQueue("workq", [])]
        report.skip(
            "queues",
            "none",
            [],
            "no execution queue in the qmgr output: one queue 'workq' without limits is assumed",
        )
    for q in assign_clusters(draft):
        report.skip(
            f"queue {q.name}", "no nodes", q.where, "all nodes are bound to other queues; left out"
        )
    _server(qmgr, draft.queues, report)
    preferred = _routing(qmgr, report)
    if preferred and len(preferred) < len(draft.queues):
        for q in draft.queues:
            if q.name not in preferred:
                q.route_by_walltime = False
                q.notes.append(
                    "route_by_walltime: false - not a destination of the default "
                    "queue\n(reached with routing: trace)"
                )
    sched = read_sched_config(files.sched_config, report) if files.sched_config else []
    groups = read_resource_group(files.resource_group, report) if files.resource_group else []
    apply_sched(draft, sched, groups, qmgr.server.get("backfill_depth"), report)
    settle_queues(draft, report, preferred)
    return PbsImport(draft, report)
