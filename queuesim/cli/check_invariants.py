"""``queuesim check-invariants``: what must hold of every run, on the real traces."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import add_folders, folders, paragraph, subparser
from queuesim.common.errors import QueuesimError

HELP = "check the invariants of every run on the real traces (maintainers, before a release)"
DESCRIPTION = paragraph(
    """
    Simulate real traces and check, from each run's per-job output, what must always
    hold: no start before submit; CPUs, memory and GPUs in use never over the site's at
    any instant; every job run exactly once, every rejected job counted with a reason;
    queue limits and CPU pools never exceeded; under FCFS no job overtaken. By default
    KTH-SP2 under fcfs, easy and conservative (a minute); --all: KTH-SP2, SDSC-SP2 and
    HPC2N under each, METACENTRUM-2009 under its three setups and wagap-2013 under its
    site, each with its own policy and the three (the release check). Exits 1 when an
    invariant is broken. Traces are looked up in --workloads (default: ../shared/workloads
    beside the repository).
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "check-invariants", HELP, DESCRIPTION)
    parser.add_argument("--all", action="store_true", help="the release check (see above)")
    parser.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="NAME",
        help="only traces whose file name starts with NAME (repeatable)",
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME",
        help="only this policy (repeatable; 'own': the site file's)",
    )
    add_folders(parser)
    parser.set_defaults(handler=cmd_check_invariants)


def cmd_check_invariants(args: argparse.Namespace, console: Console) -> int:
    from queuesim.studies.invariants import QUICK, RELEASE, check_cases, select

    workloads, configs = folders(args)
    cases = select(RELEASE if args.all or args.trace else QUICK, args.trace, args.policy)
    if not cases:
        raise QueuesimError("no trace and policy match --trace and --policy")
    from queuesim.reports.document import Table
    from queuesim.reports.render_text import print_table

    rows: list[list[str]] = []
    broken = 0
    total = 0.0
    for checked in check_cases(cases, workloads, configs):
        case = checked.case
        total += checked.seconds
        verdict = "hold" if not checked.violations else "BROKEN"
        rows.append(
            [
                case.trace.rsplit("/", 1)[-1],
                case.site.removesuffix(".yaml"),
                case.policy,
                f"{checked.jobs:,}",
                f"{checked.rejected:,}",
                f"{checked.seconds:.1f}",
                verdict,
            ]
        )
        console.print(
            f"[dim]{case.trace} {case.site} {case.policy}: {checked.jobs:,} jobs, "
            f"{checked.seconds:.1f} s, {len(checked.violations)} violations[/dim]",
            highlight=False,
        )
        for line in checked.violations:
            broken += 1
            console.print(f"[red]{case}[/red]: {line}", highlight=False)
    columns = ["trace", "site", "policy", "jobs", "rejected", "seconds", "invariants"]
    right = [c in ("jobs", "rejected", "seconds") for c in columns]
    print_table(console, "invariants per run", Table(columns, rows, right))
    console.print(
        f"{len(cases)} runs in {total:.0f} s; {broken} invariant violations", highlight=False
    )
    return 1 if broken else 0
