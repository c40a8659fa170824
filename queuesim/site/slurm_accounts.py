"""Slurm's accounting limits from ``sacctmgr show qos -P`` and ``sacctmgr show assoc -P``
dumps, as per-queue limits and fairshare shares.

What the site model can hold: per queue, a user's running jobs and CPUs and the queue's
CPU pool, the same for every user. So a partition's QOS (``PartitionName ... QOS=x``)
maps onto its queue exactly; the ``normal`` QOS (every association's default) and a
limit every association shares map onto every queue, approximately (Slurm counts a
user's jobs over all partitions, queuesim per queue). Limits that differ between users,
per-job limits, submit limits and the association hierarchy are reported, with their
values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from queuesim.site.import_report import ImportReport, Where
from queuesim.site.site_draft import DraftQueue
from queuesim.site.slurm_conf import DumpRow, slurm_time

__all__ = ["apply_assoc", "apply_qos", "tres_cpus"]

#: values that mean "no limit" or the built-in default in a sacctmgr dump
_UNSET = {"", "0", "00:00:00", "cluster", "1.000000", "1.0", "-1"}
#: rows' identity, not settings
_IDENTITY = {"cluster", "account", "user", "partition", "name", "par name", "id", "description"}


def tres_cpus(value: str) -> int | None:
    """The ``cpu=N`` of a TRES list (``cpu=64,mem=200G``); None without one."""
    m = re.search(r"(?:^|,)cpu=(\d+)(?:,|$)", value)
    return int(m.group(1)) if m else None


def _limit(column: str, value: str, row: DumpRow) -> tuple[str, float | int] | None:
    """(DraftQueue attribute, value) a QOS column maps to, or None."""
    if column == "maxjobspu" and value.isdigit():
        return "max_running_per_user", int(value)
    if column == "maxtrespu" and tres_cpus(value) is not None:
        return "max_cpus_per_user", int(tres_cpus(value) or 0)
    if column == "grptres" and tres_cpus(value) is not None:
        return "cpu_pool", int(tres_cpus(value) or 0)
    if column == "maxwall":
        seconds = slurm_time(value, row.where, row.names[column])
        return ("max_walltime", seconds) if seconds is not None else None
    return None


def _set(queue: DraftQueue, attr: str, value: float | int, only_if_unset: bool) -> bool:
    current = getattr(queue, attr)
    if current is not None and only_if_unset:
        return False
    if attr == "max_walltime" and current is not None:
        value = min(current, value)
    setattr(queue, attr, value)
    return True


def apply_qos(
    rows: Sequence[DumpRow],
    partition_qos: dict[str, str],
    queues: dict[str, DraftQueue],
    report: ImportReport,
) -> None:
    """Map the QOS of partitions onto their queues and the ``normal`` QOS's per-user
    limits onto every queue; report every other QOS setting."""
    for row in rows:
        name = row.values.get("name", "")
        mine = [p for p, q in partition_qos.items() if q == name and p in queues]
        for column, value in row.values.items():
            if column in _IDENTITY or value in _UNSET:
                continue
            key = f"QOS {name} {row.names[column]}"
            limit = _limit(column, value, row)
            general = name == "normal" and column in ("maxjobspu", "maxtrespu")
            if limit is not None and mine:
                for p in mine:
                    _set(queues[p], limit[0], limit[1], only_if_unset=False)
                report.map(
                    key,
                    value,
                    row.where,
                    f"queues[{','.join(mine)}].{limit[0]}",
                    "the partition's QOS",
                )
            elif limit is not None and general:
                set_on = [
                    q.name
                    for q in queues.values()
                    if _set(q, limit[0], limit[1], only_if_unset=True)
                ]
                _report_general(
                    report,
                    key,
                    value,
                    [row.where],
                    set_on,
                    limit[0],
                    "approximately: the default QOS counts a user's jobs over "
                    "all partitions, queuesim per queue",
                )
            else:
                why = (
                    "not a partition's QOS: per-job QOS are not modelled"
                    if not mine
                    else "a QOS setting the site model has no key for"
                )
                report.skip(key, value, row.where, why)


def _report_general(
    report: ImportReport,
    key: str,
    value: str,
    where: list[Where],
    set_on: list[str],
    attr: str,
    note: str,
) -> None:
    if set_on:
        report.map(key, value, where, f"queues[{','.join(set_on)}].{attr}", note)
    else:
        report.skip(
            key,
            value,
            where,
            "every queue has this limit from a QOS already, "
            "which Slurm's limit hierarchy puts first",
        )


def _aggregate(rows: Sequence[DumpRow], column: str) -> dict[str, list[DumpRow]]:
    by_value: dict[str, list[DumpRow]] = {}
    for row in rows:
        value = row.values.get(column, "")
        if value not in _UNSET:
            by_value.setdefault(value, []).append(row)
    return by_value


def apply_assoc(
    rows: Sequence[DumpRow], queues: dict[str, DraftQueue], report: ImportReport, fairshare: bool
) -> dict[int, float]:
    """Map the associations' ``MaxJobs`` (when one value for all) onto every queue and
    numeric users' ``Share`` into fairshare shares (returned); report the rest."""
    shares: dict[int, float] = {}
    columns = [c for c in (rows[0].values if rows else {}) if c not in _IDENTITY]
    for column in columns:
        by_value = _aggregate(rows, column)
        if not by_value:
            continue
        written = rows[0].names[column]
        if column == "share":
            shares = _shares(rows, report, fairshare)
            continue
        if column == "maxjobs" and len(by_value) == 1 and next(iter(by_value)).isdigit():
            ((value, having),) = by_value.items()
            set_on = [
                q.name
                for q in queues.values()
                if _set(q, "max_running_per_user", int(value), only_if_unset=True)
            ]
            _report_general(
                report,
                f"assoc {written}",
                value,
                [r.where for r in having],
                set_on,
                "max_running_per_user",
                "approximately: one value for every association; Slurm counts "
                "a user's jobs over all partitions, queuesim per queue",
            )
            continue
        for value, having in by_value.items():
            who = ", ".join(_who(r) for r in having[:3]) + (" ..." if len(having) > 3 else "")
            report.skip(
                f"assoc {written}",
                value,
                [r.where for r in having],
                f"{len(having)} associations ({who}): a per-association limit the "
                "site model has no key for"
                if column != "maxjobs"
                else f"{len(having)} associations ({who}): MaxJobs differs between "
                "associations; queuesim's limits are the same for every user",
            )
    return shares


def _who(row: DumpRow) -> str:
    user = row.values.get("user", "")
    account = row.values.get("account", "")
    return f"{account}/{user}" if user else account or "?"


def _shares(rows: Sequence[DumpRow], report: ImportReport, fairshare: bool) -> dict[int, float]:
    users = [r for r in rows if r.values.get("user") and r.values.get("share", "") != ""]
    accounts = [r for r in rows if not r.values.get("user") and r.values.get("share", "")]
    for r in accounts:
        report.skip(
            f"assoc {r.names['share']}",
            r.values["share"],
            r.where,
            f"account {_who(r)}: the share tree's inner levels are not modelled "
            "(fairshare is flat over users)",
        )
    numeric = [
        r
        for r in users
        if r.values["user"].isdigit() and re.fullmatch(r"\d+(\.\d+)?", r.values["share"])
    ]
    shares = {
        int(r.values["user"]): float(r.values["share"])
        for r in numeric
        if float(r.values["share"]) > 0
    }
    for r in numeric:
        if fairshare:
            report.map(
                f"assoc {r.names['share']}",
                r.values["share"],
                r.where,
                f"fairshare.shares.{r.values['user']}",
            )
        else:
            report.skip(
                f"assoc {r.names['share']}",
                r.values["share"],
                r.where,
                "jobs are not ordered by fairshare at this site",
            )
    if not fairshare:
        return {}
    named = [r for r in users if r not in numeric]
    if named:
        listing = ", ".join(f"{r.values['user']}={r.values['share']}" for r in named[:6])
        report.skip(
            "assoc Share (users)",
            listing + (" ..." if len(named) > 6 else ""),
            [r.where for r in named],
            f"{len(named)} users named, not numbered: fairshare.shares is keyed by "
            "the trace's numeric user id; add them by hand where the ids are known",
        )
    return shares
