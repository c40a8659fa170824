"""``queuesim inspect``: what a site log holds, at a glance, and a draft site file."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from queuesim.cli.options import add_format, paragraph, subparser

if TYPE_CHECKING:
    import pandas as pd

    from queuesim.studies.inspection import Inspection

HELP = "show what a site log or trace holds, and draft a site file from it"
DESCRIPTION = paragraph(
    """
    Read LOG in any format queuesim reads (PBS accounting, Slurm sacct or jobcomp, SWF,
    Alea's extended SWF) and show its period, jobs, users, queues or partitions with their
    requested walltimes and CPUs, what jobs request (CPUs, memory, nodes, GPUs, exclusive
    nodes, node properties), the nodes it names grouped by name, what the reader noted and
    the cleaning a run would apply. --draft-site FILE writes a site file drafted from it
    (queues with their largest requested walltime, node groups with estimated CPUs), marked
    as a draft to complete; --json FILE writes everything shown as JSON.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "inspect", HELP, DESCRIPTION)
    parser.add_argument("log", metavar="LOG", help="the site log or trace")
    add_format(parser)
    parser.add_argument(
        "--skip-bad-lines", action="store_true", help="skip malformed records (counted)"
    )
    parser.add_argument("--draft-site", metavar="FILE", help="write a draft site file (YAML)")
    parser.add_argument("--json", metavar="FILE", help="write the inspection as JSON")
    parser.set_defaults(handler=cmd_inspect)


def cmd_inspect(args: argparse.Namespace, console: Console) -> int:
    import json
    from pathlib import Path

    from queuesim.common.atomic import atomic_path
    from queuesim.studies.inspection import draft_site, inspect_trace

    found = inspect_trace(args.log, trace_format=args.format, skip_bad_lines=args.skip_bad_lines)
    console.print(render(found))
    if args.json:
        text = json.dumps(found.as_dict(), indent=2, allow_nan=False) + "\n"
        with atomic_path(Path(args.json)) as tmp:
            tmp.write_text(text, encoding="utf-8")
        console.print(f"wrote {args.json}", highlight=False)
    if args.draft_site:
        name = Path(args.log).name.split(".")[0] or "site"
        with atomic_path(Path(args.draft_site)) as tmp:
            tmp.write_text(draft_site(found, name), encoding="utf-8")
        console.print(
            f"wrote {args.draft_site}: a DRAFT site file, complete it before use "
            f"(queuesim validate {args.draft_site})",
            highlight=False,
        )
    return 0


def _hours(seconds: float) -> str:
    if not isinstance(seconds, float | int) or not math.isfinite(seconds):
        return "-"
    return f"{seconds / 3600:,.1f} h"


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:,.0f}" if float(value) == int(value) else f"{value:,.2f}"


#: a column of a table: header, key in the inspection's rows, how its values are shown
#: (``str``: text, aligned left; numbers align right)
Column = tuple[str, str, Callable[[Any], str]]


def _table(title: str, frame: pd.DataFrame, columns: tuple[Column, ...]) -> Table:
    from queuesim.reports.terminal import titled_table

    table = titled_table(title)
    for header, _, show in columns:
        table.add_column(header, justify="left" if show is str else "right", overflow="fold")
    for row in frame.to_dict(orient="records"):
        table.add_row(*(show(row.get(key)) for _, key, show in columns))
    return table


_QUEUES: tuple[Column, ...] = (
    ("queue", "queue", str),
    ("jobs", "jobs", _number),
    ("users", "users", _number),
    ("max walltime", "max_walltime", _hours),
    ("median walltime", "median_walltime", _hours),
    ("max CPUs", "max_cpus", _number),
)
_REQUESTS: tuple[Column, ...] = (
    ("what", "what", str),
    ("jobs", "jobs", _number),
    *((name, name, _number) for name in ("min", "median", "p90", "max")),
)
_NODES: tuple[Column, ...] = (
    ("group", "group", str),
    ("hosts", "hosts", _number),
    ("CPUs per node", "cpus_per_node", _number),
    ("job placements", "jobs", _number),
)
_PROPERTIES: tuple[Column, ...] = (("property", "property", str), ("jobs", "jobs", _number))
_NOTES: tuple[Column, ...] = (
    ("reason", "reason", str),
    ("action", "action", str),
    ("records", "count", _number),
    ("first lines", "first_lines", str),
)


def render(found: Inspection) -> RenderableType:
    """The inspection as the terminal shows it."""
    from queuesim.reports.summary import facts_grid, spaced

    facts = facts_grid(
        {
            "log": found.path,
            "format": found.format,
            "submitted": f"{found.first_submit} .. {found.last_submit}",
            "jobs": f"{found.jobs:,}",
            "users / groups / accounts": f"{found.users:,} / {found.groups:,} / {found.accounts:,}",
        }
    )
    parts: list[RenderableType] = [facts]
    parts.append(_table("queues (partitions)", found.queues, _QUEUES))
    parts.append(_table("what jobs request (jobs: how many ask for it)", found.requests, _REQUESTS))
    if len(found.nodes):
        title = "nodes seen, grouped by name (CPUs per node: most in use at once, a lower bound)"
        parts.append(_table(title, found.nodes, _NODES))
    if len(found.properties):
        parts.append(_table("node properties requested", found.properties.head(20), _PROPERTIES))
    if len(found.notes):
        parts.append(_table("what the reader noted", found.notes, _NOTES))
    cleaning = {k: v for k, v in found.cleaning.items() if v}
    if cleaning:
        text = ", ".join(f"{k} {v:,}" for k, v in cleaning.items())
        parts.append(Text(f"cleaning a run would apply before any site: {text}"))
    return Panel(Group(*spaced(parts)), title=Text("queuesim inspect", style="bold"), expand=False)
