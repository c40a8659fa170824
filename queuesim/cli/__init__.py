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
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from queuesim.common.errors import PolicyViolation, QueuesimError, QueuesimWarning
from queuesim.common.version import __version__

if TYPE_CHECKING:
    from queuesim.core.workload import CleaningOptions
    from queuesim.results.time_shared import DfrsMetrics

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
    from queuesim.core.workload import CleaningOptions, load_workload
    from queuesim.policies.registry import parse_params
    from queuesim.reports.summary import print_summary
    from queuesim.results.metrics import compute_metrics
    from queuesim.results.output import write_run
    from queuesim.results.time_shared import dfrs_metrics
    from queuesim.site.model import load_site
    from queuesim.studies.simulate import simulate

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
    dfrs = dfrs_metrics(result, tau=args.tau, bound=args.stretch_bound)
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
    if dfrs is not None:
        facts.update(_dfrs_facts(dfrs, len(workload.jobs)))
    if args.out:
        files = write_run(Path(args.out), result, metrics, dfrs=dfrs)
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


def _dfrs_facts(dfrs: DfrsMetrics, jobs: int) -> dict[str, str]:
    """Summary lines for a run on a DFRS-annotated workload."""
    from queuesim.results.time_shared import BOUND_MAX_JOBS

    facts = {"max stretch": f"{dfrs.max_stretch:,.4g} (bounded, tau {dfrs.stretch_tau:g} s)"}
    if dfrs.stretch_bound is None:
        facts["stretch bound"] = (
            f"not computed ({jobs:,} jobs; computed by default up to {BOUND_MAX_JOBS:,}, "
            "--stretch-bound forces it)"
        )
    else:
        facts["stretch bound"] = (
            f"{dfrs.stretch_bound:,.4g} (offline lower bound, paper 002; "
            f"{dfrs.bound_seconds or 0:.2f} s to compute)"
        )
        facts["degradation from bound"] = f"{dfrs.degradation_from_bound:,.4g}"
    facts["underutilization"] = f"{dfrs.underutilization:.4f} (normalised, paper 002 5.3.1)"
    facts["memory moved"] = (
        f"{dfrs.moved_memory_gb:,.1f} GB ({dfrs.bandwidth_gb_per_s:.3g} GB/s over the makespan)"
    )
    return facts


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.policies.registry import make_policy
    from queuesim.site.model import load_site

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

    from queuesim.policies.registry import known_policies, policy_class

    for name in known_policies():
        cls = policy_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        params = [f.name for f in dataclasses.fields(cls) if f.init]
        suffix = f"  [dim]params: {', '.join(params)}[/dim]" if params else ""
        console.print(f"[bold]{name}[/bold]  {doc}{suffix}", highlight=False)
    return 0


def _cleaning_options(args: argparse.Namespace) -> CleaningOptions:
    from queuesim.core.workload import CleaningOptions

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
    from queuesim.reports.bundle import check_bundle_target, write_bundle
    from queuesim.reports.terminal import print_comparison
    from queuesim.results.heatmap import parse_bin
    from queuesim.studies.compare import compare, setups_for

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
    from queuesim.reports.bundle import read_run_dir, write_heatmap_files
    from queuesim.reports.terminal import heatmap_renderable
    from queuesim.results.heatmap import parse_bin, wait_grid

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


def _facts(console: Console, facts: dict[str, str]) -> None:
    """Print key/value lines, keys in bold, values wrapped on their own column."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in facts.items():
        grid.add_row(key, value)
    console.print(grid, highlight=False)


def _output_file(option: str, path: Path) -> None:
    """Refuse an output file that cannot be written: a folder, or a path through a file
    (checked before any work is done; missing folders are created when writing)."""
    if path.is_dir():
        raise QueuesimError(f"{option} {path}: is a directory; give a file name inside it")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise QueuesimError(f"{option} {path}: {parent} is a file, not a directory")
            break


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def cmd_generate(args: argparse.Namespace, console: Console) -> int:
    from queuesim.site.units import format_duration
    from queuesim.traces import lublin
    from queuesim.traces.dfrs_annotation import (
        annotation_path,
        offered_node_load,
        write_synthetic_trace,
    )

    if args.nodes < 1:
        raise QueuesimError(f"--nodes expects a number of nodes >= 1, got {args.nodes}")
    if args.jobs < 1:
        raise QueuesimError(f"--jobs expects a number of jobs >= 1, got {args.jobs}")
    if args.node_cpus < 1:
        raise QueuesimError(f"--node-cpus expects a number of cores >= 1, got {args.node_cpus}")
    if args.seed < 0:
        raise QueuesimError(f"--seed expects an integer >= 0, got {args.seed}")
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
    out = Path(args.out)
    sidecar = annotation_path(out)
    _output_file("--out", out)
    _output_file("--out", sidecar)
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
    _facts(
        console,
        {
            "generated": f"{_count(len(frame), 'job')} of the Lublin-Feitelson model ({model}) "
            f"for {args.nodes:,} nodes x {args.node_cpus} cores, seed {args.seed}",
            "offered load": load,
            "time span": f"{format_duration(span)} ({span:,.0f} s from first to last submit)",
            "job sizes": f"{sequential:,} sequential (1 core), {len(frame) - sequential:,} "
            f"multi-threaded ({args.node_cpus} cores per task); the largest has "
            f"{_count(int(frame['tasks'].max()), 'task')}",
            "written": f"{out}, {sidecar}",
        },
    )
    return 0


def _host_ranges(hosts: Sequence[int]) -> str:
    """Sorted distinct hosts with runs collapsed: ``0-3, 7``."""
    values = sorted(set(hosts))
    parts: list[str] = []
    start = prev = values[0]
    for h in [*values[1:], None]:
        if h is not None and h == prev + 1:
            prev = h
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if h is not None:
            start = prev = h
    return ", ".join(parts)


def cmd_solve(args: argparse.Namespace, console: Console) -> int:
    import json

    import numpy as np
    from rich import box
    from rich.table import Table

    from queuesim.common.atomic import atomic_write_text
    from queuesim.common.errors import ConfigError
    from queuesim.policies.dfrs.instance import NoAllocationError, load_instance
    from queuesim.policies.dfrs.offline import known_algorithms, lp_bound, solve
    from queuesim.policies.dfrs.yields import YieldStep

    known = known_algorithms()
    name = args.algorithm.upper()
    if name not in known:
        raise ConfigError(
            f"--algorithm {args.algorithm}: unknown algorithm; known algorithms: "
            + ", ".join(known)
        )
    if args.seed < 0:
        raise QueuesimError(f"--seed expects an integer >= 0, got {args.seed}")
    out = Path(args.out) if args.out else None
    if out is not None:
        _output_file("--out", out)  # before a MILP that may run for minutes, not after
    instance = load_instance(args.instance)
    step = YieldStep(args.step)
    started = time.perf_counter()
    try:
        allocation = solve(instance, name, step=step, rng=np.random.default_rng(args.seed))
    except NoAllocationError as exc:
        raise NoAllocationError(f"{args.instance}: {exc}") from None
    seconds = time.perf_counter() - started
    bound = lp_bound(instance)

    per_job: list[list[int]] = [[] for _ in range(instance.n_jobs)]
    for job, host in zip(instance.task_job.tolist(), allocation.host.tolist(), strict=True):
        per_job[job].append(host)
    console.print(
        f"[bold]{name}[/bold] on {args.instance}: {instance.n_jobs} jobs, {instance.n_tasks} "
        f"tasks, {instance.hosts} hosts, yield step {step.value}",
        highlight=False,
        soft_wrap=True,
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("job")
    for column in ("tasks", "cpu need", "memory", "yield"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("hosts used")
    for i in range(instance.n_jobs):
        table.add_row(
            instance.names[i],
            str(int(instance.tasks[i])),
            f"{float(instance.cpu_need[i]):g}",
            f"{float(instance.memory[i]):g}",
            f"{float(allocation.yields[i]):.4f}",
            _host_ranges(per_job[i]),
        )
    console.print(table, highlight=False)
    facts = {
        "minimum yield": f"{allocation.min_yield:.4f}",
        "average yield": f"{allocation.average_yield:.4f}",
        "LP bound": f"{bound:.4f} (upper bound on the minimum yield)",
        "solve time": f"{seconds:.3f} s",
    }
    if out is not None:
        document = {
            "instance": str(args.instance),
            "algorithm": name,
            "step": step.value,
            "seed": args.seed,
            "hosts": instance.hosts,
            "min_yield": allocation.min_yield,
            "average_yield": allocation.average_yield,
            "lp_bound": bound,
            "jobs": [
                {
                    "name": instance.names[i],
                    "tasks": int(instance.tasks[i]),
                    "cpu_need": float(instance.cpu_need[i]),
                    "memory": float(instance.memory[i]),
                    "yield": float(allocation.yields[i]),
                    "hosts": per_job[i],
                }
                for i in range(instance.n_jobs)
            ],
        }
        try:
            atomic_write_text(out, json.dumps(document, indent=2) + "\n")
        except OSError as exc:
            raise QueuesimError(f"--out {out}: cannot write the result: {exc}") from None
        facts["written"] = str(out)
    _facts(console, facts)
    return 0


def cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from queuesim.studies.bench import run_bench

    return run_bench(args, console)


def cmd_import_machines(args: argparse.Namespace, console: Console) -> int:
    import shlex

    from queuesim.site.alea_machines import clusters_yaml, read_machine_file

    groups = read_machine_file(args.file, args.format)
    command = ["queuesim", "import-machines", str(args.file)]
    if args.format:
        command += ["--format", args.format]
    # Plain stdout, not the rich console: no markup, no wrapping of the YAML.
    sys.stdout.write(clusters_yaml(groups, args.file, command=shlex.join(command)))
    return 0


def cmd_study(args: argparse.Namespace, console: Console) -> int:
    if args.study == "dfrs":
        from queuesim.studies import dfrs as study_dfrs

        return study_dfrs.run_study_command(args, console)
    from queuesim.studies.dpsa import run_study_command

    return run_study_command(args, console)


def build_parser() -> argparse.ArgumentParser:
    from queuesim.studies.dfrs import add_arguments as add_dfrs_arguments

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
    bound = run.add_mutually_exclusive_group()
    bound.add_argument(
        "--stretch-bound",
        dest="stretch_bound",
        action="store_true",
        default=None,
        help="for a DFRS-annotated workload, compute the offline lower bound on the maximum "
        "stretch even for a long trace (by default up to 5,000 jobs)",
    )
    bound.add_argument(
        "--no-stretch-bound",
        dest="stretch_bound",
        action="store_false",
        help="do not compute the stretch bound (metrics.json then has null for it)",
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

    generate = sub.add_parser(
        "generate",
        help="write a synthetic trace with its DFRS annotation (lublin: Lublin-Feitelson)",
        description=textwrap.fill(
            "lublin: draw JOBS jobs from the Lublin-Feitelson model for a machine of NODES "
            "nodes, scale the inter-arrival times to the offered load LOAD (work in nodes over "
            "NODES x the submit span; unscaled without --load) and add the DFRS annotation of "
            "Stillwell, Vivien and Casanova (tasks, CPU need and memory per task). Writes OUT, "
            "an SWF trace whose processors are the cores a batch scheduler gives each job "
            "(1 for a sequential job, NODE_CPUS per task otherwise), and OUT.dfrs.csv, the "
            "annotation, both atomically. The same arguments always give the same bytes.",
            width=88,
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    generate.add_argument("model", choices=["lublin"], help="workload model")
    generate.add_argument("--nodes", type=int, required=True, help="nodes of the machine")
    generate.add_argument("--jobs", type=int, required=True, help="number of jobs")
    generate.add_argument(
        "--load", type=float, help="offered load in (0, 1], e.g. 0.7; default: unscaled"
    )
    generate.add_argument("--seed", type=int, required=True, help="random seed (an integer >= 0)")
    generate.add_argument(
        "--out", required=True, metavar="FILE", help="the SWF file to write (.swf or .swf.gz)"
    )
    generate.add_argument(
        "--node-cpus", type=int, default=4, metavar="N", help="cores per node (4)"
    )
    generate.add_argument(
        "--job-classes",
        action="store_true",
        help="draw interactive and batch jobs (queues 0 and 1) instead of one typeless class",
    )
    generate.set_defaults(handler=cmd_generate)

    solve = sub.add_parser(
        "solve",
        help="allocate an offline DFRS instance (hosts, jobs of tasks) with one algorithm",
        description=textwrap.fill(
            "Map every task of INSTANCE (a YAML or JSON file: hosts, and jobs with tasks, "
            "cpu_need and memory, each a fraction of a host; see "
            "workloads/dfrs-instance-example.yaml) to a host with ALGORITHM, set the yields "
            "with --step, and print every job's yield and hosts, the minimum and average "
            "yield, the LP upper bound on the minimum yield and the solve time. Algorithms: "
            "MCB1..MCB8, GR, SG, GB, SGB, RRND, RRNZ, MILP (exact, small instances only). "
            "A heuristic that finds no allocation exits with code 1.",
            width=88,
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    solve.add_argument("instance", metavar="INSTANCE", help="instance file (.yaml, .yml, .json)")
    solve.add_argument(
        "--algorithm", required=True, metavar="NAME", help="e.g. MCB8 (case-insensitive)"
    )
    solve.add_argument(
        "--step",
        choices=("avg", "min", "equal"),
        default="avg",
        help="how CPU left after maximising the minimum yield is shared: avg (maximise the "
        "average yield), min (iterated max-min) or equal (none); default avg",
    )
    solve.add_argument(
        "--seed", type=int, default=0, help="random seed of RRND and RRNZ (default 0)"
    )
    solve.add_argument("--out", metavar="FILE", help="write the allocation as JSON to FILE")
    solve.set_defaults(handler=cmd_solve)

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
        help="reproduce a paper's experiment (dpsa: paper 001; dfrs: papers 000 and 002)",
    )
    studies = study.add_subparsers(dest="study", metavar="STUDY", required=True)
    dpsa = studies.add_parser(
        "dpsa",
        help="EASY against DPSA's variants on the real traces (paper 001)",
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
    dpsa.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="NAME",
        help="trace file name or its start, e.g. KTH-SP2 (repeat); default: the seven above",
    )
    dpsa.add_argument(
        "--bound-ms", type=float, default=0.0, help="wall-time bound of one search, ms (0: none)"
    )
    dpsa.add_argument(
        "--bound-nodes",
        type=int,
        default=100_000,
        help="subsets one search may form (0: none); default 100000",
    )
    dpsa.add_argument(
        "--out",
        default="reports/dpsa",
        metavar="DIR",
        help="write study.md and study.csv here (reports/dpsa)",
    )
    dpsa.add_argument(
        "--estimate",
        choices=("requested", "exact"),
        help="runtime estimates for every site instead of the site files' own",
    )
    dpsa.add_argument("--workloads", metavar="DIR", help="folder of the real traces")
    dpsa.add_argument("--site-configs", metavar="DIR", help="folder of the site files")
    dpsa.add_argument(
        "--workers", type=int, metavar="N", help="processes; default: the local cores"
    )
    dpsa.add_argument("--quiet", action="store_true", help="print nothing but errors")
    dpsa.set_defaults(handler=cmd_study)
    dfrs = studies.add_parser(
        "dfrs",
        help="DFRS against batch scheduling: degradation from the stretch bound (papers 000, 002)",
        description=textwrap.fill(
            "Generate seeded Lublin-Feitelson traces per load level for 128 quad-core nodes "
            "and cut the first HPC2N weeks, compute each instance's offline lower bound on the "
            "maximum stretch (cached), replay every instance under FCFS, EASY and the DFRS "
            "algorithms with and without the rescheduling penalty in parallel, and write "
            "study.md (average, std and max degradation from bound and degradation factor), "
            "study.csv and degradation-vs-load.png into --out atomically.",
            width=88,
        ),
    )
    add_dfrs_arguments(dfrs)
    dfrs.set_defaults(handler=cmd_study)
    return parser


def _printer(errors: Console) -> Callable[..., None]:
    """Print a :class:`QueuesimWarning` (or any warning) as a one-line ``warning:``."""

    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        errors.print(f"[yellow]warning:[/yellow] {message}", highlight=False)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    errors = Console(stderr=True, soft_wrap=True)  # never split a path in a message
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", QueuesimWarning)
            warnings.showwarning = _printer(errors)
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
