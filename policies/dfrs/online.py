"""The DFRS online policy: Greedy, GreedyP, GreedyPM, MCB8 and their periodic variants.

Stillwell, Vivien and Casanova's dynamic fractional resource scheduling (``000``: *Dynamic
fractional resource scheduling for HPC workloads*, section III; ``002``: *Dynamic fractional
resource scheduling versus batch scheduling*, section 4) runs every job in a VM on each of
its nodes and shares a node's CPU among the tasks on it. This module is that scheduler as a
queuesim policy; the engine's progress rates are the jobs' yields, and the engine checks
that no node's memory or CPU is overcommitted (:mod:`queuesim.core.shared_nodes`).

At each event the policy builds a plan of where every job in the system runs, then commits
it (pausing, moving, resuming and starting jobs), then hands out yields on the new mapping:
the max-min yield ``1 / max(1, load)`` improved by OPT=AVG or OPT=MIN (:mod:`.yields`).

* **Greedy** (``000`` III.A): one task at a time on the node with the least CPU load among
  those with memory for it. A job that does not fit is retried after a bounded exponential
  back-off, ``min(2**12, 2**failures)`` seconds, when nothing else would retry it (no ``*``,
  no period).
* **GreedyP**: a job that does not fit is admitted anyway. Running jobs are marked in
  increasing priority until pausing the marked ones would let it in. Then, in decreasing
  priority, each marked job that can stay is unmarked. The rest are paused.
  **GreedyPM** then tries to re-place the paused jobs with Greedy, in decreasing priority.
  A job placed elsewhere counts as a migration.
* **MCB8** re-packs every job in the system (:func:`.packing.mcb_online`), dropping the
  lowest-priority job while no yield works. With MINVT/MINFT a young job keeps its nodes
  if it keeps running.
* ``*``: at a completion, Greedy resumes paused and waiting jobs in decreasing priority
  (MCB8 re-packs, after MCB8 on submission).
* ``per``: MCB8 every ``period`` seconds (on a fixed grid) while jobs are in the system.
* ``stretch-per``: MCB8-stretch every period (``000`` III.B, DYNMCB8-STRETCH-PER).
  * A binary search finds the smallest estimated maximum stretch ``S`` at the next period
    for which MCB8 packs every job. At ``S``, job ``j`` needs the yield
    ``((flow + T) / S - vt) / T``, kept within [0.01, 1].
  * The yields are then raised together by progressive filling. This stands in for the
    paper's OPT=MAX step, which is not spelt out there.

The priority of a job is ``max(30 s, flow time) / virtual time**2`` (``000`` III.A, with its
30 s floor), infinite before the job has done any work; ties go to the earlier submission.
Its virtual time is the work it has done (the integral of its progress rate).

**Rescheduling penalty.** A job resumed or moved makes no progress for ``penalty`` seconds
(default 300, as in both papers), though it holds its nodes and CPU share meanwhile.

**Counters** (in the run's counters):
* ``preemptions``, ``migrations`` and ``resumes``;
* ``moved_memory_mb``: the memory written out by pauses, read back by resumes and sent by
  migrations (only the tasks that change node), from the site's ``memory_per_node``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from queuesim.common.errors import ConfigError, QueuesimWarning
from queuesim.core.workload import TIME_SHARED_COLUMNS
from queuesim.policies.dfrs.instance import FloatArray, Instance, IntArray
from queuesim.policies.dfrs.names import (
    Algorithm,
    OnSubmit,
    Periodic,
    looks_like_dfrs,
    parse_algorithm,
)
from queuesim.policies.dfrs.packing import mcb_online, pack_at_yield
from queuesim.policies.dfrs.yields import max_min_yields, step_yields
from queuesim.policies.registry import NameScheme, register, register_name_scheme
from queuesim.site.enums import Ordering

if TYPE_CHECKING:
    from queuesim.core.context import Context
    from queuesim.core.shared_nodes import SharedNodes

#: the priority's floor on the flow time (000 III.A: the bounded stretch's 30 s)
PRIORITY_FLOOR = 30.0
#: the back-off's cap: 2**12 seconds (000 III.A)
BACKOFF_CAP = 4096.0
#: the yield MCB8-stretch gives a job that its target would starve (000 III.B)
STRETCH_MIN_YIELD = 0.01
#: the binary search on the estimated stretch stops at this ratio between its bounds
STRETCH_ACCURACY = 1.01
_EPS = 1e-9
#: rates closer than this are not worth an engine event
_RATE_TOLERANCE = 1e-12


def priority(flow: FloatArray, virtual: FloatArray, floor: float = PRIORITY_FLOOR) -> FloatArray:
    """``max(floor, flow) / virtual**2``; infinite where a job has done no work yet."""
    flow = np.asarray(flow, dtype=np.float64)
    virtual = np.asarray(virtual, dtype=np.float64)
    safe = np.where(virtual > 0, virtual, 1.0)
    out: FloatArray = np.where(virtual > 0, np.maximum(floor, flow) / safe**2, np.inf)
    return out


def backoff_delay(failures: int, cap: float = BACKOFF_CAP) -> float:
    """Seconds until a job that failed to start ``failures`` times is tried again."""
    if failures < 1:
        raise ValueError(f"failures must be at least 1, got {failures}")
    return min(cap, 2.0 ** min(failures, 1023))


def check_runnable(ctx: Context, policy: str) -> None:
    """Refuse a run DFRS cannot model, before its first pass: it needs every job's tasks,
    CPU need and memory (an annotated workload), identical nodes (a task takes a fraction
    of a node), the plain FCFS ordering (it orders jobs by its own priority) and no queue
    limits (it does not enforce them)."""
    site = ctx.site
    if not ctx.workload_annotated:
        raise ConfigError(
            f"policy {policy!r} time-shares nodes and needs every job's DFRS tasks, CPU "
            f"need and memory ({', '.join(TIME_SHARED_COLUMNS)}): {ctx.workload_source} has "
            "no annotation file (make one with 'queuesim generate lublin', or set the site's "
            "'dfrs: annotation: hpc2n' to apply paper 000's HPC2N rule)"
        )
    node_cpus = set(site.node_cpus().tolist())
    if len(node_cpus) != 1:
        raise ConfigError(
            f"policy {policy!r} needs identical nodes (DFRS tasks take fractions of a node); "
            f"site {site.name!r} has nodes of {sorted(node_cpus)} CPUs"
        )
    if site.ordering is not Ordering.FCFS:
        raise ConfigError(
            f"policy {policy!r} orders jobs by its own priority; site {site.name!r} sets "
            "'ordering: fairshare', which it would ignore (use 'ordering: fcfs')"
        )
    if ctx.queue_limits_set:
        raise ConfigError(
            f"policy {policy!r} does not enforce queue limits; site {site.name!r} sets some "
            "(max_running_per_user, max_cpus_per_user or cpu_pool)"
        )


def check_every_job_fits(ctx: Context, nodes: SharedNodes) -> None:
    """Refuse a workload with a job whose tasks do not fit in the nodes' memory, one node
    slot each, even with the platform empty (it could never run)."""
    tasks = nodes.tasks
    mem = nodes.mem_fraction
    hosts = nodes.hosts
    with np.errstate(divide="ignore"):
        per_node = np.where(mem > 0, np.floor(1.0 / np.where(mem > 0, mem, 1.0)), np.inf)
    too_big = np.flatnonzero(tasks > hosts * per_node)
    if too_big.size:
        j = int(too_big[0])
        raise ConfigError(
            f"{ctx.workload_source}: {too_big.size} jobs can never run on the {hosts} "
            f"nodes of site {ctx.site.name!r}, e.g. job {int(nodes.job_ids[j])} ({tasks[j]} "
            f"tasks of memory {mem[j]:g}, at most {per_node[j]:g} per node)"
        )


def removal_order(prio: FloatArray) -> IntArray:
    """Positions from lowest to highest priority; among equals the later one comes first."""
    n = prio.shape[0]
    out: IntArray = np.lexsort((-np.arange(n), prio))
    return out


class _Plan:
    """A tentative mapping of jobs to nodes, with each node's CPU load and free memory."""

    def __init__(self, nodes: SharedNodes, mapping: dict[int, IntArray]) -> None:
        self.nodes = nodes
        self.mapping = dict(mapping)
        self.load = np.zeros(nodes.hosts)
        self.free = 1.0 - nodes.mem_used
        for job, hosts in mapping.items():
            np.add.at(self.load, hosts, nodes.cpu_need[job])

    def fit(self, job: int) -> IntArray | None:
        """Greedy's nodes for ``job`` (least-loaded node with memory, task by task)."""
        nodes = self.nodes
        tasks = int(nodes.tasks[job])
        need = float(nodes.cpu_need[job])
        mem = float(nodes.mem_fraction[job])
        if not self._has_slots(job, self.free):
            return None  # not enough memory slots: no need to try
        load = self.load.copy()
        free = self.free.copy()
        hosts = np.empty(tasks, dtype=np.int64)
        for k in range(tasks):
            ok = free >= mem - _EPS
            if not ok.any():
                return None
            h = int(np.argmin(np.where(ok, load, np.inf)))
            hosts[k] = h
            load[h] += need
            free[h] -= mem
        return hosts

    def fits_without(self, job: int, paused: list[int]) -> bool:
        """Whether ``job``'s tasks fit in memory once the ``paused`` jobs leave."""
        nodes = self.nodes
        free = self.free.copy()
        for other in paused:
            np.add.at(free, self.mapping[other], nodes.mem_fraction[other])
        return self._has_slots(job, free)

    def _has_slots(self, job: int, free: FloatArray) -> bool:
        """Whether the nodes' ``free`` memory holds a slot for each of ``job``'s tasks
        (tasks are identical, so this is exactly when Greedy can place them all)."""
        mem = float(self.nodes.mem_fraction[job])
        return mem <= 0 or bool(np.floor((free + _EPS) / mem).sum() >= self.nodes.tasks[job])

    def assign(self, job: int, hosts: IntArray) -> None:
        self.mapping[job] = hosts
        np.add.at(self.load, hosts, self.nodes.cpu_need[job])
        np.subtract.at(self.free, hosts, self.nodes.mem_fraction[job])

    def unassign(self, job: int) -> None:
        hosts = self.mapping.pop(job)
        np.subtract.at(self.load, hosts, self.nodes.cpu_need[job])
        np.add.at(self.free, hosts, self.nodes.mem_fraction[job])


def _same_nodes(a: IntArray, b: IntArray) -> int:
    """How many tasks stay put between two mappings of one job (tasks are identical)."""
    size = int(max(a.max(), b.max())) + 1
    return int(np.minimum(np.bincount(a, minlength=size), np.bincount(b, minlength=size)).sum())


register_name_scheme(
    NameScheme(
        policy="dfrs",
        param="algorithm",
        matches=looks_like_dfrs,
        what="DFRS algorithms by their paper names",
        example="GreedyPM*/per/OPT=MIN/MINVT=600",
        noun="DFRS algorithm name",
    )
)


@register("dfrs")
@dataclass
class Dfrs:
    """Dynamic fractional resource scheduling (papers 000 and 002), by algorithm name.

    Select it by a paper name directly (``--policy 'GreedyPM*/per/OPT=MIN/MINVT=600'``), or
    as ``dfrs`` with ``--param algorithm=...``. ``penalty``: seconds a resumed or moved job
    makes no progress (0 allowed); ``period``: seconds between periodic MCB8 runs.
    """

    algorithm: str = "GreedyPM*/per/OPT=MIN/MINVT=600"
    penalty: float = 300.0
    period: float = 600.0
    priority_floor: float = PRIORITY_FLOOR
    backoff_cap: float = BACKOFF_CAP
    name: str = field(init=False)
    #: the engine gives this policy a pass at every completion, even when no job waits
    every_event: bool = field(init=False, default=True)
    #: its passes place jobs on shared nodes: the engine's placement and planning kernels
    #: are never called (MCB8's packing kernel compiles, or loads, when first called)
    uses_kernels: bool = field(init=False, default=False)
    spec: Algorithm = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.spec = parse_algorithm(self.algorithm)
        self.name = self.spec.name
        for key in ("penalty", "priority_floor", "backoff_cap"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{key} must be a number of seconds >= 0, got {value}")
        if not (math.isfinite(self.period) and self.period > 0):
            raise ValueError(f"period must be a number of seconds > 0, got {self.period}")
        if self.spec.periodic is not Periodic.NONE and self.period < self.penalty:
            warnings.warn(
                QueuesimWarning(
                    f"{self.name}: the period ({self.period:g} s) is shorter than the "
                    f"rescheduling penalty ({self.penalty:g} s); papers 000 and 002 found "
                    "that jobs thrash there"
                ),
                stacklevel=2,
            )
        self._ready = False

    # --- state --------------------------------------------------------------------------

    def _start(self, ctx: Context) -> None:
        check_runnable(ctx, self.name)
        nodes = ctx.shared_nodes()
        check_every_job_fits(ctx, nodes)
        n = nodes.tasks.shape[0]
        self.nodes = nodes
        #: every job as an offline instance, checked once; passes take subsets of it
        self.every_job = Instance(nodes.hosts, nodes.tasks, nodes.cpu_need, nodes.mem_fraction)
        self.mapping: dict[int, IntArray] = {}
        self.system: set[int] = set()
        self.ever_ran = np.zeros(n, dtype=bool)
        self.rate = np.zeros(n)
        self.stretch_yield = np.zeros(n)
        self.penalty_until = np.full(n, -np.inf)
        self.failures = np.zeros(n, dtype=np.int64)
        self.retry_at: dict[int, float] = {}
        self.wakes: set[float] = set()
        self.next_period: float | None = None
        memory = ctx.site.node_memory()
        huge = np.iinfo(np.int64).max // 4
        self.node_mb = None if int(memory[0]) >= huge else float(memory[0]) / 2**20
        self.moved_mb = 0.0
        self.counted_mb = 0
        self._ready = True

    # --- the pass -----------------------------------------------------------------------

    def schedule(self, ctx: Context) -> None:
        if not self._ready:
            self._start(ctx)
        spec = self.spec
        now = ctx.now
        for job in ctx.finished:
            self.system.discard(job)
            self.mapping.pop(job, None)
            self.retry_at.pop(job, None)
        self.system.update(ctx.arrived)
        plan = _Plan(self.nodes, self.mapping)
        if spec.periodic is not Periodic.NONE and self.next_period is None and self.system:
            self.next_period = (math.floor(now / self.period) + 1) * self.period
        if self.next_period is not None and now >= self.next_period:
            if spec.periodic is Periodic.STRETCH_PER:
                self._stretch_repack(ctx, plan)
            else:
                self._repack(ctx, plan)
            self.next_period = (math.floor(now / self.period) + 1) * self.period
        else:
            if ctx.arrived:
                if spec.on_submit is OnSubmit.MCB8:
                    self._repack(ctx, plan)
                elif spec.on_submit is not OnSubmit.NOTHING:
                    for job in sorted(ctx.arrived):
                        self._submit(ctx, plan, job)
            if ctx.finished and spec.on_completion:
                if spec.on_submit is OnSubmit.MCB8:
                    self._repack(ctx, plan)
                else:
                    self._resume(ctx, plan, self._unmapped(plan.mapping))
            due = [j for j, t in self.retry_at.items() if t <= now and j not in plan.mapping]
            if due:
                self._resume(ctx, plan, due)
        self._commit(ctx, plan)
        self._backoff_unmapped(ctx)
        self._hand_out_yields(ctx)
        self._arm_wakes(ctx)

    def _priorities(self, ctx: Context, jobs: IntArray) -> FloatArray:
        flow = ctx.now - ctx.submit[jobs]
        return priority(flow, ctx.work_done(jobs), self.priority_floor)

    def _by_priority(self, ctx: Context, jobs: list[int], *, decreasing: bool) -> list[int]:
        if not jobs:
            return []
        ordered = np.array(sorted(jobs), dtype=np.int64)
        order = removal_order(self._priorities(ctx, ordered))
        if decreasing:
            order = order[::-1]
        return [int(j) for j in ordered[order]]

    def _unmapped(self, mapping: dict[int, IntArray]) -> list[int]:
        """Jobs in the system on no node (waiting or paused), in submission order."""
        return sorted(j for j in self.system if j not in mapping)

    def _submit(self, ctx: Context, plan: _Plan, job: int) -> None:
        hosts = plan.fit(job)
        if hosts is not None:
            plan.assign(job, hosts)
            return
        if self.spec.on_submit is OnSubmit.GREEDY:
            return  # postponed: retried by '*', the period or the back-off
        running = self._by_priority(ctx, list(plan.mapping), decreasing=False)
        marked: list[int] = []
        for other in running:
            marked.append(other)
            if plan.fits_without(job, marked):
                break
        else:
            return  # cannot happen: every job fits the empty platform (check_every_job_fits)
        for other in list(reversed(marked)):  # decreasing priority: keep who can stay
            rest = [m for m in marked if m != other]
            if plan.fits_without(job, rest):
                marked = rest
        for other in marked:
            plan.unassign(other)
        placed = plan.fit(job)
        assert placed is not None
        plan.assign(job, placed)
        if self.spec.on_submit is OnSubmit.GREEDY_PM:
            self._resume(ctx, plan, marked)

    def _resume(self, ctx: Context, plan: _Plan, jobs: list[int]) -> None:
        """Greedy, no preemption, for ``jobs`` in decreasing priority."""
        for job in self._by_priority(ctx, jobs, decreasing=True):
            hosts = plan.fit(job)
            if hosts is not None:
                plan.assign(job, hosts)

    def _pins(self, ctx: Context, jobs: IntArray, instance: Instance) -> IntArray | None:
        """Per task of ``instance``: the node a young running job keeps (MINVT/MINFT)."""
        spec = self.spec
        if spec.min_vt is None and spec.min_ft is None:
            return None
        if spec.min_vt is not None:
            young = ctx.work_done(jobs) < spec.min_vt
        else:
            assert spec.min_ft is not None
            young = ctx.now - ctx.submit[jobs] < spec.min_ft
        fixed = np.full(instance.n_tasks, -1, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(instance.tasks)])
        for k, job in enumerate(jobs.tolist()):
            hosts = self.mapping.get(job)
            if young[k] and hosts is not None:
                fixed[offsets[k] : offsets[k + 1]] = hosts
        return fixed

    def _instance(self, jobs: IntArray, need: FloatArray | None = None) -> Instance:
        if need is None:
            return self.every_job.subset(jobs)
        nodes = self.nodes
        return Instance(nodes.hosts, nodes.tasks[jobs], need, nodes.mem_fraction[jobs])

    def _repack(self, ctx: Context, plan: _Plan) -> None:
        """MCB8 over every job in the system (lowest priority dropped while nothing fits)."""
        jobs = np.array(sorted(self.system), dtype=np.int64)
        if jobs.size == 0:
            return
        instance = self._instance(jobs)
        packing = mcb_online(
            instance,
            self._priorities(ctx, jobs),
            8,
            self.spec.yield_step,
            self._pins(ctx, jobs, instance),
        )
        self._adopt(
            plan, jobs, packing.kept, packing.allocation.host if packing.allocation else None
        )

    def _adopt(self, plan: _Plan, jobs: IntArray, kept: IntArray, host: IntArray | None) -> None:
        """Make the plan the packing of ``jobs[kept]`` (tasks in job order on ``host``)."""
        for job in list(plan.mapping):
            plan.unassign(job)
        if host is None:
            return
        start = 0
        for job in jobs[kept].tolist():
            tasks = int(self.nodes.tasks[job])
            plan.assign(job, np.asarray(host[start : start + tasks], dtype=np.int64))
            start += tasks

    def _stretch_repack(self, ctx: Context, plan: _Plan) -> None:
        """MCB8-stretch (000 III.B): minimise the estimated maximum stretch at the next
        period; see the module docstring."""
        jobs = np.array(sorted(self.system), dtype=np.int64)
        if jobs.size == 0:
            return
        period = self.period
        flow = ctx.now - ctx.submit[jobs]
        done = ctx.work_done(jobs)
        order = removal_order(self._priorities(ctx, jobs))
        for dropped in range(jobs.size):
            keep = np.sort(order[dropped:])
            sub = jobs[keep]
            instance = self._instance(sub)
            pins = self._pins(ctx, sub, instance)

            def target(stretch: float, keep: IntArray = keep) -> FloatArray:
                wanted = ((flow[keep] + period) / stretch - done[keep]) / period
                out: FloatArray = np.clip(wanted, STRETCH_MIN_YIELD, 1.0)
                return out

            def packing(
                stretch: float, sub: IntArray = sub, pins: IntArray | None = pins
            ) -> IntArray | None:
                return pack_at_yield(
                    self._instance(sub, self.nodes.cpu_need[sub] * target(stretch)), 1.0, 8, pins
                )

            lo = float(np.max((flow[keep] + period) / (done[keep] + period)))
            hi = float(np.max((flow[keep] + period) / (done[keep] + STRETCH_MIN_YIELD * period)))
            best = packing(hi)
            if best is None:
                continue
            best_stretch = hi
            found = packing(lo)
            if found is not None:
                best, best_stretch = found, lo
            else:
                while hi / lo > STRETCH_ACCURACY:
                    mid = math.sqrt(lo * hi)
                    found = packing(mid)
                    if found is None:
                        lo = mid
                    else:
                        hi, best, best_stretch = mid, found, mid
            self._adopt(plan, jobs, keep, best)
            yields = max_min_yields(instance, best, start=target(best_stretch))
            self.stretch_yield[sub] = yields
            return
        self._adopt(plan, jobs, np.zeros(0, dtype=np.int64), None)

    # --- commit, yields, wake-ups ------------------------------------------------------

    def _commit(self, ctx: Context, plan: _Plan) -> None:
        """Carry the plan out: take every job whose nodes change off them first, so that
        memory is never overcommitted in between, then place, and count what moved."""
        nodes = self.nodes
        old = self.mapping
        new = plan.mapping
        changed = sorted(
            j
            for j in set(old) | set(new)
            if j not in old
            or j not in new
            or (old[j] is not new[j] and not np.array_equal(np.sort(old[j]), np.sort(new[j])))
        )
        for job in changed:
            if job in old:
                ctx.place(job, None)
                self.rate[job] = 0.0
        moved = 0.0
        for job in changed:
            mem = float(nodes.mem_fraction[job])
            tasks = int(nodes.tasks[job])
            if job not in new:
                ctx.count("preemptions")
                moved += tasks * mem
                continue
            ctx.place(job, new[job])
            if job in old:
                ctx.count("migrations")
                moved += (tasks - _same_nodes(old[job], new[job])) * mem
                self.penalty_until[job] = ctx.now + self.penalty
            elif self.ever_ran[job]:
                ctx.count("resumes")
                moved += tasks * mem
                self.penalty_until[job] = ctx.now + self.penalty
            self.ever_ran[job] = True
            self.retry_at.pop(job, None)
        self.mapping = dict(new)
        if self.node_mb is not None and moved:
            self.moved_mb += moved * self.node_mb
            total = int(self.moved_mb)
            if total > self.counted_mb:
                ctx.count("moved_memory_mb", total - self.counted_mb)
                self.counted_mb = total

    def _backoff_unmapped(self, ctx: Context) -> None:
        """Greedy's bounded exponential back-off for jobs nothing else would retry."""
        spec = self.spec
        if spec.periodic is not Periodic.NONE or (spec.on_completion and self.mapping):
            return
        for job in self._unmapped(self.mapping):
            if self.retry_at.get(job, -np.inf) <= ctx.now:
                self.failures[job] += 1
                delay = backoff_delay(int(self.failures[job]), self.backoff_cap)
                self.retry_at[job] = ctx.now + delay

    def _hand_out_yields(self, ctx: Context) -> None:
        jobs = np.array(sorted(self.mapping), dtype=np.int64)
        if jobs.size == 0:
            return
        if self.spec.periodic is Periodic.STRETCH_PER:
            yields = self.stretch_yield[jobs]
        else:
            host = np.concatenate([self.mapping[j] for j in jobs.tolist()])
            yields = step_yields(self._instance(jobs), host, self.spec.yield_step)
        now = ctx.now
        for job, y in zip(jobs.tolist(), yields.tolist(), strict=True):
            rate = min(max(y, 0.0), 1.0) if now >= self.penalty_until[job] else 0.0
            if abs(rate - self.rate[job]) > _RATE_TOLERANCE:
                ctx.set_rate(job, rate)
                self.rate[job] = rate

    def _arm_wakes(self, ctx: Context) -> None:
        now = ctx.now
        self.wakes = {t for t in self.wakes if t > now}
        wanted: list[float] = [t for t in self.retry_at.values() if t > now]
        ending = self.penalty_until[list(self.mapping)] if self.mapping else np.zeros(0)
        wanted.extend(float(t) for t in ending[ending > now])
        if self.system and self.next_period is not None:
            wanted.append(self.next_period)
        elif not self.system:
            self.next_period = None
        for when in wanted:
            if when > now and when not in self.wakes:
                ctx.wake_at(when)
                self.wakes.add(when)
