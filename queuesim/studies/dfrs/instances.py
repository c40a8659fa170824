"""The DFRS study's instances - synthetic Lublin-Feitelson traces at every load level and
weeks of HPC2N - and the cache of their stretch bounds."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from queuesim.common.atomic import atomic_path
from queuesim.common.errors import QueuesimError
from queuesim.studies.dfrs.config import (
    HPC2N_TRACE,
    RTOL,
    TAU,
    BoundFigures,
    Instance,
    StudyConfig,
    load_text,
)

if TYPE_CHECKING:
    from queuesim.core.workload import Workload
    from queuesim.site.model import Site


# --- instances ----------------------------------------------------------------------------

#: the two trace sets, and the site file (and trace) of each
SYNTHETIC = "synthetic"
HPC2N = "HPC2N"
SYNTHETIC_SITE = "dfrs-lublin-128.yaml"
HPC2N_SITE = "dfrs-hpc2n.yaml"


def bound_digest(jobs: pd.DataFrame, hosts: int) -> str:
    """A digest of what the bound of an instance depends on: the jobs' submit times,
    runtimes, tasks and CPU needs, the hosts, tau and the search's accuracy."""
    digest = hashlib.sha256(f"hosts={hosts};tau={TAU!r};rtol={RTOL!r};".encode())
    for column in ("submit", "runtime", "tasks", "cpu_need"):
        digest.update(np.ascontiguousarray(jobs[column].to_numpy(dtype=np.float64)).tobytes())
    return digest.hexdigest()[:16]


def _load_instance(instance: Instance) -> tuple[Site, Workload]:
    from queuesim.core.workload import load_workload
    from queuesim.site.loading import load_site

    site = load_site(instance.site)
    workload = load_workload(instance.path, site)
    if not workload.annotated:
        raise QueuesimError(f"{instance.path}: the trace has no DFRS annotation")
    return site, workload


def synthetic_instances(config: StudyConfig) -> list[Instance]:
    """Write the synthetic traces into the cache (deterministic, so rewriting an existing
    one gives the same bytes) and describe them."""
    from queuesim.site.loading import load_site
    from queuesim.traces.dfrs_annotation import write_synthetic_trace

    if config.traces_per_load == 0:
        return []
    site_path = config.site_configs / SYNTHETIC_SITE
    if not site_path.is_file():
        raise QueuesimError(f"{site_path}: site file not found (use --site-configs DIR)")
    hosts = load_site(site_path).total_nodes
    folder = config.cache / f"synthetic-n{hosts}-j{config.jobs}"
    instances = []
    for load in config.loads:
        for k in range(config.traces_per_load):
            seed = config.seed + k
            name = f"load{load_text(load)}-seed{seed}"
            path = folder / f"{name}.swf"
            try:
                write_synthetic_trace(path, hosts, config.jobs, seed, load=load)
            except ValueError as exc:
                raise QueuesimError(f"synthetic trace {name}: {exc}") from None
            instances.append(Instance(name, SYNTHETIC, load, seed, None, path, site_path, hosts))
    return instances


def hpc2n_instances(config: StudyConfig) -> tuple[list[Instance], list[str]]:
    """The first ``hpc2n_weeks`` weeks of the HPC2N trace, annotated as in ``000`` and
    written into the cache; none, with a note saying why, when the trace is absent."""
    from queuesim.site.loading import load_site
    from queuesim.traces import dfrs_annotation as annotate
    from queuesim.traces.registry import read_trace

    if config.hpc2n_weeks == 0:
        return [], []
    trace_path = config.workloads / HPC2N_TRACE
    if not trace_path.is_file():
        return [], [
            f"The HPC2N weeks were skipped: {trace_path} was not found (use --workloads DIR, "
            "or --hpc2n-weeks 0)."
        ]
    site_path = config.site_configs / HPC2N_SITE
    if not site_path.is_file():
        raise QueuesimError(f"{site_path}: site file not found (use --site-configs DIR)")
    site = load_site(site_path)
    memory = annotate.HPC2N_NODE_MEMORY_KB
    jobs = annotate.annotate_hpc2n(read_trace(trace_path).jobs, node_memory_kb=memory)
    weeks = annotate.split_weeks(jobs)[: config.hpc2n_weeks]
    notes = []
    if len(weeks) < config.hpc2n_weeks:
        notes.append(f"{trace_path.name} has only {len(weeks)} weeks with jobs.")
    instances = []
    for week in weeks:
        name = f"hpc2n-week{week.index:03d}"
        path = config.cache / "hpc2n" / f"week{week.index:03d}.swf"
        header = [
            f"Note: the jobs of {trace_path.name} submitted in its week {week.index} "
            f"(from {week.start:.0f} s), submit times from the week's start",
            "Note: DFRS annotation of Stillwell, Vivien and Casanova (000, IV.C)",
        ]
        annotate.write_annotated(
            path,
            week.jobs,
            node_cpus=annotate.HPC2N_NODE_CPUS,
            node_memory_kb=memory,
            header_lines=header,
        )
        instances.append(
            Instance(name, HPC2N, None, None, week.index, path, site_path, site.total_nodes)
        )
    return instances, notes


def _described(instance: Instance) -> Instance:
    """``instance`` with its job count and bound digest, from its prepared workload."""
    _, workload = _load_instance(instance)
    digest = bound_digest(workload.jobs, instance.hosts)
    return Instance(**{**asdict(instance), "jobs": len(workload.jobs), "digest": digest})


# --- bound cache --------------------------------------------------------------------------

_CACHE_COLUMNS = ["instance", "digest", "hosts", "bound", "upper", "solves", "seconds"]


def read_bound_cache(path: Path) -> dict[str, BoundFigures]:
    """The cached bounds by digest (empty when the file does not exist)."""
    if not path.is_file():
        return {}
    try:
        table = pd.read_csv(path, dtype={"digest": str})
        missing = [c for c in _CACHE_COLUMNS if c not in table.columns]
        if missing:
            raise ValueError(f"no column {missing[0]!r}")
        return {
            str(row["digest"]): BoundFigures(
                instance=str(row["instance"]),
                digest=str(row["digest"]),
                hosts=int(row["hosts"]),
                bound=float(row["bound"]),
                upper=float(row["upper"]),
                solves=int(row["solves"]),
                seconds=float(row["seconds"]),
            )
            for row in table.to_dict("records")
        }
    except (ValueError, pd.errors.ParserError) as exc:
        raise QueuesimError(f"{path}: not a bound cache ({exc}); delete it to rebuild") from None


def write_bound_cache(path: Path, bounds: dict[str, BoundFigures]) -> None:
    """All cached bounds, sorted by instance then digest; floats round-trip exactly."""
    rows = sorted((asdict(b) for b in bounds.values()), key=lambda r: (r["instance"], r["digest"]))
    table = pd.DataFrame(rows, columns=_CACHE_COLUMNS)
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False, lineterminator="\n")
