"""``queuesim study dpsa``: paper ``001``'s experiment, EASY against DPSAp, DPSAn and DPSAw.

The paper replays Parallel Workloads Archive traces under EASY backfilling and under each
DPSA variant and reports, per trace, the change in average (bounded) slowdown of each variant
relative to EASY (its Fig. 3), and relates DPSAn's gain to the trace's utilization (its
Fig. 4). This module runs the same comparison on the traces in ``../shared/workloads`` with
the site files of ``site-configs/`` (:mod:`queuesim.studies.real_traces`), in parallel on the
local cores, and writes ``study.csv`` and the report (:mod:`.dpsa_report`) as ``study.md``
and ``study.html`` atomically.

Reported per trace: the utilization (EASY's run: CPU-seconds used over CPUs x makespan,
:mod:`~.results.metrics`), EASY's mean bounded slowdown (tau = 10 s) and mean wait, the change
of each variant's against EASY in percent, each run's simulation time (reading the trace
excluded; runs share the machine with one another), DPSA's searches and how many of them hit
the bound. The comparison with the paper's findings is written from the numbers.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console

from queuesim.common import bundled
from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.reports.document import Report
from queuesim.reports.progress import TaskProgress
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.reports.render_text import print_report
from queuesim.studies.dpsa_report import BASELINE, SHORT, TAU, VARIANTS, study_report
from queuesim.studies.real_traces import TraceSpec, resolve_traces

#: the paper's traces that are in ../shared/workloads (its SDSC-Par-1995 is not)
DEFAULT_TRACES = (
    "SDSC-SP2-1998-4.2-cln.swf.gz",
    "SDSC-Par-1996-3.1-cln.swf.gz",
    "LLNL-Thunder-2007-1.1-cln.swf.gz",
    "LLNL-Atlas-2006-2.1-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
)
#: the study's default bound: never reached on the default traces (the largest search
#: there forms about 23,000 subsets), so the results are the exhaustive search's, as in
#: the paper, while a pathological pass still costs at most a few milliseconds
DEFAULT_BOUND_NODES = 100_000


@dataclass(frozen=True)
class PolicySpec:
    """One policy of the study, as labelled in the tables."""

    label: str
    policy: str
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class RunFigures:
    """What one (trace, policy) run contributes to the study."""

    trace: str
    policy: str
    jobs: int
    cpus: int
    mean_bounded_slowdown: float
    #: mean bounded slowdown of the jobs that ran less than :data:`SHORT`, and of the others
    bsld_short: float
    bsld_other: float
    short_share: float  #: share of the jobs that are short
    mean_wait: float
    utilization: float
    sim_seconds: float
    passes: int
    searches: int
    bound_hits: int
    pool_misfits: int


def study_policies(bound_ms: float, bound_nodes: int) -> list[PolicySpec]:
    """EASY, then DPSA's three variants under the given bounds."""
    bounds = (("bound_ms", bound_ms), ("bound_nodes", bound_nodes))
    return [PolicySpec(BASELINE, "easy")] + [
        PolicySpec(f"DPSA{v}", "dpsa", (("variant", v), *bounds)) for v in VARIANTS
    ]


def run_one(trace: TraceSpec, policy: PolicySpec, estimate: str | None = None) -> RunFigures:
    """Simulate one trace under one policy (module level: worker processes run it), with
    the site file's runtime estimates or, given ``estimate``, that source instead."""
    from queuesim.core.workload import load_workload
    from queuesim.results.metrics import compute_metrics
    from queuesim.site.loading import load_site
    from queuesim.site.model import Site
    from queuesim.studies.simulate import simulate

    site = load_site(trace.site).with_scheduler(policy.policy, dict(policy.params))
    if estimate is not None:
        site = Site.model_validate({**site.model_dump(mode="json"), "estimate": estimate})
    workload = load_workload(trace.workload, site)
    result = simulate(site, workload)
    metrics = compute_metrics(result.jobs, total_cpus=site.total_cpus, tau=TAU)
    runtime = result.jobs["runtime"].to_numpy()
    wait = result.jobs["wait"].to_numpy()
    bsld = np.maximum(1.0, (wait + runtime) / np.maximum(runtime, TAU))  # as in metrics.py
    short = runtime < SHORT
    counters = result.counters
    return RunFigures(
        trace=trace.name,
        policy=policy.label,
        jobs=metrics.jobs,
        cpus=site.total_cpus,
        mean_bounded_slowdown=metrics.mean_bounded_slowdown,
        bsld_short=float(bsld[short].mean()) if short.any() else math.nan,
        bsld_other=float(bsld[~short].mean()) if (~short).any() else math.nan,
        short_share=float(short.mean()),
        mean_wait=metrics.mean_wait,
        utilization=metrics.utilization,
        sim_seconds=result.wall_seconds,
        passes=result.passes,
        searches=counters.get("dpsa_searches", 0),
        bound_hits=counters.get("dpsa_bound_hit", 0),
        pool_misfits=counters.get("dpsa_pool_misfit", 0),
    )


def run_study(
    traces: Sequence[TraceSpec],
    policies: Sequence[PolicySpec],
    *,
    workers: int | None = None,
    estimate: str | None = None,
    on_done: Callable[[RunFigures], None] | None = None,
) -> list[RunFigures]:
    """Every policy on every trace, in ``workers`` processes (default: the local cores),
    largest traces first so the processes finish together; ``estimate`` overrides the
    site files' runtime estimates. Returns the figures in (trace, policy) order whatever
    order the runs finish in."""
    from queuesim.policies.dpsa import warm_up

    warm_up()  # fill numba's cache once, before the workers load it
    tasks = [(t, p) for t in traces for p in policies]
    workers = min(len(tasks), workers or os.cpu_count() or 1)
    by_size = sorted(
        range(len(tasks)),
        key=lambda k: (-tasks[k][0].workload.stat().st_size, tasks[k][1].policy == "easy", k),
    )
    results: dict[int, RunFigures] = {}
    if workers <= 1:
        for k in by_size:
            results[k] = run_one(*tasks[k], estimate)
            if on_done:
                on_done(results[k])
    else:
        context = get_context("fork") if sys.platform.startswith("linux") else get_context()
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            pending: dict[Future[RunFigures], int] = {
                pool.submit(run_one, *tasks[k], estimate): k for k in by_size
            }
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        k = pending.pop(future)
                        results[k] = future.result()
                        if on_done:
                            on_done(results[k])
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    return [results[k] for k in range(len(tasks))]


# --- tables -------------------------------------------------------------------------------


def study_frame(figures: Sequence[RunFigures]) -> pd.DataFrame:
    """One row per (trace, policy), with the changes against EASY's run of the trace in
    percent (``d_bsld_pct``, ``d_wait_pct``: negative is better)."""
    frame = pd.DataFrame([asdict(f) for f in figures])
    base = frame[frame["policy"] == BASELINE].set_index("trace")
    if len(base) != frame["trace"].nunique():
        raise ValueError("every trace of the study needs an EASY run")
    for column, out in (("mean_bounded_slowdown", "d_bsld_pct"), ("mean_wait", "d_wait_pct")):
        reference = frame["trace"].map(base[column])
        frame[out] = 100.0 * (frame[column] - reference) / reference
    return frame


# --- running it ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyOptions:
    """What ``queuesim study dpsa`` runs, its values checked: the traces (full file names
    or their starts, see :func:`resolve_traces`; none: :data:`DEFAULT_TRACES`), DPSA's
    search bounds, the runtime estimates (None: each site file's own), where the traces
    and site files are, and how many processes run (None: the local cores)."""

    traces: tuple[str, ...] = ()
    bound_ms: float = 0.0
    bound_nodes: int = DEFAULT_BOUND_NODES
    estimate: str | None = None
    workloads: Path = Path("..", "shared", "workloads")
    site_configs: Path = field(default_factory=bundled.site_configs_folder)
    workers: int | None = None


def write_study(out: Path, frame: pd.DataFrame, report: Report) -> list[Path]:
    """``study.md``, ``study.html`` and ``study.csv`` in ``out``, each written atomically."""
    csv = out / "study.csv"
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n")
    md, page = out / "study.md", out / "study.html"
    atomic_write_text(md, to_markdown(report))
    atomic_write_text(page, to_html(report))
    return [md, page, csv]


def run_and_write(
    options: StudyOptions, out: Path, *, command: str, console: Console, quiet: bool
) -> None:
    """Run the study with a progress bar (none when ``quiet``), write ``study.md`` and
    ``study.html`` (quoting ``command``) and ``study.csv`` into ``out``, and print the
    report (nothing when ``quiet``)."""
    traces = resolve_traces(
        options.traces or DEFAULT_TRACES, options.workloads, options.site_configs
    )
    policies = study_policies(options.bound_ms, options.bound_nodes)
    shown = TaskProgress(console, "runs", len(traces) * len(policies))

    def progress(fig: RunFigures) -> None:
        shown.finished(f"{fig.trace} / {fig.policy}: {fig.sim_seconds:.1f} s")

    started = time.perf_counter()
    with shown:
        figures = run_study(
            traces,
            policies,
            workers=options.workers,
            estimate=options.estimate,
            on_done=None if quiet else progress,
        )
    minutes = (time.perf_counter() - started) / 60
    workers = min(len(traces) * len(policies), options.workers or os.cpu_count() or 1)
    processes = "1 process" if workers == 1 else f"{workers} processes"
    elapsed = f"{minutes:.1f} min in {processes} on {os.cpu_count()} cores"
    default = [t.workload.name for t in traces] == list(DEFAULT_TRACES) and not options.estimate
    frame = study_frame(figures).assign(
        bound_ms=options.bound_ms,
        bound_nodes=options.bound_nodes,
        estimate=options.estimate or "site",
    )
    report = study_report(
        frame,
        command=command,
        bound_ms=options.bound_ms,
        bound_nodes=options.bound_nodes,
        elapsed=elapsed,
        estimate=options.estimate,
        # written from the default study's numbers: it would not fit another study
        discussion=default,
    )
    files = write_study(out, frame, report)
    if not quiet:
        print_report(console, report)
        console.print("written: " + ", ".join(str(f) for f in files), highlight=False)
