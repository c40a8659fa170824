"""Small builders for scheduling tests: sites, workloads and runs in memory.

Tests describe jobs the way one draws a schedule on paper - id, submit time, runtime, CPUs,
requested time, user - and these helpers turn them into a :class:`Site`, a prepared
:class:`Workload` (through the real SWF cleaning path, :func:`queuesim.core.workload.prepare`)
and a finished simulation.

Memory is written in KiB: a job's ``mem`` is the SWF's requested memory per processor
(field 10, KB), which the workload turns into ``mem * 1024`` bytes per CPU; a cluster's
``memory_per_node`` is therefore given here in KiB as well and converted to bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import queuesim
from queuesim.core.engine import Simulation
from queuesim.core.result import Result
from queuesim.core.workload import Workload, prepare
from queuesim.policies.registry import Policy, make_policy
from queuesim.site.model import Site
from queuesim.traces.swf import SWF_FIELDS, SwfHeader, SwfTrace

KIB = 1024

#: the folder that holds the queuesim these tests import: the checkout, or site-packages
#: after CI's non-editable install. A child Python started from another folder with this
#: on PYTHONPATH runs the same copy, and so shares its numba cache (a child of the other
#: copy would compile every kernel it runs a second time, for that copy's cache)
QUEUESIM_ROOT = Path(queuesim.__file__).resolve().parents[1]


@dataclass(frozen=True)
class J:
    """One job of a test schedule (times in seconds, memory per CPU in KiB)."""

    id: int
    submit: float
    runtime: float
    cpus: int
    requested: float | None = None  #: requested walltime (SWF field 9); None: = runtime
    user: int = 1
    mem: float | None = None  #: requested memory per CPU in KiB; None: not given
    properties: str = ""  #: required node properties, ``:``-joined (``^p``: must lack p)
    exclusive: bool = False  #: whole nodes
    gpus: int = 0  #: GPUs, whole job
    nodes: int = 0  #: nodes asked for (0: not given)


def make_site(
    clusters: Iterable[tuple[int, int] | tuple[int, int, int | None]] = ((1, 4),),
    *,
    estimate: str = "requested",
    kill_at_walltime: bool = True,
    memory: str | None = None,
    properties: Sequence[Sequence[str]] = (),
    gpus: Sequence[int] = (),
) -> Site:
    """A site from ``(nodes, cpus_per_node[, memory_per_node_kib])`` per cluster, named
    ``c0``, ``c1``...; ``properties`` and ``gpus`` give each cluster's node properties and
    GPUs per node, in the same order.

    ``memory`` defaults to ``per-cpu`` when any cluster gives a memory, else ``ignore``."""
    docs: list[dict[str, Any]] = []
    any_memory = False
    for k, spec in enumerate(clusters):
        nodes, cpus_per_node = int(spec[0]), int(spec[1])
        doc: dict[str, Any] = {"name": f"c{k}", "nodes": nodes, "cpus_per_node": cpus_per_node}
        if k < len(properties):
            doc["properties"] = list(properties[k])
        if k < len(gpus):
            doc["gpus_per_node"] = int(gpus[k])
        mem = spec[2] if len(spec) > 2 else None
        if mem is not None:
            doc["memory_per_node"] = int(mem) * KIB
            any_memory = True
        docs.append(doc)
    if memory is None:
        memory = "per-cpu" if any_memory else "ignore"
    return Site.model_validate(
        {
            "name": "test",
            "clusters": docs,
            "estimate": estimate,
            "kill_at_walltime": kill_at_walltime,
            "memory": memory,
        }
    )


_EMPTY_HEADER = SwfHeader(
    fields={},
    max_nodes=None,
    max_procs=None,
    unix_start_time=None,
    time_zone_string=None,
    queues={},
    partitions={},
    notes=(),
    lines=(),
)


def make_trace(jobs: Sequence[J]) -> SwfTrace:
    """An in-memory SWF trace, one line per job in the given order (line = position + 1)."""
    rows = []
    for j in jobs:
        requested = j.runtime if j.requested is None else j.requested
        rows.append(
            {
                "job_id": j.id,
                "submit": float(j.submit),
                "wait": -1.0,
                "runtime": float(j.runtime),
                "alloc_procs": j.cpus,
                "avg_cpu_time": -1.0,
                "used_memory": -1.0,
                "req_procs": j.cpus,
                "req_time": float(requested),
                "req_memory": -1.0 if j.mem is None else float(j.mem),
                "status": 1,
                "user": j.user,
                "group": 1,
                "executable": -1,
                "queue": 1,
                "partition": -1,
                "prev_job": -1,
                "think_time": -1.0,
            }
        )
    frame = pd.DataFrame(rows, columns=list(SWF_FIELDS))
    for name in SWF_FIELDS:
        frame[name] = frame[name].astype(np.float64 if frame[name].dtype.kind == "f" else np.int64)
    frame["line"] = np.arange(1, len(jobs) + 1, dtype=np.int64)
    if any(j.properties or j.exclusive or j.gpus or j.nodes for j in jobs):
        frame["properties"] = pd.Series([j.properties for j in jobs], dtype=object)
        frame["exclusive"] = np.array([j.exclusive for j in jobs], dtype=bool)
        frame["gpus"] = np.array([j.gpus for j in jobs], dtype=np.int64)
        frame["nodes"] = np.array([j.nodes for j in jobs], dtype=np.int64)
        frame["ppn"] = np.zeros(len(jobs), dtype=np.int64)
    return SwfTrace(path=Path("<test>"), header=_EMPTY_HEADER, jobs=frame, bad_lines=())


def make_workload(jobs: Sequence[J], site: Site) -> Workload:
    return prepare(make_trace(jobs), site)


@dataclass
class Run:
    """A finished simulation with convenient views by trace job id."""

    result: Result
    policy: Policy
    workload: Workload

    @property
    def table(self) -> pd.DataFrame:
        return self.result.jobs

    def by_id(self, column: str) -> dict[int, float]:
        t = self.result.jobs
        return dict(zip(t["job_id"].tolist(), t[column].tolist(), strict=True))

    @property
    def starts(self) -> dict[int, float]:
        return self.by_id("start")

    @property
    def ends(self) -> dict[int, float]:
        return self.by_id("end")

    @property
    def status(self) -> dict[int, str]:
        t = self.result.jobs
        return dict(zip(t["job_id"].tolist(), t["status"].tolist(), strict=True))

    def number(self, job_id: int) -> int:
        """The job number (row in the workload, submit order) of a trace job id."""
        ids = self.workload.jobs["job_id"].to_numpy()
        return int(np.flatnonzero(ids == job_id)[0])

    def reservations(self) -> dict[int, float]:
        """First reservation per trace job id (policy built with record_reservations)."""
        ids = self.workload.jobs["job_id"].to_numpy()
        recorded: dict[int, float] = self.policy.reservations  # type: ignore[attr-defined]
        return {int(ids[k]): float(v) for k, v in recorded.items()}


def simulate(
    site: Site,
    workload: Workload,
    policy: str,
    params: dict[str, Any] | None = None,
) -> Run:
    pol = make_policy(policy, params or {})
    result = Simulation(site, workload, pol, params=params, record_allocations=True).run()
    return Run(result=result, policy=pol, workload=workload)


def run_jobs(
    jobs: Sequence[J], site: Site, policy: str, params: dict[str, Any] | None = None
) -> Run:
    return simulate(site, make_workload(jobs, site), policy, params)
