"""``queuesim validate``: check site files, every problem reported at once."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import subparser
from queuesim.common.errors import QueuesimError

HELP = "check site files and report every problem at once"
DESCRIPTION = (
    "Validate site files: every problem of a file is reported at once - keys written twice "
    "(with both lines), fields, keys checked against each other, the scheduling policy and "
    "its parameters - each with its line or key path."
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "validate", HELP, DESCRIPTION)
    parser.add_argument("sites", nargs="+", help="site files (YAML)")
    parser.set_defaults(handler=cmd_validate)


def scheduler_problems(data: object) -> list[str]:
    """The problems of the site document's ``scheduler`` section that only the policy
    registry knows (an unknown policy, a parameter it does not take or a bad value)."""
    from queuesim.policies.registry import make_policy

    scheduler = data.get("scheduler", {}) if isinstance(data, dict) else None
    if not isinstance(scheduler, dict):
        return []  # the field checks report a scheduler that is not a mapping
    policy, params = scheduler.get("policy", "easy"), scheduler.get("params", {})
    if not isinstance(policy, str) or not isinstance(params, dict):
        return []  # reported by the field checks
    try:
        make_policy(policy, params)
    except QueuesimError as exc:
        return [f"scheduler: {exc}"]
    return []


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.common.yaml_files import refuse_problems
    from queuesim.site.loading import site_problems
    from queuesim.site.model import Site

    failed = 0
    for path in args.sites:
        try:
            found, data, problems = site_problems(path)
            problems += scheduler_problems(data)
            refuse_problems(found, problems, "problem", " in the site file")
        except QueuesimError as exc:
            failed += 1
            console.print(f"[red]✗[/red] {exc}", highlight=False)
            continue
        site = Site.model_validate(data)
        console.print(
            f"[green]✓[/green] {path}: site {site.name!r}, {len(site.clusters)} clusters, "
            f"{site.total_nodes} nodes, {site.total_cpus} CPUs, {len(site.queues)} queues, "
            f"policy {site.scheduler.policy}",
            highlight=False,
        )
    return 2 if failed else 0
