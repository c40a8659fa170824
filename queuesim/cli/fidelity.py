"""``queuesim fidelity``: replay a site's log through the site and compare with the log."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import (
    add_cleaning,
    add_params,
    add_quiet,
    check_out_file,
    cleaning_options,
    paragraph,
    subparser,
)
from queuesim.common.errors import QueuesimError

HELP = "replay a site's log through the site and compare the schedule with the log's"
DESCRIPTION = paragraph(
    """
    Replay LOG through SITE (its policy unless --policy) and compare, job by job, the
    simulated start with the start the log recorded (delta = simulated - logged). Prints
    the median and 90th percentile of |delta|, the share of jobs within 1 min, 10 min and
    1 h, the rank correlation of waits, the wait per queue logged vs simulated, the --top
    jobs with the largest |delta| with the queue limits that held them, and what the log
    holds that the simulation cannot know (holds, jobs submitted before the log begins,
    outages, records the reader skipped, jobs cleaning removed). --json FILE writes it
    all; --figure FILE.png draws utilization and queue length over time, logged vs
    simulated. Check a baseline this way before trusting what-ifs built on it.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "fidelity", HELP, DESCRIPTION)
    parser.add_argument("site", help="site file (YAML), e.g. one drafted by queuesim inspect")
    parser.add_argument("log", help="the site's log: PBS or Slurm accounting, or SWF")
    parser.add_argument("--policy", help="scheduling policy (see `queuesim policies`)")
    add_params(parser)
    parser.add_argument(
        "--top", type=int, default=20, metavar="N", help="jobs with the largest |delta| (20)"
    )
    parser.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    parser.add_argument("--figure", metavar="FILE", help="draw the figure into FILE (.png or .svg)")
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="write the report into FILE: .html (one self-contained page, the figure inline), "
        ".md (the figure as a PNG beside it) or .json",
    )
    add_cleaning(
        parser,
        skip="skip malformed records (counted)",
        drop="drop cancelled jobs that ran (counted)",
        reject="reject jobs the site cannot run instead of stopping (counted among the "
        "causes); drafted sites often need it",
    )
    add_quiet(parser)
    parser.set_defaults(handler=cmd_fidelity)


def cmd_fidelity(args: argparse.Namespace, console: Console) -> int:
    import json
    from pathlib import Path

    from queuesim.common.atomic import atomic_write_text
    from queuesim.policies.registry import parse_params
    from queuesim.reports.fidelity_report import (
        fidelity_renderable,
        write_fidelity_figure,
        write_fidelity_report,
    )
    from queuesim.studies.fidelity import fidelity

    if args.top < 0:
        raise QueuesimError(f"--top expects a number of jobs >= 0, got {args.top}")
    if args.json:
        check_out_file("--json", Path(args.json))
    if args.figure:
        check_out_file("--figure", Path(args.figure))
        if Path(args.figure).suffix.lower() not in (".png", ".svg"):
            raise QueuesimError(f"--figure {args.figure}: give a .png or .svg file name")
    if args.report:
        check_out_file("--report", Path(args.report))
        if Path(args.report).suffix.lower() not in (".html", ".md", ".json"):
            raise QueuesimError(f"--report {args.report}: give a .html, .md or .json file name")
    found = fidelity(
        args.site,
        args.log,
        cleaning=cleaning_options(args),
        policy=args.policy,
        params=parse_params(args.param),
        top=args.top,
    )
    if not args.quiet:
        console.print(fidelity_renderable(found, console.width))
    if args.json:
        text = json.dumps(found.as_dict(), indent=2, allow_nan=False) + "\n"
        atomic_write_text(Path(args.json), text)
        if not args.quiet:
            console.print(f"wrote {args.json}", highlight=False)
    if args.figure:
        write_fidelity_figure(args.figure, found)
        if not args.quiet:
            console.print(f"wrote {args.figure}", highlight=False)
    if args.report:
        written = write_fidelity_report(args.report, found)
        if not args.quiet:
            console.print("wrote " + ", ".join(map(str, written)), highlight=False)
    return 0
