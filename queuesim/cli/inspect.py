"""``queuesim inspect``: what a site log holds, at a glance, and a draft site file."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from rich import box
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


def _table(title: str, frame: pd.DataFrame, columns: dict[str, Any]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in columns:
        table.add_column(
            name,
            justify="left"
            if name in ("queue", "what", "group", "property", "reason", "action", "first lines")
            else "right",
            overflow="fold",
        )
    for row in frame.to_dict(orient="records"):
        table.add_row(*(fmt(row) for fmt in columns.values()))
    return table


def render(found: Inspection) -> RenderableType:
    """The inspection as the terminal shows it."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    for key, value in (
        ("log", found.path),
        ("format", found.format),
        ("submitted", f"{found.first_submit} .. {found.last_submit}"),
        ("jobs", f"{found.jobs:,}"),
        ("users / groups / accounts", f"{found.users:,} / {found.groups:,} / {found.accounts:,}"),
    ):
        facts.add_row(key, value)
    parts: list[RenderableType] = [facts]
    parts.append(
        _table(
            "queues (partitions)",
            found.queues,
            {
                "queue": lambda r: str(r["queue"]),
                "jobs": lambda r: _number(r["jobs"]),
                "users": lambda r: _number(r["users"]),
                "max walltime": lambda r: _hours(r["max_walltime"]),
                "median walltime": lambda r: _hours(r["median_walltime"]),
                "max CPUs": lambda r: _number(r["max_cpus"]),
            },
        )
    )
    parts.append(
        _table(
            "what jobs request (jobs: how many ask for it)",
            found.requests,
            {
                "what": lambda r: str(r["what"]),
                "jobs": lambda r: _number(r["jobs"]),
                "min": lambda r: _number(r.get("min")),
                "median": lambda r: _number(r.get("median")),
                "p90": lambda r: _number(r.get("p90")),
                "max": lambda r: _number(r.get("max")),
            },
        )
    )
    if len(found.nodes):
        parts.append(
            _table(
                "nodes seen, grouped by name (CPUs per node: most in use at once, a lower bound)",
                found.nodes,
                {
                    "group": lambda r: str(r["group"]),
                    "hosts": lambda r: _number(r["hosts"]),
                    "CPUs per node": lambda r: _number(r["cpus_per_node"]),
                    "job placements": lambda r: _number(r["jobs"]),
                },
            )
        )
    if len(found.properties):
        parts.append(
            _table(
                "node properties requested",
                found.properties.head(20),
                {"property": lambda r: str(r["property"]), "jobs": lambda r: _number(r["jobs"])},
            )
        )
    if len(found.notes):
        parts.append(
            _table(
                "what the reader noted",
                found.notes,
                {
                    "reason": lambda r: str(r["reason"]),
                    "action": lambda r: str(r["action"]),
                    "records": lambda r: _number(r["count"]),
                    "first lines": lambda r: str(r["first_lines"]),
                },
            )
        )
    cleaning = {k: v for k, v in found.cleaning.items() if v}
    if cleaning:
        text = ", ".join(f"{k} {v:,}" for k, v in cleaning.items())
        parts.append(Text(f"cleaning a run would apply before any site: {text}"))
    return Panel(Group(*parts), title=Text("queuesim inspect", style="bold"), expand=False)
