"""What a job requires of the nodes it runs on, honoured or counted: node properties, a
pinned cluster, exclusive nodes and GPUs.

A trace may say, per job (PBS accounting logs, Slurm sacct, Alea's extended SWF; see
:mod:`queuesim.traces`):

* ``properties``: node properties joined by ``:`` (``x86_64:cl_zewura``). A job runs only
  on node groups (clusters of the site file) that have every property it names, a
  cluster's own name counting as one of its properties - which is how a job pins a
  cluster; ``^p`` excludes groups that have ``p``. Tokens that name a single host
  (``zewura12.cerit-sc.cz``, ``host=zewura10``, ``zegox20``: a cluster name followed by a
  number) cannot be honoured, since the site model has node groups, not named nodes: they
  are counted as ``host_requirement_not_modelled`` and ignored. Tokens of the form
  ``key=value`` (``mem=3gb``) are resources of a chunk, not properties: counted as
  ``resource_not_modelled`` and ignored;
* ``exclusive``: the job holds its nodes whole. It takes every CPU of each of its
  ``nodes`` nodes (``ppn`` becomes the node size and its CPUs nodes x size; counted as
  ``exclusive_whole_nodes``), so no other job can share them. Where the groups it may use
  differ in node size it is kept to the smallest size that holds what it asks per node
  (``exclusive_one_node_size``);
* ``gpus``: GPUs for the whole job, spread evenly over its ``nodes`` (``gpus_rounded_up``
  when they do not divide evenly). A GPU job has a fixed number of CPUs per node (its CPUs
  over its nodes; ``gpu_job_shape_rounded`` when they do not divide) and runs only on
  groups whose nodes have at least that many GPUs each.

A job whose properties or GPUs no node group of the site has is rejected
(``no_node_with_properties``, ``no_node_with_gpus``). The resolved requirement of every job
is a *node set*: the clusters it may use (``None``: all), combined with its queue's in
:class:`~queuesim.core.cluster.ClusterState`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from queuesim.site.model import Cluster, Site

#: reason keys of cleaning this module produces, with the action of each
REQUIREMENT_REASONS: dict[str, str] = {
    "no_node_with_properties": "rejected",
    "no_node_with_gpus": "rejected",
    "exclusive_whole_nodes": "repaired",
    "exclusive_one_node_size": "warning",
    "gpus_rounded_up": "warning",
    "gpu_job_shape_rounded": "warning",
    "host_requirement_not_modelled": "warning",
    "resource_not_modelled": "warning",
}

#: the column of the properties in a trace (log readers), or in Alea's extended SWF
PROPERTY_COLUMNS = ("properties", "nodespec_properties")

#: what follows a cluster name in the name of one of its nodes (``zewura12``, ``gpu-03``)
_NODE_NUMBER = re.compile(r"-?\d+")


@dataclass(frozen=True)
class PropertySpec:
    """What one properties string asks, against one site."""

    allowed: frozenset[str] | None  #: clusters with the properties; None: all of them
    hosts: bool  #: names a single host (not modelled)
    resources: bool  #: holds ``key=value`` resources (not modelled)


@dataclass
class Resolved:
    """Every job's requirements, resolved against a site."""

    cpus: np.ndarray
    ppn: np.ndarray
    gpn: np.ndarray  #: GPUs on each node it uses
    node_set: np.ndarray  #: index into :attr:`node_sets`
    node_sets: list[frozenset[str] | None]
    #: reason -> which jobs it applies to
    flags: dict[str, np.ndarray] = field(default_factory=dict)


def _is_host(token: str, site: Site) -> bool:
    if "." in token or token.startswith(("host=", "vnode=")):
        return True
    if any(c.has(token) for c in site.clusters):
        return False
    return any(
        token.startswith(c.name) and _NODE_NUMBER.fullmatch(token[len(c.name) :])
        for c in site.clusters
    )


def parse_properties(text: str, site: Site) -> PropertySpec:
    """The clusters of ``site`` a properties string (``x86_64:^cl_zegox``) allows, and
    whether it names hosts or resources the model cannot honour (module docstring)."""
    required: list[str] = []
    excluded: list[str] = []
    hosts = resources = False
    for token in (t for t in text.split(":") if t):
        negated = token.startswith("^")
        name = token[1:] if negated else token
        if _is_host(name, site):
            hosts = True
        elif "=" in name:
            resources = True
        else:
            (excluded if negated else required).append(name)
    if not required and not excluded:
        return PropertySpec(None, hosts, resources)
    allowed = frozenset(
        c.name
        for c in site.clusters
        if all(c.has(p) for p in required) and not any(c.has(p) for p in excluded)
    )
    if len(allowed) == len(site.clusters):
        return PropertySpec(None, hosts, resources)
    return PropertySpec(allowed, hosts, resources)


def _column(jobs: pd.DataFrame, names: tuple[str, ...], default: object) -> np.ndarray:
    for name in names:
        if name in jobs.columns:
            return jobs[name].to_numpy()
    return np.full(len(jobs), default, dtype=object if isinstance(default, str) else None)


def resolve(jobs: pd.DataFrame, site: Site, cpus: np.ndarray, ppn: np.ndarray) -> Resolved:
    """Resolve every job's requirements (module docstring) against ``site``; ``cpus`` and
    ``ppn`` are what the trace asks (ppn 0: any spread), changed for exclusive and GPU
    jobs in the result."""
    n = len(jobs)
    cpus = cpus.astype(np.int64).copy()
    ppn = ppn.astype(np.int64).copy()
    flags = {reason: np.zeros(n, dtype=bool) for reason in REQUIREMENT_REASONS}
    clusters = {c.name: c for c in site.clusters}

    if any(name in jobs.columns for name in PROPERTY_COLUMNS):
        texts = _column(jobs, PROPERTY_COLUMNS, "").astype(str)
        uniques, which = np.unique(texts, return_inverse=True)
        which = which.reshape(-1)
    else:  # no job names properties (an SWF trace): one spec, the empty one
        uniques, which = np.array([""]), np.zeros(n, dtype=np.int64)
    specs = [parse_properties(str(t), site) for t in uniques]
    # each job's clusters, as an index into ``choices``: its properties' or its shape's
    choices: list[frozenset[str] | None] = [spec.allowed for spec in specs]
    choice = which.astype(np.int64)
    flags["host_requirement_not_modelled"] = np.array([s.hosts for s in specs], dtype=bool)[which]
    flags["resource_not_modelled"] = np.array([s.resources for s in specs], dtype=bool)[which]
    flags["no_node_with_properties"] = np.array(
        [s.allowed is not None and not s.allowed for s in specs], dtype=bool
    )[which]

    nodes = np.maximum(_column(jobs, ("nodes",), 0).astype(np.int64), 1)
    nodes = np.where(ppn > 0, np.maximum(cpus // np.maximum(ppn, 1), 1), nodes)
    gpus = _column(jobs, ("gpus",), 0).astype(np.int64)
    exclusive = _column(jobs, ("exclusive",), False).astype(bool)
    gpn = np.zeros(n, dtype=np.int64)
    special = np.flatnonzero(((gpus > 0) | exclusive) & ~flags["no_node_with_properties"])
    if special.size:
        keys = np.stack([which.reshape(-1), gpus, nodes, cpus, ppn, exclusive.astype(np.int64)])[
            :, special
        ]
        combos, inverse = np.unique(keys, axis=1, return_inverse=True)
        for c, (spec, g, nn, cc, pp, ex) in enumerate(combos.T.tolist()):
            shape = _shape(specs[spec].allowed, clusters, g, nn, cc, pp, bool(ex))
            rows = special[inverse.reshape(-1) == c]
            cpus[rows], ppn[rows], gpn[rows] = shape.cpus, shape.ppn, shape.gpn
            choices.append(shape.allowed)
            choice[rows] = len(choices) - 1
            for reason in shape.reasons:
                flags[reason][rows] = True

    # the node sets numbered as the jobs first name them (None, every cluster, is 0): the
    # choices the jobs use, in the order of the first job using each
    used, first = np.unique(choice, return_index=True)
    node_sets: list[frozenset[str] | None] = [None]
    index: dict[frozenset[str] | None, int] = {None: 0}
    number = np.zeros(len(choices), dtype=np.int64)
    for c in used[np.argsort(first)].tolist():
        names = choices[c]
        if names not in index:
            index[names] = len(node_sets)
            node_sets.append(names)
        number[c] = index[names]
    return Resolved(cpus, ppn, gpn, number[choice], node_sets, flags)


@dataclass(frozen=True)
class _Shape:
    cpus: int
    ppn: int
    gpn: int
    allowed: frozenset[str] | None
    reasons: tuple[str, ...]


def _shape(
    allowed: frozenset[str] | None,
    clusters: dict[str, Cluster],
    gpus: int,
    nodes: int,
    cpus: int,
    ppn: int,
    exclusive: bool,
) -> _Shape:
    """The shape and clusters of a job with GPUs or exclusive nodes (module docstring)."""
    reasons: list[str] = []
    gpn = 0
    if gpus > 0:
        gpn = -(-gpus // nodes)
        if gpn * nodes != gpus:
            reasons.append("gpus_rounded_up")
        if ppn == 0:
            ppn = -(-cpus // nodes)
            if ppn * nodes != cpus:
                reasons.append("gpu_job_shape_rounded")
            cpus = ppn * nodes
        names = allowed if allowed is not None else frozenset(clusters)
        allowed = frozenset(c for c in names if clusters[c].gpus_per_node >= gpn)
        if not allowed:
            return _Shape(cpus, ppn, gpn, allowed, (*reasons, "no_node_with_gpus"))
    if exclusive:
        groups = [clusters[c] for c in (allowed if allowed is not None else clusters)]
        per_node = ppn if ppn > 0 else -(-cpus // nodes)
        size = _node_size(groups, per_node)
        if size is None:  # no node holds it: its shape makes it too large, a rejection
            return _Shape(nodes * per_node, per_node, gpn, allowed, tuple(reasons))
        chosen = frozenset(c.name for c in groups if c.cpus_per_node == size)
        if len(chosen) < len(groups):
            reasons.append("exclusive_one_node_size")
            allowed = chosen
        if ppn != size or cpus != nodes * size:
            reasons.append("exclusive_whole_nodes")
        ppn, cpus = size, nodes * size
    if allowed is not None and allowed == frozenset(clusters):
        allowed = None
    return _Shape(cpus, ppn, gpn, allowed, tuple(reasons))


def _node_size(groups: list[Cluster], per_node: int) -> int | None:
    """The smallest node size among ``groups`` that holds ``per_node`` CPUs."""
    sizes = sorted({c.cpus_per_node for c in groups if c.cpus_per_node >= per_node})
    return sizes[0] if sizes else None
