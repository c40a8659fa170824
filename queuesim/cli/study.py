"""``queuesim study``: reproduce a paper's experiment.

``study dpsa`` is paper 001's comparison of EASY with DPSA's variants on real traces;
``study dfrs`` is papers 000 and 002's comparison of DFRS with batch scheduling against
the offline bound on the maximum stretch. The studies themselves live in
:mod:`queuesim.studies.dpsa` and :mod:`queuesim.studies.dfrs`; this module reads and checks
their options and quotes the command line that regenerates a report.
"""

from __future__ import annotations

import argparse
import math
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from queuesim.cli.options import (
    add_folders,
    add_out,
    add_quiet,
    add_workers,
    check_out_dir,
    check_workers,
    folder_words,
    folders,
    paragraph,
    subparser,
)
from queuesim.common.errors import QueuesimError

if TYPE_CHECKING:
    from queuesim.studies.dfrs import StudyConfig


HELP = "reproduce a paper's experiment (dpsa: paper 001; dfrs: papers 000 and 002)"
DPSA_HELP = "EASY against DPSA's variants on the real traces (paper 001)"
DPSA_DESCRIPTION = paragraph(
    """
    dpsa: replay the real traces (default: SDSC-SP2-1998, SDSC-Par-1996, LLNL-Thunder-2007,
    LLNL-Atlas-2006, HPC2N-2002, KTH-SP2, CTC-SP2, from --workloads) on their site files
    under EASY and under DPSA's variants p, n and w, in parallel on the local cores, and
    report per trace the change in mean bounded slowdown and mean wait against EASY, the
    utilization, each run's time and how often the search bound was hit. Writes study.md and
    study.csv into --out atomically.
    """,
    fill=True,
)
DFRS_HELP = "DFRS against batch scheduling: degradation from the stretch bound (papers 000, 002)"
DFRS_DESCRIPTION = paragraph(
    """
    Generate seeded Lublin-Feitelson traces per load level for 128 quad-core nodes and cut
    the first HPC2N weeks, compute each instance's offline lower bound on the maximum
    stretch (cached), replay every instance under FCFS, EASY and the DFRS algorithms with
    and without the rescheduling penalty in parallel, and write study.md (average, std and
    max degradation from bound and degradation factor), study.csv and
    degradation-vs-load.png into --out atomically.
    """,
    fill=True,
)


def add_parser(sub: Any) -> None:
    studies = subparser(sub, "study", HELP).add_subparsers(
        dest="study", metavar="STUDY", required=True
    )
    dpsa = subparser(studies, "dpsa", DPSA_HELP, DPSA_DESCRIPTION)
    add_dpsa_arguments(dpsa)
    dpsa.set_defaults(handler=run_dpsa)
    dfrs = subparser(studies, "dfrs", DFRS_HELP, DFRS_DESCRIPTION)
    add_dfrs_arguments(dfrs)
    dfrs.set_defaults(handler=run_dfrs)


def _add_where_and_how(parser: argparse.ArgumentParser) -> None:
    """The options both studies end with: the folders, the processes, --quiet."""
    add_folders(parser)
    add_workers(parser, "processes; default: the local cores")
    add_quiet(parser)


# --- study dpsa ---------------------------------------------------------------------------


def add_dpsa_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``queuesim study dpsa``."""
    parser.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="NAME",
        help="trace file name or its start, e.g. KTH-SP2 (repeat); default: the seven above",
    )
    parser.add_argument(
        "--bound-ms", type=float, default=0.0, help="wall-time bound of one search, ms (0: none)"
    )
    parser.add_argument(
        "--bound-nodes",
        type=int,
        default=100_000,
        help="subsets one search may form (0: none); default 100000",
    )
    add_out(parser, "write study.md and study.csv here (reports/dpsa)", default="reports/dpsa")
    parser.add_argument(
        "--estimate",
        choices=("requested", "exact"),
        help="runtime estimates for every site instead of the site files' own",
    )
    _add_where_and_how(parser)


def dpsa_command_line(args: argparse.Namespace) -> str:
    """The command line that regenerates the study, for the report to quote."""
    words = ["queuesim", "study", "dpsa"]
    for name in args.trace:
        words += ["--trace", name]
    if args.bound_ms:
        words += ["--bound-ms", f"{args.bound_ms:g}"]
    words += ["--bound-nodes", str(args.bound_nodes)]
    if args.estimate:
        words += ["--estimate", args.estimate]
    for pair in folder_words(args):
        words += pair
    words += ["--out", args.out]
    return shlex.join(words)


def run_dpsa(args: argparse.Namespace, console: Console) -> int:
    """``queuesim study dpsa``: check the options, run, print the table, write the report."""
    from queuesim.studies.dpsa import StudyOptions, run_and_write

    if not (math.isfinite(args.bound_ms) and args.bound_ms >= 0):
        raise QueuesimError(
            f"--bound-ms expects a number of milliseconds >= 0, got {args.bound_ms}"
        )
    if args.bound_nodes < 0:
        raise QueuesimError(f"--bound-nodes expects a number >= 0, got {args.bound_nodes}")
    check_workers(args.workers)
    out = Path(args.out)
    check_out_dir(out)
    workloads, configs = folders(args)
    options = StudyOptions(
        traces=tuple(args.trace),
        bound_ms=args.bound_ms,
        bound_nodes=args.bound_nodes,
        estimate=args.estimate,
        workloads=workloads,
        site_configs=configs,
        workers=args.workers,
    )
    run_and_write(options, out, command=dpsa_command_line(args), console=console, quiet=args.quiet)
    return 0


# --- study dfrs ---------------------------------------------------------------------------


def add_dfrs_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``queuesim study dfrs``."""
    from queuesim.studies import dfrs

    config = dfrs.StudyConfig()  # its defaults are the options' defaults
    _whole_number(
        parser, "--traces-per-load", "N", config.traces_per_load, "synthetic traces per load level"
    )
    _whole_number(parser, "--jobs", "J", config.jobs, "jobs per synthetic trace")
    parser.add_argument(
        "--loads",
        default=",".join(dfrs.load_text(x) for x in dfrs.DEFAULT_LOADS),
        metavar="L1,L2,...",
        help="load levels in (0, 1] (default 0.1,...,0.9)",
    )
    _whole_number(
        parser, "--seed", None, config.seed, "seed of the first synthetic trace of every load"
    )
    _whole_number(
        parser,
        "--hpc2n-weeks",
        "K",
        config.hpc2n_weeks,
        f"first weeks of {dfrs.HPC2N_TRACE}",
        "; 0: none",
    )
    parser.add_argument(
        "--penalties",
        default=",".join(f"{p:g}" for p in dfrs.DEFAULT_PENALTIES),
        metavar="S1,S2,...",
        help="rescheduling penalties in seconds (default 0,300)",
    )
    parser.add_argument(
        "--algorithms",
        action="append",
        default=[],
        metavar="A1,A2,...",
        help="algorithms, comma-separated or repeated (default: "
        + ", ".join(dfrs.DEFAULT_ALGORITHMS)
        + ")",
    )
    add_out(
        parser,
        f"write study.md, study.csv, the plot and timings.csv here ({dfrs.DEFAULT_OUT})",
        default=dfrs.DEFAULT_OUT,
    )
    parser.add_argument(
        "--cache",
        default=dfrs.DEFAULT_CACHE,
        metavar="DIR",
        help=f"generated traces and cached bounds ({dfrs.DEFAULT_CACHE})",
    )
    _add_where_and_how(parser)


def _whole_number(
    parser: argparse.ArgumentParser,
    flag: str,
    metavar: str | None,
    default: int,
    what: str,
    note: str = "",
) -> None:
    """An option that takes a whole number, its help ``what (default N[note])``."""
    text = f"{what} (default %(default)s{note})"
    parser.add_argument(flag, type=int, default=default, metavar=metavar, help=text)


def dfrs_config(args: argparse.Namespace) -> StudyConfig:
    """The study's configuration from the command line, every value checked."""
    from queuesim.studies import dfrs

    for option, value, least in (
        ("--traces-per-load", args.traces_per_load, 0),
        ("--jobs", args.jobs, 2),
        ("--hpc2n-weeks", args.hpc2n_weeks, 0),
    ):
        if value < least:
            raise QueuesimError(f"{option} expects a whole number >= {least}, got {value}")
    if args.seed < 0:
        raise QueuesimError(f"--seed expects a whole number >= 0, got {args.seed}")
    check_workers(args.workers)
    if args.traces_per_load == 0 and args.hpc2n_weeks == 0:
        raise QueuesimError("nothing to run: --traces-per-load and --hpc2n-weeks are both 0")
    penalties = dfrs.parse_penalties(args.penalties)
    names = [n.strip() for group in args.algorithms for n in group.split(",") if n.strip()]
    algorithms = dfrs.resolve_algorithms(names or dfrs.DEFAULT_ALGORITHMS, penalties)
    workloads, configs = folders(args)
    return dfrs.StudyConfig(
        loads=dfrs.parse_loads(args.loads),
        traces_per_load=args.traces_per_load,
        jobs=args.jobs,
        seed=args.seed,
        hpc2n_weeks=args.hpc2n_weeks,
        penalties=penalties,
        algorithms=tuple(algorithms),
        cache=Path(args.cache),
        workloads=workloads,
        site_configs=configs,
    )


def dfrs_command_line(args: argparse.Namespace, config: StudyConfig) -> str:
    """The command line that regenerates the study."""
    from queuesim.studies.dfrs import load_text

    words: list[list[str]] = [
        ["queuesim", "study", "dfrs"],
        ["--traces-per-load", str(config.traces_per_load)],
        ["--jobs", str(config.jobs)],
        ["--loads", ",".join(load_text(x) for x in config.loads)],
        ["--seed", str(config.seed)],
        ["--hpc2n-weeks", str(config.hpc2n_weeks)],
        ["--penalties", ",".join(f"{p:g}" for p in config.penalties)],
        ["--algorithms", ",".join(a.label for a in config.algorithms)],
        *folder_words(args),
        ["--out", args.out],
    ]
    return " ".join(shlex.join(w) for w in words)


def run_dfrs(args: argparse.Namespace, console: Console) -> int:
    """``queuesim study dfrs``: check the options, run, print the summary, write the report."""
    from queuesim.studies.dfrs import run_and_print

    config = dfrs_config(args)
    out = Path(args.out)
    check_out_dir(out)
    run_and_print(
        config,
        out,
        command=dfrs_command_line(args, config),
        workers=args.workers,
        console=console,
        quiet=args.quiet,
    )
    return 0
