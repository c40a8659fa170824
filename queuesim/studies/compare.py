"""Replay one workload through several setups and compare them (paper ``004``).

A *setup* is a site file (queues, estimates, policy) with, optionally, another policy and
parameters. :func:`compare` replays the same workload through each setup - in parallel on
the local cores when there are several, with results identical to sequential runs since
each simulation is deterministic - and returns a
:class:`~queuesim.results.comparison.Comparison`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from queuesim.core.result import Result
from queuesim.core.workload import CleaningOptions, Workload, prepare_trace, read_workload_trace
from queuesim.policies.registry import make_policy
from queuesim.reports.progress import simulated_at
from queuesim.results.comparison import CompareError, Comparison, pick_baseline
from queuesim.site.enums import MemoryModel
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.studies.simulate import simulate

__all__ = ["Setup", "compare", "setups_for"]


@dataclass(frozen=True)
class Setup:
    """One configuration to compare: a site (file or loaded), optionally another policy.

    Without ``name`` a setup is named after its site (``name`` in the site file), followed
    by ``/policy`` when ``policy`` is given, e.g. ``kth-sp2/conservative``.
    """

    site: str | Path | Site
    policy: str | None = None
    params: Mapping[str, Any] | None = None
    name: str | None = None
    #: a clusters file that replaces the site file's clusters (see :func:`load_site`)
    clusters: str | Path | None = None


def setups_for(
    sites: Sequence[str | Path | Site],
    policies: Sequence[str] = (),
    clusters: str | Path | None = None,
) -> list[Setup]:
    """Every site with its own policy, or, given ``policies``, every site with each policy
    (named ``site/policy``), sites first: ``a/fcfs, a/easy, b/fcfs, b/easy``; all on the
    clusters of ``clusters`` when given."""
    if not policies:
        return [Setup(site, clusters=clusters) for site in sites]
    return [Setup(site, policy, clusters=clusters) for site in sites for policy in policies]


def compare(
    setups: Sequence[Setup | str | Path | Site],
    workload: str | Path,
    *,
    baseline: str | None = None,
    cleaning: CleaningOptions | None = None,
    top: int = 5,
    tau: float = 10.0,
    workers: int | None = None,
    on_start: Callable[[int, int], None] | None = None,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> Comparison:
    """Replay ``workload`` through each setup and compare them against ``baseline``.

    Args:
        setups: :class:`Setup` objects, or site files / loaded sites (each with its own
            policy). Names must be unique (see :class:`Setup`).
        workload: an SWF trace (``.swf`` or ``.swf.gz``), read once and prepared for each
            site separately, since sites may route and clean it differently.
        baseline: the setup the others are measured against; default the first. An
            unambiguous policy name also selects ``site/policy``.
        cleaning: what data cleaning may do (as for :func:`queuesim.simulate`).
        top: how many users to list per setup in :attr:`Comparison.losers`.
        tau: bounded-slowdown threshold, seconds.
        workers: processes to use; default ``min(setups, CPUs)``; 1 runs in this process.
        on_start: called with (setups, processes) once every input has been checked, just
            before the simulations start (the CLI announces the runs with it).
        progress: called in this process with (setup name, jobs submitted, jobs, simulated
            seconds reached) as each setup's run advances, also when setups run in worker
            processes (the CLI draws a bar per setup with it).

    Every input is checked before any simulation starts: site files, policies, names, the
    baseline, and the workload prepared for every site.

    Raises:
        CompareError: no setups, duplicate names, or a baseline that is not a setup.
        QueuesimError: a site file, policy or the workload is invalid (e.g. empty).
    """
    items = [_as_setup(s) for s in setups]
    named = _resolve(items)
    names = [name for name, _ in named]
    chosen = pick_baseline(names, baseline)
    if top < 0:
        raise CompareError(f"top expects a number of users >= 0, got {top}")
    cleaning = cleaning or CleaningOptions()
    path = Path(workload)
    trace = read_workload_trace(path, cleaning)
    prepared = [(name, site, prepare_trace(trace, site, cleaning)) for name, site in named]
    if workers is None:
        workers = min(len(named), os.cpu_count() or 1)
    if workers < 1:
        raise CompareError(f"workers must be at least 1, got {workers}")
    workers = min(workers, len(named))
    if on_start is not None:
        on_start(len(named), workers)
    results = run_all(prepared, workers, progress)
    sources = {
        name: Path(item.site).name
        for name, item in zip(names, items, strict=True)
        if not isinstance(item.site, Site)
    }
    return Comparison.from_results(
        results, chosen, top=top, tau=tau, workload=path.name, sources=sources
    )


# --- running ----------------------------------------------------------------------------------


def _as_setup(item: Setup | str | Path | Site) -> Setup:
    return item if isinstance(item, Setup) else Setup(item)


def _resolve(setups: Sequence[Setup]) -> list[tuple[str, Site]]:
    """Load every site, apply policies, check them, and name every setup uniquely."""
    if not setups:
        raise CompareError("nothing to compare: give at least one site")
    loaded: list[tuple[Setup, Site]] = []
    for item in setups:
        if isinstance(item.site, Site) and item.clusters is not None:
            raise CompareError(
                f"setup {item.site.name!r}: clusters replaces a site file's clusters; give the "
                "site as a file, or change the loaded site's clusters yourself"
            )
        site = (
            item.site
            if isinstance(item.site, Site)
            else load_site(item.site, clusters=item.clusters)
        )
        site = site.with_scheduler(item.policy, dict(item.params) if item.params else None)
        make_policy(site.scheduler.policy, site.scheduler.params)  # fail before running
        loaded.append((item, site))

    def auto(item: Setup, site: Site, by_file: bool) -> str:
        base = site.name
        if by_file and not isinstance(item.site, Site):
            base = Path(item.site).name.removesuffix(".yaml").removesuffix(".yml")
        return f"{base}/{item.policy}" if item.policy else base

    names = [item.name or auto(item, site, False) for item, site in loaded]
    clashing = {n for n in names if names.count(n) > 1}
    if clashing:  # two site files with the same `name:` -- tell them apart by file name
        names = [
            n if n not in clashing or item.name else auto(item, site, True)
            for n, (item, site) in zip(names, loaded, strict=True)
        ]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise CompareError(
            f"two setups are both named {', '.join(map(repr, duplicates))}; compare different "
            "setups, or give them distinct names (Setup(name=...))"
        )
    return [(name, site) for name, (_, site) in zip(names, loaded, strict=True)]


#: In a worker process: where its runs write (jobs submitted, jobs) per setup index.
_SHARED: list[Any] = [None]


def _share(counts: Any) -> None:
    _SHARED[0] = counts


def _simulate_one(site: Site, workload: Workload, index: int = -1) -> Result:
    """One setup's run (module level, so that worker processes can be handed it); in a
    worker with a shared progress array, its progress is written there."""
    counts = _SHARED[0]
    if counts is None or index < 0:
        return simulate(site, workload)

    def report(done: int, total: int) -> None:
        counts[2 * index], counts[2 * index + 1] = done, total

    return simulate(site, workload, progress=report)


def likely_cost(site: Site, workload: Workload) -> int:
    """A rough cost of simulating ``workload`` on ``site``, to order runs by: its jobs
    times the pools of the availability profile (every node when the site models memory,
    else every cluster), since a pass's questions walk the pools."""
    pools = (
        sum(c.nodes for c in site.clusters)
        if site.memory is MemoryModel.PER_CPU
        else len(site.clusters)
    )
    return len(workload.jobs) * pools


def longest_first(prepared: Sequence[tuple[str, Site, Workload]]) -> list[int]:
    """The indices of ``prepared`` by :func:`likely_cost`, costliest first (ties in the
    order given)."""
    costs = [likely_cost(site, wl) for _, site, wl in prepared]
    return sorted(range(len(prepared)), key=lambda i: -costs[i])


def run_all(
    prepared: Sequence[tuple[str, Site, Workload]],
    workers: int,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> dict[str, Result]:
    """Run every setup; in worker processes when there are several setups and workers.

    On Linux workers are forked: they start at once and, unlike ``spawn``, do not re-run
    the caller's main script (a script without an ``if __name__ == "__main__"`` guard would
    otherwise start runs recursively). Workers report progress through a shared array
    (no lock), which this process reads while it waits. Elsewhere the platform's default
    start method is used. Results come back in the order of the setups whatever order the
    runs finish in, and each run is deterministic, so they equal sequential runs. The
    likely longest runs are handed to the workers first (:func:`longest_first`), so that
    no long run starts last while the other workers idle.
    """
    submits = [np.sort(wl.jobs["submit"].to_numpy(dtype=np.float64)) for _, _, wl in prepared]

    def tell(i: int, done: int, total: int) -> None:
        assert progress is not None
        progress(prepared[i][0], done, total, simulated_at(submits[i], done))

    if workers == 1 or len(prepared) == 1:
        out = {}
        for i, (name, site, wl) in enumerate(prepared):
            report = None if progress is None else functools.partial(tell, i)
            out[name] = simulate(site, wl, progress=report)
        return out
    context = get_context("fork") if sys.platform.startswith("linux") else get_context()
    counts = context.Array("q", 2 * len(prepared), lock=False) if progress else None
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_share, initargs=(counts,)
    ) as pool:
        futures: list[Any] = [None] * len(prepared)
        for i in longest_first(prepared):
            _, site, wl = prepared[i]
            futures[i] = pool.submit(_simulate_one, site, wl, i)
        try:
            while progress is not None and counts is not None:
                _, pending = wait(futures, timeout=0.25)
                for i in range(len(prepared)):
                    if counts[2 * i + 1]:
                        tell(i, counts[2 * i], counts[2 * i + 1])
                if not pending:
                    break
            return {name: f.result() for (name, _, _), f in zip(prepared, futures, strict=True)}
        except BaseException:
            for f in futures:
                f.cancel()
            raise
