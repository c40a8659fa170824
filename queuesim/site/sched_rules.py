"""Site-file sections for the PBS scheduler's job order, its fairshare tree, and the list
of what a site's own configuration uses that queuesim does not model.

* :class:`PbsOrder` (``ordering: pbs`` with a ``pbs_order:`` section) - the order in which
  the PBS scheduler considers jobs, as sched_config(5) and the PBS Professional
  Administrator's Guide (section "Job prioritization", "Starving jobs") describe it:
  starving jobs first (``help_starving_jobs`` with ``max_starve``), then queues by priority
  (``by_queue``; ``round_robin`` takes queues of one priority one job at a time in turn),
  then, with ``fair_share``, the job whose entity is most deserving in the
  ``resource_group`` tree, then ``job_sort_key`` (several keys break ties in turn), then
  submit order.
* :class:`ShareGroup` - an inner node of the fairshare tree (``resource_group``); accounts
  hang below their group (``fairshare.members``) with their own shares
  (``fairshare.shares``).
* :class:`NotModelled` - one setting a site's configuration uses that the simulation does
  not reproduce, written by the importers and printed with every run of the site.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from queuesim.site.units import parse_duration

__all__ = ["NotModelled", "PbsOrder", "ShareGroup", "SortKey", "tree_problems"]

#: job_sort_key resources queuesim knows for every job: the CPUs it asks (``ncpus``), its
#: requested walltime, its memory (CPUs x memory per CPU), and its entity's share of the
#: machine in the fairshare tree (``fairshare_perc``, PBS's ``fair_share_perc``)
SORT_RESOURCES = ("ncpus", "walltime", "mem", "fairshare_perc")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _sort_key(value: object) -> object:
    """``"ncpus HIGH"`` (as sched_config writes it) -> ``{resource, high}``."""
    if isinstance(value, str):
        words = value.replace('"', " ").split()
        if len(words) != 2 or words[1].upper() not in ("HIGH", "LOW"):
            raise ValueError(f"expected 'RESOURCE HIGH' or 'RESOURCE LOW', got {value!r}")
        resource = "fairshare_perc" if words[0] == "fair_share_perc" else words[0]
        return {"resource": resource, "high": words[1].upper() == "HIGH"}
    return value


class SortKey(_Frozen):
    """One ``job_sort_key``: a resource, larger values first (``high``) or smaller."""

    resource: Literal["ncpus", "walltime", "mem", "fairshare_perc"]
    high: bool

    def __str__(self) -> str:
        return f"{self.resource} {'HIGH' if self.high else 'LOW'}"


class PbsOrder(_Frozen):
    """How the PBS scheduler orders the jobs it considers (``ordering: pbs``)."""

    by_queue: bool = Field(
        default=True, description="queues in priority order, all of a queue's jobs together"
    )
    round_robin: bool = Field(
        default=False,
        description="queues of one priority give one job each in turn (before by_queue)",
    )
    fair_share: bool = Field(
        default=False,
        description="within a queue, the job of the most deserving entity of the fairshare "
        "tree first (siblings compared top-down by usage / shares)",
    )
    sort_keys: tuple[Annotated[SortKey, BeforeValidator(_sort_key)], ...] = Field(
        default=(), description="job_sort_key: 'ncpus HIGH', 'walltime LOW', ... in turn"
    )
    max_starve: Annotated[float, BeforeValidator(parse_duration)] | None = Field(
        default=None,
        gt=0,
        description="help_starving_jobs: a job that has waited this long is starving and goes "
        "first (None: no job starves)",
    )


class ShareGroup(_Frozen):
    """An inner node of the fairshare tree (a ``resource_group`` group)."""

    name: str = Field(min_length=1)
    parent: str = Field(default="root", min_length=1)
    shares: float = Field(gt=0)


class NotModelled(_Frozen):
    """A setting of the site's own configuration that the simulation does not reproduce."""

    setting: str = Field(min_length=1)
    value: str = ""
    source: str = Field(default="", description="file:line it was read from")
    reason: str = ""


def tree_problems(groups: tuple[ShareGroup, ...], members: dict[int, str]) -> list[str]:
    """Problems of a fairshare tree: groups named twice or ``root``, parents or member
    groups that do not exist, loops (``members[-1]``: the group of unlisted accounts)."""
    names = [g.name for g in groups]
    problems = []
    known = set(names) | {"root"}
    if "root" in names:
        problems.append("fairshare.groups: 'root' is the tree's top and cannot be a group")
    if len(set(names)) != len(names):
        problems.append("fairshare.groups: a group name is used twice")
    parent = {g.name: g.parent for g in groups}
    for i, g in enumerate(groups):
        if g.parent not in known:
            problems.append(f"fairshare.groups[{i}].parent: no group {g.parent!r}")
            continue
        seen, at = {g.name}, g.parent
        while at != "root" and at in parent:
            if at in seen:
                problems.append(f"fairshare.groups[{i}]: the tree has a loop through {g.name!r}")
                break
            seen.add(at)
            at = parent[at]
    for account, group in members.items():
        if group not in known:
            key = "unknown_group" if account == -1 else f"members.{account}"
            problems.append(f"fairshare.{key}: no group {group!r}")
    return problems
