"""``queuesim sweep``: the cells of a sweep spec on Dask (``run``), one cell's site
(``show``), and the sweep report (``report``)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from queuesim.cli.options import add_quiet, add_workers, check_workers, paragraph
from queuesim.common.errors import QueuesimError

if TYPE_CHECKING:
    from queuesim.studies.sweep_run import Execution, SweepProgress

HELP = "run a sweep of many setups on Dask (local cores, a cluster, PBS or Slurm), resumable"
DESCRIPTION = paragraph(
    """
    A sweep spec (YAML; see site-configs/sweeps/README.md) names a base site and policy,
    traces, and axes - paths into the site model with lists or ranges of values, the
    policy and its parameters, a load factor. `sweep run` checks every cell, then runs the
    cells not yet in --out on Dask and keeps one Parquet row per cell, so a sweep stopped
    at any point resumes and a sweep with more axis values runs only the new cells.
    `sweep show CELL --site` prints the site file that reproduces a cell; `sweep report`
    writes the table, the Pareto front, the effect of each axis and the best cells.
    """,
    fill=True,
)


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "sweep",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="sweep_command", metavar="ACTION", required=True)
    _add_run(actions)
    _add_show(actions)
    _add_report(actions)


def _add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", metavar="DIR", help="the results folder (default: sweep-NAME, NAME the spec's)"
    )


def _add_run(actions: Any) -> None:
    parser = actions.add_parser(
        "run",
        help="run the cells of SPEC that --out does not hold yet",
        description="Run the cells of SPEC not yet in --out, on a LocalCluster of --workers "
        "processes (default: CPU cores), a running scheduler (--scheduler) or workers in "
        "PBS/Slurm jobs (--cluster); write one Parquet row per cell and the report.",
    )
    parser.add_argument("spec", metavar="SPEC", help="the sweep spec (YAML)")
    _add_out(parser)
    where = parser.add_argument_group("where the cells run (default: a LocalCluster here)")
    add_workers(where, "local worker processes, one cell at a time each (default: CPU cores)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask scheduler")
    where.add_argument("--cluster", choices=("pbs", "slurm"), help="workers in batch jobs")
    batch = parser.add_argument_group("with --cluster: each batch job (dask-jobqueue)")
    batch.add_argument("--jobs", type=int, default=1, metavar="N", help="batch jobs (1)")
    batch.add_argument(
        "--cores", type=int, default=1, metavar="N", help="CPUs per job, one worker each (1)"
    )
    batch.add_argument("--memory", default="4GB", help="memory per job (4GB)")
    batch.add_argument(
        "--walltime", default="01:00:00", metavar="HH:MM:SS", help="walltime per job (01:00:00)"
    )
    batch.add_argument("--queue", help="PBS queue or Slurm partition")
    batch.add_argument("--account", help="account (project) charged")
    batch.add_argument(
        "--prologue",
        action="append",
        default=[],
        metavar="LINE",
        help="shell line run before the workers, e.g. 'module load python'",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the spec, count the cells to run, print the batch job "
        "script with --cluster; run nothing",
    )
    parser.add_argument(
        "--keep-jobs",
        action="store_true",
        help="also keep each cell's per-job table (DIR/jobs/KEY.parquet)",
    )
    parser.add_argument("--no-report", action="store_true", help="do not write DIR/report")
    add_quiet(parser)
    parser.set_defaults(handler=cmd_run)


def _add_show(actions: Any) -> None:
    parser = actions.add_parser(
        "show", help="show one cell (its row, or with --site the site file reproducing it)"
    )
    parser.add_argument("cell", metavar="CELL", help="the cell's key, or its first characters")
    parser.add_argument(
        "--out", metavar="DIR", help="the results folder (default: every sweep-NAME here)"
    )
    parser.add_argument("--site", action="store_true", help="print the cell's site as YAML")
    parser.set_defaults(handler=cmd_show)


def _add_report(actions: Any) -> None:
    parser = actions.add_parser("report", help="write the sweep report from stored rows")
    parser.add_argument("spec", metavar="SPEC", help="the sweep spec (YAML)")
    _add_out(parser)
    parser.add_argument("--to", metavar="DIR", help="where the report goes (default: OUT/report)")
    add_quiet(parser)
    parser.set_defaults(handler=cmd_report)


def _execution(args: argparse.Namespace) -> Execution:
    from queuesim.studies.sweep_run import Execution, JobQueue

    check_workers(args.workers)
    jobqueue = None
    if args.cluster is not None:
        if args.jobs < 1 or args.cores < 1:
            raise QueuesimError("--jobs and --cores expect at least 1")
        jobqueue = JobQueue(
            args.cluster,
            args.jobs,
            args.cores,
            args.memory,
            args.walltime,
            args.queue,
            args.account,
            tuple(args.prologue),
        )
    return Execution(args.workers, args.scheduler, jobqueue)


class _Bar:
    """Cells done / failed / running, cells per minute and the time left, in one line."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.progress = Progress(
            TextColumn("cells"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}  running {task.fields[running]}"),
            TextColumn("{task.fields[rate]} cells/min  ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task: Any = None
        self.started = time.monotonic()
        self.dashboard_shown = False

    def __call__(self, state: SweepProgress) -> None:
        if state.dashboard and not self.dashboard_shown:
            self.console.print(f"Dask dashboard: {state.dashboard}", highlight=False)
            self.dashboard_shown = True
        minutes = (time.monotonic() - self.started) / 60
        rate = f"{state.done / minutes:.1f}" if state.done and minutes > 0 else "-"
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task(
                "sweep", total=state.total, failed=0, running=0, rate="-"
            )
        self.progress.update(
            self.task, completed=state.done, failed=state.failed, running=state.running, rate=rate
        )

    def close(self) -> None:
        if self.task is not None:
            self.progress.stop()


def _sayer(console: Console, quiet: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if not quiet:
            console.print(text, highlight=False)

    return say


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from queuesim.studies.sweep import plan, run_plan
    from queuesim.studies.sweep_run import job_script

    execution = _execution(args)
    the_plan = plan(args.spec, args.out)
    say = _sayer(console, args.quiet)
    say(
        f"{the_plan.spec.name}: {len(the_plan.cells)} cells, {the_plan.skipped} already in "
        f"{the_plan.out}, {len(the_plan.todo)} to run"
    )
    if args.dry_run:
        if execution.jobqueue is not None:
            script = job_script(execution.jobqueue)
            console.print(script, highlight=False, markup=False, soft_wrap=True, end="")
        return 0
    bar = _Bar(console) if not args.quiet else None

    def connected(client: Any) -> None:
        say(f"[dim]Dask scheduler {client.scheduler.address}[/dim]")

    try:
        failed = run_plan(
            the_plan, execution, keep_jobs=args.keep_jobs, on_progress=bar, on_connect=connected
        )
    finally:
        if bar is not None:
            bar.close()
    if not args.no_report:
        _write_report(the_plan.spec, the_plan.cells, the_plan.out, None, say)
    if failed:
        raise QueuesimError(
            f"{failed} of {len(the_plan.todo)} cells failed; their errors are in the rows "
            f"(queuesim sweep show KEY --out {the_plan.out}); run again to retry them"
        )
    return 0


def _write_report(
    spec: Any, cells: Any, out: Path, to: Path | None, say: Callable[[str], None]
) -> None:
    from queuesim.reports.sweep_report import write_sweep_report
    from queuesim.studies.sweep import cell_table

    table = cell_table(cells, out)
    folder = to if to is not None else out / "report"
    write_sweep_report(folder, spec, table, out_hint=str(out))
    say(f"written: {folder / 'report.md'}, report.html, cells.csv and the figures")


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from queuesim.studies.sweep import plan

    the_plan = plan(args.spec, args.out)
    say = _sayer(console, args.quiet)
    _write_report(
        the_plan.spec, the_plan.cells, the_plan.out, Path(args.to) if args.to else None, say
    )
    return 0


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    import json

    import pandas as pd

    from queuesim.site.model import Site
    from queuesim.site.site_yaml import site_yaml
    from queuesim.studies.sweep_store import read_rows

    # without --out: every results folder sweep run made here by default (sweep-NAME)
    folders = (
        [Path(args.out)] if args.out else sorted(p.parent for p in Path().glob("sweep-*/cells"))
    )
    if not folders:
        raise QueuesimError("sweep show: no sweep-NAME folder here; give --out DIR")
    rows = pd.concat([read_rows(folder) for folder in folders], ignore_index=True)
    found = rows[rows["key"].str.startswith(args.cell)].drop_duplicates("key")
    if len(found) != 1:
        what = "no cell" if found.empty else f"{len(found)} cells"
        where = ", ".join(str(f) for f in folders)
        raise QueuesimError(f"{what} in {where} with a key starting {args.cell!r}")
    row = found.iloc[0]
    if args.site:
        site = Site.model_validate(json.loads(row["site"]))
        header = f"# the site of sweep cell {row['key']} (trace {row['trace']}"
        header += f", load factor {row['load_factor']:g})\n" if row["load_factor"] != 1 else ")\n"
        text = header + site_yaml(site)
        console.print(text, highlight=False, markup=False, soft_wrap=True, end="")
        return 0
    for name, value in row.items():
        if name != "site" and value == value:  # NaN: a column of another cell's queues
            console.print(f"{name}: {value}", highlight=False, markup=False)
    return 0
