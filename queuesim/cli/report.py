"""``queuesim report``: a report from saved runs, without simulating again."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from rich.console import Console

from queuesim.cli.options import add_bin, add_quiet, add_tau, check_tau, paragraph, subparser
from queuesim.common.errors import QueuesimError

HELP = "write a report (HTML, Markdown or JSON) from saved runs, without simulating"
DESCRIPTION = paragraph(
    """
    Read the run folders DIR (written by `queuesim run --out`) or comparison bundles
    (`queuesim compare --out`, their setup folders in order) and write one report to FILE,
    in the format its suffix names: .html (one self-contained page with a table of
    contents, sortable tables and the figures inline), .md (figures written beside it) or
    .json. One run gives a run report; several, the comparison `compare` would print,
    measured against --baseline (default: the bundle's, else the first).
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "report", HELP, DESCRIPTION)
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="saved run folders or bundles")
    parser.add_argument(
        "-o", "--out", required=True, metavar="FILE", help="the report: .html, .md or .json"
    )
    parser.add_argument(
        "--baseline", metavar="SETUP", help="the setup the others are measured against"
    )
    parser.add_argument(
        "--top", type=int, default=5, metavar="N", help="users who lost the most to list (5)"
    )
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="leave out the figures but the heatmap (faster on long traces)",
    )
    add_bin(parser, "heatmap time bin: day, week, or a width (e.g. 6h); default: day")
    add_tau(parser)
    add_quiet(parser)
    parser.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from pathlib import Path

    from queuesim.reports.saved_report import report_format, write_saved_report

    check_tau(args.tau)
    if args.top < 0:
        raise QueuesimError(f"--top expects a number of users >= 0, got {args.top}")
    report_format(Path(args.out))  # a bad suffix fails before reading anything
    command = shlex.join(["queuesim", "report", *args.dirs, "-o", args.out])
    written = write_saved_report(
        args.dirs,
        args.out,
        baseline=args.baseline,
        bin=args.bin,
        top=args.top,
        tau=args.tau,
        command=command,
        figures=not args.no_figures,
    )
    if not args.quiet:
        console.print("written: " + ", ".join(str(p) for p in written), highlight=False)
    return 0
