"""``queuesim validate``: check site files, every problem reported at once."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import subparser
from queuesim.common.errors import QueuesimError

HELP = "check site files and report every problem at once"
DESCRIPTION = "Validate site files: every problem is reported with its key path."


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "validate", HELP, DESCRIPTION)
    parser.add_argument("sites", nargs="+", help="site files (YAML)")
    parser.set_defaults(handler=cmd_validate)


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.policies.registry import make_policy
    from queuesim.site.loading import load_site

    failed = 0
    for path in args.sites:
        try:
            site = load_site(path)
            make_policy(site.scheduler.policy, site.scheduler.params)
        except QueuesimError as exc:
            failed += 1
            console.print(f"[red]✗[/red] {exc}", highlight=False)
            continue
        console.print(
            f"[green]✓[/green] {path}: site {site.name!r}, {len(site.clusters)} clusters, "
            f"{site.total_nodes} nodes, {site.total_cpus} CPUs, {len(site.queues)} queues, "
            f"policy {site.scheduler.policy}",
            highlight=False,
        )
    return 2 if failed else 0
