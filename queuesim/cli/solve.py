"""``queuesim solve``: allocate an offline DFRS instance with one algorithm (paper 000)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from queuesim.cli.facts import print_facts
from queuesim.cli.options import add_out, check_out_file, check_seed, paragraph, subparser
from queuesim.common.errors import QueuesimError

HELP = "allocate an offline DFRS instance (hosts, jobs of tasks) with one algorithm"
DESCRIPTION = paragraph(
    """
    Map every task of INSTANCE (a YAML or JSON file: hosts, and jobs with tasks, cpu_need
    and memory, each a fraction of a host; see workloads/dfrs-instance-example.yaml) to a
    host with ALGORITHM, set the yields with --step, and print every job's yield and hosts,
    the minimum and average yield, the LP upper bound on the minimum yield and the solve
    time. Algorithms: MCB1..MCB8, GR, SG, GB, SGB, RRND, RRNZ, MILP (exact, small instances
    only). A heuristic that finds no allocation exits with code 1.
    """,
    fill=True,
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "solve", HELP, DESCRIPTION, examples=True)
    parser.add_argument("instance", metavar="INSTANCE", help="instance file (.yaml, .yml, .json)")
    parser.add_argument(
        "--algorithm", required=True, metavar="NAME", help="e.g. MCB8 (case-insensitive)"
    )
    parser.add_argument(
        "--step",
        choices=("avg", "min", "equal"),
        default="avg",
        help="how CPU left after maximising the minimum yield is shared: avg (maximise the "
        "average yield), min (iterated max-min) or equal (none); default avg",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="random seed of RRND and RRNZ (default 0)"
    )
    add_out(parser, "write the allocation as JSON to FILE", metavar="FILE")
    parser.set_defaults(handler=cmd_solve)


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
    check_seed(args.seed)
    out = Path(args.out) if args.out else None
    if out is not None:
        check_out_file("--out", out)  # before a MILP that may run for minutes, not after
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
    print_facts(console, facts)
    return 0
