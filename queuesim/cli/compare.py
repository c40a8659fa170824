"""``queuesim compare``: one workload through several setups, measured against a baseline."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.options import (
    CLEANING_FLAGS,
    add_bin,
    add_cleaning,
    add_clusters,
    add_jobs_format,
    add_out,
    add_policies,
    add_quiet,
    add_tau,
    add_workers,
    check_tau,
    check_workers,
    cleaning_options,
    paragraph,
    subparser,
)
from queuesim.common.errors import QueuesimError

HELP = "run one workload through several setups and compare them against a baseline"
DESCRIPTION = paragraph(
    """
    Replay WORKLOAD through each SITE (its own policy), or through each SITE under each
    --policy (setups named site/policy), in parallel on the local cores. Prints, for every
    setup, AWWT, AWRT, AWSD, ANUWT, NUWT-dev, mean wait, mean bounded slowdown and
    utilization (best in bold green); against the baseline, the share of users and jobs
    whose wait improved or deteriorated and by how many hours on average (jobs matched by
    job id; paper 004, Table 2); the users who lost the most; and a heatmap of mean wait per
    queue and time bin. With --out, writes a report bundle: report.md, a self-contained
    report.html, the tables as CSV and JSON, the heatmaps as PNG, SVG and CSV, and each
    setup's run files.
    """,
    fill=True,
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "compare", HELP, DESCRIPTION, examples=True)
    parser.add_argument("sites", nargs="+", metavar="SITE", help="site files (YAML)")
    parser.add_argument(
        "--workload",
        required=True,
        help="trace: Standard Workload Format or Alea's extended SWF (.swf[.gz])",
    )
    add_clusters(
        parser, "run every site on the clusters of FILE (a clusters file) instead of its own"
    )
    add_policies(
        parser,
        "compare this policy on every site (repeat for several); default: each site's own",
    )
    parser.add_argument(
        "--baseline",
        metavar="SETUP",
        help="the setup the others are measured against (a setup name, or a policy name "
        "when it picks one setup); default: the first",
    )
    add_out(parser, "write the report bundle into DIR")
    add_jobs_format(parser, "parquet if pyarrow is installed, else csv")
    parser.add_argument(
        "--no-run-folders",
        dest="run_folders",
        action="store_false",
        help="write the comparison only (report, tables, figures), not each setup's run "
        "folder of per-job files (tens of MB per setup on a large trace)",
    )
    parser.add_argument(
        "--top", type=int, default=5, metavar="N", help="users who lost the most to list (5)"
    )
    add_bin(
        parser,
        "heatmap time bin: day, week, or a width in seconds or as a duration "
        "(e.g. 21600 or 6h); default: day",
    )
    add_tau(parser)
    add_workers(parser, "processes to run setups in; default: min(setups, CPU cores)")
    add_cleaning(
        parser,
        skip="skip malformed trace lines (counted)",
        drop="drop cancelled jobs that ran (counted)",
        reject="reject jobs a site cannot run instead of stopping (counted); jobs are then "
        "compared only where both setups ran them",
    )
    add_quiet(parser)
    parser.set_defaults(handler=cmd_compare)


def _compare_command(args: argparse.Namespace) -> str:
    """The compare command line, minus --out and --workers, for the report to quote."""
    import shlex

    words = ["queuesim", "compare", *args.sites, "--workload", args.workload]
    if args.clusters is not None:
        words += ["--clusters", args.clusters]
    for policy in args.policy:
        words += ["--policy", policy]
    if args.baseline is not None:
        words += ["--baseline", args.baseline]
    words += ["--bin", args.bin, "--top", str(args.top)]
    if args.tau != 10.0:
        words += ["--tau", f"{args.tau:g}"]
    for flag in CLEANING_FLAGS:
        if getattr(args, flag):
            words.append("--" + flag.replace("_", "-"))
    return shlex.join(words)


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from queuesim.reports.bundle import check_bundle_target, write_bundle
    from queuesim.reports.terminal import print_comparison
    from queuesim.results.heatmap import parse_bin
    from queuesim.studies.compare import compare, setups_for

    check_tau(args.tau)
    if args.top < 0:
        raise QueuesimError(f"--top expects a number of users >= 0, got {args.top}")
    check_workers(args.workers)
    if args.out:
        check_bundle_target(Path(args.out))  # before minutes of simulation, not after
    spec = parse_bin(args.bin)  # a bad bin fails before minutes of simulation

    def announce(setups: int, workers: int) -> None:
        if not args.quiet:
            how = f"in {workers} processes" if workers > 1 else "one after the other"
            console.print(f"[dim]simulating {setups} setups {how}...[/dim]", highlight=False)

    from queuesim.reports.progress import RunProgress

    shown = RunProgress(console)
    with shown:
        comp = compare(
            setups_for(args.sites, args.policy, args.clusters),
            args.workload,
            baseline=args.baseline,
            cleaning=cleaning_options(args),
            top=args.top,
            tau=args.tau,
            workers=args.workers,
            on_start=announce,
            progress=None if args.quiet else shown.update,
        )
    command = _compare_command(args)
    if args.out:
        jobs_format = None if args.jobs_format.startswith("parquet if") else args.jobs_format
        write_bundle(
            args.out,
            comp,
            bin=spec,
            command=command,
            jobs_format=jobs_format,
            run_folders=args.run_folders,
        )
    if not args.quiet:
        print_comparison(console, comp, grids=comp.heatmap(spec), command=command)
        if args.out:
            console.print(
                f"written: {Path(args.out) / 'report.md'}, report.html and the runs' files",
                highlight=False,
            )
    return 0
