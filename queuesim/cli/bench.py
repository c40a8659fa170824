"""``queuesim bench``: full real traces under each policy, each run in a fresh process."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.options import add_folders, add_policies, folders, paragraph, subparser

HELP = "time full real traces under each policy (jobs/s, peak memory)"
DESCRIPTION = paragraph(
    """
    Run the performance table - full real traces under the built-in policies, reshaped
    traces of one and two million jobs, a deep queue, the README sample cold and warm -,
    each run in a fresh process, and print every phase's seconds, jobs/s, peak memory and
    the target (the quick runs by default, all with --full); the kernels the runs need
    are compiled first where numba's cache lacks them, on a line of their own. With
    --trace or --policy:
    each policy on each trace instead. Traces are looked up in --workloads (default:
    ../shared/workloads beside the repository).
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "bench", HELP, DESCRIPTION)
    parser.add_argument(
        "--trace",
        action="append",
        default=[],
        help="trace: a file name or its start, e.g. KTH-SP2 (repeat); default: HPC2N-2002 and "
        "SDSC-BLUE-2000",
    )
    add_policies(parser, "policy (repeat); default: fcfs, easy, conservative")
    parser.add_argument(
        "--readers",
        action="store_true",
        help="time the site-log readers instead: PBS accounting records/s and sacct rows/s "
        "on inputs of --records made from the logs in WORKLOADS/site-logs",
    )
    parser.add_argument(
        "--records", type=int, default=1_000_000, help="input size for --readers (1,000,000)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per reader for --readers; the median is shown"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="every run of the performance table (about 5 minutes once the kernels are "
        "compiled), not only the quick ones (about 15 s)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path("queuesim-bench.json"),
        help="where the table's figures are written as JSON (queuesim-bench.json)",
    )
    add_folders(parser)
    parser.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from queuesim.studies.bench import DEFAULT_POLICIES, DEFAULT_TRACES, run_bench

    workloads, configs = folders(args)
    if args.readers:
        from queuesim.studies.reader_bench import run_reader_bench

        run_reader_bench(console, workloads, args.records, args.repeat)
        return 0
    if args.trace or args.policy:
        run_bench(
            console,
            traces=args.trace or DEFAULT_TRACES,
            policies=args.policy or DEFAULT_POLICIES,
            workloads=workloads,
            site_configs=configs,
        )
        return 0
    from queuesim.studies.bench_table import run_bench_table

    run_bench_table(
        console, full=args.full, workloads=workloads, site_configs=configs, record=args.json
    )
    return 0
