"""The ``queuesim`` command line.

Exit codes: 0 success; 1 the simulation itself failed (a policy broke a rule: a bug);
2 bad input (site file, workload, policy name, arguments) with a one-paragraph message;
130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from queuesim import __version__
from queuesim.errors import PolicyViolation, QueuesimError

if TYPE_CHECKING:
    from queuesim.workload import CleaningOptions

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
"""


def _progress_callback(console: Console) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A progress callback that shows a bar only once a run has lasted a second."""
    started = time.perf_counter()
    state: dict[str, object] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if time.perf_counter() - started < 1.0 or done >= total:
                return
            bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("jobs submitted"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task("sim", total=total)
        shown = state["bar"]
        assert isinstance(shown, Progress)
        shown.update(state["task"], completed=done)  # type: ignore[arg-type]

    def close() -> None:
        bar = state.get("bar")
        if isinstance(bar, Progress):
            bar.stop()

    return update, close


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from queuesim.api import simulate
    from queuesim.metrics import compute_metrics
    from queuesim.output import write_run
    from queuesim.policy import parse_params
    from queuesim.site import load_site
    from queuesim.summary import print_summary
    from queuesim.workload import CleaningOptions, load_workload

    if not (math.isfinite(args.tau) and args.tau >= 0):
        raise QueuesimError(f"--tau expects a finite number of seconds >= 0, got {args.tau}")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise QueuesimError(f"--out {args.out}: exists and is not a directory")
    site = load_site(args.site, clusters=args.clusters)
    site = site.with_scheduler(args.policy, parse_params(args.param))
    options = CleaningOptions(
        skip_bad_lines=args.skip_bad_lines,
        drop_cancelled=args.drop_cancelled,
        reject_unrunnable=args.reject_unrunnable,
    )
    read_started = time.perf_counter()
    workload = load_workload(args.workload, site, options)
    read_seconds = time.perf_counter() - read_started
    update, close = _progress_callback(console)
    try:
        result = simulate(site, workload, progress=None if args.quiet else update)
    finally:
        close()
    metrics = compute_metrics(result.jobs, total_cpus=site.total_cpus, tau=args.tau)
    policy = result.policy
    if result.params:
        policy += " (" + ", ".join(f"{k}={v}" for k, v in sorted(result.params.items())) + ")"
    facts = {
        "site": f"{site.name} ({site.total_cpus} CPUs on {site.total_nodes} nodes)",
        "workload": f"{Path(args.workload).name} ({len(workload.jobs):,} jobs)",
        "policy": policy,
        "speed": f"{result.jobs_per_second:,.0f} jobs/s "
        f"(simulation {result.wall_seconds:.2f} s, reading {read_seconds:.2f} s)",
    }
    for name, value in sorted(result.counters.items()):
        facts[name.replace("_", " ")] = f"{value:,}"
    if args.out:
        files = write_run(Path(args.out), result, metrics)
        facts["written"] = ", ".join(str(f) for f in files)
    if not args.quiet:
        print_summary(
            console,
            title=f"queuesim {site.name} / {result.policy}",
            metrics=metrics,
            cleaning=workload.cleaning.counts,
            facts=facts,
        )
    return 0


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.policy import make_policy
    from queuesim.site import load_site

    failed = 0
    for path in args.sites:
        try:
            site = load_site(path)
            make_policy(site.scheduler.policy, site.scheduler.params)
        except QueuesimError as exc:
            failed += 1
            console.print(f"[red]✗[/red] {exc}", highlight=False)
            continue
        console.print(
            f"[green]✓[/green] {path}: site {site.name!r}, {len(site.clusters)} clusters, "
            f"{site.total_nodes} nodes, {site.total_cpus} CPUs, {len(site.queues)} queues, "
            f"policy {site.scheduler.policy}",
            highlight=False,
        )
    return 2 if failed else 0


def cmd_policies(args: argparse.Namespace, console: Console) -> int:
    import dataclasses

    from queuesim.policy import known_policies, policy_class

    for name in known_policies():
        cls = policy_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        params = [f.name for f in dataclasses.fields(cls) if f.init]
        suffix = f"  [dim]params: {', '.join(params)}[/dim]" if params else ""
        console.print(f"[bold]{name}[/bold]  {doc}{suffix}", highlight=False)
    return 0


def _cleaning_options(args: argparse.Namespace) -> CleaningOptions:
    from queuesim.workload import CleaningOptions

    return CleaningOptions(
        skip_bad_lines=args.skip_bad_lines,
        drop_cancelled=args.drop_cancelled,
        reject_unrunnable=args.reject_unrunnable,
    )


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
    for flag in ("skip_bad_lines", "drop_cancelled", "reject_unrunnable"):
        if getattr(args, flag):
            words.append("--" + flag.replace("_", "-"))
    return shlex.join(words)


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from queuesim.comparison import compare, setups_for
    from queuesim.heatmap import parse_bin
    from queuesim.render_terminal import print_comparison
    from queuesim.report import check_bundle_target, write_bundle

    if not (math.isfinite(args.tau) and args.tau >= 0):
        raise QueuesimError(f"--tau expects a finite number of seconds >= 0, got {args.tau}")
    if args.top < 0:
        raise QueuesimError(f"--top expects a number of users >= 0, got {args.top}")
    if args.workers is not None and args.workers < 1:
        raise QueuesimError(f"--workers expects at least 1, got {args.workers}")
    if args.out:
        check_bundle_target(Path(args.out))  # before minutes of simulation, not after
    spec = parse_bin(args.bin)  # a bad bin fails before minutes of simulation

    def announce(setups: int, workers: int) -> None:
        if not args.quiet:
            how = f"in {workers} processes" if workers > 1 else "one after the other"
            console.print(f"[dim]simulating {setups} setups {how}...[/dim]", highlight=False)

    comp = compare(
        setups_for(args.sites, args.policy, args.clusters),
        args.workload,
        baseline=args.baseline,
        cleaning=_cleaning_options(args),
        top=args.top,
        tau=args.tau,
        workers=args.workers,
        on_start=announce,
    )
    if args.out:
        write_bundle(args.out, comp, bin=spec, command=_compare_command(args))
    if not args.quiet:
        print_comparison(console, comp, grids=comp.heatmap(spec))
        if args.out:
            console.print(
                f"written: {Path(args.out) / 'report.md'}, report.html and the runs' files",
                highlight=False,
            )
    return 0


def cmd_heatmap(args: argparse.Namespace, console: Console) -> int:
    from queuesim.heatmap import parse_bin, wait_grid
    from queuesim.render_terminal import heatmap_renderable
    from queuesim.report import read_run_dir, write_heatmap_files

    spec = parse_bin(args.bin)
    run = read_run_dir(args.result_dir)
    grid = wait_grid(run.jobs, spec, queues=run.queues or None, clock=run.clock)
    grids = {run.name: grid}
    if args.out:
        if Path(args.out).exists() and not Path(args.out).is_dir():
            raise QueuesimError(f"--out {args.out}: exists and is not a directory")
        files = write_heatmap_files(Path(args.out), grids)
    console.print(heatmap_renderable(grids, console.width))
    if args.out:
        console.print("written: " + ", ".join(str(f) for f in files), highlight=False)
    return 0


def cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from queuesim.bench import run_bench

    return run_bench(args, console)


def cmd_import_machines(args: argparse.Namespace, console: Console) -> int:
    import shlex

    from queuesim.alea import clusters_yaml, read_machine_file

    groups = read_machine_file(args.file, args.format)
    command = ["queuesim", "import-machines", str(args.file)]
    if args.format:
        command += ["--format", args.format]
    # Plain stdout, not the rich console: no markup, no wrapping of the YAML.
    sys.stdout.write(clusters_yaml(groups, args.file, command=shlex.join(command)))
    return 0


def cmd_study(args: argparse.Namespace, console: Console) -> int:
    from queuesim.study_dpsa import run_study_command

    return run_study_command(args, console)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="queuesim",
        description="Replay a job trace against a site model and a scheduling policy, and "
        "report wait times, slowdowns, fairness and utilization.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"queuesim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="simulate one site on one workload and print the summary",
        description="Simulate SITE (a YAML site file) on WORKLOAD (an SWF trace, .gz read "
        "transparently). The policy is the site file's unless --policy is given. With --out, "
        "metrics.json, jobs.csv, schedule.swf and cleaning.csv are written there atomically.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("site", help="site file (YAML), e.g. site-configs/hpc2n.yaml")
    run.add_argument(
        "workload",
        help="trace: Standard Workload Format or Alea's extended SWF (.swf or .swf.gz)",
    )
    run.add_argument("--policy", help="scheduling policy (see `queuesim policies`)")
    run.add_argument(
        "--clusters",
        metavar="FILE",
        help="take the clusters from FILE (a clusters file, see site-configs/clusters/) "
        "instead of the site file's: the same setup on another machine",
    )
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="policy parameter; repeat for several",
    )
    run.add_argument("--out", metavar="DIR", help="write the result files into DIR")
    run.add_argument(
        "--tau", type=float, default=10.0, help="bounded slowdown threshold, seconds (10)"
    )
    run.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip malformed trace lines (counted in the report) instead of stopping",
    )
    run.add_argument(
        "--drop-cancelled",
        action="store_true",
        help="drop cancelled jobs even when they ran for a while (counted)",
    )
    run.add_argument(
        "--reject-unrunnable",
        action="store_true",
        help="reject jobs the site cannot run (too large, no queue) instead of stopping "
        "(counted and listed in cleaning.csv)",
    )
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    run.set_defaults(handler=cmd_run)

    validate = sub.add_parser(
        "validate",
        help="check site files and report every problem at once",
        description="Validate site files: every problem is reported with its key path.",
    )
    validate.add_argument("sites", nargs="+", help="site files (YAML)")
    validate.set_defaults(handler=cmd_validate)

    policies = sub.add_parser("policies", help="list the scheduling policies and parameters")
    policies.set_defaults(handler=cmd_policies)

    bench = sub.add_parser(
        "bench",
        help="time full real traces under each policy (jobs/s, peak memory)",
        description="Run each policy on full real traces, each run in a fresh process, and "
        "print jobs, wall seconds, jobs/s and peak memory. Traces are looked up in "
        "--workloads (default: ../shared/workloads beside the repository).",
    )
    bench.add_argument(
        "--trace",
        action="append",
        default=[],
        help="trace file name (repeat); default: HPC2N-2002 and SDSC-BLUE-2000",
    )
    bench.add_argument(
        "--policy",
        action="append",
        default=[],
        help="policy (repeat); default: fcfs, easy, conservative",
    )
    bench.add_argument("--workloads", metavar="DIR", help="folder of the real traces")
    bench.add_argument("--site-configs", metavar="DIR", help="folder of the site files")
    bench.set_defaults(handler=cmd_bench)

    compare = sub.add_parser(
        "compare",
        help="run one workload through several setups and compare them against a baseline",
        description=textwrap.fill(
            "Replay WORKLOAD through each SITE (its own policy), or through each SITE "
            "under each --policy (setups named site/policy), in parallel on the local cores. "
            "Prints, for every setup, AWWT, AWRT, AWSD, ANUWT, NUWT-dev, mean wait, mean bounded "
            "slowdown and utilization (best in bold green); against the baseline, the share of "
            "users and jobs whose wait improved or deteriorated and by how many hours on average "
            "(jobs matched by job id; paper 004, Table 2); the users who lost the most; and a "
            "heatmap of mean wait per queue and time bin. With --out, writes a report bundle: "
            "report.md, a self-contained report.html, the tables as CSV and JSON, the heatmaps "
            "as PNG, SVG and CSV, and each setup's run files.",
            width=88,
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("sites", nargs="+", metavar="SITE", help="site files (YAML)")
    compare.add_argument(
        "--workload",
        required=True,
        help="trace: Standard Workload Format or Alea's extended SWF (.swf[.gz])",
    )
    compare.add_argument(
        "--clusters",
        metavar="FILE",
        help="run every site on the clusters of FILE (a clusters file) instead of its own",
    )
    compare.add_argument(
        "--policy",
        action="append",
        default=[],
        help="compare this policy on every site (repeat for several); default: each site's own",
    )
    compare.add_argument(
        "--baseline",
        metavar="SETUP",
        help="the setup the others are measured against (a setup name, or a policy name "
        "when it picks one setup); default: the first",
    )
    compare.add_argument("--out", metavar="DIR", help="write the report bundle into DIR")
    compare.add_argument(
        "--top", type=int, default=5, metavar="N", help="users who lost the most to list (5)"
    )
    compare.add_argument(
        "--bin",
        default="day",
        help="heatmap time bin: day, week, or a width in seconds or as a duration "
        "(e.g. 21600 or 6h); default: day",
    )
    compare.add_argument(
        "--tau", type=float, default=10.0, help="bounded slowdown threshold, seconds (10)"
    )
    compare.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes to run setups in; default: min(setups, CPU cores)",
    )
    compare.add_argument(
        "--skip-bad-lines", action="store_true", help="skip malformed trace lines (counted)"
    )
    compare.add_argument(
        "--drop-cancelled", action="store_true", help="drop cancelled jobs that ran (counted)"
    )
    compare.add_argument(
        "--reject-unrunnable",
        action="store_true",
        help="reject jobs a site cannot run instead of stopping (counted); jobs are then "
        "compared only where both setups ran them",
    )
    compare.add_argument("--quiet", action="store_true", help="print nothing but errors")
    compare.set_defaults(handler=cmd_compare)

    heatmap = sub.add_parser(
        "heatmap",
        help="mean wait per queue and time bin of a saved run",
        description="Draw the heatmap of mean wait (minutes) per queue and time bin, by "
        "submit time, of RESULT_DIR (written by `queuesim run --out` or a setup folder of "
        "`queuesim compare --out`). With --out, also write heatmap.png, heatmap.svg and "
        "heatmap.csv there.",
    )
    heatmap.add_argument("result_dir", metavar="RESULT_DIR", help="a saved run's folder")
    heatmap.add_argument(
        "--bin",
        default="day",
        help="day, week, or a width in seconds or as a duration (e.g. 6h); default: day",
    )
    heatmap.add_argument("--out", metavar="DIR", help="write the heatmap files into DIR")
    heatmap.set_defaults(handler=cmd_heatmap)

    import_machines = sub.add_parser(
        "import-machines",
        help="print the clusters of an Alea machine file as a site file's clusters: section",
        description="Read an Alea machine description and print it as the clusters: section "
        "of a site file (YAML, with comments saying where each number came from), ready to "
        "paste into a site file. FILE is an Alea or AleaNG .machines file (6 or 8 columns) or "
        "an Alea .mwf machine description (MetaCentrum 2009); the format is taken from the "
        "file name unless --format says it.",
    )
    import_machines.add_argument("file", metavar="FILE", help="the machine file")
    import_machines.add_argument(
        "--format",
        choices=("machines", "mwf"),
        help="machines: Alea/AleaNG .machines; mwf: Alea .mwf; default: from FILE's suffix",
    )
    import_machines.set_defaults(handler=cmd_import_machines)

    study = sub.add_parser(
        "study",
        help="reproduce a paper's experiment on the real traces (dpsa: paper 001)",
        description=textwrap.fill(
            "dpsa: replay the real traces (default: SDSC-SP2-1998, SDSC-Par-1996, "
            "LLNL-Thunder-2007, LLNL-Atlas-2006, HPC2N-2002, KTH-SP2, CTC-SP2, from --workloads) "
            "on their site files under EASY and under DPSA's variants p, n and w, in parallel "
            "on the local cores, and report per trace the change in mean bounded slowdown and "
            "mean wait against EASY, the utilization, each run's time and how often the search "
            "bound was hit. Writes study.md and study.csv into --out atomically.",
            width=88,
        ),
    )
    study.add_argument("study", choices=["dpsa"], help="which study (dpsa: paper 001)")
    study.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="NAME",
        help="trace file name or its start, e.g. KTH-SP2 (repeat); default: the seven above",
    )
    study.add_argument(
        "--bound-ms", type=float, default=0.0, help="wall-time bound of one search, ms (0: none)"
    )
    study.add_argument(
        "--bound-nodes",
        type=int,
        default=100_000,
        help="subsets one search may form (0: none); default 100000",
    )
    study.add_argument(
        "--out",
        default="reports/dpsa",
        metavar="DIR",
        help="write study.md and study.csv here (reports/dpsa)",
    )
    study.add_argument(
        "--estimate",
        choices=("requested", "exact"),
        help="runtime estimates for every site instead of the site files' own",
    )
    study.add_argument("--workloads", metavar="DIR", help="folder of the real traces")
    study.add_argument("--site-configs", metavar="DIR", help="folder of the site files")
    study.add_argument(
        "--workers", type=int, metavar="N", help="processes; default: the local cores"
    )
    study.add_argument("--quiet", action="store_true", help="print nothing but errors")
    study.set_defaults(handler=cmd_study)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    errors = Console(stderr=True, soft_wrap=True)  # never split a path in a message
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args, console)
        return code
    except QueuesimError as exc:
        errors.print(f"[red]error:[/red] {exc}", highlight=False)
        return exc.exit_code
    except PolicyViolation as exc:
        errors.print(f"[red]policy error:[/red] {exc}", highlight=False)
        return 1
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
