"""The declarative site model: clusters of nodes, queues, and how the site schedules.

A site is written in YAML (see ``site-configs/``) with human units, validated with
pydantic, and immutable once loaded. :func:`load_site` reports *every* problem of a file at
once, each with the file name, the key path (``queues[1].max_walltime``) and what was
expected, so an admin can fix a file in one go.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from queuesim.common import bundled
from queuesim.common.errors import ConfigError
from queuesim.site.units import parse_duration, parse_size


def _trace_queue(value: object) -> int | str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"expected a trace queue number or name, got {value!r}")


def _pool_size(value: object) -> int | float:
    """A CPU count (int >= 1) or a percentage string ``'60%'`` (kept as a fraction)."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            percent = float(value.strip()[:-1])
        except ValueError:
            raise ValueError(
                f"expected a CPU count or a percentage like '60%', got {value!r}"
            ) from None
        if not 0 < percent <= 100:
            raise ValueError(f"a percentage must lie in (0%, 100%], got {value!r}")
        return percent / 100.0
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"a CPU pool must be at least 1 CPU, got {value}")
        return value
    raise ValueError(f"expected a CPU count or a percentage like '60%', got {value!r}")


Duration = Annotated[float, BeforeValidator(parse_duration)]
#: a CPU count (int) or a fraction of the queue's clusters' CPUs (float, from 'N%')
PoolSize = Annotated[int | float, BeforeValidator(_pool_size)]
TraceQueue = Annotated[int | str, BeforeValidator(_trace_queue)]
Size = Annotated[int, BeforeValidator(parse_size)]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cluster(_Frozen):
    """A group of identical nodes."""

    name: str = Field(min_length=1)
    nodes: int = Field(gt=0, description="number of nodes")
    cpus_per_node: int = Field(gt=0)
    memory_per_node: Size | None = Field(
        default=None, description="memory of one node; omit when memory is not modelled"
    )
    properties: tuple[str, ...] = ()

    @property
    def cpus(self) -> int:
        return self.nodes * self.cpus_per_node


class Queue(_Frozen):
    """A queue jobs are routed to, with its walltime limit and priority."""

    name: str = Field(min_length=1)
    max_walltime: Duration | None = Field(default=None, description="None: no limit")
    default_walltime: Duration | None = Field(
        default=None, description="estimate for jobs that request no walltime"
    )
    priority: int = 0
    clusters: tuple[str, ...] | None = Field(
        default=None, description="clusters the queue may use; None: all"
    )
    trace_queues: tuple[TraceQueue, ...] = Field(
        default=(), description="queue numbers or names in the trace routed to this queue"
    )
    route_by_walltime: bool = Field(
        default=True,
        description="with routing 'walltime': False keeps the queue out of the routing table "
        "(reached only through trace_queues or queue_map)",
    )
    single_node: bool = Field(default=False, description="accepts only jobs that fit one node")
    max_running_per_user: int | None = Field(
        default=None, ge=1, description="most running jobs one user may have in the queue"
    )
    max_cpus_per_user: int | None = Field(
        default=None, ge=1, description="most CPUs one user's running jobs may hold in the queue"
    )
    cpu_pool: PoolSize | None = Field(
        default=None,
        description="most CPUs the queue's running jobs may hold at once: a number of CPUs, "
        "or a percentage of the CPUs of the clusters the queue may use ('60%')",
    )

    @model_validator(mode="after")
    def _default_within_max(self) -> Queue:
        if (
            self.default_walltime is not None
            and self.max_walltime is not None
            and self.default_walltime > self.max_walltime
        ):
            raise ValueError(
                f"default_walltime ({self.default_walltime:g} s) is larger than "
                f"max_walltime ({self.max_walltime:g} s)"
            )
        return self


class Routing(StrEnum):
    """How a job finds its queue."""

    TRACE = "trace"  #: by the trace's queue field, through each queue's trace_queues
    WALLTIME = "walltime"  #: the smallest queue whose max_walltime fits the request


class EstimateSource(StrEnum):
    """What the scheduler believes a job's runtime to be when it plans."""

    REQUESTED = "requested"  #: the walltime the user requested (the trace's field 9)
    EXACT = "exact"  #: the real runtime (a clairvoyant scheduler)
    QUEUE_LIMIT = "queue-limit"  #: the max walltime of the job's queue


class MemoryModel(StrEnum):
    """Whether the trace's memory requests constrain placement."""

    IGNORE = "ignore"
    PER_CPU = "per-cpu"  #: the trace's requested memory per CPU must fit on each node


class Ordering(StrEnum):
    """The order in which policies see waiting jobs (Klusáček et al., paper 004, 2.1)."""

    FCFS = "fcfs"  #: by submit time, then trace order
    QUEUE_PRIORITY = "queue-priority"  #: queue priority, then fairshare within a queue
    FAIRSHARE = "fairshare"  #: fairshare over all jobs; queues are only "virtual"


class Charge(StrEnum):
    """What a job pays into fairshare, per second of runtime."""

    CPU = "cpu"  #: its CPUs
    MULTI_RESOURCE = "multi-resource"  #: processor equivalents: max(CPU, memory) share


class Account(StrEnum):
    USER = "user"
    GROUP = "group"


class Fairshare(_Frozen):
    """Decayed past usage per account; less usage, higher priority."""

    charge: Charge = Charge.CPU
    half_life: Duration | None = Field(default=None, gt=0)
    decay_factor: float | None = Field(default=None, gt=0, le=1)
    decay_interval: Duration | None = Field(default=None, gt=0)
    by: Account = Account.USER
    shares: dict[int, float] = Field(
        default_factory=dict, description="account id -> share (default 1): usage / share"
    )
    usage_log: Duration | None = Field(
        default=None, gt=0, description="record every account's usage at this interval"
    )

    @model_validator(mode="after")
    def _one_decay(self) -> Fairshare:
        factor = self.decay_factor is not None or self.decay_interval is not None
        if self.half_life is not None and factor:
            raise ValueError("give either half_life or decay_factor with decay_interval, not both")
        if factor and (self.decay_factor is None or self.decay_interval is None):
            raise ValueError("decay_factor and decay_interval go together")
        if any(share <= 0 for share in self.shares.values()):
            raise ValueError("shares must be positive")
        return self

    @property
    def decay(self) -> tuple[float, float]:
        """(factor, interval): usage is multiplied by factor per interval (continuously for
        a half-life: factor 0.5 per half-life). The default is a half-life of 7 days."""
        if self.decay_factor is not None and self.decay_interval is not None:
            return self.decay_factor, self.decay_interval
        return 0.5, self.half_life if self.half_life is not None else 7 * 86400.0

    @property
    def stepwise(self) -> bool:
        """Decay applied at interval boundaries (factor form) rather than continuously."""
        return self.decay_factor is not None


class DfrsAnnotation(StrEnum):
    """Where a DFRS policy takes every job's tasks, CPU need and memory from."""

    FILE = "file"  #: the trace's own annotation file (``NAME.dfrs.csv``, traces.dfrs_annotation)
    HPC2N = "hpc2n"  #: paper 000's rule for the HPC2N log, applied to a trace without one


class Dfrs(_Frozen):
    """Settings for dynamic fractional resource scheduling (policies like ``GreedyPM*``)."""

    annotation: DfrsAnnotation = DfrsAnnotation.FILE


class SchedulerSpec(_Frozen):
    """The scheduling policy, by registry name, with its parameters."""

    policy: str = "easy"
    params: dict[str, Any] = Field(default_factory=dict)


class Site(_Frozen):
    """A whole site: what it has and how it schedules."""

    name: str = Field(min_length=1)
    description: str = ""
    clusters: tuple[Cluster, ...] = Field(min_length=1)
    queues: tuple[Queue, ...] = Field(
        default=(Queue(name="default"),), min_length=1, validate_default=True
    )
    routing: Routing = Routing.WALLTIME
    estimate: EstimateSource = EstimateSource.REQUESTED
    kill_at_walltime: bool = Field(
        default=True, description="a job still running at its requested walltime is killed"
    )
    memory: MemoryModel = MemoryModel.IGNORE
    queue_map: dict[str, str] = Field(
        default_factory=dict, description="trace queue (number or name) -> queue name"
    )
    ordering: Ordering = Ordering.FCFS
    fairshare: Fairshare = Fairshare()
    scheduler: SchedulerSpec = SchedulerSpec()
    dfrs: Dfrs = Dfrs()

    @field_validator("clusters")
    @classmethod
    def _unique_clusters(cls, clusters: tuple[Cluster, ...]) -> tuple[Cluster, ...]:
        _require_unique((c.name for c in clusters), "cluster")
        return clusters

    @field_validator("queues")
    @classmethod
    def _unique_queues(cls, queues: tuple[Queue, ...]) -> tuple[Queue, ...]:
        _require_unique((q.name for q in queues), "queue")
        return queues

    @field_validator("queue_map", mode="before")
    @classmethod
    def _trace_queue_keys(cls, mapping: object) -> object:
        if isinstance(mapping, dict):  # YAML reads queue numbers as integers
            return {str(k): v for k, v in mapping.items()}
        return mapping

    @model_validator(mode="after")
    def _cross_references(self) -> Site:
        problems = cross_reference_problems(self.model_dump(mode="json"))
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # --- derived views used by the engine -------------------------------------------------

    @property
    def total_cpus(self) -> int:
        return sum(c.cpus for c in self.clusters)

    @property
    def total_nodes(self) -> int:
        return sum(c.nodes for c in self.clusters)

    def node_cpus(self) -> np.ndarray:
        """CPUs of every node, clusters in file order (int64 array, one entry a node)."""
        return np.concatenate(
            [np.full(c.nodes, c.cpus_per_node, dtype=np.int64) for c in self.clusters]
        )

    def node_memory(self) -> np.ndarray:
        """Memory of every node in bytes; huge where memory is not modelled."""
        unlimited = np.iinfo(np.int64).max // 4
        return np.concatenate(
            [
                np.full(
                    c.nodes,
                    unlimited if c.memory_per_node is None else c.memory_per_node,
                    dtype=np.int64,
                )
                for c in self.clusters
            ]
        )

    def queue(self, name: str) -> Queue:
        for q in self.queues:
            if q.name == name:
                return q
        raise KeyError(name)

    def trace_queue_map(self) -> dict[str, int]:
        """Trace queue (as a string) -> index of the site queue it is routed to, from every
        queue's ``trace_queues`` and the site's ``queue_map``."""
        index = {q.name: i for i, q in enumerate(self.queues)}
        mapping = {str(t): i for i, q in enumerate(self.queues) for t in q.trace_queues}
        mapping.update((t, index[name]) for t, name in self.queue_map.items())
        return mapping

    def queue_cpus(self, queue: Queue) -> int:
        """CPUs of the clusters a queue may use."""
        allowed = set(queue.clusters) if queue.clusters is not None else None
        return sum(c.cpus for c in self.clusters if allowed is None or c.name in allowed)

    def pool_cpus(self, queue: Queue) -> int | None:
        """The queue's CPU pool in CPUs (a percentage resolved against its clusters, rounded
        down but at least 1); None without a pool."""
        pool = queue.cpu_pool
        if pool is None or isinstance(pool, int):
            return pool
        return max(1, int(pool * self.queue_cpus(queue)))

    def with_scheduler(self, policy: str | None, params: dict[str, Any] | None = None) -> Site:
        """A copy of the site with another policy (and parameters merged over the file's)."""
        spec = self.scheduler
        if policy is not None and policy != spec.policy:
            spec = SchedulerSpec(policy=policy, params={})
        if params:
            spec = SchedulerSpec(policy=spec.policy, params={**spec.params, **params})
        return self.model_copy(update={"scheduler": spec})


def _require_unique(names: Iterable[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{what} name {name!r} is used twice")
        seen.add(name)


_UNION_TAGS = frozenset({"int", "str", "float", "bool"})


def _format_location(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith("function-") or part in _UNION_TAGS:
            continue  # pydantic's validator and union-branch tags are not keys
        else:
            path += f".{part}" if path else part
    return path or "(top level)"


def _describe(error: Any) -> str:
    kind = error["type"]
    msg = str(error["msg"])
    msg = msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown key (check the spelling; see the documented keys in site-configs/)"
    if kind == "missing":
        return "required key is missing"
    given = error.get("input")
    if kind not in ("value_error", "assertion_error") and not isinstance(given, dict | list):
        return f"{msg} (got {given!r})"
    return msg


def site_errors(data: object) -> list[str]:
    """Every validation problem of a parsed site document, as ``key.path: message`` lines."""
    if data is None:
        return ["(top level): the file is empty; a site needs at least 'name' and 'clusters'"]
    if not isinstance(data, dict):
        return [f"(top level): expected a mapping of keys, got {type(data).__name__}"]
    try:
        Site.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        failed_parents = {tuple(e["loc"][:1]) for e in errors if len(e["loc"]) > 1}
        lines: list[str] = []
        for error in errors:
            loc = tuple(error["loc"])
            if error["type"] == "too_short" and loc in failed_parents:
                continue  # the list's items failed; their own errors say why
            where = _format_location(loc)
            text = _describe(error)
            # cross-reference problems already carry their own key paths
            if where == "(top level)" and ": " in text:
                lines.extend(part for part in text.split("; "))
            else:
                lines.append(f"{where}: {text}")
        lines.extend(cross_reference_problems(data))
        return list(dict.fromkeys(lines))  # a union's branches may repeat one problem
    return []


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
    problems += _routing_problems(data, queues)
    return problems


def _limit_problems(clusters: list[dict[str, Any]], queues: list[dict[str, Any]]) -> list[str]:
    """Queue limits that can never be reached or can never let a job run."""
    cpus_of = {}
    for c in clusters:
        nodes, per_node = c.get("nodes"), c.get("cpus_per_node")
        if isinstance(nodes, int) and isinstance(per_node, int):
            cpus_of[c.get("name")] = nodes * per_node
    problems = []
    for i, q in enumerate(queues):
        names = q.get("clusters")
        allowed = names if isinstance(names, list) else list(cpus_of)
        if not all(name in cpus_of for name in allowed):
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


def read_site_document(path: str | Path) -> object:
    """Parse a site file's YAML, with a clear error for a missing or unreadable file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such site file{_bundled_hint(path)}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the site file ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML at {where}: {problem}") from None


def _bundled_hint(path: Path) -> str:
    """For a missing bare name, the bundled site files it could have named."""
    if path.parent != Path("."):
        return ""
    names = bundled.bundled_names(bundled.site_configs_folder(), bundled.SITE_SUFFIXES)
    return f" (nor a bundled one: {', '.join(n.rsplit('.', 1)[0] for n in names)})"


def read_clusters(path: str | Path, where: str) -> object:
    """The ``clusters`` list of a clusters file (a YAML file with a ``clusters`` key, as
    ``queuesim import-machines`` writes), for ``clusters_from`` or ``--clusters``."""
    path = bundled.clusters_file(path)
    doc = read_site_document(path)
    if not isinstance(doc, dict) or "clusters" not in doc:
        raise ConfigError(f"{where}: {path} has no 'clusters' key (expected a clusters file)")
    return doc["clusters"]


def load_site(path: str | Path, clusters: str | Path | None = None) -> Site:
    """Load and validate a site file; raise :class:`ConfigError` listing every problem.

    A site file may take its clusters from another file with ``clusters_from: PATH``
    (relative to the site file); ``clusters`` (a clusters file) replaces them, to run one
    setup on another machine. ``path`` may also name a bundled site file
    (``metacentrum-historic``; see :mod:`queuesim.common.bundled`), as may ``clusters``."""
    path = bundled.site_file(path)
    data = read_site_document(path)
    if isinstance(data, dict) and "clusters_from" in data:
        source = data.pop("clusters_from")
        if "clusters" in data:
            raise ConfigError(f"{path}: clusters_from: give either clusters or clusters_from")
        if not isinstance(source, str):
            raise ConfigError(f"{path}: clusters_from: expected a file path, got {source!r}")
        data["clusters"] = read_clusters(Path(path).parent / source, f"{path}: clusters_from")
    if clusters is not None and isinstance(data, dict):
        data["clusters"] = read_clusters(clusters, "--clusters")
    problems = site_errors(data)
    if problems:
        listing = "\n".join(f"  {path}: {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        raise ConfigError(f"{path}: {len(problems)} {noun} in the site file:\n{listing}")
    return Site.model_validate(data)
