"""``queuesim import slurm|pbs``: a batch system's configuration as a site file, with a
report of every setting mapped, read but not modelled, or not understood."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from queuesim.cli.options import check_out_file, paragraph, subparser

if TYPE_CHECKING:
    from queuesim.site.import_report import ImportReport

HELP = "turn a Slurm or PBS configuration into a site file, with an import report"
DESCRIPTION = paragraph(
    """
    Read a batch system's configuration and write a site file that validates and runs, with
    a comment per block saying where it came from, and an import report: every setting
    mapped, every setting read but not modelled (with its value), every line not
    understood.
    """
)
SLURM = paragraph(
    """
    PATH is a slurm.conf or the folder holding it; gres.conf and topology.conf are read from
    beside it when present, and Include lines are followed.
    """
)
PBS = paragraph(
    """
    Give the files one by one, or DIR, a PBS_HOME-like folder: its qmgr.txt (or
    print-server.txt; qmgr -c "print server" output, may hold "print node" lines too),
    pbsnodes.txt (pbsnodes -av output), sched_priv/sched_config and
    sched_priv/resource_group are used when present. A file given by its option wins.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "import", HELP, DESCRIPTION)
    systems = parser.add_subparsers(dest="system", metavar="SYSTEM", required=True)
    slurm = systems.add_parser("slurm", help="a Slurm configuration", description=SLURM)
    slurm.add_argument("path", metavar="PATH", help="slurm.conf, or the folder holding it")
    slurm.add_argument("--assoc", metavar="FILE", help="a 'sacctmgr show assoc -P' dump")
    slurm.add_argument("--qos", metavar="FILE", help="a 'sacctmgr show qos -P' dump")
    _outputs(slurm)
    slurm.set_defaults(handler=cmd_import_slurm)
    pbs = systems.add_parser(
        "pbs", help="a PBS Pro / OpenPBS / Torque configuration", description=PBS
    )
    pbs.add_argument("dir", metavar="DIR", nargs="?", help="a PBS_HOME-like folder")
    pbs.add_argument("--qmgr", metavar="FILE", help='qmgr -c "print server" output')
    pbs.add_argument("--nodes", metavar="FILE", help="pbsnodes -av output")
    pbs.add_argument("--sched-config", metavar="FILE", help="the scheduler's sched_config")
    pbs.add_argument("--resource-group", metavar="FILE", help="the fairshare resource_group")
    _outputs(pbs)
    pbs.set_defaults(handler=cmd_import_pbs)


def _outputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", metavar="FILE", help="write the site file here (default: print it)"
    )
    parser.add_argument("--report", metavar="FILE", help="write the import report as text")
    parser.add_argument("--json", metavar="FILE", help="write the import report as JSON")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="print no report in the terminal (the site file keeps it)",
    )


def _command(args: argparse.Namespace, words: list[str]) -> str:
    for option in ("out", "report", "json"):
        if getattr(args, option):
            words += [f"--{option}", getattr(args, option)]
    return shlex.join(["queuesim", "import", *words])


def cmd_import_slurm(args: argparse.Namespace, console: Console) -> int:
    from queuesim.site.slurm_import import import_slurm

    _check_outputs(args)
    words = ["slurm", str(args.path)]
    for option in ("assoc", "qos"):
        if getattr(args, option):
            words += [f"--{option}", getattr(args, option)]
    result = import_slurm(
        Path(args.path),
        Path(args.assoc) if args.assoc else None,
        Path(args.qos) if args.qos else None,
    )
    return _finish(args, console, result.draft, result.report, _command(args, words))


def cmd_import_pbs(args: argparse.Namespace, console: Console) -> int:
    from queuesim.site.pbs_import import import_pbs, pbs_files

    _check_outputs(args)
    files = pbs_files(
        Path(args.dir) if args.dir else None,
        qmgr=args.qmgr,
        nodes=args.nodes,
        sched_config=args.sched_config,
        resource_group=args.resource_group,
    )
    words = ["pbs", *([str(args.dir)] if args.dir else [])]
    for option in ("qmgr", "nodes", "sched_config", "resource_group"):
        if getattr(args, option):
            words += ["--" + option.replace("_", "-"), getattr(args, option)]
    result = import_pbs(files)
    return _finish(args, console, result.draft, result.report, _command(args, words))


def _check_outputs(args: argparse.Namespace) -> None:
    for option in ("out", "report", "json"):
        if getattr(args, option):
            check_out_file(f"--{option}", Path(getattr(args, option)))


def _finish(
    args: argparse.Namespace, console: Console, draft: Any, report: ImportReport, command: str
) -> int:
    import json

    from queuesim.common.atomic import atomic_write_text
    from queuesim.site.site_draft import render_site_yaml

    text = render_site_yaml(draft, report, command)
    if args.report:
        atomic_write_text(Path(args.report), "\n".join(report.text_lines()) + "\n")
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(report.to_json(), indent=2) + "\n")
    if args.out:
        atomic_write_text(Path(args.out), text)
        if not args.quiet:
            show_report(report, console)
            console.print(f"site file written to {args.out}", highlight=False)
    else:
        sys.stdout.write(text)
    return 0


def show_report(report: ImportReport, console: Console) -> None:
    """The import report as rich tables."""
    from rich.markup import escape
    from rich.table import Table

    from queuesim.site.import_report import format_where

    c = report.counts
    console.print(
        f"[bold]Import report ({report.system})[/bold]: {c['mapped']} mapped, "
        f"{c['not_modelled']} read but not modelled, {c['not_understood']} not understood",
        highlight=False,
    )
    mapped = Table(title="mapped", title_justify="left", expand=False)
    for column in ("setting", "value", "where", "site key", "note"):
        mapped.add_column(column, overflow="fold")
    for m in report.mapped:
        mapped.add_row(*map(escape, (m.key, m.value, format_where(m.where), m.to, m.note)))
    console.print(mapped)
    skipped = Table(title="read but not modelled", title_justify="left")
    for column in ("setting", "value", "where", "why"):
        skipped.add_column(column, overflow="fold")
    for n in report.not_modelled:
        skipped.add_row(*map(escape, (n.key, n.value, format_where(n.where), n.reason)))
    console.print(skipped)
    unknown = Table(title="not understood", title_justify="left")
    for column in ("where", "line", "why"):
        unknown.add_column(column, overflow="fold")
    for u in report.not_understood:
        unknown.add_row(*map(escape, (str(u.where), u.text, u.reason)))
    console.print(unknown)
