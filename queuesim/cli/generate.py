"""``queuesim generate``: a synthetic trace with its DFRS annotation."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.facts import count, print_facts
from queuesim.cli.options import add_out, check_out_file, check_seed, paragraph, subparser
from queuesim.common.errors import QueuesimError

HELP = "write a synthetic trace with its DFRS annotation (lublin: Lublin-Feitelson)"
DESCRIPTION = paragraph(
    """
    lublin: draw JOBS jobs from the Lublin-Feitelson model for a machine of NODES nodes,
    scale the inter-arrival times to the offered load LOAD (work in nodes over NODES x the
    submit span; unscaled without --load) and add the DFRS annotation of Stillwell, Vivien
    and Casanova (tasks, CPU need and memory per task). Writes OUT, an SWF trace whose
    processors are the cores a batch scheduler gives each job (1 for a sequential job,
    NODE_CPUS per task otherwise), and OUT.dfrs.csv, the annotation, both atomically. The
    same arguments always give the same bytes.
    """,
    fill=True,
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "generate", HELP, DESCRIPTION, examples=True)
    parser.add_argument("model", choices=["lublin"], help="workload model")
    parser.add_argument("--nodes", type=int, required=True, help="nodes of the machine")
    parser.add_argument("--jobs", type=int, required=True, help="number of jobs")
    parser.add_argument(
        "--load", type=float, help="offered load in (0, 1], e.g. 0.7; default: unscaled"
    )
    parser.add_argument("--seed", type=int, required=True, help="random seed (an integer >= 0)")
    add_out(parser, "the SWF file to write (.swf or .swf.gz)", metavar="FILE", required=True)
    parser.add_argument("--node-cpus", type=int, default=4, metavar="N", help="cores per node (4)")
    parser.add_argument(
        "--job-classes",
        action="store_true",
        help="draw interactive and batch jobs (queues 0 and 1) instead of one typeless class",
    )
    parser.set_defaults(handler=cmd_generate)


def _check_sizes(args: argparse.Namespace) -> None:
    """Refuse a machine, trace or load the model cannot draw, before writing anything."""
    if args.nodes < 1:
        raise QueuesimError(f"--nodes expects a number of nodes >= 1, got {args.nodes}")
    if args.jobs < 1:
        raise QueuesimError(f"--jobs expects a number of jobs >= 1, got {args.jobs}")
    if args.node_cpus < 1:
        raise QueuesimError(f"--node-cpus expects a number of cores >= 1, got {args.node_cpus}")
    check_seed(args.seed)
    if args.load is not None:
        if not (math.isfinite(args.load) and 0 < args.load <= 1):
            raise QueuesimError(
                f"--load expects an offered load in (0, 1] (e.g. 0.7), got {args.load:g}"
            )
        if args.jobs < 2:
            raise QueuesimError(
                "--load needs --jobs 2 or more: the offered load is the work over the span "
                "of the submit times, which one job does not have"
            )


def cmd_generate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.site.units import format_duration
    from queuesim.traces import lublin
    from queuesim.traces.dfrs_annotation import (
        annotation_path,
        offered_node_load,
        write_synthetic_trace,
    )

    _check_sizes(args)
    out = Path(args.out)
    sidecar = annotation_path(out)
    check_out_file("--out", out)
    check_out_file("--out", sidecar)
    try:
        frame = write_synthetic_trace(
            out,
            args.nodes,
            args.jobs,
            args.seed,
            load=args.load,
            job_classes=args.job_classes,
            node_cpus=args.node_cpus,
        )
    except ValueError as exc:  # the model's own checks, e.g. a load no whole second can give
        raise QueuesimError(f"cannot generate the trace: {exc}") from None
    except OSError as exc:
        raise QueuesimError(f"--out {out}: cannot write the trace: {exc}") from None

    cores = args.nodes * args.node_cpus
    submit = frame["submit"].to_numpy()
    span = float(submit.max() - submit.min())
    if span > 0:
        load = f"{offered_node_load(frame, args.nodes):.4f} of {args.nodes:,} nodes"
        if args.load is not None:
            load += f" (target {args.load:g})"
        load += f"; {lublin.offered_load(frame, cores):.4f} of {cores:,} cores"
    else:
        load = "undefined (every job is submitted at the same time)"
    sequential = int((frame["tasks"] == 1).sum())
    model = "interactive and batch classes" if args.job_classes else "typeless"
    print_facts(
        console,
        {
            "generated": f"{count(len(frame), 'job')} of the Lublin-Feitelson model ({model}) "
            f"for {args.nodes:,} nodes x {args.node_cpus} cores, seed {args.seed}",
            "offered load": load,
            "time span": f"{format_duration(span)} ({span:,.0f} s from first to last submit)",
            "job sizes": f"{sequential:,} sequential (1 core), {len(frame) - sequential:,} "
            f"multi-threaded ({args.node_cpus} cores per task); the largest has "
            f"{count(int(frame['tasks'].max()), 'task')}",
            "written": f"{out}, {sidecar}",
        },
    )
    return 0
