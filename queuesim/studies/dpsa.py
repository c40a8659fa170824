"""``queuesim study dpsa``: paper ``001``'s experiment, EASY against DPSAp, DPSAn and DPSAw.

The paper replays Parallel Workloads Archive traces under EASY backfilling and under each
DPSA variant and reports, per trace, the change in average (bounded) slowdown of each variant
relative to EASY (its Fig. 3), and relates DPSAn's gain to the trace's utilization (its
Fig. 4). This module runs the same comparison on the traces in ``../shared/workloads`` with
the site files of ``site-configs/`` (:mod:`queuesim.studies.real_traces`), in parallel on the
local cores, and writes ``study.md`` and ``study.csv`` atomically.

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
from rich.table import Table

from queuesim.common import bundled
from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.studies.provenance import regenerate_lines
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
TAU = 10.0
#: changes within this many percent count as no change in the comparison with the paper
SAME = 0.05
#: jobs that ran less than this (seconds) are "short" in the split of the slowdown
SHORT = 600.0
VARIANTS = ("p", "n", "w")
BASELINE = "EASY"


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


_ESTIMATES = {
    "": "the scheduler plans with the requested walltimes, or with the runtime where a trace "
    "gives none",
    "exact": "`--estimate exact`: the scheduler plans with every job's real runtime",
    "requested": "the scheduler plans with the requested walltimes, or with the runtime where "
    "a trace gives none",
}


def _pct(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    if x != 0 and abs(x) < 0.01:
        return f"{x:+.3f} %"
    return f"{x:+.2f} %" if abs(x) < 1 else f"{x:+.1f} %"


def _cell(frame: pd.DataFrame, trace: str, policy: str, column: str) -> Any:
    row = frame[(frame["trace"] == trace) & (frame["policy"] == policy)]
    return row[column].iloc[0]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], right_from: int = 1) -> str:
    align = ["---" if k < right_from else "---:" for k in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _bound_text(bound_ms: float, bound_nodes: int) -> str:
    parts = []
    if bound_nodes > 0:
        parts.append(f"{bound_nodes:,} subsets formed per search")
    if bound_ms > 0:
        parts.append(f"{bound_ms:g} ms of wall time per search")
    return " or ".join(parts) if parts else "none (exhaustive search)"


def _variants(frame: pd.DataFrame) -> list[str]:
    return [f"DPSA{v}" for v in VARIANTS if f"DPSA{v}" in set(frame["policy"])]


def findings(frame: pd.DataFrame) -> list[str]:
    """The paper's conclusions (section IV of ``001``), each set against this run's numbers."""
    traces = list(dict.fromkeys(frame["trace"]))
    n = len(traces)

    def changes(label: str) -> dict[str, float]:
        return {t: float(_cell(frame, t, label, "d_bsld_pct")) for t in traces}

    def tally(d: dict[str, float]) -> str:
        better = sum(x < -SAME for x in d.values())
        worse = sum(x > SAME for x in d.values())
        equal = f", within {SAME:g} % on {n - better - worse}" if n - better - worse else ""
        low, high = min(d, key=d.__getitem__), max(d, key=d.__getitem__)
        return (
            f"better than EASY on {better} of {n} traces, worse on {worse}{equal}; "
            f"change from {_pct(d[low])} ({low}) to {_pct(d[high])} ({high})"
        )

    out = []
    present = set(frame["policy"])
    if "DPSAw" in present:
        out.append(
            "**DPSAw** - paper: always worse than EASY, by up to +145 % in mean slowdown. "
            f"Here: {tally(changes('DPSAw'))}."
        )
    if "DPSAp" in present:
        out.append(
            "**DPSAp** - paper: better on half of the machines (-1 % to -8 %), worse on the "
            f"others, by up to +17 % on LLNL-Thunder-2007. Here: {tally(changes('DPSAp'))}."
        )
    if "DPSAn" in present:
        d = changes("DPSAn")
        util = {t: float(_cell(frame, t, BASELINE, "utilization")) for t in traces}
        text = (
            "**DPSAn** - paper: the only variant better than EASY on every machine, from "
            "-0.3 % (LLNL-Atlas-2006) to -40 % (LLNL-Thunder-2007), with gains that grow "
            f"with utilization. Here: {tally(d)}."
        )
        if n >= 3:
            x = np.array([util[t] for t in traces])
            y = np.array([d[t] for t in traces])
            by_util = sorted(traces, key=util.__getitem__)
            if x.std() > 0 and y.std() > 0:
                r = float(np.corrcoef(x, y)[0, 1])
                text += (
                    f" Pearson correlation between utilization and the change: {r:+.2f} "
                    "(negative: larger gains on busier machines). By utilization: "
                    + ", ".join(f"{t} {util[t]:.0%}: {_pct(d[t])}" for t in by_util)
                    + "."
                )
        out.append(text)
    return out


def render_markdown(
    frame: pd.DataFrame,
    *,
    command: str,
    bound_ms: float,
    bound_nodes: int,
    elapsed: str,
    estimate: str | None = None,
    discussion: str | None = None,
) -> str:
    """``study.md``: setup, the regenerating command, the tables, the comparison (and the
    ``discussion``, when given); ``estimate``: the runtime estimates' override, if any."""
    traces = list(dict.fromkeys(frame["trace"]))
    variants = _variants(frame)
    policies = [BASELINE, *variants]
    lines = [
        "# DPSA against EASY on the Parallel Workloads Archive traces",
        "",
        "Paper `001` (DPSA: EASY's reservation for the first waiting job, then the subset of "
        "the other waiting jobs that fills the most free CPUs now) replayed on the real "
        "traces of `../shared/workloads/` with their site files in `site-configs/` ("
        + _ESTIMATES.get(estimate or "", f"runtime estimates: `{estimate}`")
        + "; jobs that outran their request keep their real runtimes; FCFS priority order). "
        f"Mean bounded slowdown with tau = {TAU:g} s; changes are against EASY on the same "
        "trace, negative is better.",
        "",
        f"Search bound: {_bound_text(bound_ms, bound_nodes)}.",
        "",
        *regenerate_lines(elapsed, command),
        "## Change against EASY",
        "",
    ]
    header = ["trace", "jobs", "CPUs", "utilization", "EASY bsld", "EASY wait (s)"]
    header += [f"{v} bsld" for v in variants] + [f"{v} wait" for v in variants]
    rows = []
    for t in traces:
        row = [
            t,
            f"{int(_cell(frame, t, BASELINE, 'jobs')):,}",
            f"{int(_cell(frame, t, BASELINE, 'cpus')):,}",
            f"{_cell(frame, t, BASELINE, 'utilization'):.1%}",
            f"{_cell(frame, t, BASELINE, 'mean_bounded_slowdown'):.2f}",
            f"{_cell(frame, t, BASELINE, 'mean_wait'):,.0f}",
        ]
        row += [_pct(_cell(frame, t, v, "d_bsld_pct")) for v in variants]
        row += [_pct(_cell(frame, t, v, "d_wait_pct")) for v in variants]
        rows.append(row)
    lines += [_md_table(header, rows), ""]
    lines += [
        "## Short jobs and the others",
        "",
        f"Mean bounded slowdown of the jobs that ran less than {SHORT / 60:g} minutes "
        "(short) and of the others, per policy.",
        "",
    ]
    header = ["trace", "short jobs"]
    header += [f"{p} short" for p in policies] + [f"{p} others" for p in policies]
    rows = []
    for t in traces:
        easy = frame[(frame["trace"] == t) & (frame["policy"] == BASELINE)]
        share = float(easy["short_share"].iloc[0])
        row = [t, f"{share:.0%}"]
        row += [f"{_cell(frame, t, p, 'bsld_short'):.2f}" for p in policies]
        row += [f"{_cell(frame, t, p, 'bsld_other'):.2f}" for p in policies]
        rows.append(row)
    lines += [_md_table(header, rows), ""]
    lines += [
        "## Run time and search bound",
        "",
        "Simulation seconds per run (reading the trace excluded; two runs share the machine "
        "at a time), and for DPSA the searches made and how many the bound stopped.",
        "",
    ]
    header = ["trace", *(f"{p} s" for p in policies)]
    header += [f"{v} searches" for v in variants] + [f"{v} bound hits" for v in variants]
    rows = []
    for t in traces:
        row = [t] + [f"{_cell(frame, t, p, 'sim_seconds'):.1f}" for p in policies]
        row += [f"{int(_cell(frame, t, v, 'searches')):,}" for v in variants]
        row += [f"{int(_cell(frame, t, v, 'bound_hits')):,}" for v in variants]
        rows.append(row)
    lines += [_md_table(header, rows), ""]
    misfits = int(frame["pool_misfits"].sum())
    lines += [
        f"Chosen jobs that did not fit at pool level (`dpsa_pool_misfit`): {misfits:,} "
        "(every machine here is one pool of CPUs, where the search's totals are exact).",
        "",
        "## Against the paper's findings",
        "",
    ]
    lines += [f"* {f}" for f in findings(frame)]
    if discussion:
        lines += ["", discussion.strip()]
    lines.append("")
    return "\n".join(lines)


def write_study(out: Path, frame: pd.DataFrame, markdown: str) -> list[Path]:
    """``study.csv`` and ``study.md`` in ``out``, each written atomically."""
    csv = out / "study.csv"
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n")
    md = out / "study.md"
    atomic_write_text(md, markdown)
    return [md, csv]


# --- the discussion, written from the default study's results ------------------------------
#
# The numbers it quotes come from this report's tables and its companion with exact
# estimates; those for HPC2N's quarters and LLNL-Thunder's jobs per search from the same
# runs, split by submit quarter and counted per search. A change in the policy that moves
# them must update this text.

DISCUSSION = """
### Reading the results against the paper

**What agrees.** The paper's ranking of the variants holds: DPSAn (smallest jobs first)
is the variant that helps, DPSAw (widest first) the one that hurts, and DPSAp, which keeps
the priority order among equally full subsets, goes either way. LLNL-Thunder-2007 is the
extreme for all three, as in the paper: DPSAn -54 % (paper -40 %), DPSAp +11.6 % (paper
+17 %), DPSAw +153 % (paper: up to +145 %). LLNL-Atlas-2006 barely moves (paper: -0.3 % for
DPSAn): its queue is nearly always empty, so DPSA searches in about 120 of 33,000 passes,
with one or two eligible jobs. DPSAn's gains are largest on the busiest machines
(LLNL-Thunder, CTC-SP2), with SDSC-Par and SDSC-SP2 off the line, which are the traces the
paper singles out as anomalies of its Fig. 4.

**Where the gain comes from.** The variants fill the same number of CPUs at every search
(they differ in ties only) and start about as many jobs per search (on LLNL-Thunder 1.10,
1.13 and 1.14 for p, n and w), so what differs is *which* jobs. The table of short jobs
shows it: on LLNL-Thunder 74 % of the jobs run less than 10 minutes and they carry 91 % of
EASY's slowdown; DPSAn cuts their mean bounded slowdown from 5.30 to 2.25 and DPSAw raises
it to 14.0, while the longer jobs move far less. A bounded slowdown punishes a wait most on
a short job, so keeping the small (and mostly short) jobs moving pays; holding them back
for wide ones costs.

**Where it differs, and why.**

* *Runtime estimates.* The paper does not say what its scheduler believes about runtimes.
  Here the site files plan with the users' requested walltimes, and with the runtime where
  a trace gives none: all of SDSC-Par-1996 (the trace has no requested times), 80,197 of
  LLNL-Thunder's 113,613 jobs, 5,352 of LLNL-Atlas's 36,600. That choice moves the results
  by several points. The companion report [`exact-estimates/study.md`](exact-estimates/study.md)
  (the same command with `--estimate exact`: the scheduler knows every runtime) is closer
  to the paper: DPSAn beats EASY on every trace where anything can be rearranged, HPC2N
  included (-1.2 %, against +0.38 % here); DPSAp's change falls in the paper's -1 % to
  -8 % on SDSC-SP2, HPC2N, KTH-SP2 and CTC-SP2 (KTH from -10.9 % to -3.5 %, CTC from
  +5.4 % to -5.2 %); and DPSAw is worse than EASY on KTH-SP2 (+7.1 %, against -1.2 %
  here). Requests are generous (on KTH-SP2 the median request is 2.4 times the runtime), so
  EASY's shadow time comes late, most queued jobs count as short, and the search chooses
  among many more subsets than with exact runtimes.
* *DPSAw is not always worse.* It edges out EASY on SDSC-Par-1996 (-0.95 %) and, with
  exact estimates, on HPC2N-2002 (-1.6 %). Both are changes of a percent or two, where the
  noise described below dominates; on every busier machine DPSAw is clearly worse.
* *SDSC-Par-1996* is planned with exact runtimes either way, and there DPSAp's -13.6 %
  stays well beyond the paper's -1 % to -8 %. No reason was found beyond what the paper
  leaves unstated (its slowdown bound tau, its simulator's scheduling points); the paper
  itself calls SDSC-Par an anomaly.
* *HPC2N-2002*, the least utilized machine (60 %), is where DPSAn does not beat EASY here
  (+0.38 %; the paper: a negligible gain). That sign is not a property of the policy: it
  flips with the estimates (-1.2 % with exact ones), and split by quarter of submit time
  DPSAn's change against EASY ranges from -12.6 % to +8.2 %, the total being dominated by
  one bursty quarter (EASY's mean bounded slowdown 705 there, 22 to 137 in the others) that
  moves by +0.7 %. One different decision early in a replay shifts every later start, so
  changes of a percent are within that noise.
* The paper's eighth trace, SDSC-Par-1995, is not in `../shared/workloads/`; the bound
  tau of its slowdown is not stated (here 10 s).
"""


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


def run_and_write(
    options: StudyOptions, out: Path, *, command: str, console: Console, quiet: bool
) -> None:
    """Run the study with one progress line per run, write ``study.md`` (quoting
    ``command``) and ``study.csv`` into ``out``, and print the table (nothing when
    ``quiet``)."""
    traces = resolve_traces(
        options.traces or DEFAULT_TRACES, options.workloads, options.site_configs
    )
    policies = study_policies(options.bound_ms, options.bound_nodes)
    total = len(traces) * len(policies)
    done = 0

    def progress(fig: RunFigures) -> None:
        nonlocal done
        done += 1
        if not quiet:
            console.print(
                f"[dim]{done}/{total}[/dim] {fig.trace} / {fig.policy}: {fig.sim_seconds:.1f} s",
                highlight=False,
            )

    started = time.perf_counter()
    figures = run_study(
        traces, policies, workers=options.workers, estimate=options.estimate, on_done=progress
    )
    minutes = (time.perf_counter() - started) / 60
    workers = min(len(traces) * len(policies), options.workers or os.cpu_count() or 1)
    elapsed = f"{minutes:.1f} min in {workers} processes on {os.cpu_count()} cores"
    default = [t.workload.name for t in traces] == list(DEFAULT_TRACES) and not options.estimate
    frame = study_frame(figures).assign(
        bound_ms=options.bound_ms,
        bound_nodes=options.bound_nodes,
        estimate=options.estimate or "site",
    )
    markdown = render_markdown(
        frame,
        command=command,
        bound_ms=options.bound_ms,
        bound_nodes=options.bound_nodes,
        elapsed=elapsed,
        estimate=options.estimate,
        # written from the default study's numbers: it would not fit another study
        discussion=DISCUSSION if default else None,
    )
    files = write_study(out, frame, markdown)
    if not quiet:
        console.print(_terminal_table(frame))
        console.print("written: " + ", ".join(str(f) for f in files), highlight=False)


def _terminal_table(frame: pd.DataFrame) -> Table:
    variants = _variants(frame)
    table = Table(title="DPSA vs EASY: change in mean bounded slowdown / mean wait")
    table.add_column("trace")
    table.add_column("util", justify="right")
    for v in variants:
        table.add_column(f"{v} bsld", justify="right")
        table.add_column(f"{v} wait", justify="right")
    for t in dict.fromkeys(frame["trace"]):
        row = [t, f"{_cell(frame, t, BASELINE, 'utilization'):.0%}"]
        for v in variants:
            row += [_pct(_cell(frame, t, v, "d_bsld_pct")), _pct(_cell(frame, t, v, "d_wait_pct"))]
        table.add_row(*row)
    return table
