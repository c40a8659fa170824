"""``queuesim study dfrs``: DFRS against batch scheduling, papers ``000`` and ``002``.

Stillwell, Vivien and Casanova compare batch scheduling (FCFS, EASY) with their dynamic
fractional resource scheduling (DFRS) algorithms on the maximum bounded stretch of synthetic
Lublin-Feitelson traces at load levels 0.1 ... 0.9 and of week-long pieces of the HPC2N
log, with and without a 5-minute rescheduling penalty. Conference paper ``000`` reports the
*degradation factor* (maximum stretch over the best algorithm's on the same instance; its
Table I: average, standard deviation and maximum over the traces), journal paper ``002`` the
*degradation from bound* (maximum stretch over the offline lower bound of its section 3; its
Fig. 1: the average against the load, on a log scale). This module runs the same experiment
at a scale one machine can run:

* instances: ``traces_per_load`` synthetic traces at every load level, ``jobs`` jobs each,
  on the 128 quad-core nodes of ``site-configs/dfrs-lublin-128.yaml``; trace ``k`` uses
  seed ``seed + k`` at every load, so the load levels scale the same traces, as in the
  papers; and the first ``hpc2n_weeks`` weeks of ``HPC2N-2002-2.2-cln.swf.gz`` on
  ``site-configs/dfrs-hpc2n.yaml`` (skipped, with a note, when the trace is absent). The
  annotated traces are written to a cache folder;
* the lower bound of every instance (:func:`queuesim.results.stretch_bound.max_stretch_lower_bound`,
  tau = 10 s) is computed once and kept in the cache's ``bounds.csv``, keyed by a digest of
  the jobs it was computed from, so a re-run only simulates;
* every algorithm under every penalty, in parallel processes; FCFS and EASY never preempt,
  so they run once per instance and are reported under every penalty;
* per run: the maximum bounded stretch (tau = 10 s, with the jobs' dedicated runtimes), its
  degradation from bound, and its degradation factor against the best algorithm of the
  instance under the same penalty.

Outputs (each written atomically into ``out``): ``study.csv`` (one row per instance x
algorithm x penalty; deterministic: no timing in it), ``study.md`` (Table I-like summaries,
per-load tables, the command that regenerates it, the scale and the study's time),
``degradation-vs-load.png`` (Fig. 1-like, one panel per penalty) and ``timings.csv`` (the
seconds of every simulation and bound computation).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.common.errors import ConfigError, PolicyViolation, QueuesimError

if TYPE_CHECKING:
    from queuesim.core.workload import Workload
    from queuesim.site.model import Site

__all__ = [
    "BATCH_ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "DFRS_ALGORITHMS",
    "AlgorithmSpec",
    "BoundFigures",
    "Instance",
    "RunFigures",
    "StudyConfig",
    "StudyResult",
    "load_text",
    "resolve_algorithms",
    "run_and_print",
    "run_study",
]

#: the batch baselines of both papers (they never preempt: one run serves every penalty)
BATCH_ALGORITHMS = ("FCFS", "EASY")
#: the DFRS algorithms of ``002`` Fig. 1 (OPT=MIN, as there) and ``000``'s DynMCB8 variants
DFRS_ALGORITHMS = (
    "Greedy*/OPT=MIN",
    "GreedyP*/OPT=MIN",
    "GreedyPM*/OPT=MIN",
    "DynMCB8-per/OPT=MIN",
    "DynMCB8-asap-per/OPT=MIN",
    "GreedyPM*/per/OPT=MIN/MINVT=600",
)
DEFAULT_ALGORITHMS = BATCH_ALGORITHMS + DFRS_ALGORITHMS
DEFAULT_LOADS = tuple(round(0.1 * k, 1) for k in range(1, 10))
#: no penalty, and the papers' 5-minute rescheduling penalty
DEFAULT_PENALTIES = (0.0, 300.0)
DEFAULT_TRACES_PER_LOAD = 4
DEFAULT_JOBS = 500
DEFAULT_HPC2N_WEEKS = 8
DEFAULT_SEED = 1
DEFAULT_OUT = "reports/dfrs"
#: generated traces and the bounds' cache (``out/`` is ignored by git)
DEFAULT_CACHE = "out/dfrs-cache"
TAU = 10.0  #: bounded-stretch threshold (s), as in ``002``
RTOL = 1e-3  #: relative accuracy of the bound's binary search
#: a degradation from bound below ``1 - BOUND_SLACK`` would mean the bound is wrong
BOUND_SLACK = 1e-6
SYNTHETIC_SITE = "dfrs-lublin-128.yaml"
HPC2N_SITE = "dfrs-hpc2n.yaml"
HPC2N_TRACE = "HPC2N-2002-2.2-cln.swf.gz"
SYNTHETIC = "synthetic"
HPC2N = "HPC2N"
#: the batch policies' registered names, by the label the papers give them
_BATCH_POLICIES = {"FCFS": "fcfs", "EASY": "easy"}
_PNG_METADATA: dict[str, Any] = {"Software": None}
_RC: Any = {"font.size": 9}


# --- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of the study: its label in the tables, the policy name given to
    :func:`~queuesim.studies.simulate.simulate`, and whether it takes the rescheduling
    ``penalty``."""

    label: str
    policy: str
    uses_penalty: bool


@dataclass(frozen=True)
class StudyConfig:
    """What to run (see the module docstring)."""

    loads: tuple[float, ...] = DEFAULT_LOADS
    traces_per_load: int = DEFAULT_TRACES_PER_LOAD
    jobs: int = DEFAULT_JOBS
    seed: int = DEFAULT_SEED
    hpc2n_weeks: int = DEFAULT_HPC2N_WEEKS
    penalties: tuple[float, ...] = DEFAULT_PENALTIES
    algorithms: tuple[AlgorithmSpec, ...] = ()
    cache: Path = Path(DEFAULT_CACHE)
    workloads: Path = Path("..", "shared", "workloads")
    site_configs: Path = Path("site-configs")


@dataclass(frozen=True)
class Instance:
    """One trace of the study, written in the cache, with the site file it runs on."""

    name: str
    trace_set: str  #: :data:`SYNTHETIC` or :data:`HPC2N`
    load: float | None
    seed: int | None
    week: int | None
    path: Path
    site: Path
    hosts: int
    jobs: int = 0  #: jobs left after the workload's cleaning
    digest: str = ""  #: of the bound's inputs (:func:`bound_digest`)


@dataclass(frozen=True)
class BoundFigures:
    """The lower bound of one instance."""

    instance: str
    digest: str
    hosts: int
    bound: float
    upper: float
    solves: int
    seconds: float


@dataclass(frozen=True)
class RunFigures:
    """What one (instance, algorithm, penalty) simulation contributes; ``penalty`` is None
    for an algorithm that does not take one."""

    instance: str
    algorithm: str
    penalty: float | None
    max_stretch: float
    preemptions: int
    migrations: int
    moved_memory_mb: float
    run_seconds: float


@dataclass
class StudyResult:
    """What :func:`run_study` computed and wrote."""

    frame: pd.DataFrame  #: the rows of ``study.csv``
    timings: pd.DataFrame  #: the rows of ``timings.csv``
    instances: list[Instance]
    notes: list[str]
    bounds_computed: int
    bounds_cached: int
    seconds: float
    files: list[Path] = field(default_factory=list)


# --- algorithms ---------------------------------------------------------------------------


def _penalty_value(penalty: float) -> int | float:
    """Seconds as an int when whole (a policy may declare the parameter as int)."""
    return int(penalty) if float(penalty).is_integer() else float(penalty)


def _policy_works(name: str, params: dict[str, Any] | None) -> bool:
    from queuesim.policies.registry import make_policy

    try:
        make_policy(name, params)
    except QueuesimError:
        return False
    return True


def _available(penalties: Sequence[float]) -> list[str]:
    """The study's own algorithms that this build can run, then the other policies."""
    from queuesim.policies.registry import known_policies

    study = [
        name
        for name in DEFAULT_ALGORITHMS
        if name in _BATCH_POLICIES
        or all(_policy_works(name, {"penalty": _penalty_value(p)}) for p in penalties)
    ]
    taken = {_BATCH_POLICIES.get(name, name) for name in study}
    return study + [p for p in known_policies() if p not in taken]


def resolve_algorithms(names: Sequence[str], penalties: Sequence[float]) -> list[AlgorithmSpec]:
    """Algorithm names (the study's labels such as ``EASY`` or ``GreedyPM*/OPT=MIN``, or any
    registered policy) to what the runs need; an algorithm takes the penalty when its policy
    accepts a ``penalty`` parameter. An unknown name is an error listing the valid ones."""
    from queuesim.policies.registry import known_policies

    specs: list[AlgorithmSpec] = []
    registered = {p.lower(): p for p in known_policies()}
    for name in names:
        batch = next((b for b in _BATCH_POLICIES if b.lower() == name.lower()), None)
        if batch is not None:
            spec = AlgorithmSpec(batch, _BATCH_POLICIES[batch], uses_penalty=False)
        elif all(_policy_works(name, {"penalty": _penalty_value(p)}) for p in penalties):
            spec = AlgorithmSpec(name, name, uses_penalty=True)
        elif _policy_works(registered.get(name.lower(), name), None):
            policy = registered.get(name.lower(), name)
            label = next((b for b, p in _BATCH_POLICIES.items() if p == policy), policy)
            spec = AlgorithmSpec(label, policy, uses_penalty=False)
        else:
            valid = ", ".join(_available(penalties))
            if name in DFRS_ALGORITHMS:
                raise ConfigError(
                    f"algorithm {name!r} is one of the study's DFRS algorithms, but this "
                    f"build has no such policy (or it takes no 'penalty'); valid: {valid}"
                )
            raise ConfigError(f"unknown algorithm {name!r}; valid: {valid}")
        if any(s.label == spec.label for s in specs):
            raise ConfigError(f"algorithm {spec.label!r} is given twice")
        specs.append(spec)
    if not specs:
        raise ConfigError("no algorithm to run")
    return specs


# --- instances ----------------------------------------------------------------------------


def load_text(load: float) -> str:
    return f"{load:g}"


def bound_digest(jobs: pd.DataFrame, hosts: int) -> str:
    """A digest of what the bound of an instance depends on: the jobs' submit times,
    runtimes, tasks and CPU needs, the hosts, tau and the search's accuracy."""
    digest = hashlib.sha256(f"hosts={hosts};tau={TAU!r};rtol={RTOL!r};".encode())
    for column in ("submit", "runtime", "tasks", "cpu_need"):
        digest.update(np.ascontiguousarray(jobs[column].to_numpy(dtype=np.float64)).tobytes())
    return digest.hexdigest()[:16]


def _load_instance(instance: Instance) -> tuple[Site, Workload]:
    from queuesim.core.workload import load_workload
    from queuesim.site.model import load_site

    site = load_site(instance.site)
    workload = load_workload(instance.path, site)
    if not workload.annotated:
        raise QueuesimError(f"{instance.path}: the trace has no DFRS annotation")
    return site, workload


def synthetic_instances(config: StudyConfig) -> list[Instance]:
    """Write the synthetic traces into the cache (deterministic, so rewriting an existing
    one gives the same bytes) and describe them."""
    from queuesim.site.model import load_site
    from queuesim.traces.dfrs_annotation import write_synthetic_trace

    if config.traces_per_load == 0:
        return []
    site_path = config.site_configs / SYNTHETIC_SITE
    if not site_path.is_file():
        raise QueuesimError(f"{site_path}: site file not found (use --site-configs DIR)")
    hosts = load_site(site_path).total_nodes
    folder = config.cache / f"synthetic-n{hosts}-j{config.jobs}"
    instances = []
    for load in config.loads:
        for k in range(config.traces_per_load):
            seed = config.seed + k
            name = f"load{load_text(load)}-seed{seed}"
            path = folder / f"{name}.swf"
            try:
                write_synthetic_trace(path, hosts, config.jobs, seed, load=load)
            except ValueError as exc:
                raise QueuesimError(f"synthetic trace {name}: {exc}") from None
            instances.append(Instance(name, SYNTHETIC, load, seed, None, path, site_path, hosts))
    return instances


def hpc2n_instances(config: StudyConfig) -> tuple[list[Instance], list[str]]:
    """The first ``hpc2n_weeks`` weeks of the HPC2N trace, annotated as in ``000`` and
    written into the cache; none, with a note saying why, when the trace is absent."""
    from queuesim.site.model import load_site
    from queuesim.traces import dfrs_annotation as annotate
    from queuesim.traces.registry import read_trace

    if config.hpc2n_weeks == 0:
        return [], []
    trace_path = config.workloads / HPC2N_TRACE
    if not trace_path.is_file():
        return [], [
            f"The HPC2N weeks were skipped: {trace_path} was not found (use --workloads DIR, "
            "or --hpc2n-weeks 0)."
        ]
    site_path = config.site_configs / HPC2N_SITE
    if not site_path.is_file():
        raise QueuesimError(f"{site_path}: site file not found (use --site-configs DIR)")
    site = load_site(site_path)
    memory = annotate.HPC2N_NODE_MEMORY_KB
    jobs = annotate.annotate_hpc2n(read_trace(trace_path).jobs, node_memory_kb=memory)
    weeks = annotate.split_weeks(jobs)[: config.hpc2n_weeks]
    notes = []
    if len(weeks) < config.hpc2n_weeks:
        notes.append(f"{trace_path.name} has only {len(weeks)} weeks with jobs.")
    instances = []
    for week in weeks:
        name = f"hpc2n-week{week.index:03d}"
        path = config.cache / "hpc2n" / f"week{week.index:03d}.swf"
        header = [
            f"Note: the jobs of {trace_path.name} submitted in its week {week.index} "
            f"(from {week.start:.0f} s), submit times from the week's start",
            "Note: DFRS annotation of Stillwell, Vivien and Casanova (000, IV.C)",
        ]
        annotate.write_annotated(
            path,
            week.jobs,
            node_cpus=annotate.HPC2N_NODE_CPUS,
            node_memory_kb=memory,
            header_lines=header,
        )
        instances.append(
            Instance(name, HPC2N, None, None, week.index, path, site_path, site.total_nodes)
        )
    return instances, notes


def _described(instance: Instance) -> Instance:
    """``instance`` with its job count and bound digest, from its prepared workload."""
    _, workload = _load_instance(instance)
    digest = bound_digest(workload.jobs, instance.hosts)
    return Instance(**{**asdict(instance), "jobs": len(workload.jobs), "digest": digest})


# --- bound cache --------------------------------------------------------------------------

_CACHE_COLUMNS = ["instance", "digest", "hosts", "bound", "upper", "solves", "seconds"]


def read_bound_cache(path: Path) -> dict[str, BoundFigures]:
    """The cached bounds by digest (empty when the file does not exist)."""
    if not path.is_file():
        return {}
    try:
        table = pd.read_csv(path, dtype={"digest": str})
        missing = [c for c in _CACHE_COLUMNS if c not in table.columns]
        if missing:
            raise ValueError(f"no column {missing[0]!r}")
        return {
            str(row["digest"]): BoundFigures(
                instance=str(row["instance"]),
                digest=str(row["digest"]),
                hosts=int(row["hosts"]),
                bound=float(row["bound"]),
                upper=float(row["upper"]),
                solves=int(row["solves"]),
                seconds=float(row["seconds"]),
            )
            for row in table.to_dict("records")
        }
    except (ValueError, pd.errors.ParserError) as exc:
        raise QueuesimError(f"{path}: not a bound cache ({exc}); delete it to rebuild") from None


def write_bound_cache(path: Path, bounds: dict[str, BoundFigures]) -> None:
    """All cached bounds, sorted by instance then digest; floats round-trip exactly."""
    rows = sorted((asdict(b) for b in bounds.values()), key=lambda r: (r["instance"], r["digest"]))
    table = pd.DataFrame(rows, columns=_CACHE_COLUMNS)
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False, lineterminator="\n")


# --- the work done in worker processes ----------------------------------------------------


def compute_bound(instance: Instance) -> BoundFigures:
    """The lower bound of one instance (module level: worker processes run it)."""
    from queuesim.results.stretch_bound import max_stretch_bound_bracket
    from queuesim.results.time_shared import annotated_table

    _, workload = _load_instance(instance)
    digest = bound_digest(workload.jobs, instance.hosts)
    started = time.perf_counter()
    bracket = max_stretch_bound_bracket(
        annotated_table(workload.jobs), instance.hosts, tau=TAU, rtol=RTOL
    )
    return BoundFigures(
        instance=instance.name,
        digest=digest,
        hosts=instance.hosts,
        bound=bracket.lower,
        upper=bracket.upper,
        solves=bracket.solves,
        seconds=time.perf_counter() - started,
    )


def run_one(instance: Instance, algorithm: AlgorithmSpec, penalty: float | None) -> RunFigures:
    """Simulate one instance under one algorithm (module level: worker processes run it)
    and measure its maximum bounded stretch."""
    from queuesim.results.stretch import max_stretch
    from queuesim.results.time_shared import annotated_table
    from queuesim.studies.simulate import simulate

    site, workload = _load_instance(instance)
    params = None if penalty is None else {"penalty": _penalty_value(penalty)}
    try:
        result = simulate(site, workload, algorithm.policy, params)
    except (QueuesimError, PolicyViolation) as exc:
        where = "" if penalty is None else f" / penalty {penalty:g} s"
        raise _located(exc, f"{instance.name} / {algorithm.label}{where}") from None
    jobs = result.jobs
    if not np.array_equal(jobs["job_id"].to_numpy(), workload.jobs["job_id"].to_numpy()):
        raise RuntimeError(
            f"{instance.name} / {algorithm.label}: the result's jobs are not the workload's"
        )
    stretch = max_stretch(annotated_table(workload.jobs), jobs["end"].to_numpy(), tau=TAU)
    counters = result.counters
    return RunFigures(
        instance=instance.name,
        algorithm=algorithm.label,
        penalty=penalty,
        max_stretch=stretch,
        preemptions=int(counters.get("preemptions", 0)),
        migrations=int(counters.get("migrations", 0)),
        moved_memory_mb=float(counters.get("moved_memory_mb", 0)),
        run_seconds=result.wall_seconds,
    )


def _located(exc: Exception, where: str) -> Exception:
    """``exc`` with the run it comes from at the front of its message (same type, so the
    command line reports it as it reports any such error)."""
    try:
        return type(exc)(f"{where}: {exc}")
    except Exception:  # an exception type with another constructor: keep it, add a note
        exc.add_note(where)
        return exc


Task = tuple[Callable[..., Any], tuple[Any, ...]]


def _run_tasks(
    tasks: Sequence[Task],
    workers: int,
    on_done: Callable[[int, Any], None],
) -> None:
    """Run ``tasks`` (in the given order of priority) in ``workers`` processes, calling
    ``on_done(index, result)`` in the main process as each finishes."""
    if workers <= 1:
        for k, (function, arguments) in enumerate(tasks):
            on_done(k, function(*arguments))
        return
    context = get_context("fork") if sys.platform.startswith("linux") else get_context()
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: dict[Future[Any], int] = {
            pool.submit(function, *arguments): k for k, (function, arguments) in enumerate(tasks)
        }
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=pending.__getitem__):
                    k = pending.pop(future)
                    on_done(k, future.result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise


# --- the study ----------------------------------------------------------------------------


def run_study(
    config: StudyConfig,
    out: Path,
    *,
    command: str,
    workers: int | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> StudyResult:
    """Build the instances, compute the missing bounds, run every algorithm under every
    penalty in ``workers`` processes (default: the local cores), and write ``study.csv``,
    ``study.md``, ``degradation-vs-load.png`` and ``timings.csv`` into ``out``; ``command``
    is quoted in ``study.md`` as the way to regenerate it."""
    started = time.perf_counter()
    say = on_progress or (lambda _: None)
    if not config.algorithms:
        raise ConfigError("no algorithm to run")
    instances = synthetic_instances(config)
    weeks, notes = hpc2n_instances(config)
    for note in notes:
        say(note)
    instances = [_described(i) for i in instances + weeks]
    if not instances:
        raise QueuesimError(
            "the study has no instance: give --traces-per-load 1 or more, or HPC2N weeks "
            "with the trace in --workloads"
        )
    cache_file = config.cache / "bounds.csv"
    cache = read_bound_cache(cache_file)
    bounds = {i.name: cache[i.digest] for i in instances if i.digest in cache}
    cached = len(bounds)

    def cost(instance: Instance) -> float:
        return instance.jobs * (1.0 + (instance.load or 0.5))

    order = sorted(instances, key=lambda i: (-cost(i), i.name))
    tasks: list[Task] = [(compute_bound, (i,)) for i in order if i.name not in bounds]
    dfrs = [a for a in config.algorithms if a.uses_penalty]
    batch = [a for a in config.algorithms if not a.uses_penalty]
    tasks += [(run_one, (i, a, p)) for i in order for a in dfrs for p in config.penalties]
    tasks += [(run_one, (i, a, None)) for i in order for a in batch]
    if dfrs:
        from queuesim.policies.dfrs.packing import warm_up

        warm_up()  # compile numba's kernels once, before the workers fork
    workers = max(1, min(len(tasks), workers or os.cpu_count() or 1))
    runs: list[RunFigures] = []
    timings: list[dict[str, Any]] = []
    done = 0

    def finished(_: int, figures: Any) -> None:
        nonlocal done
        done += 1
        if isinstance(figures, BoundFigures):
            cache[figures.digest] = figures
            bounds[figures.instance] = figures
            write_bound_cache(cache_file, cache)  # after each one: an interrupt keeps them
            timings.append(
                {"instance": figures.instance, "task": "bound", "seconds": figures.seconds}
            )
            say(f"{done}/{len(tasks)} {figures.instance}: bound {figures.bound:.4g}")
        else:
            runs.append(figures)
            penalty = "" if figures.penalty is None else f" / {figures.penalty:g} s"
            timings.append(
                {
                    "instance": figures.instance,
                    "task": figures.algorithm,
                    "penalty": figures.penalty,
                    "seconds": figures.run_seconds,
                }
            )
            say(
                f"{done}/{len(tasks)} {figures.instance} / {figures.algorithm}{penalty}: "
                f"max stretch {figures.max_stretch:.4g} ({figures.run_seconds:.1f} s)"
            )

    _run_tasks(tasks, workers, finished)
    for instance in instances:
        if bounds[instance.name].digest != instance.digest:
            raise RuntimeError(f"{instance.name}: the bound was computed for other jobs")
    frame = study_frame(instances, runs, {n: b.bound for n, b in bounds.items()}, config)
    timing = pd.DataFrame(timings, columns=["instance", "task", "penalty", "seconds"])
    timing = timing.sort_values(["task", "instance", "penalty"], kind="mergesort")
    seconds = time.perf_counter() - started
    result = StudyResult(
        frame=frame,
        timings=timing.reset_index(drop=True),
        instances=instances,
        notes=notes,
        bounds_computed=len(instances) - cached,
        bounds_cached=cached,
        seconds=seconds,
    )
    took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    elapsed = (
        f"{took} in {workers} processes on {os.cpu_count()} cores; "
        f"{result.bounds_computed} bounds computed, {cached} read from the cache"
    )
    markdown = render_markdown(result, config, command=command, elapsed=elapsed)
    result.files = write_study(out, result, markdown)
    return result


# --- tables -------------------------------------------------------------------------------

STUDY_COLUMNS = [
    "instance",
    "trace_set",
    "load",
    "seed",
    "week",
    "jobs",
    "algorithm",
    "penalty",
    "max_stretch",
    "bound",
    "degradation",
    "degradation_factor",
    "preemptions",
    "migrations",
    "moved_memory_mb",
]


def study_frame(
    instances: Sequence[Instance],
    runs: Sequence[RunFigures],
    bounds: dict[str, float],
    config: StudyConfig,
) -> pd.DataFrame:
    """One row per instance x algorithm x penalty (a run without a penalty is repeated under
    every penalty), with the degradation from bound (``002``) and the degradation factor
    against the best algorithm of the instance under that penalty (``000``)."""
    from queuesim.results.stretch import degradation_factors, degradation_from_bound

    labels = [a.label for a in config.algorithms]
    rows = []
    for run in runs:
        for penalty in config.penalties if run.penalty is None else (run.penalty,):
            rows.append({**asdict(run), "penalty": penalty})
    table = pd.DataFrame(rows).drop(columns="run_seconds")
    expected = len(instances) * len(labels) * len(config.penalties)
    if len(table) != expected:
        raise RuntimeError(f"{len(table)} results for {expected} runs")
    bound = pd.Series(bounds, dtype=np.float64)
    parts = []
    for value, runs_p in table.groupby("penalty", sort=False):
        wide = runs_p.pivot(index="instance", columns="algorithm", values="max_stretch")
        long = [
            ratios.reset_index().melt(id_vars="instance", var_name="algorithm", value_name=name)
            for name, ratios in (
                ("degradation", degradation_from_bound(wide, bound)),
                ("degradation_factor", degradation_factors(wide)),
            )
        ]
        parts.append(long[0].merge(long[1], on=["instance", "algorithm"]).assign(penalty=value))
    table = table.merge(pd.concat(parts), on=["instance", "algorithm", "penalty"])
    described = pd.DataFrame(
        {
            "instance": [i.name for i in instances],
            "trace_set": [i.trace_set for i in instances],
            "load": pd.array([i.load for i in instances], dtype="Float64"),
            "seed": pd.array([i.seed for i in instances], dtype="Int64"),
            "week": pd.array([i.week for i in instances], dtype="Int64"),
            "jobs": [i.jobs for i in instances],
            "bound": [bounds[i.name] for i in instances],
            "position": range(len(instances)),
        }
    )
    table = described.merge(table, on="instance")
    table["algorithm_order"] = table["algorithm"].map({a: k for k, a in enumerate(labels)})
    table = table.sort_values(["penalty", "position", "algorithm_order"], kind="mergesort")
    return table[STUDY_COLUMNS].reset_index(drop=True)


def _sets(frame: pd.DataFrame) -> list[str]:
    return [s for s in (SYNTHETIC, HPC2N) if (frame["trace_set"] == s).any()]


Stats = dict[tuple[float, str], tuple[float, float, float]]


def summary(frame: pd.DataFrame, column: str, mask: pd.Series | None = None) -> Stats:
    """Average, standard deviation (sample: n/a for one instance) and maximum of ``column``
    over the instances of ``mask``, by (penalty, algorithm)."""
    from queuesim.results.stretch import summarize_degradation

    part = frame if mask is None else frame[mask]
    labels = list(dict.fromkeys(frame["algorithm"]))
    stats: Stats = {}
    penalties: list[float] = list(dict.fromkeys(part["penalty"].astype(float).tolist()))
    for penalty in penalties:
        rows = part[part["penalty"] == penalty]
        wide = rows.pivot(index="instance", columns="algorithm", values=column)[labels]
        table = summarize_degradation(wide).to_dict("index")
        for label in labels:
            cell = table[label]
            stats[(penalty, label)] = (float(cell["mean"]), float(cell["std"]), float(cell["max"]))
    return stats


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    if x < 10:
        return f"{x:.2f}"
    if x < 1000:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    align = ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def penalty_title(penalty: float) -> str:
    """``no rescheduling penalty``, ``5-minute rescheduling penalty``, ``45 s ...``."""
    if penalty == 0:
        return "no rescheduling penalty"
    if penalty % 60 == 0:
        return f"{penalty / 60:g}-minute rescheduling penalty"
    return f"{penalty:g} s rescheduling penalty"


def _table_i(frame: pd.DataFrame, column: str, penalty: float) -> str:
    """000 Table I's layout: one row per algorithm, avg / std / max per trace set."""
    sets = _sets(frame)
    stats = {s: summary(frame, column, frame["trace_set"] == s) for s in sets}
    header = ["algorithm"]
    for s in sets:
        header += [f"{s} avg", "std", "max"]
    rows = []
    for label in dict.fromkeys(frame["algorithm"]):
        row = [label]
        for s in sets:
            row += [_num(x) for x in stats[s][(penalty, label)]]
        rows.append(row)
    return _md_table(header, rows)


def _per_load(frame: pd.DataFrame, penalty: float) -> str:
    synthetic = frame[frame["trace_set"] == SYNTHETIC]
    labels = list(dict.fromkeys(frame["algorithm"]))
    rows = []
    for load in sorted(set(synthetic["load"].astype(float))):
        stats = summary(synthetic, "degradation", synthetic["load"] == load)
        cells = [stats[(penalty, a)] for a in labels]
        rows.append(
            [load_text(load)]
            + [f"{_num(mean)} ({_num(std)}; {_num(top)})" for mean, std, top in cells]
        )
    return _md_table(["load", *labels], rows)


def _costs(frame: pd.DataFrame) -> str:
    grouped = frame.groupby(["penalty", "algorithm"], sort=False)
    means = grouped[["preemptions", "migrations", "moved_memory_mb"]].mean().reset_index()
    rows = [
        [
            f"{row['algorithm']} / {row['penalty']:g} s",
            f"{row['preemptions']:,.1f}",
            f"{row['migrations']:,.1f}",
            f"{row['moved_memory_mb'] / 1024:,.1f}",
        ]
        for row in means.to_dict("records")
    ]
    return _md_table(
        ["algorithm / penalty", "preemptions", "migrations", "moved memory (GB)"], rows
    )


def _scale(result: StudyResult, config: StudyConfig) -> list[str]:
    frame = result.frame
    synthetic = [i for i in result.instances if i.trace_set == SYNTHETIC]
    weeks = [i for i in result.instances if i.trace_set == HPC2N]
    lines = []
    if synthetic:
        loads = ", ".join(load_text(x) for x in config.loads)
        seeds = f"seeds {config.seed} to {config.seed + config.traces_per_load - 1}"
        if config.traces_per_load == 1:
            seeds = f"seed {config.seed}"
        lines.append(
            f"* synthetic: {config.traces_per_load} Lublin-Feitelson trace(s) per load level "
            f"x {len(config.loads)} load level(s) ({loads}) = {len(synthetic)} instances of "
            f"{config.jobs:,} jobs on {synthetic[0].hosts} quad-core nodes "
            f"(`site-configs/{SYNTHETIC_SITE}`), {seeds} at every load;"
        )
    if weeks:
        jobs = [i.jobs for i in weeks]
        lines.append(
            f"* HPC2N: the first {len(weeks)} week(s) of `{HPC2N_TRACE}` "
            f"(weeks {weeks[0].week} to {weeks[-1].week}, {min(jobs):,} to {max(jobs):,} "
            f"jobs, {sum(jobs):,} in all) on {weeks[0].hosts} dual-core nodes "
            f"(`site-configs/{HPC2N_SITE}`);"
        )
    runs = len(result.instances) * sum(
        len(config.penalties) if a.uses_penalty else 1 for a in config.algorithms
    )
    lines.append(
        f"* {len(config.algorithms)} algorithms x {len(config.penalties)} penalties "
        f"({', '.join(f'{p:g} s' for p in config.penalties)}): {runs:,} simulations, "
        f"{len(frame):,} rows in `study.csv`."
    )
    return lines


def render_markdown(result: StudyResult, config: StudyConfig, *, command: str, elapsed: str) -> str:
    """``study.md``: setup, scale, the regenerating command and the study's time, then the
    tables of ``000`` Table I and ``002`` Fig. 1 and the rescheduling costs."""
    frame = result.frame
    lowest = float(frame["degradation"].min())
    below = int((frame["degradation"] < 1 - BOUND_SLACK).sum())
    lines = [
        "# DFRS against batch scheduling: maximum stretch (papers 000 and 002)",
        "",
        "Stillwell, Vivien and Casanova's experiment at the scale of one machine: every "
        "algorithm replays every instance under every rescheduling penalty, and is judged "
        f"by the maximum bounded stretch of its jobs (tau = {TAU:g} s, against each job's "
        "dedicated runtime). The *degradation from bound* (`002`, section 5.1) divides it by "
        "the instance's offline lower bound (`002`, section 3: a linear program without "
        "memory constraints and with free migration, binary search to "
        f"{RTOL:g} relative, returned from below); the *degradation factor* (`000`, section "
        "V) divides it by the best maximum stretch of the study's algorithms on the same "
        "instance under the same penalty. FCFS and EASY never preempt: they run once per "
        "instance and appear under every penalty.",
        "",
        "Scale:",
        "",
        *_scale(result, config),
        "",
        f"Regenerate (from the repository root; this run took {elapsed}):",
        "",
        "```sh",
        command,
        "```",
        "",
    ]
    if result.notes:
        lines += [*(f"> {n}" for n in result.notes), ""]
    lines += [
        f"Check of the bound: the lowest degradation from bound is {lowest:.4f} "
        f"({below} run(s) below 1 - {BOUND_SLACK:g}; the bound is a lower bound, so there "
        "should be none).",
        "",
        "## Degradation from bound (002 section 5.1)",
        "",
        "Average, standard deviation and maximum (the worst instance) over each set of "
        "instances; lower is better, 1 is the bound.",
        "",
    ]
    for penalty in config.penalties:
        lines += [f"### {penalty_title(penalty)}", "", _table_i(frame, "degradation", penalty), ""]
    lines += [
        "## Degradation factor (000 Table I)",
        "",
        "Maximum stretch over the best of the study's algorithms on the same instance and "
        "penalty: 1 for the best algorithm of an instance.",
        "",
    ]
    for penalty in config.penalties:
        lines += [
            f"### {penalty_title(penalty)}",
            "",
            _table_i(frame, "degradation_factor", penalty),
            "",
        ]
    if (frame["trace_set"] == SYNTHETIC).any():
        lines += [
            "## Degradation from bound against the load (002 Fig. 1)",
            "",
            "![Average degradation from bound against the load, one panel per penalty]"
            "(degradation-vs-load.png)",
            "",
            "Synthetic instances: average (standard deviation; maximum) per load level.",
            "",
        ]
        for penalty in config.penalties:
            lines += [f"### {penalty_title(penalty)}", "", _per_load(frame, penalty), ""]
    lines += [
        "## Rescheduling costs",
        "",
        "Average per instance (all instances): jobs paused, tasks moved to another node, and "
        "the memory these moves transferred, as the simulator counts them.",
        "",
        _costs(frame),
        "",
        "Per-run figures are in `study.csv`; the time of every simulation and bound "
        "computation in `timings.csv`.",
        "",
    ]
    return "\n".join(lines)


# --- plot ---------------------------------------------------------------------------------


def render_plot(frame: pd.DataFrame, penalties: Sequence[float]) -> bytes:
    """``002`` Fig. 1: the average degradation from bound of every algorithm against the
    load (synthetic instances), log scale, one panel per penalty; PNG bytes, deterministic."""
    import matplotlib
    from matplotlib.figure import Figure

    synthetic = frame[frame["trace_set"] == SYNTHETIC]
    labels = list(dict.fromkeys(frame["algorithm"]))
    markers = "osD^v<>pPX*h"
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(4.2 * len(penalties) + 0.5, 4.6), layout="constrained")
        axes = fig.subplots(1, len(penalties), sharey=True, squeeze=False)[0]
        for ax, penalty in zip(axes, penalties, strict=True):
            rows = synthetic[synthetic["penalty"] == penalty]
            means = rows.groupby(["algorithm", "load"], sort=False)["degradation"].mean()
            for k, label in enumerate(labels):
                if label not in means.index.get_level_values(0):
                    continue
                line = means.loc[label].sort_index()
                ax.plot(
                    line.index.to_numpy(dtype=float),
                    line.to_numpy(dtype=float),
                    marker=markers[k % len(markers)],
                    markersize=4,
                    linewidth=1.2,
                    label=label,
                )
            if rows.empty:
                ax.text(0.5, 0.5, "no synthetic instance", ha="center", transform=ax.transAxes)
            ax.set_yscale("log")
            _plain_log_labels(ax)
            ax.set_xlabel("load")
            ax.set_title(penalty_title(penalty))
            ax.grid(True, which="major", linewidth=0.4, alpha=0.6)
        axes[0].set_ylabel("average degradation from bound (max stretch / bound)")
        handles, names = axes[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, names, loc="outside lower center", ncol=min(4, len(names)))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, metadata=_PNG_METADATA)
    return buffer.getvalue()


def _plain_log_labels(ax: Any) -> None:
    """Label a log axis 1, 10, 100 (and 2, 3, ... within a single decade), not 10^k."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    low, high = ax.get_ylim()
    ax.yaxis.set_minor_formatter(plain if high < 10 * low else NullFormatter())


# --- files --------------------------------------------------------------------------------


def write_study(out: Path, result: StudyResult, markdown: str) -> list[Path]:
    """``study.csv``, ``study.md``, ``degradation-vs-load.png`` and ``timings.csv`` in
    ``out``, each written atomically."""
    penalties = list(dict.fromkeys(result.frame["penalty"]))
    csv = out / "study.csv"
    with atomic_path(csv) as tmp:
        result.frame.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n")
    md = out / "study.md"
    atomic_write_text(md, markdown)
    png = out / "degradation-vs-load.png"
    image = render_plot(result.frame, penalties)
    with atomic_path(png) as tmp:
        tmp.write_bytes(image)
    timings = out / "timings.csv"
    with atomic_path(timings) as tmp:
        result.timings.to_csv(tmp, index=False, float_format="%.3f", lineterminator="\n")
    return [md, csv, png, timings]


# --- command line -------------------------------------------------------------------------


def _numbers(text: str, option: str, example: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise QueuesimError(
            f"{option} expects comma-separated numbers such as {example}, got {text!r}"
        ) from None
    if not values:
        raise QueuesimError(f"{option} expects at least one number, got {text!r}")
    return values


def parse_loads(text: str) -> tuple[float, ...]:
    """``0.1,0.5`` -> (0.1, 0.5): sorted, without repeats, each in (0, 1]."""
    loads = _numbers(text, "--loads", "0.1,0.5,0.9")
    bad = [x for x in loads if not (math.isfinite(x) and 0 < x <= 1)]
    if bad:
        raise QueuesimError(f"--loads expects load levels in (0, 1], got {bad[0]:g}")
    return tuple(sorted(set(loads)))


def parse_penalties(text: str) -> tuple[float, ...]:
    """``0,300`` -> (0.0, 300.0): in the given order, without repeats, each >= 0."""
    penalties = _numbers(text, "--penalties", "0,300")
    bad = [x for x in penalties if not (math.isfinite(x) and x >= 0)]
    if bad:
        raise QueuesimError(f"--penalties expects seconds >= 0, got {bad[0]:g}")
    return tuple(dict.fromkeys(penalties))


def run_and_print(
    config: StudyConfig,
    out: Path,
    *,
    command: str,
    workers: int | None,
    console: Console,
    quiet: bool,
) -> None:
    """Run the study into ``out`` with its progress on ``console``, then print the summary
    tables and the files written (nothing at all when ``quiet``)."""

    def progress(text: str) -> None:
        if not quiet:
            console.print(f"[dim]{text}[/dim]", highlight=False)

    result = run_study(config, out, command=command, workers=workers, on_progress=progress)
    if not quiet:
        for table in _terminal_tables(result.frame):
            console.print(table)
        console.print(
            f"study time {result.seconds / 60:.1f} min; written: "
            + ", ".join(str(f) for f in result.files),
            highlight=False,
        )


def _terminal_tables(frame: pd.DataFrame) -> list[Table]:
    """One table per penalty: average and maximum degradation from bound per trace set."""
    sets = _sets(frame)
    stats = {s: summary(frame, "degradation", frame["trace_set"] == s) for s in sets}
    tables = []
    for penalty in dict.fromkeys(frame["penalty"].astype(float).tolist()):
        table = Table(title=f"Degradation from bound, {penalty_title(penalty)}")
        table.add_column("algorithm", no_wrap=True)
        for s in sets:
            table.add_column(f"{s} avg", justify="right", no_wrap=True)
            table.add_column("max", justify="right", no_wrap=True)
        for label in dict.fromkeys(frame["algorithm"]):
            row = [label]
            for s in sets:
                mean, _, top = stats[s][(penalty, label)]
                row += [_num(mean), _num(top)]
            table.add_row(*row)
        tables.append(table)
    return tables
