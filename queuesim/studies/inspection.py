"""What a site log (or any trace) holds, at a glance, and a draft site file from it
(``queuesim inspect``).

:func:`inspect_trace` reads a trace in any format and summarises it: the period, jobs,
users, groups and accounts; per queue (partition) the jobs, users and the largest and
median requested walltime and CPUs; distributions of what jobs request; the nodes seen
and the node properties requested; what the reader noted and the site-independent
cleaning a run would apply. :func:`draft_site` turns it into a site file to complete.

Node groups. The hosts jobs ran on (PBS ``exec_host``, Slurm ``NodeList``) are grouped by
name: the domain is dropped (``zewura12.cerit-sc.cz`` -> ``zewura12``), then the trailing
number and any ``-``, ``_`` or ``.`` before it (``cpn-f13-03-01`` -> ``cpn-f13-03``,
``torque2`` -> ``torque``). A host's CPUs are estimated as the most CPUs seen in use on it
at once, a job's CPUs counted as spread evenly over its hosts: a lower bound (a node
nobody filled looks smaller than it is), which the draft says.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.core.requirements import PROPERTY_COLUMNS
from queuesim.core.workload import ACTIONS, CleaningOptions, read_workload_trace, site_free_cleaning
from queuesim.results.output import json_rows
from queuesim.traces.registry import detect_format
from queuesim.traces.slurm import expand_hostlist
from queuesim.traces.swf import SwfTrace

_NUMBER_TAIL = re.compile(r"[-_.]?\d+$")


def host_group(host: str) -> str:
    """The node group a host name belongs to (module docstring)."""
    name = host.split(".", 1)[0]
    stripped = _NUMBER_TAIL.sub("", name)
    return stripped or name


@dataclass(frozen=True)
class Inspection:
    """What :func:`inspect_trace` found."""

    path: str
    format: str
    jobs: int
    first_submit: str | None
    last_submit: str | None
    users: int
    groups: int
    accounts: int
    queues: pd.DataFrame  #: queue, jobs, users, max_walltime, median_walltime, max_cpus
    requests: pd.DataFrame  #: what, jobs asking, min, median, p90, max
    nodes: pd.DataFrame  #: group, hosts, cpus_per_node (estimate), jobs
    properties: pd.DataFrame  #: property, jobs
    notes: pd.DataFrame  #: reason, action, count, first_lines
    cleaning: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""

        return {
            "path": self.path,
            "format": self.format,
            "jobs": self.jobs,
            "first_submit": self.first_submit,
            "last_submit": self.last_submit,
            "users": self.users,
            "groups": self.groups,
            "accounts": self.accounts,
            "queues": json_rows(self.queues),
            "requests": json_rows(self.requests),
            "nodes": json_rows(self.nodes),
            "properties": json_rows(self.properties),
            "reader_notes": json_rows(self.notes),
            "cleaning": dict(self.cleaning),
        }


def inspect_trace(
    path: str | Path, *, trace_format: str | None = None, skip_bad_lines: bool = False
) -> Inspection:
    """Read ``path`` and summarise it (module docstring)."""
    options = CleaningOptions(skip_bad_lines=skip_bad_lines, trace_format=trace_format)
    trace = read_workload_trace(path, options)
    jobs = trace.jobs
    origin = trace.header.unix_start_time or 0
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    known = submit[submit >= 0]

    def date(seconds: float) -> str:
        return datetime.fromtimestamp(origin + seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

    return Inspection(
        path=str(path),
        format=detect_format(trace.path, skip_bad_lines=skip_bad_lines, format=trace_format).name,
        jobs=len(jobs),
        first_submit=date(float(known.min())) if known.size else None,
        last_submit=date(float(known.max())) if known.size else None,
        users=_distinct(jobs, "user_name", "user"),
        groups=_distinct(jobs, "group_name", "group"),
        accounts=_distinct(jobs, "account", "account") if "account" in jobs else 0,
        queues=_queues(trace),
        requests=_requests(jobs),
        nodes=_nodes(jobs),
        properties=_properties(jobs),
        notes=_notes(trace),
        cleaning={
            reason: int(mask.sum()) for reason, mask in site_free_cleaning(jobs, options).items()
        }
        | {"walltime_missing": int((jobs["req_time"].to_numpy() <= 0).sum())},
    )


def _distinct(jobs: pd.DataFrame, name: str, number: str) -> int:
    if name in jobs.columns:
        values = jobs[name].astype(str)
        return int(values[values != ""].nunique())
    return int(jobs.loc[jobs[number] >= 0, number].nunique())


def _queue_names(trace: SwfTrace) -> pd.Series:
    jobs = trace.jobs
    if "queue_name" in jobs.columns:
        return jobs["queue_name"].astype(str)
    names = trace.header.queues
    return jobs["queue"].map(lambda q: names.get(int(q), str(int(q)))).astype(str)


def _cpus(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())


def _queues(trace: SwfTrace) -> pd.DataFrame:
    jobs = trace.jobs
    user = jobs["user_name"] if "user_name" in jobs.columns else jobs["user"]
    walltime = jobs["req_time"].where(jobs["req_time"] > 0)
    frame = pd.DataFrame(
        {"queue": _queue_names(trace), "user": user, "walltime": walltime, "cpus": _cpus(jobs)}
    )
    grouped = frame.groupby("queue", sort=True)
    return pd.DataFrame(
        {
            "jobs": grouped.size(),
            "users": grouped["user"].nunique(),
            "max_walltime": grouped["walltime"].max(),
            "median_walltime": grouped["walltime"].median(),
            "max_cpus": grouped["cpus"].max(),
        }
    ).reset_index()


def _requests(jobs: pd.DataFrame) -> pd.DataFrame:
    cpus = _cpus(jobs).astype(np.float64)
    memory = jobs["req_memory"].to_numpy(dtype=np.float64) * np.maximum(cpus, 1) / 1024
    measures = {
        "CPUs": cpus,
        "walltime (h)": jobs["req_time"].to_numpy(dtype=np.float64) / 3600,
        "memory per job (MB)": np.where(jobs["req_memory"] > 0, memory, -1.0),
    }
    if "nodes" in jobs.columns:
        measures["nodes"] = jobs["nodes"].to_numpy(dtype=np.float64)
    if "gpus" in jobs.columns:
        measures["GPUs"] = jobs["gpus"].to_numpy(dtype=np.float64)
    rows = []
    for what, values in measures.items():
        asked = values[values > 0]
        quantiles = np.percentile(asked, [50, 90]) if asked.size else [np.nan, np.nan]
        rows.append(
            {
                "what": what,
                "jobs": int(asked.size),
                "min": float(asked.min()) if asked.size else np.nan,
                "median": float(quantiles[0]),
                "p90": float(quantiles[1]),
                "max": float(asked.max()) if asked.size else np.nan,
            }
        )
    if "exclusive" in jobs.columns:
        rows.append({"what": "exclusive nodes", "jobs": int(jobs["exclusive"].sum())})
    return pd.DataFrame(rows)


def _nodes(jobs: pd.DataFrame) -> pd.DataFrame:
    columns = ["group", "hosts", "cpus_per_node", "jobs"]
    if "hosts" not in jobs.columns:
        return pd.DataFrame(columns=columns)
    started = jobs["wait"].to_numpy() >= 0
    texts = jobs["hosts"].to_numpy(dtype=object)
    hosts_of = {text: _host_names(str(text)) for text in pd.unique(texts[started])}
    rows = [
        (h, k) for k in np.flatnonzero(started & (texts != "")).tolist() for h in hosts_of[texts[k]]
    ]
    if not rows:
        return pd.DataFrame(columns=columns)
    host, job = zip(*rows, strict=True)
    job_index = np.array(job)
    count = np.array([len(hosts_of[texts[k]]) for k in job_index])
    alloc = jobs["alloc_procs"].to_numpy()[job_index]
    per_host = np.ceil(np.maximum(alloc, 1) / count)
    start = (jobs["submit"] + jobs["wait"]).to_numpy()[job_index]
    end = start + jobs["runtime"].to_numpy()[job_index]
    events = pd.DataFrame(
        {
            "host": np.concatenate([host, host]),
            "time": np.concatenate([start, end]),
            "delta": np.concatenate([per_host, -per_host]),
        }
    ).sort_values(["host", "time", "delta"], kind="mergesort")
    events["in_use"] = events.groupby("host", sort=False)["delta"].cumsum()
    peak = events.groupby("host")["in_use"].max()
    jobs_per_host = pd.Series(host).value_counts()
    table = pd.DataFrame({"peak": peak, "jobs": jobs_per_host})
    table["group"] = [host_group(h) for h in table.index]
    grouped = table.groupby("group", sort=True)
    return pd.DataFrame(
        {
            "hosts": grouped.size(),
            "cpus_per_node": grouped["peak"].max().astype(np.int64),
            "jobs": grouped["jobs"].sum(),
        }
    ).reset_index()[columns]


def _host_names(text: str) -> list[str]:
    """The hosts of a ``hosts`` value: PBS's ``+``-joined names or a Slurm host list."""
    return [name for part in text.split("+") if part for name in expand_hostlist(part)]


def _properties(jobs: pd.DataFrame) -> pd.DataFrame:
    column = next((c for c in PROPERTY_COLUMNS if c in jobs.columns), None)
    if column is None:
        return pd.DataFrame(columns=["property", "jobs"])
    counts: dict[str, int] = {}
    for text, n in jobs[column].astype(str).value_counts().items():
        for prop in dict.fromkeys(p for p in str(text).split(":") if p):
            counts[prop] = counts.get(prop, 0) + int(n)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return pd.DataFrame(ordered, columns=["property", "jobs"])


def _notes(trace: SwfTrace) -> pd.DataFrame:
    notes = trace.notes
    rows = [
        {
            "reason": str(reason),
            "action": str(group["action"].iloc[0]),
            "count": len(group),
            "first_lines": " ".join(str(x) for x in sorted(group["line"].tolist())[:5]),
        }
        for reason, group in notes.groupby("reason", sort=False)
    ]
    if trace.bad_lines:
        rows.append(
            {
                "reason": "malformed_line",
                "action": ACTIONS["malformed_line"],
                "count": len(trace.bad_lines),
                "first_lines": " ".join(str(b.line) for b in trace.bad_lines[:5]),
            }
        )
    return pd.DataFrame(rows, columns=["reason", "action", "count", "first_lines"])


# --------------------------------------------------------------------------- draft site


def _duration(seconds: float) -> str:
    """A duration the site loader reads, rounded up to whole minutes: ``2h``, ``1d12h``."""
    minutes = math.ceil(seconds / 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    text = "".join(f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m")) if v)
    return text or "1m"


def draft_site(found: Inspection, name: str) -> str:
    """A site file (YAML) drafted from ``found``, marked as a draft to complete."""
    lines = [
        f"# DRAFT made by queuesim inspect from {Path(found.path).name} ({found.format}):",
        "# complete it before use. Check:",
        "#  - clusters: node counts are the hosts the log shows jobs on, and CPUs per node the",
        "#    most CPUs seen in use at once on one of them (a lower bound): use the real",
        "#    figures; add memory_per_node (and memory: per-cpu), properties, gpus_per_node;",
        "#  - queues: max_walltime is the largest walltime a job asked for, not the queue's",
        "#    limit; add priorities and limits (max_running_per_user, cpu_pool ...);",
        "#  - scheduler: the policy is a placeholder (queuesim policies lists them).",
        f"name: {name}",
        f"description: drafted from {Path(found.path).name}, {found.jobs} jobs",
    ]
    lines.append("clusters:")
    if len(found.nodes):
        for node in found.nodes.to_dict(orient="records"):
            lines.append(f"  # {node['jobs']} job placements seen on {node['hosts']} hosts")
            lines.append(f"  - name: {_yaml_name(str(node['group']))}")
            lines.append(f"    nodes: {int(node['hosts'])}")
            lines.append(f"    cpus_per_node: {max(int(node['cpus_per_node']), 1)}  # estimate")
    else:
        largest = int(found.queues["max_cpus"].max()) if len(found.queues) else 1
        lines.append("  # the log names no hosts: one node as large as the largest job")
        lines.append("  - name: nodes")
        lines.append("    nodes: 1")
        lines.append(f"    cpus_per_node: {max(largest, 1)}")
    lines.append("routing: trace")
    lines.append("queues:")
    for row in found.queues.itertuples(index=False):
        lines.append(f"  # {row.jobs} jobs of {row.users} users")
        lines.append(f"  - name: {_yaml_name(str(row.queue))}")
        lines.append(f"    trace_queues: [{_yaml_name(str(row.queue))}]")
        if isinstance(row.max_walltime, float) and math.isfinite(row.max_walltime):
            lines.append(f"    max_walltime: {_duration(row.max_walltime)}")
    lines.append("scheduler:")
    lines.append("  policy: easy")
    return "\n".join(lines) + "\n"


def _yaml_name(text: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", text) and text.lower() not in (
        "true",
        "false",
        "null",
        "yes",
        "no",
        "on",
        "off",
    ):
        return text
    return "'" + text.replace("'", "''") + "'"
