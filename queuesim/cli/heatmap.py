"""``queuesim heatmap``: mean wait per queue and time bin of a saved run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.options import add_bin, add_out, check_out_dir, paragraph, subparser

HELP = "mean wait per queue and time bin of a saved run"
DESCRIPTION = paragraph(
    """
    Draw the heatmap of mean wait (minutes) per queue and time bin, by submit time, of
    RESULT_DIR (written by `queuesim run --out` or a setup folder of `queuesim compare
    --out`). With --out, also write heatmap.png, heatmap.svg and heatmap.csv there.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "heatmap", HELP, DESCRIPTION)
    parser.add_argument("result_dir", metavar="RESULT_DIR", help="a saved run's folder")
    add_bin(parser, "day, week, or a width in seconds or as a duration (e.g. 6h); default: day")
    add_out(parser, "write the heatmap files into DIR")
    parser.add_argument(
        "--scale",
        choices=("log", "linear"),
        default="log",
        help="colour scale of the images: linear up to a minute then logarithmic (log, the "
        "default: short and long waits both read), or linear throughout",
    )
    parser.set_defaults(handler=cmd_heatmap)


def cmd_heatmap(args: argparse.Namespace, console: Console) -> int:
    from queuesim.reports.bundle import write_heatmap_files
    from queuesim.reports.run_dir import read_run_dir
    from queuesim.reports.terminal import heatmap_renderable
    from queuesim.results.heatmap import parse_bin, wait_grid

    spec = parse_bin(args.bin)
    if args.out:
        check_out_dir(args.out)
    run = read_run_dir(args.result_dir)
    grid = wait_grid(run.jobs, spec, queues=run.queues or None, clock=run.clock)
    grids = {run.name: grid}
    if args.out:
        files = write_heatmap_files(Path(args.out), grids, log=args.scale == "log")
    console.print(heatmap_renderable(grids, console.width))
    if args.out:
        console.print("written: " + ", ".join(str(f) for f in files), highlight=False)
    return 0
