"""Compare finished runs: paper ``004``'s Table 1 and Table 2, and who lost most.

:meth:`Comparison.from_results` compares runs already made (:func:`queuesim.compare`, in
:mod:`queuesim.studies.compare`, makes them) and holds:

* ``table`` - one row per setup with the metrics of :mod:`queuesim.results.metrics` (Table 1);
* ``against_baseline`` - how wait times changed against one setup, the baseline (Table 2);
  see :func:`against_baseline` for the exact definitions;
* ``losers`` - the users whose mean wait grew the most, per setup (see :func:`losers`);
* ``per_queue`` - every setup's wait figures per queue, with the change against the
  baseline's on the same queue (see :func:`per_queue`);
* ``heatmap(bin)`` - mean wait per queue and time bin, per setup, on shared bins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from queuesim.common.errors import QueuesimError
from queuesim.core.result import Result
from queuesim.results.breakdown import ALL, by_queue
from queuesim.results.heatmap import BinSpec, WaitGrid, shared_grids
from queuesim.results.metrics import WAIT_FIGURES, Metrics, compute_metrics
from queuesim.results.run_facts import RunFacts

__all__ = [
    "LOWER_IS_BETTER",
    "METRIC_COLUMNS",
    "CompareError",
    "Comparison",
    "against_baseline",
    "best_marks",
    "losers",
    "per_queue",
    "pick_baseline",
    "same_figure",
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
#: Two figures closer than this, relatively, are the same (see :func:`same_figure`).
SAME_RTOL = 1e-9
#: How a setup's value of a metric compares with the others' (see :func:`best_marks`).
Mark = Literal["best", "tie", ""]


class CompareError(QueuesimError):
    """The setups of a comparison, or its baseline, are not usable as given."""


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare`; every table is a plain :class:`pandas.DataFrame`."""

    runs: dict[str, RunFacts]  #: every setup's job table and facts, in order
    metrics: dict[str, Metrics]
    baseline: str
    table: pd.DataFrame
    against_baseline: pd.DataFrame
    losers: pd.DataFrame
    per_queue: pd.DataFrame
    top: int
    workload: str = ""  #: the workload file's name, for reports
    sources: dict[str, str] = field(default_factory=dict)  #: setup -> site file name
    #: the simulations themselves, when the comparison was made from them (empty when it
    #: was read back from saved runs); the bundle writes their run folders
    results: dict[str, Result] = field(default_factory=dict)

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
        runs = {name: RunFacts.of(r) for name, r in results.items()}
        comp = cls.from_runs(runs, baseline, top=top, tau=tau, workload=workload, sources=sources)
        return replace(comp, results=dict(results))

    @classmethod
    def from_runs(
        cls,
        runs: Mapping[str, RunFacts],
        baseline: str | None = None,
        *,
        top: int = 5,
        tau: float = 10.0,
        workload: str = "",
        sources: Mapping[str, str] | None = None,
    ) -> Comparison:
        """Compare runs given by their job tables and facts (e.g. read from saved folders)."""
        if not runs:
            raise CompareError("nothing to compare: no setups were given")
        if top < 0:
            raise CompareError(f"--top expects a number of users >= 0, got {top}")
        chosen = pick_baseline(list(runs), baseline)
        metrics = {
            name: compute_metrics(r.jobs, total_cpus=r.total_cpus, tau=tau)
            for name, r in runs.items()
        }
        jobs = {name: r.jobs for name, r in runs.items()}
        return cls(
            runs=dict(runs),
            metrics=metrics,
            baseline=chosen,
            table=metrics_table(metrics),
            against_baseline=against_baseline(jobs, chosen),
            losers=losers(jobs, chosen, top=top),
            per_queue=per_queue(runs, chosen, tau=tau),
            top=top,
            workload=workload,
            sources=dict(sources or {}),
        )

    def heatmap(self, bin: str | float | BinSpec = "day") -> dict[str, WaitGrid]:
        """Mean wait per queue and submit-time bin, per setup, on the same bins."""
        first = next(iter(self.runs.values()))
        tables = {name: (r.jobs, r.queues) for name, r in self.runs.items()}
        return shared_grids(tables, bin, first.clock)


def per_queue(runs: Mapping[str, RunFacts], baseline: str, *, tau: float = 10.0) -> pd.DataFrame:
    """One row per (queue, setup) - queues in the baseline site's order, then the other
    setups' own, then ``(all)``; setups in the comparison's order - with the figures of
    :data:`~.metrics.WAIT_FIGURES` and, for each, ``<figure>_change``: the setup's value less the
    baseline's on the same queue (NaN where the baseline has no job in that queue)."""
    names: list[str] = []
    for run in (runs[baseline], *runs.values()):
        names += [q for q in run.queues if q not in names]
    frames = []
    for setup, run in runs.items():
        frame = by_queue(run.jobs, names, tau=tau)
        frames.append(frame.assign(setup=setup).set_index("setup", append=True))
    table = pd.concat(frames)
    order = [*[n for n in names if n in table.index.get_level_values(0)], ALL]
    table = table.reindex(
        pd.MultiIndex.from_product([order, list(runs)], names=["queue", "setup"])
    ).dropna(subset=["jobs"])
    table["jobs"] = table["jobs"].astype(np.int64)
    base = table.xs(baseline, level="setup")
    for column in WAIT_FIGURES:
        reference = base[column].reindex(table.index.get_level_values("queue")).to_numpy()
        table[f"{column}_change"] = table[column].to_numpy(dtype=np.float64) - reference
    return table


def pick_baseline(names: Sequence[str], baseline: str | None) -> str:
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


def same_figure(a: float, b: float) -> bool:
    """Whether two finite figures are the same, to a relative 1e-9 (what summing in another
    order may change)."""
    return bool(np.isclose(a, b, rtol=SAME_RTOL, atol=0.0))


def best_marks(table: pd.DataFrame) -> dict[str, dict[str, Mark]]:
    """For each compared metric and setup: ``"best"`` when the setup alone holds the best
    finite value, ``"tie"`` when several setups share it (:func:`same_figure`), ``""``
    otherwise. Lower is better except for utilization. With a single setup nothing is
    marked: there is nothing to be best against."""
    out: dict[str, dict[str, Mark]] = {}
    for column in METRIC_COLUMNS:
        if column not in table.columns:
            continue
        values = table[column].astype(float)
        marks: dict[str, Mark] = {str(s): "" for s in values.index}
        finite = values[np.isfinite(values)]
        if len(values) > 1 and not finite.empty:
            target = finite.min() if LOWER_IS_BETTER[column] else finite.max()
            holders = [str(s) for s, v in finite.items() if same_figure(float(v), target)]
            for name in holders:
                marks[name] = "best" if len(holders) == 1 else "tie"
        out[column] = marks
    return out


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
