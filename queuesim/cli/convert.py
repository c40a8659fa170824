"""``queuesim convert``: a trace or site log as SWF or Parquet."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from queuesim.cli.options import add_format, check_out_file, paragraph, subparser
from queuesim.common.errors import QueuesimError

HELP = "convert a site log or trace to SWF or Parquet"
DESCRIPTION = paragraph(
    """
    Read LOG in any format queuesim reads (PBS accounting, Slurm sacct or jobcomp, SWF,
    Alea's extended SWF; told from its content unless --format names it) and write it to
    OUT: .swf or .swf.gz for the Standard Workload Format (its header maps the user, group
    and queue numbers back to names), .parquet for every column with names kept.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "convert", HELP, DESCRIPTION)
    parser.add_argument("log", metavar="LOG", help="the site log or trace")
    parser.add_argument("out", metavar="OUT", help="the file to write (.swf, .swf.gz, .parquet)")
    add_format(parser)
    parser.add_argument(
        "--skip-bad-lines", action="store_true", help="skip malformed records (counted)"
    )
    parser.set_defaults(handler=cmd_convert)


def cmd_convert(args: argparse.Namespace, console: Console) -> int:
    from pathlib import Path

    from queuesim.core.workload import CleaningOptions, read_workload_trace
    from queuesim.traces.export import EXPORT_SUFFIXES, export_trace
    from queuesim.traces.registry import detect_format

    if not args.out.lower().endswith(EXPORT_SUFFIXES):
        raise QueuesimError(
            f"{args.out}: cannot tell the output format from its name; expected it to end in "
            + ", ".join(EXPORT_SUFFIXES)
        )
    check_out_file("OUT", Path(args.out))  # before reading a large log, not after
    options = CleaningOptions(skip_bad_lines=args.skip_bad_lines, trace_format=args.format)
    trace = read_workload_trace(args.log, options)
    source = detect_format(trace.path, format=args.format).name
    export_trace(trace, Path(args.out), source)
    skipped = f", {len(trace.bad_lines)} malformed lines skipped" if trace.bad_lines else ""
    notes = f", {len(trace.notes)} reader notes" if len(trace.notes) else ""
    console.print(
        f"wrote {args.out}: {len(trace.jobs):,} jobs from {args.log} ({source}){skipped}{notes}",
        highlight=False,
    )
    return 0
