"""Compare setups on one workload: paper ``004``'s Table 1 and Table 2, and who lost most.

A *setup* is a site file (queues, estimates, policy) with, optionally, another policy and
parameters. :func:`compare` replays the same workload through each setup - in parallel on
the local cores when there are several, with results identical to sequential runs since
each simulation is deterministic - and returns a :class:`Comparison`:

* ``table`` - one row per setup with the metrics of :mod:`queuesim.metrics` (Table 1);
* ``against_baseline`` - how wait times changed against one setup, the baseline (Table 2);
  see :func:`against_baseline` for the exact definitions;
* ``losers`` - the users whose mean wait grew the most, per setup (see :func:`losers`);
* ``heatmap(bin)`` - mean wait per queue and time bin, per setup, on shared bins.

The module is named ``comparison`` rather than ``compare`` so that the package-level
function ``queuesim.compare`` does not shadow a submodule of the same name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.alea import read_trace
from queuesim.api import simulate
from queuesim.engine import Result
from queuesim.errors import QueuesimError
from queuesim.heatmap import BinSpec, WaitGrid, shared_grids
from queuesim.metrics import Metrics, compute_metrics
from queuesim.policy import make_policy
from queuesim.site import Site, load_site
from queuesim.workload import CleaningOptions, Workload, prepare

__all__ = [
    "LOWER_IS_BETTER",
    "METRIC_COLUMNS",
    "CompareError",
    "Comparison",
    "Setup",
    "against_baseline",
    "best_setups",
    "compare",
    "losers",
    "setups_for",
]

#: The metrics compared side by side, in display order (keys of :class:`Metrics`).
METRIC_COLUMNS = (
    "awwt",
    "awrt",
    "awsd",
    "anuwt",
    "nuwt_dev",
    "mean_wait",
    "mean_bounded_slowdown",
    "utilization",
)
#: For each compared metric, whether a lower value is better (all but utilization).
LOWER_IS_BETTER = {name: name != "utilization" for name in METRIC_COLUMNS}

#: Columns of :attr:`Comparison.against_baseline`, in order.
AGAINST_COLUMNS = (
    "matched_jobs",
    "unmatched_jobs",
    "users",
    "users_improved_pct",
    "jobs_improved_pct",
    "mean_improvement_h",
    "users_deteriorated_pct",
    "jobs_deteriorated_pct",
    "mean_deterioration_h",
    "mean_user_improvement_h",
    "mean_user_deterioration_h",
)
#: Columns of :attr:`Comparison.losers`, in order.
LOSER_COLUMNS = ("setup", "user", "jobs", "baseline_mean_wait_h", "mean_wait_h", "change_h")

HOUR = 3600.0


class CompareError(QueuesimError):
    """The setups of a comparison, or its baseline, are not usable as given."""


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


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare`; every table is a plain :class:`pandas.DataFrame`."""

    results: dict[str, Result]
    metrics: dict[str, Metrics]
    baseline: str
    table: pd.DataFrame
    against_baseline: pd.DataFrame
    losers: pd.DataFrame
    top: int
    workload: str = ""  #: the workload file's name, for reports
    sources: dict[str, str] = field(default_factory=dict)  #: setup -> site file name

    @classmethod
    def from_results(
        cls,
        results: Mapping[str, Result],
        baseline: str | None = None,
        *,
        top: int = 5,
        tau: float = 10.0,
        workload: str = "",
        sources: Mapping[str, str] | None = None,
    ) -> Comparison:
        """Compare finished runs (named by the mapping's keys, in its order)."""
        if not results:
            raise CompareError("nothing to compare: no setups were given")
        if top < 0:
            raise CompareError(f"--top expects a number of users >= 0, got {top}")
        names = list(results)
        chosen = _pick_baseline(names, baseline)
        metrics = {
            name: compute_metrics(r.jobs, total_cpus=r.site.total_cpus, tau=tau)
            for name, r in results.items()
        }
        jobs = {name: r.jobs for name, r in results.items()}
        return cls(
            results=dict(results),
            metrics=metrics,
            baseline=chosen,
            table=metrics_table(metrics),
            against_baseline=against_baseline(jobs, chosen),
            losers=losers(jobs, chosen, top=top),
            top=top,
            workload=workload,
            sources=dict(sources or {}),
        )

    def heatmap(self, bin: str | float | BinSpec = "day") -> dict[str, WaitGrid]:
        """Mean wait per queue and submit-time bin, per setup, on the same bins."""
        return shared_grids(self.results, bin)


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

    Every input is checked before any simulation starts: site files, policies, names, the
    baseline, and the workload prepared for every site.

    Raises:
        CompareError: no setups, duplicate names, or a baseline that is not a setup.
        QueuesimError: a site file, policy or the workload is invalid (e.g. empty).
    """
    items = [_as_setup(s) for s in setups]
    named = _resolve(items)
    names = [name for name, _ in named]
    chosen = _pick_baseline(names, baseline)
    if top < 0:
        raise CompareError(f"top expects a number of users >= 0, got {top}")
    cleaning = cleaning or CleaningOptions()
    path = Path(workload)
    trace = read_trace(path, skip_bad_lines=cleaning.skip_bad_lines)
    prepared = [(name, site, prepare(trace, site, cleaning)) for name, site in named]
    if workers is None:
        workers = min(len(named), os.cpu_count() or 1)
    if workers < 1:
        raise CompareError(f"workers must be at least 1, got {workers}")
    workers = min(workers, len(named))
    if on_start is not None:
        on_start(len(named), workers)
    results = _run_all(prepared, workers)
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


def _pick_baseline(names: Sequence[str], baseline: str | None) -> str:
    if baseline is None:
        return names[0]
    if baseline in names:
        return baseline
    by_policy = [n for n in names if n.rpartition("/")[2] == baseline and "/" in n]
    if len(by_policy) == 1:
        return by_policy[0]
    raise CompareError(
        f"baseline {baseline!r} is not among the setups; they are: {', '.join(names)}"
    )


def _simulate_one(site: Site, workload: Workload) -> Result:
    """One setup's run (module level, so that worker processes can be handed it)."""
    return simulate(site, workload)


def _run_all(prepared: Sequence[tuple[str, Site, Workload]], workers: int) -> dict[str, Result]:
    """Run every setup; in worker processes when there are several setups and workers.

    On Linux workers are forked: they start at once and, unlike ``spawn``, do not re-run
    the caller's main script (a script without an ``if __name__ == "__main__"`` guard would
    otherwise start runs recursively). Nothing here runs a thread while forking (no live
    progress display), so no lock can be inherited held. Elsewhere the platform's default
    start method is used. Results come back in the order of the setups whatever order the
    runs finish in, and each run is deterministic, so they equal sequential runs.
    """
    if workers == 1 or len(prepared) == 1:
        return {name: _simulate_one(site, wl) for name, site, wl in prepared}
    context = get_context("fork") if sys.platform.startswith("linux") else get_context()
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_simulate_one, site, wl) for _, site, wl in prepared]
        try:
            return {name: f.result() for (name, _, _), f in zip(prepared, futures, strict=True)}
        except BaseException:
            for f in futures:
                f.cancel()
            raise


# --- tables -----------------------------------------------------------------------------------


def metrics_table(metrics: Mapping[str, Metrics]) -> pd.DataFrame:
    """One row per setup (index ``setup``): ``jobs``, ``users`` and :data:`METRIC_COLUMNS`."""
    rows = {
        name: {"jobs": m.jobs, "users": m.users, **{c: getattr(m, c) for c in METRIC_COLUMNS}}
        for name, m in metrics.items()
    }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "setup"
    return table


def best_setups(
    table: pd.DataFrame, *, shown: Callable[[str, float], str] | None = None
) -> dict[str, set[str]]:
    """For each compared metric, the setups with the best value (ties: all of them, to a
    relative 1e-9). Lower is better except for utilization.

    With ``shown`` (column, value) -> displayed text, a setup whose value *displays* the
    same as a best one's is counted best too: a reader who sees two equal figures should
    not find only one of them highlighted.
    """
    best: dict[str, set[str]] = {}
    for column in METRIC_COLUMNS:
        if column not in table.columns:
            continue
        values = table[column].astype(float)
        finite = values[np.isfinite(values)]
        if finite.empty:
            best[column] = set()
            continue
        target = finite.min() if LOWER_IS_BETTER[column] else finite.max()
        close = np.isclose(finite, target, rtol=1e-9, atol=0.0)
        best[column] = {str(s) for s in finite.index[close]}
        if shown is not None:
            texts = {shown(column, float(finite[s])) for s in finite.index[close]}
            best[column] |= {
                str(s) for s in finite.index if shown(column, float(finite[s])) in texts
            }
    return best


def _matched(base: pd.DataFrame, other: pd.DataFrame, name: str) -> tuple[pd.DataFrame, int]:
    """Jobs present in both runs, matched by ``job_id``: user, baseline wait, setup wait."""
    for label, table in (("the baseline", base), (repr(name), other)):
        duplicated = table["job_id"].duplicated()
        if duplicated.any():
            first = table["job_id"][duplicated].iloc[0]
            raise CompareError(
                f"job_id {first} appears twice in the jobs of {label}; jobs are matched "
                "across setups by job_id, which must be unique"
            )
    matched = base[["job_id", "user", "wait"]].merge(
        other[["job_id", "wait"]], on="job_id", how="inner", suffixes=("_base", "_setup")
    )
    unmatched = len(base) + len(other) - 2 * len(matched)
    return matched, unmatched


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else float("nan")


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else float("nan")


def against_baseline(jobs: Mapping[str, pd.DataFrame], baseline: str) -> pd.DataFrame:
    """How each setup's wait times compare with the baseline's (paper ``004``, Table 2).

    Jobs are matched across runs by ``job_id``; only jobs present in both runs count (a
    site may reject jobs the other runs; their number is ``unmatched_jobs``). With ``w_b``
    a job's wait in the baseline and ``w_s`` in the setup:

    * a job *improved* if ``w_s < w_b`` strictly, *deteriorated* if ``w_s > w_b``
      strictly; equal waits are neither;
    * a user *improved* if the user's mean wait over their matched jobs is strictly smaller
      in the setup than in the baseline (deteriorated: strictly larger);
    * ``users_improved_pct`` / ``jobs_improved_pct`` (and ``_deteriorated_``) are
      percentages of all matched users / jobs, unchanged ones included;
    * ``mean_improvement_h`` is, as in the paper, per *job*: the mean of ``w_b - w_s`` over
      the improved jobs, in hours; ``mean_deterioration_h`` the mean of ``w_s - w_b`` over
      the deteriorated jobs. ``mean_user_improvement_h`` / ``mean_user_deterioration_h``
      are the same over improved / deteriorated *users*, of the change in their mean wait.
      A mean over no job or user is NaN.

    Returns one row per setup other than the baseline (index ``setup``), with the columns
    of :data:`AGAINST_COLUMNS`.
    """
    if baseline not in jobs:
        raise CompareError(f"baseline {baseline!r} is not among the setups: {', '.join(jobs)}")
    base = jobs[baseline]
    rows: dict[str, dict[str, float | int]] = {}
    for name, table in jobs.items():
        if name == baseline:
            continue
        m, unmatched = _matched(base, table, name)
        delta = m["wait_setup"] - m["wait_base"]  # > 0: the job waits longer in the setup
        by_user = m.groupby("user", sort=True)[["wait_base", "wait_setup"]].mean()
        user_delta = by_user["wait_setup"] - by_user["wait_base"]
        improved, worse = delta < 0, delta > 0
        users_improved, users_worse = user_delta < 0, user_delta > 0
        rows[name] = {
            "matched_jobs": len(m),
            "unmatched_jobs": unmatched,
            "users": len(by_user),
            "users_improved_pct": _pct(int(users_improved.sum()), len(by_user)),
            "jobs_improved_pct": _pct(int(improved.sum()), len(m)),
            "mean_improvement_h": _mean(-delta[improved]) / HOUR,
            "users_deteriorated_pct": _pct(int(users_worse.sum()), len(by_user)),
            "jobs_deteriorated_pct": _pct(int(worse.sum()), len(m)),
            "mean_deterioration_h": _mean(delta[worse]) / HOUR,
            "mean_user_improvement_h": _mean(-user_delta[users_improved]) / HOUR,
            "mean_user_deterioration_h": _mean(user_delta[users_worse]) / HOUR,
        }
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(AGAINST_COLUMNS))
    table.index.name = "setup"
    return table


def losers(jobs: Mapping[str, pd.DataFrame], baseline: str, *, top: int = 5) -> pd.DataFrame:
    """Per setup, the ``top`` users whose mean wait grew the most against the baseline.

    A user's mean wait is taken over their jobs present in both runs (matched by
    ``job_id``), in each run; ``change_h`` is the setup's mean minus the baseline's, in
    hours, and only users with ``change_h > 0`` are listed. Ranking is by ``change_h``
    (what a user experiences per job), then by more jobs, then by user id; ``jobs`` lets a
    reader weigh a one-job user against a heavy one. Columns: :data:`LOSER_COLUMNS`.
    """
    if baseline not in jobs:
        raise CompareError(f"baseline {baseline!r} is not among the setups: {', '.join(jobs)}")
    parts = []
    for name, table in jobs.items():
        if name == baseline:
            continue
        m, _ = _matched(jobs[baseline], table, name)
        by_user = m.groupby("user", sort=True).agg(
            jobs=("job_id", "size"), base=("wait_base", "mean"), setup=("wait_setup", "mean")
        )
        frame = pd.DataFrame(
            {
                "setup": name,
                "user": by_user.index.to_numpy(),
                "jobs": by_user["jobs"].to_numpy(dtype=np.int64),
                "baseline_mean_wait_h": by_user["base"].to_numpy() / HOUR,
                "mean_wait_h": by_user["setup"].to_numpy() / HOUR,
            }
        )
        frame["change_h"] = frame["mean_wait_h"] - frame["baseline_mean_wait_h"]
        frame = frame[frame["change_h"] > 0].sort_values(
            ["change_h", "jobs", "user"], ascending=[False, False, True], kind="mergesort"
        )
        parts.append(frame.head(top))
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in LOSER_COLUMNS})
    return pd.concat(parts, ignore_index=True).loc[:, list(LOSER_COLUMNS)]
