"""``queuesim policies``: the scheduling policies and their parameters."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import subparser

HELP = "list the scheduling policies and parameters"


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "policies", HELP)
    parser.set_defaults(handler=cmd_policies)


def cmd_policies(args: argparse.Namespace, console: Console) -> int:
    import dataclasses

    from queuesim.policies.registry import known_policies, policy_class

    for name in known_policies():
        cls = policy_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        params = [f.name for f in dataclasses.fields(cls) if f.init]
        suffix = f"  [dim]params: {', '.join(params)}[/dim]" if params else ""
        console.print(f"[bold]{name}[/bold]  {doc}{suffix}", highlight=False)
    return 0
