"""The declarative site model: clusters of nodes, queues, and how the site schedules.

A site is written in YAML (see ``site-configs/``) with human units, validated with
pydantic, and immutable once loaded. :func:`load_site` reports *every* problem of a file at
once, each with the file name, the key path (``queues[1].max_walltime``) and what was
expected, so an admin can fix a file in one go.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from queuesim.site.checks import cross_reference_problems
from queuesim.site.enums import (
    Account,
    Charge,
    DfrsAnnotation,
    EstimateSource,
    MemoryModel,
    Ordering,
    Routing,
)
from queuesim.site.sched_rules import NotModelled, PbsOrder, ShareGroup, tree_problems
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
    properties: tuple[str, ...] = Field(
        default=(),
        description="node properties (features) every node of the group has; a job that "
        "requires a property runs only on nodes that have it (the group's name counts as one)",
    )
    gpus_per_node: int = Field(default=0, ge=0, description="GPUs of one node")

    def has(self, prop: str) -> bool:
        """Whether the group's nodes have the node property ``prop`` (or it is its name)."""
        return prop == self.name or prop in self.properties

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


class Fairshare(_Frozen):
    """Decayed past usage per account; less usage, higher priority."""

    charge: Charge = Charge.CPU
    half_life: Duration | None = Field(default=None, gt=0)
    decay_factor: float | None = Field(default=None, gt=0, le=1)
    decay_interval: Duration | None = Field(default=None, gt=0)
    by: Account = Account.USER
    charge_gpus: bool = Field(
        default=False,
        description="with the multi-resource charge, GPUs count too: a job pays the larger "
        "of its CPUs, memory and GPUs on each node, in CPUs of that node",
    )
    shares: dict[int, float] = Field(
        default_factory=dict, description="account id -> share (default 1): usage / share"
    )
    usage_log: Duration | None = Field(
        default=None, gt=0, description="record every account's usage at this interval"
    )
    groups: tuple[ShareGroup, ...] = Field(
        default=(), description="inner nodes of the fairshare tree (PBS resource_group)"
    )
    members: dict[int, str] = Field(
        default_factory=dict, description="account id -> its group in the tree (default: root)"
    )
    unknown_group: str = Field(
        default="root",
        description="the group of the accounts not in members (PBS's 'unknown' group)",
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
        problems = tree_problems(self.groups, self.members | {-1: self.unknown_group})
        if problems:
            raise ValueError("; ".join(problems))
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


class MultifactorPriority(_Frozen):
    """Slurm's priority/multifactor weights, for ``ordering: slurm-multifactor``
    (slurm.conf(5) ``PriorityWeight*``, ``PriorityMaxAge``, ``PriorityFavorSmall``;
    Slurm's priority_multifactor page). Each factor lies in [0, 1]; a job's priority is
    the sum of weight x factor (see :mod:`queuesim.core.multifactor`)."""

    weight_age: float = Field(default=0, ge=0)
    weight_fairshare: float = Field(default=0, ge=0)
    weight_job_size: float = Field(default=0, ge=0)
    weight_partition: float = Field(default=0, ge=0)
    max_age: Duration = Field(
        default=7 * 86400.0, gt=0, description="waiting this long gives the full age factor"
    )
    favor_small: bool = Field(
        default=False, description="the job size factor favours small jobs (1 - CPUs share)"
    )
    partition_job_factor: dict[str, float] = Field(
        default_factory=dict,
        description="queue name -> its PriorityJobFactor (default 1); the partition factor "
        "is a queue's value over the largest",
    )

    @field_validator("partition_job_factor")
    @classmethod
    def _non_negative(cls, factors: dict[str, float]) -> dict[str, float]:
        bad = [name for name, value in factors.items() if value < 0]
        if bad:
            raise ValueError(f"a partition job factor must be 0 or more (queue {bad[0]!r})")
        return factors


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
    pbs_order: PbsOrder = PbsOrder()
    fairshare: Fairshare = Fairshare()
    priority: MultifactorPriority = MultifactorPriority()
    scheduler: SchedulerSpec = SchedulerSpec()
    dfrs: Dfrs = Dfrs()
    not_modelled: tuple[NotModelled, ...] = Field(
        default=(),
        description="settings of the site's own configuration the simulation does not "
        "reproduce (written by `queuesim import`), printed with every run",
    )

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

    @model_validator(mode="after")
    def _tree_needs_pbs_order(self) -> Site:
        tree = self.fairshare.groups or self.fairshare.members
        if tree and not (self.ordering is Ordering.PBS and self.pbs_order.fair_share):
            raise ValueError(
                "fairshare.groups / fairshare.members: the fairshare tree orders jobs only "
                "with 'ordering: pbs' and 'pbs_order: {fair_share: true}'"
            )
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

    def node_gpus(self) -> np.ndarray:
        """GPUs of every node (0 where a group has none)."""
        return np.concatenate(
            [np.full(c.nodes, c.gpus_per_node, dtype=np.int64) for c in self.clusters]
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
        down but at least 1); None without a pool, or with one at least as large as the
        queue's clusters: such a pool limits nothing, and kept as a limit it would turn a job
        that waits for room into one "held by a limit", which policies pass over rather
        than wait or reserve for (all of FCFS, EASY and conservative would schedule alike)."""
        pool = queue.cpu_pool
        if pool is None:
            return None
        cpus = self.queue_cpus(queue)
        size = pool if isinstance(pool, int) else max(1, int(pool * cpus))
        return None if size >= cpus else size

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
