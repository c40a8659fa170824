"""The PBS scheduler's ``sched_config`` and fairshare ``resource_group`` as the site's
scheduler, ordering and fairshare.

* ``strict_ordering`` with ``backfill_depth`` (server attribute, default 1): depth 0 ->
  fcfs, 1 -> easy, N -> scan with N reservations; without strict ordering, jobs that fit
  start in order and only starving jobs (``help_starving_jobs``) get reservations ->
  easy-like reservations, approximately (no ``max_starve`` threshold); neither -> scan
  with no reservation;
* ``fair_share`` and ``by_queue`` -> ``ordering`` (fairshare, queue-priority or fcfs);
* ``fairshare_decay_time`` and ``fairshare_decay_factor`` -> the stepwise decay;
  ``half_life`` -> the half-life; ``fairshare_usage_res`` cput or ncpus*walltime -> the
  CPU charge; ``fairshare_entity`` euser/egroup -> by user/group;
* ``resources`` naming ``mem`` -> ``memory: per-cpu`` when every node gives memory;
* ``resource_group`` -> shares by entity id, the tree flattened (a leaf's share is its
  fraction of its parent's, times the parent's, in percent of the whole machine).

A value given for prime and non-prime time separately is taken from prime time (the
other is reported). Everything else is reported as not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where
from queuesim.site.pbs_conf import Attr, SchedOption, ShareEntry, pbs_walltime
from queuesim.site.site_draft import DraftSite, format_span

__all__ = ["apply_sched"]

_TRUE = {"true", "t", "yes", "y", "1"}

#: options that, switched off, leave the scheduler as queuesim's
_OFF_AS_QUEUESIM = {
    "round_robin",
    "backfill_prime",
    "prime_exempt_anytime_queues",
    "preemptive_sched",
    "fairshare_enforce_no_shares",
}

_REASONS = {
    "round_robin": "one job from each queue in turn; queuesim orders queues by priority",
    "job_sort_key": "jobs sorted by a resource; queuesim orders by queue priority, "
    "fairshare or submit time",
    "node_sort_key": "node order; queuesim places jobs by its own rule",
    "smp_cluster_dist": "node order; queuesim places jobs by its own rule",
    "provision_policy": "node provisioning is not modelled",
    "preemptive_sched": "preemption is not modelled",
    "unknown_shares": "entities missing from resource_group take share 1 in queuesim",
    "fairshare_enforce_no_shares": "zero shares are not modelled",
    "backfill_prime": "prime time is not modelled",
    "prime_exempt_anytime_queues": "prime time is not modelled",
    "prime_spill": "prime time is not modelled",
    "primetime_prefix": "prime time is not modelled",
    "nonprimetime_prefix": "prime time is not modelled",
    "dedicated_prefix": "dedicated time is not modelled",
    "max_starve": "starving is not a threshold in queuesim: the first blocked jobs reserve",
    "peer_queue": "peer scheduling is not modelled",
    "load_balancing": "load balancing is not modelled",
}


def _options(options: Sequence[SchedOption], report: ImportReport) -> dict[str, SchedOption]:
    """One value per option: the prime-time (or all-time) one; a differing non-prime value
    is reported."""
    chosen: dict[str, SchedOption] = {}
    for o in options:
        before = chosen.get(o.key)
        if before is None or o.prime in ("all", "prime") or before.prime == "non_prime":
            if before is not None and before.value.lower() != o.value.lower():
                report.skip(
                    o.key,
                    f"{before.value} ({before.prime})",
                    before.where,
                    f"replaced by the {o.prime} value {o.value}",
                )
            chosen[o.key] = o
        elif before.value.lower() == o.value.lower():
            report.map(
                o.key,
                f"{o.value} ({o.prime})",
                o.where,
                "(as the line before)",
                f"the same value as for {before.prime}",
            )
        else:
            report.skip(
                o.key,
                f"{o.value} ({o.prime})",
                o.where,
                f"prime time is not modelled; the {before.prime} value {before.value} is used",
            )
    return chosen


def _flag(chosen: dict[str, SchedOption], key: str, default: bool) -> bool:
    o = chosen.get(key)
    return default if o is None else o.value.lower() in _TRUE


def _used(
    chosen: dict[str, SchedOption], key: str, to: str, report: ImportReport, note: str = ""
) -> list[Where]:
    o = chosen.pop(key, None)
    if o is None:
        return []
    report.map(key, o.value, o.where, to, note)
    return [o.where]


def _scheduler(
    draft: DraftSite, chosen: dict[str, SchedOption], depth_attr: Attr | None, report: ImportReport
) -> None:
    strict = _flag(chosen, "strict_ordering", False)
    backfill = _flag(chosen, "backfill", True)
    starving = _flag(chosen, "help_starving_jobs", True)
    depth = 1
    if depth_attr is not None:
        if not depth_attr.value.isdigit():
            raise ConfigError(
                f"{depth_attr.where}: backfill_depth = {depth_attr.value}: expected a whole number"
            )
        depth = int(depth_attr.value)
    depth = depth if backfill else 0
    if strict or starving:
        if depth == 0:
            draft.policy, note = "fcfs", "strict order, no backfilling (depth 0)"
        elif depth == 1:
            draft.policy, note = "easy", "one reservation, others backfill"
        else:
            draft.policy, note = "scan", f"{depth} reservations (backfill_depth)"
            draft.params = {"reserved_jobs": depth, "reserve_when_limited": False}
        if not strict:
            note += (
                "; approximately: without strict_ordering PBS reserves only for jobs "
                "starving past max_starve"
            )
            if draft.policy == "fcfs":
                draft.policy, draft.params = "scan", {"reserved_jobs": 0}
                note = "jobs that fit start in order, no reservations (backfill off)"
    else:
        draft.policy, draft.params = "scan", {"reserved_jobs": 0}
        note = "jobs that fit start in order; no job gets a reservation"
    draft.scheduler_note = note
    to = f"scheduler.policy: {draft.policy}"
    where = _used(chosen, "strict_ordering", to, report, note)
    where += _used(chosen, "backfill", to, report)
    where += _used(chosen, "help_starving_jobs", to, report)
    if depth_attr is not None:
        report.map("server backfill_depth", depth_attr.value, depth_attr.where, to)
        where.append(depth_attr.where)
    draft.scheduler_where = where


def _ordering(draft: DraftSite, chosen: dict[str, SchedOption], report: ImportReport) -> None:
    fair = _flag(chosen, "fair_share", False)
    by_queue = _flag(chosen, "by_queue", True)
    priorities = {q.priority for q in draft.queues}
    if by_queue and len(priorities) > 1:
        draft.ordering = "queue-priority"
        note = "queues by priority, then fairshare within a queue"
        if not fair:
            note += " (PBS: job_sort_key or submit order within a queue)"
    elif fair:
        draft.ordering, note = "fairshare", "fairshare over all queues"
    else:
        draft.ordering, note = "fcfs", "no fair_share and no queue priorities"
    to = f"ordering: {draft.ordering}"
    draft.ordering_where = _used(chosen, "fair_share", to, report, note)
    draft.ordering_where += _used(chosen, "by_queue", to, report)


def _fairshare(draft: DraftSite, chosen: dict[str, SchedOption], report: ImportReport) -> None:
    fs = draft.fairshare
    time, factor = chosen.get("fairshare_decay_time"), chosen.get("fairshare_decay_factor")
    if time is not None or factor is not None:
        seconds = pbs_walltime(time.value, time.where, time.key) if time else 86400.0
        value = float(factor.value) if factor else 0.5
        if not 0 < value <= 1:
            raise ConfigError(
                f"{factor.where if factor else ''}: fairshare_decay_factor: "
                "expected a number in (0, 1]"
            )
        fs["decay_factor"], fs["decay_interval"] = value, format_span(seconds)
        draft.fairshare_where += _used(
            chosen, "fairshare_decay_time", "fairshare.decay_interval", report
        )
        draft.fairshare_where += _used(
            chosen, "fairshare_decay_factor", "fairshare.decay_factor", report
        )
    half = chosen.get("half_life")
    if half is not None and "decay_factor" not in fs:
        fs["half_life"] = format_span(pbs_walltime(half.value, half.where, half.key))
        draft.fairshare_where += _used(chosen, "half_life", "fairshare.half_life", report)
    res = chosen.get("fairshare_usage_res")
    if res is not None and res.value.replace(" ", "") in ("cput", "ncpus*walltime"):
        note = "" if res.value != "cput" else "approximately: CPU time used ~ CPUs held x time"
        draft.fairshare_where += _used(
            chosen, "fairshare_usage_res", "fairshare.charge: cpu", report, note
        )
    entity = chosen.get("fairshare_entity")
    if entity is not None and entity.value in ("euser", "egroup"):
        fs["by"] = "user" if entity.value == "euser" else "group"
        draft.fairshare_where += _used(
            chosen, "fairshare_entity", f"fairshare.by: {fs['by']}", report
        )


def _shares(draft: DraftSite, groups: Sequence[ShareEntry], report: ImportReport) -> None:
    """Flatten the tree: a leaf's share in percent of the machine."""
    children: dict[str, list[ShareEntry]] = {}
    for g in groups:
        children.setdefault(g.parent, []).append(g)
    by_name = {g.name: g for g in groups}

    def fraction(g: ShareEntry, depth: int = 0) -> float:
        if depth > len(groups):
            raise ConfigError(f"{g.where}: the resource_group tree has a loop through {g.name}")
        siblings = sum(s.shares for s in children[g.parent]) or 1.0
        own = g.shares / siblings
        parent = by_name.get(g.parent)
        return own if parent is None else own * fraction(parent, depth + 1)

    shares: dict[int, float] = {}
    for g in groups:
        if g.name in children:
            report.map(
                f"resource_group {g.name}",
                f"id {g.id} shares {g.shares:g}",
                g.where,
                "fairshare.shares (through its members)",
                "an inner node of the tree: flattened into its leaves' shares",
            )
        elif not g.id.isdigit():
            report.skip(
                f"resource_group {g.name}",
                f"id {g.id} shares {g.shares:g}",
                g.where,
                "the id is not a number; fairshare.shares is keyed by numeric id",
            )
        elif g.shares > 0:
            shares[int(g.id)] = round(100 * fraction(g), 4)
            report.map(
                f"resource_group {g.name}",
                f"id {g.id} shares {g.shares:g}",
                g.where,
                f"fairshare.shares.{g.id}: {shares[int(g.id)]:g}",
                "percent of the machine, the tree flattened",
            )
        else:
            report.skip(
                f"resource_group {g.name}",
                f"id {g.id} shares 0",
                g.where,
                "zero shares are not modelled",
            )
    if shares:
        draft.fairshare["shares"] = shares
        draft.fairshare_where += [g.where for g in groups[:1]]


def apply_sched(
    draft: DraftSite,
    options: Sequence[SchedOption],
    groups: Sequence[ShareEntry],
    depth: Attr | None,
    report: ImportReport,
) -> None:
    """The scheduler, ordering, fairshare and memory of the site from sched_config,
    resource_group and the server's backfill_depth."""
    chosen = _options(options, report)
    _scheduler(draft, chosen, depth, report)
    _ordering(draft, chosen, report)
    if draft.ordering != "fcfs":
        _fairshare(draft, chosen, report)
        _shares(draft, groups, report)
    else:
        for g in groups:
            report.skip(
                f"resource_group {g.name}",
                f"id {g.id} shares {g.shares:g}",
                g.where,
                "fair_share is off: shares have no effect",
            )
    res = chosen.pop("resources", None)
    if res is not None:
        names = {r.strip() for r in res.value.split(",")}
        if "mem" in names and all(c.memory_per_node for c in draft.clusters):
            draft.memory = "per-cpu"
            report.map(
                "resources",
                res.value,
                res.where,
                "memory: per-cpu",
                "mem is a scheduled resource; the others are not modelled",
            )
        else:
            report.skip(
                "resources",
                res.value,
                res.where,
                "the resources the scheduler "
                "checks; without mem on every node, memory is not modelled",
            )
    for key, o in chosen.items():
        if key in _OFF_AS_QUEUESIM and o.value.lower() not in _TRUE:
            report.map(key, o.value, o.where, "(as in queuesim)", "switched off")
            continue
        fairshare = key.startswith("fairshare") or key == "half_life"
        reason = (
            "fair_share is off and queues are not ordered: no effect"
            if fairshare and draft.ordering == "fcfs"
            else _REASONS.get(key, "a scheduler option the site model has no key for")
        )
        report.skip(key, o.value + ("" if o.prime == "all" else f" ({o.prime})"), o.where, reason)
