"""Options several commands share, each written once, and the checks of their values.

A helper adds one option (or one group of them) to a command's parser; where the commands
word an option's help differently, the command passes its own words. The checks raise
:class:`~queuesim.common.errors.QueuesimError` with the message the command line prints.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from queuesim.common import bundled
from queuesim.common.atomic import check_writable_dir, check_writable_file
from queuesim.common.errors import QueuesimError

if TYPE_CHECKING:
    from queuesim.core.workload import CleaningOptions

#: the examples ending ``queuesim --help`` and the help of several commands
EXAMPLES = """\
examples:
  queuesim run site-configs/kth-sp2.yaml workloads/kth-sp2-sample.swf
  queuesim run site-configs/hpc2n.yaml ../shared/workloads/HPC2N-2002-2.2-cln.swf.gz \\
      --policy conservative --out out/hpc2n-cons
  queuesim validate site-configs/*.yaml
  queuesim policies
  queuesim bench --policy easy --trace HPC2N-2002-2.2-cln.swf.gz
  queuesim compare site-configs/kth-sp2.yaml --workload workloads/kth-sp2-sample.swf \\
      --policy easy --policy fcfs --policy conservative --out out/kth-policies
  queuesim heatmap out/hpc2n-cons --bin week
  queuesim generate lublin --nodes 128 --jobs 1000 --load 0.7 --seed 1 --out out/lublin-0.7.swf
  queuesim solve workloads/dfrs-instance-example.yaml --algorithm MCB8 --out out/mcb8.json
"""

#: the flags of the workload's cleaning, in the order they are listed
CLEANING_FLAGS = ("skip_bad_lines", "drop_cancelled", "reject_unrunnable")
#: where the real traces are looked for without --workloads (the site files without
#: --site-configs are the bundled ones, :func:`queuesim.common.bundled.site_configs_folder`)
DEFAULT_WORKLOADS = Path("..", "shared", "workloads")


def paragraph(text: str, *, fill: bool = False) -> str:
    """A help text written as prose over several source lines, as one line (the help
    formatter wraps it) or, with ``fill``, already wrapped at 88 columns."""
    line = " ".join(text.split())
    return textwrap.fill(line, width=88) if fill else line


def subparser(
    sub: Any, name: str, help: str, description: str | None = None, *, examples: bool = False
) -> argparse.ArgumentParser:
    """Add the parser of one command; with ``examples``, its help ends with :data:`EXAMPLES`
    and keeps the description's own line breaks."""
    if not examples:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
        return parser
    parser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def add_cleaning(parser: argparse.ArgumentParser, skip: str, drop: str, reject: str) -> None:
    """--format, --skip-bad-lines, --drop-cancelled and --reject-unrunnable, with these
    helps."""
    add_format(parser)
    for flag, text in zip(CLEANING_FLAGS, (skip, drop, reject), strict=True):
        parser.add_argument("--" + flag.replace("_", "-"), action="store_true", help=text)


def add_format(parser: argparse.ArgumentParser) -> None:
    """--format: the workload's format by name, instead of the one its content shows."""
    from queuesim.traces.format_names import FORMAT_NAMES

    parser.add_argument(
        "--format",
        choices=list(FORMAT_NAMES),
        help="read the workload in this format instead of telling it from its content: "
        + "; ".join(f"{name}: {what}" for name, what in FORMAT_NAMES.items()),
    )


def cleaning_options(args: argparse.Namespace) -> CleaningOptions:
    """The workload's cleaning as the cleaning flags ask for it."""
    from queuesim.core.workload import CleaningOptions

    return CleaningOptions(
        **{flag: getattr(args, flag) for flag in CLEANING_FLAGS},
        trace_format=getattr(args, "format", None),
    )


def add_policies(parser: argparse.ArgumentParser, help: str) -> None:
    """--policy, repeated for several (none given: an empty list)."""
    parser.add_argument("--policy", action="append", default=[], help=help)


def add_clusters(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--clusters", metavar="FILE", help=help)


def add_tau(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tau", type=float, default=10.0, help="bounded slowdown threshold, seconds (10)"
    )


def check_tau(tau: float) -> None:
    if not (math.isfinite(tau) and tau >= 0):
        raise QueuesimError(f"--tau expects a finite number of seconds >= 0, got {tau}")


def add_out(parser: argparse.ArgumentParser, help: str, metavar: str = "DIR", **more: Any) -> None:
    """--out (a folder unless ``metavar`` says otherwise; ``more``: default or required)."""
    parser.add_argument("--out", metavar=metavar, help=help, **more)


def add_jobs_format(parser: argparse.ArgumentParser, default: str = "parquet") -> None:
    """--jobs-format: the per-job table of a run folder as Parquet or CSV."""
    parser.add_argument(
        "--jobs-format",
        choices=("parquet", "csv"),
        default=default,
        help="with --out, write the one-row-per-job table as jobs.parquet (fast, typed, "
        "for pandas and any Arrow reader; needs pyarrow) or as jobs.csv; default: "
        f"{default}",
    )


def check_out_dir(out: str | Path, option: str = "--out") -> None:
    """Refuse an output folder that cannot be written (before any work is done)."""
    check_writable_dir(out, option)


def check_out_file(option: str, path: Path) -> None:
    """Refuse an output file that cannot be written: a folder, a path through a file, a
    read-only place (checked before any work is done; missing folders are created when
    writing)."""
    check_writable_file(path, option)


def add_bin(parser: argparse.ArgumentParser, help: str) -> None:
    """--bin, the heatmap's time bin (a day unless given)."""
    parser.add_argument("--bin", default="day", help=help)


def add_workers(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--workers", type=int, metavar="N", help=help)


def check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise QueuesimError(f"--workers expects at least 1, got {workers}")


def check_seed(seed: int) -> None:
    if seed < 0:
        raise QueuesimError(f"--seed expects an integer >= 0, got {seed}")


def add_folders(parser: argparse.ArgumentParser) -> None:
    """--workloads and --site-configs, where the real traces and their site files are."""
    parser.add_argument("--workloads", metavar="DIR", help="folder of the real traces")
    parser.add_argument("--site-configs", metavar="DIR", help="folder of the site files")


def folders(args: argparse.Namespace) -> tuple[Path, Path]:
    """The folders of the real traces and of the site files; by default ``../shared/workloads``
    (beside a checkout) and the bundled site files."""
    workloads = Path(args.workloads) if args.workloads else DEFAULT_WORKLOADS
    configs = Path(args.site_configs) if args.site_configs else bundled.site_configs_folder()
    return workloads, configs


def folder_words(args: argparse.Namespace) -> list[list[str]]:
    """--workloads and --site-configs as given, for a command line quoted in a report."""
    words = []
    if args.workloads:
        words.append(["--workloads", args.workloads])
    if args.site_configs:
        words.append(["--site-configs", args.site_configs])
    return words


def add_params(parser: argparse.ArgumentParser) -> None:
    """``--param KEY=VALUE``, repeatable: a parameter of the policy."""
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="policy parameter; repeat for several",
    )


def add_kernels(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kernels",
        choices=("auto", "compiled", "interpreted"),
        default="auto",
        help="run the simulation kernels compiled by numba (cached on disk after the "
        "first compilation, one to two minutes) or as plain Python (the same schedule, "
        "slower); auto (the default): compiled once they are in the cache, interpreted "
        "for a small first run (one CPU pool, up to 10,000 jobs)",
    )


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
