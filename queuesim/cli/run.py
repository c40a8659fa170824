"""``queuesim run``: simulate one site on one workload and print the summary."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.options import (
    add_cleaning,
    add_clusters,
    add_jobs_format,
    add_kernels,
    add_out,
    add_params,
    add_quiet,
    add_tau,
    check_out_dir,
    check_tau,
    cleaning_options,
    paragraph,
    subparser,
)

HELP = "simulate one site on one workload and print the summary"
DESCRIPTION = paragraph(
    """
    Simulate SITE (a YAML site file) on WORKLOAD (an SWF trace, .gz read transparently). The
    policy is the site file's unless --policy is given. With --out, metrics.json, the job
    table (jobs.parquet, or jobs.csv with --jobs-format csv), schedule.swf, cleaning.csv,
    queues.csv and users.csv are written there atomically.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "run", HELP, DESCRIPTION, examples=True)
    parser.add_argument("site", help="site file (YAML), e.g. site-configs/hpc2n.yaml")
    parser.add_argument(
        "workload",
        help="trace: Standard Workload Format or Alea's extended SWF (.swf or .swf.gz)",
    )
    parser.add_argument("--policy", help="scheduling policy (see `queuesim policies`)")
    add_clusters(
        parser,
        "take the clusters from FILE (a clusters file, see site-configs/clusters/) "
        "instead of the site file's: the same setup on another machine",
    )
    add_params(parser)
    add_out(parser, "write the result files into DIR")
    add_jobs_format(parser)
    add_tau(parser)
    add_cleaning(
        parser,
        skip="skip malformed trace lines (counted in the report) instead of stopping",
        drop="drop cancelled jobs even when they ran for a while (counted)",
        reject="reject jobs the site cannot run (too large, no queue) instead of stopping "
        "(counted and listed in cleaning.csv)",
    )
    bound = parser.add_mutually_exclusive_group()
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
    parser.add_argument(
        "--top",
        type=int,
        default=5,
        metavar="N",
        help="show the N users who waited most per CPU-second consumed (default 5; 0: none)",
    )
    add_kernels(parser)
    add_quiet(parser)
    parser.set_defaults(handler=cmd_run)


def _kernels_fact(mode: str, seconds: float, compiled_now: bool) -> str:
    """How the kernels ran, for the summary's speed line."""
    if mode == "interpreted":
        return "kernels interpreted: not compiled yet, see --kernels"
    if compiled_now:
        return f"kernels {seconds:.2f} s - compiled on this first run, cached for the next"
    return f"kernels {seconds:.2f} s"


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from queuesim.core.workload import load_workload
    from queuesim.policies.registry import parse_params
    from queuesim.reports.summary import metric_facts, print_summary
    from queuesim.results.metrics import compute_metrics
    from queuesim.results.output import breakdowns, write_run
    from queuesim.results.registry import MetricOptions, extra_metrics
    from queuesim.site.loading import load_site
    from queuesim.studies.simulate import simulate

    check_tau(args.tau)
    if args.out:
        check_out_dir(args.out)
    site = load_site(args.site, clusters=args.clusters)
    site = site.with_scheduler(args.policy, parse_params(args.param))
    options = cleaning_options(args)
    read_started = time.perf_counter()
    workload = load_workload(args.workload, site, options)
    read_seconds = time.perf_counter() - read_started
    from queuesim.reports.progress import RunProgress

    shown = RunProgress(console)
    update = shown.for_trace("simulating", workload.jobs["submit"].to_numpy())
    # numba compiles the kernels on the first run only (then loads them from its cache)
    with shown:
        result = simulate(
            site,
            workload,
            progress=None if args.quiet else update,
            kernels=args.kernels,
            on_compile=None
            if args.quiet
            else lambda: console.print(
                "compiling simulation kernels (first run only) ...", highlight=False
            ),
        )
    metrics = compute_metrics(result.jobs, total_cpus=site.total_cpus, tau=args.tau)
    extras = extra_metrics(result, MetricOptions(tau=args.tau, bounds=args.stretch_bound))
    policy = result.policy
    if result.params:
        policy += " (" + ", ".join(f"{k}={v}" for k, v in sorted(result.params.items())) + ")"
    facts = {
        "site": f"{site.name} ({site.total_cpus} CPUs on {site.total_nodes} nodes)",
        "workload": f"{Path(args.workload).name} ({len(workload.jobs):,} jobs)",
        "policy": policy,
        "speed": f"{result.jobs_per_second:,.0f} jobs/s "
        f"(simulation {result.wall_seconds:.2f} s, reading {read_seconds:.2f} s, "
        + _kernels_fact(result.kernels, result.compile_seconds, result.compiled_now)
        + ")",
    }
    for name, value in sorted(result.counters.items()):
        facts[name.replace("_", " ")] = f"{value:,}"
    facts.update(metric_facts(extras))
    breakdown = breakdowns(result, metrics) if args.out or not args.quiet else None
    if args.out:
        files = write_run(
            Path(args.out),
            result,
            metrics,
            jobs_format=args.jobs_format,
            extras=extras,
            breakdown=breakdown,
        )
        facts["written"] = ", ".join(str(f) for f in files)
    if breakdown is not None and not args.quiet:
        queues, users = breakdown
        print_summary(
            console,
            title=f"queuesim {site.name} / {result.policy}",
            metrics=metrics,
            cleaning=workload.cleaning.counts,
            cleaning_detail=workload.cleaning.detail(),
            facts=facts,
            queues=queues,
            users=users,
            top=args.top,
            not_modelled=[(n.setting, n.value, n.source) for n in site.not_modelled],
        )
    return 0
