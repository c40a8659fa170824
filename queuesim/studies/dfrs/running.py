"""Running the DFRS study: bounds and simulations in worker processes, gathered into a
:class:`~queuesim.studies.dfrs.config.StudyResult`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from queuesim.common.errors import ConfigError, PolicyViolation, QueuesimError
from queuesim.studies.dfrs.config import (
    RTOL,
    TAU,
    AlgorithmSpec,
    BoundFigures,
    Instance,
    RunFigures,
    StudyConfig,
    StudyResult,
    _penalty_value,
)
from queuesim.studies.dfrs.files import render_plot, write_study
from queuesim.studies.dfrs.instances import (
    _described,
    _load_instance,
    bound_digest,
    hpc2n_instances,
    read_bound_cache,
    synthetic_instances,
    write_bound_cache,
)
from queuesim.studies.dfrs.tables import study_frame, study_report

if TYPE_CHECKING:
    pass


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
    on_progress: Callable[[int, str], None] | None = None,
) -> StudyResult:
    """Build the instances, compute the missing bounds, run every algorithm under every
    penalty in ``workers`` processes (default: the local cores), and write ``study.csv``,
    ``study.md``, ``degradation-vs-load.png`` and ``timings.csv`` into ``out``; ``command``
    is quoted in ``study.md`` as the way to regenerate it. ``on_progress(tasks, text)`` is
    called as each of the ``tasks`` (bounds and simulations) finishes, ``text`` saying which
    and how it went."""
    started = time.perf_counter()
    say = on_progress or (lambda _, __: None)
    if not config.algorithms:
        raise ConfigError("no algorithm to run")
    instances = synthetic_instances(config)
    weeks, notes = hpc2n_instances(config)
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

    def finished(_: int, figures: Any) -> None:
        if isinstance(figures, BoundFigures):
            cache[figures.digest] = figures
            bounds[figures.instance] = figures
            write_bound_cache(cache_file, cache)  # after each one: an interrupt keeps them
            timings.append(
                {"instance": figures.instance, "task": "bound", "seconds": figures.seconds}
            )
            say(len(tasks), f"{figures.instance}: bound {figures.bound:.4g}")
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
                len(tasks),
                f"{figures.instance} / {figures.algorithm}{penalty}: "
                f"max stretch {figures.max_stretch:.4g} ({figures.run_seconds:.1f} s)",
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
    plot = render_plot(frame, config.penalties)
    result.report = study_report(result, config, command=command, elapsed=elapsed, plot=plot)
    result.files = write_study(out, result, result.report, plot)
    return result
