"""The PBS scheduler's ``sched_config`` and fairshare ``resource_group`` as the site's
scheduler, ordering and fairshare (sched_config(5); PBS Professional Administrator's Guide,
"Scheduling policy", "Using backfilling", "Starving jobs", "Using fairshare").

* ``strict_ordering`` with ``backfill_depth`` (server attribute, default 1): jobs in
  order, the first ``backfill_depth`` that cannot run get a reservation, the others start
  only where they delay none -> depth 0: fcfs, 1: easy, N: scan with N reservations;
* without ``strict_ordering``, jobs that fit start in order and only starving jobs
  (``help_starving_jobs``, default true, after ``max_starve``, default 24:00:00) get a
  reservation, up to ``backfill_depth`` -> scan with ``starving_only``; with
  help_starving_jobs off, or depth 0 -> scan with no reservation;
* the job order (``ordering: pbs`` and ``pbs_order``): starving jobs first, ``by_queue``
  and ``round_robin``, ``fair_share`` by the ``resource_group`` tree, ``job_sort_key``
  (one line per key, ties broken by the next); where that order is exactly one of
  queuesim's simpler orders (fcfs, fairshare, queue-priority) that one is written;
* ``fairshare_decay_time`` and ``fairshare_decay_factor`` -> the stepwise decay;
  ``half_life`` -> the half-life; ``fairshare_usage_res`` cput or ncpus*walltime -> the
  CPU charge; ``fairshare_entity`` euser/egroup -> by user/group;
* ``resource_group`` -> the tree: inner nodes ``fairshare.groups``, entities (numeric
  ids) ``fairshare.members`` and their own ``fairshare.shares``;
* ``resources`` naming ``mem`` -> ``memory: per-cpu`` when every node gives memory.

A value given for prime and non-prime time separately is taken from prime time (the
other is reported). Everything else is reported as not modelled, and the site file lists
it under ``not_modelled``.
"""

from __future__ import annotations

from collections.abc import Sequence

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where
from queuesim.site.pbs_conf import Attr, SchedOption, ShareEntry, pbs_walltime
from queuesim.site.sched_rules import SORT_RESOURCES
from queuesim.site.site_draft import DraftSite, format_span

__all__ = ["apply_sched"]

_TRUE = {"true", "t", "yes", "y", "1"}

#: options that, switched off, leave the scheduler as queuesim's
_OFF_AS_QUEUESIM = {
    "backfill_prime",
    "prime_exempt_anytime_queues",
    "preemptive_sched",
    "fairshare_enforce_no_shares",
}

_REASONS = {
    "job_sort_key": "sorts by a resource queuesim does not know for every job "
    f"(it knows {', '.join(SORT_RESOURCES)})",
    "node_sort_key": "node order; queuesim places jobs by its own rule",
    "smp_cluster_dist": "node order; queuesim places jobs by its own rule",
    "provision_policy": "node provisioning is not modelled",
    "preemptive_sched": "preemption is not modelled",
    "unknown_shares": "fair_share is off, or resource_group has no entity: no effect",
    "fairshare_enforce_no_shares": "zero shares are not modelled",
    "backfill_prime": "prime time is not modelled",
    "prime_exempt_anytime_queues": "prime time is not modelled",
    "prime_spill": "prime time is not modelled",
    "primetime_prefix": "prime time is not modelled",
    "nonprimetime_prefix": "prime time is not modelled",
    "dedicated_prefix": "dedicated time is not modelled",
    "max_starve": "help_starving_jobs is off: no job starves",
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


def _depth(depth_attr: Attr | None) -> int:
    if depth_attr is None:
        return 1
    if not depth_attr.value.isdigit():
        raise ConfigError(
            f"{depth_attr.where}: backfill_depth = {depth_attr.value}: expected a whole number"
        )
    return int(depth_attr.value)


def _scheduler(
    draft: DraftSite, chosen: dict[str, SchedOption], depth_attr: Attr | None, report: ImportReport
) -> None:
    strict = _flag(chosen, "strict_ordering", False)
    backfill = _flag(chosen, "backfill", True)
    starving = _flag(chosen, "help_starving_jobs", True)
    depth = _depth(depth_attr) if backfill else 0
    if strict:
        if depth == 0:
            draft.policy, note = "fcfs", "strict order, no backfilling (depth 0)"
        elif depth == 1:
            draft.policy, note = "easy", "one reservation, others backfill"
        else:
            draft.policy, note = "scan", f"{depth} reservations (backfill_depth)"
            draft.params = {"reserved_jobs": depth, "reserve_when_limited": False}
    elif starving and depth > 0:
        draft.policy, note = (
            "scan",
            (f"jobs that fit start in order; only starving jobs reserve, up to {depth}"),
        )
        draft.params = {
            "reserved_jobs": depth,
            "reserve_when_limited": False,
            "starving_only": True,
        }
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
    if starving and "max_starve" in chosen:
        o = chosen.pop("max_starve")
        draft.pbs_order["max_starve"] = format_span(pbs_walltime(o.value, o.where, o.key))
        report.map("max_starve", o.value, o.where, "pbs_order.max_starve")
        draft.ordering_where.append(o.where)
    elif starving:
        draft.pbs_order["max_starve"] = "1d"  # PBS's default max_starve, 24:00:00


def _sort_keys(
    draft: DraftSite, options: Sequence[SchedOption], report: ImportReport
) -> list[SchedOption]:
    """The ``job_sort_key`` lines (prime time and all time, in file order) as
    ``pbs_order.sort_keys``; returns the other options."""
    rest = []
    for o in options:
        if o.key != "job_sort_key":
            rest.append(o)
            continue
        words = o.value.split()
        resource = "fairshare_perc" if words and words[0] == "fair_share_perc" else words[0]
        if o.prime == "non_prime":
            report.skip(o.key, f"{o.value} (non_prime)", o.where, "prime time is not modelled")
        elif (
            len(words) == 2
            and resource in SORT_RESOURCES
            and words[1].upper()
            in (
                "HIGH",
                "LOW",
            )
        ):
            draft.pbs_order.setdefault("sort_keys", []).append(f"{resource} {words[1].upper()}")
            report.map(o.key, o.value, o.where, "pbs_order.sort_keys")
            draft.ordering_where.append(o.where)
        else:
            report.skip(o.key, o.value, o.where, _REASONS["job_sort_key"])
    return rest


def _ordering(draft: DraftSite, chosen: dict[str, SchedOption], report: ImportReport) -> None:
    order = draft.pbs_order
    order["by_queue"] = _flag(chosen, "by_queue", True)
    order["round_robin"] = _flag(chosen, "round_robin", False)
    order["fair_share"] = _flag(chosen, "fair_share", False)
    for key in ("fair_share", "by_queue", "round_robin"):
        draft.ordering_where += _used(chosen, key, f"pbs_order.{key}", report)
    draft.ordering = "pbs"


def _compiled_equivalent(draft: DraftSite) -> str | None:
    """The simpler ordering that orders exactly as ``pbs_order`` (nothing starving, no
    sort keys, no tree; queues apart only by distinct priorities), or None."""
    order = draft.pbs_order
    if order.get("max_starve") or order.get("sort_keys") or order["round_robin"]:
        return None
    if draft.fairshare.get("groups") or draft.fairshare.get("members"):
        return None
    priorities = [q.priority for q in draft.queues]
    apart = order["by_queue"] and len(priorities) > 1
    if not apart:
        return "fairshare" if order["fair_share"] else "fcfs"
    if order["fair_share"] and len(set(priorities)) == len(priorities):
        return "queue-priority"
    return None


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


def _unknown(
    draft: DraftSite,
    chosen: dict[str, SchedOption],
    out_groups: list[dict[str, object]],
    report: ImportReport,
) -> None:
    """PBS puts the entities resource_group does not list in the group ``unknown`` below
    the root, with ``unknown_shares`` (default 0: such entities are always the least
    deserving; queuesim needs positive shares, so they hang below the root with share 1
    each, reported)."""
    o = chosen.pop("unknown_shares", None)
    value = 0.0
    if o is not None:
        try:
            value = float(o.value)
        except ValueError:
            raise ConfigError(f"{o.where}: unknown_shares = {o.value}: expected a number") from None
    if value > 0 and o is not None:
        out_groups.append({"name": "unknown", "parent": "root", "shares": value})
        draft.fairshare["unknown_group"] = "unknown"
        report.map(o.key, o.value, o.where, "fairshare.groups[unknown], unknown_group")
        draft.fairshare_where.append(o.where)
    else:
        report.skip(
            "unknown_shares",
            "0" if o is None else o.value,
            [] if o is None else [o.where],
            "entities missing from resource_group have no shares in PBS (always the "
            "least deserving); in queuesim they sit below the root with share 1 each",
        )


def _shares(
    draft: DraftSite,
    groups: Sequence[ShareEntry],
    chosen: dict[str, SchedOption],
    report: ImportReport,
) -> None:
    """The tree: inner nodes as ``fairshare.groups``, entities as ``members`` and
    ``shares`` (PBS compares siblings top-down; see :mod:`queuesim.core.fairshare_tree`)."""
    parents = {g.parent for g in groups}
    names = {g.name for g in groups}
    out_groups: list[dict[str, object]] = []
    members: dict[int, str] = {}
    shares: dict[int, float] = {}
    for g in groups:
        value = f"id {g.id} parent {g.parent} shares {g.shares:g}"
        if g.parent != "root" and g.parent not in names:
            report.skip(f"resource_group {g.name}", value, g.where, f"no group {g.parent!r}")
        elif g.shares <= 0:
            report.skip(f"resource_group {g.name}", value, g.where, "zero shares are not modelled")
        elif g.name in parents:
            out_groups.append({"name": g.name, "parent": g.parent, "shares": g.shares})
            report.map(f"resource_group {g.name}", value, g.where, "fairshare.groups")
        elif not g.id.isdigit():
            report.skip(
                f"resource_group {g.name}",
                value,
                g.where,
                "the id is not a number; fairshare accounts are numeric ids",
            )
        else:
            shares[int(g.id)] = g.shares
            if g.parent != "root":
                members[int(g.id)] = g.parent
            report.map(
                f"resource_group {g.name}",
                value,
                g.where,
                f"fairshare.shares.{g.id}" + (f", members.{g.id}" if g.parent != "root" else ""),
            )
    if out_groups or members:
        _unknown(draft, chosen, out_groups, report)
    if out_groups:
        draft.fairshare["groups"] = out_groups
    if members:
        draft.fairshare["members"] = members
    if shares:
        draft.fairshare["shares"] = shares
    if groups:
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
    chosen = _options(_sort_keys(draft, options, report), report)
    _scheduler(draft, chosen, depth, report)
    _ordering(draft, chosen, report)
    if draft.pbs_order["fair_share"]:
        _fairshare(draft, chosen, report)
        _shares(draft, groups, chosen, report)
    else:
        for g in groups:
            report.skip(
                f"resource_group {g.name}",
                f"id {g.id} shares {g.shares:g}",
                g.where,
                "fair_share is off: shares have no effect",
            )
    compiled = _compiled_equivalent(draft)
    if compiled is not None:
        draft.ordering, draft.pbs_order = compiled, {}
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
            "fair_share is off: no effect"
            if fairshare and draft.ordering in ("fcfs", "pbs") and not draft.fairshare
            else _REASONS.get(key, "a scheduler option the site model has no key for")
        )
        report.skip(key, o.value + ("" if o.prime == "all" else f" ({o.prime})"), o.where, reason)
