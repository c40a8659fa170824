"""Problems of a site document that involve several keys at once (pools against the
clusters their queues may use, limits against each other, the walltime routing table),
each with its key path; checked on the raw document, so they are reported even when other
keys fail validation."""

from __future__ import annotations

from typing import Any

from queuesim.site.enums import MemoryModel, Ordering, Routing
from queuesim.site.units import parse_duration


def cross_reference_problems(data: dict[str, Any]) -> list[str]:
    """Problems that involve several keys at once, each with its key path.

    Works on the raw document as well as on a validated site's dump, so these problems are
    reported even when other fields fail (and pydantic's model validator never runs)."""
    clusters = data.get("clusters")
    queues = data.get("queues")
    clusters = [c for c in clusters if isinstance(c, dict)] if isinstance(clusters, list) else []
    queues = [q for q in queues if isinstance(q, dict)] if isinstance(queues, list) else []
    known = [c.get("name") for c in clusters]
    problems = []
    for i, q in enumerate(queues):
        names = q.get("clusters")
        for name in names if isinstance(names, list) else ():
            if name not in known:
                problems.append(
                    f"queues[{i}].clusters: queue {q.get('name')!r} names cluster {name!r}, "
                    f"which does not exist (known: {', '.join(sorted(map(str, known)))})"
                )
    if data.get("memory") == MemoryModel.PER_CPU.value:
        for i, c in enumerate(clusters):
            if c.get("memory_per_node") is None:
                problems.append(
                    f"clusters[{i}].memory_per_node: required when memory is 'per-cpu' "
                    f"(cluster {c.get('name')!r} has none)"
                )
    problems += _limit_problems(clusters, queues)
    problems += _priority_problems(data, queues)
    problems += _routing_problems(data, queues)
    return problems


def _priority_problems(data: dict[str, Any], queues: list[dict[str, Any]]) -> list[str]:
    """Partition job factors of the ``priority`` block naming no queue, and weights given
    where no ordering reads them."""
    priority = data.get("priority")
    factors = priority.get("partition_job_factor") if isinstance(priority, dict) else None
    names = [q.get("name") for q in queues]
    problems = []
    if (
        isinstance(priority, dict)
        and data.get("ordering") != Ordering.SLURM_MULTIFACTOR.value
        and (factors or any(v for k, v in priority.items() if k.startswith("weight_")))
    ):
        problems.append(
            "priority: the multifactor weights apply only with 'ordering: slurm-multifactor' "
            f"(the ordering is {data.get('ordering', 'fcfs')!r})"
        )
    return problems + [
        f"priority.partition_job_factor: names queue {name!r}, which does not exist "
        f"(known: {', '.join(sorted(map(str, names)))})"
        for name in (factors if isinstance(factors, dict) else {})
        if name not in names
    ]


def _limit_problems(clusters: list[dict[str, Any]], queues: list[dict[str, Any]]) -> list[str]:
    """Queue limits that can never be reached or can never let a job run."""
    cpus_of = {}
    for c in clusters:
        nodes, per_node = c.get("nodes"), c.get("cpus_per_node")
        name = c.get("name")
        # a malformed name is reported by the field checks; it counts for no queue here
        if isinstance(name, str) and isinstance(nodes, int) and isinstance(per_node, int):
            cpus_of[name] = nodes * per_node
    problems = []
    for i, q in enumerate(queues):
        names = q.get("clusters")
        allowed = names if isinstance(names, list) else list(cpus_of)
        if not all(isinstance(name, str) and name in cpus_of for name in allowed):
            continue  # an unknown cluster is reported on its own
        total = sum(cpus_of[name] for name in allowed)
        for key in ("cpu_pool", "max_cpus_per_user"):
            value = q.get(key)
            if type(value) is int and value > total:
                problems.append(
                    f"queues[{i}].{key}: {value} CPUs is more than the {total} CPUs of the "
                    f"clusters queue {q.get('name')!r} may use ({', '.join(map(str, allowed))})"
                )
    return problems


def _routing_problems(data: dict[str, Any], queues: list[dict[str, Any]]) -> list[str]:
    """Trace queues mapped twice or to unknown queues; ambiguous walltime routing."""
    problems = []
    names = [q.get("name") for q in queues]
    mapped: dict[str, str] = {}

    def map_once(trace_queue: object, queue: object, where: str) -> None:
        key = str(trace_queue)
        if key in mapped and mapped[key] != queue:
            problems.append(
                f"{where}: trace queue {trace_queue!r} is mapped to both {mapped[key]!r} and "
                f"{queue!r}"
            )
        mapped.setdefault(key, str(queue))

    for i, q in enumerate(queues):
        listed = q.get("trace_queues")
        for t in listed if isinstance(listed, list) else ():
            map_once(t, q.get("name"), f"queues[{i}].trace_queues")
    queue_map = data.get("queue_map")
    for t, name in queue_map.items() if isinstance(queue_map, dict) else ():
        if name not in names:
            problems.append(
                f"queue_map.{t}: maps trace queue {t!r} to queue {name!r}, which does not exist "
                f"(queues: {', '.join(map(str, names))})"
            )
        else:
            map_once(t, name, f"queue_map.{t}")
    routing = data.get("routing", Routing.WALLTIME.value)
    if routing == Routing.TRACE.value and len(queues) > 1:
        for i, q in enumerate(queues):
            if q.get("name") not in mapped.values():
                problems.append(
                    f"queues[{i}].trace_queues: routing is 'trace' but no trace queue is "
                    f"mapped to queue {q.get('name')!r} (list some here or in queue_map)"
                )
    if routing == Routing.WALLTIME.value:
        seen: dict[object, str] = {}
        for i, q in enumerate(queues):
            if q.get("route_by_walltime", True) is False:
                continue
            raw_limit = q.get("max_walltime")
            try:
                limit = None if raw_limit is None else parse_duration(raw_limit)
            except (ValueError, TypeError):
                continue  # reported as a field error
            if limit in seen:
                what = "no max_walltime" if limit is None else f"max_walltime {limit:g} s"
                problems.append(
                    f"queues[{i}].max_walltime: the walltime routing table is ambiguous: queue "
                    f"{q.get('name')!r} and queue {seen[limit]!r} both have {what} (give them "
                    "different limits, or set route_by_walltime: false on one)"
                )
            else:
                seen[limit] = str(q.get("name"))
    return problems
