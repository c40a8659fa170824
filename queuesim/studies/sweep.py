"""``queuesim.sweep``: every cell of a sweep spec run on Dask, kept, and tabled.

>>> import queuesim
>>> table = queuesim.sweep("site-configs/sweeps/metacentrum-complex-24.yaml",
...                        out="out/sweep", workers=2)              # doctest: +SKIP
>>> table[["half_life", "long_pool", "awwt", "nuwt_dev"]]              # doctest: +SKIP

Cells already in ``out`` (same content hash: resolved site, trace checksum, load factor,
cleaning, tau, version) are not run again, so a sweep resumes after an interruption and a
sweep with more axis values runs only its new cells (:mod:`queuesim.studies.sweep_store`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from queuesim.common.errors import QueuesimError
from queuesim.studies.sweep_run import Execution, JobQueue, SweepProgress, connect, run_tasks
from queuesim.studies.sweep_spec import Cell, SweepSpec, expand, read_spec
from queuesim.studies.sweep_store import finished_keys, read_rows

__all__ = ["Plan", "cell_table", "plan", "sweep"]


@dataclass(frozen=True)
class Plan:
    """A sweep before it runs: the spec, its cells, where results go, what is left to do."""

    spec: SweepSpec
    cells: list[Cell]
    out: Path
    todo: list[Cell]

    @property
    def skipped(self) -> int:
        return len(self.cells) - len(self.todo)


def default_out(spec: SweepSpec) -> Path:
    """Where results go without ``out``: ``sweep-<name>`` in the current folder."""
    return Path(f"sweep-{spec.name}")


def plan(spec_path: str | Path, out: str | Path | None = None) -> Plan:
    """Read and check the spec (every cell, before anything runs) and find the cells
    ``out`` does not hold yet."""
    spec_path = Path(spec_path)
    spec = read_spec(spec_path)
    cells = expand(spec, spec_path.parent, where=str(spec_path))
    folder = Path(out) if out is not None else default_out(spec)
    finished = finished_keys(folder)
    return Plan(spec, cells, folder, [c for c in cells if c.key not in finished])


def run_plan(
    the_plan: Plan,
    execution: Execution | None = None,
    *,
    keep_jobs: bool = False,
    on_progress: Callable[[SweepProgress], None] | None = None,
    on_connect: Callable[[object], None] | None = None,
) -> int:
    """Run the cells left to do; the number that failed."""
    from queuesim.studies.sweep_cell import CellTask

    if not the_plan.todo:
        return 0
    tasks = [
        CellTask(
            c.key,
            c.site,
            str(c.trace.resolve()),
            c.checksum,
            c.load_factor,
            c.cleaning,
            c.tau,
            keep_jobs,
        )
        for c in the_plan.todo
    ]
    execution = execution or Execution()
    with connect(execution) as client:
        if on_connect is not None:
            on_connect(client)
        return run_tasks(client, tasks, the_plan.out, on_progress)


def cell_table(cells: Sequence[Cell], out: Path) -> pd.DataFrame:
    """One row per cell, in the spec's order: ``cell`` (its number), the axis values, the
    trace, ``key``, then the stored row (metrics, per-queue figures, status, error);
    cells not run yet have ``status`` ``pending``."""
    axes = list(dict.fromkeys(name for c in cells for name in c.values))
    frame = pd.DataFrame(
        {
            "cell": [c.index for c in cells],
            **{a: [c.values.get(a) for c in cells] for a in axes},
            "trace_file": [c.trace_name for c in cells],
            "key": [c.key for c in cells],
        }
    )
    try:
        # an axis named like a stored column (``policy``) holds the same value: keep the axis
        rows = read_rows(out).drop(columns=["trace", *axes], errors="ignore")
    except QueuesimError:  # nothing stored yet
        rows = pd.DataFrame({"key": pd.Series(dtype=str), "status": pd.Series(dtype=str)})
    table = frame.merge(rows, on="key", how="left")
    table["status"] = table["status"].fillna("pending")
    return table


def sweep(
    spec: str | Path,
    out: str | Path | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    jobqueue: JobQueue | None = None,
    processes: bool = True,
    keep_jobs: bool = False,
    on_progress: Callable[[SweepProgress], None] | None = None,
) -> pd.DataFrame:
    """Run the sweep ``spec`` (a YAML file) on Dask and return its table (:func:`cell_table`).

    Args:
        spec: the sweep spec (see :mod:`queuesim.studies.sweep_spec`).
        out: the results folder; default ``sweep-<name>``. Cells it holds are not rerun.
        workers: local worker processes (default: CPU cores); ``processes=False`` runs
            them as threads of this process.
        scheduler: ``tcp://HOST:PORT`` of a running Dask scheduler instead.
        jobqueue: workers from PBS or Slurm instead (:class:`JobQueue`).
        keep_jobs: also keep each cell's per-job table (``out/jobs/<key>.parquet``).
        on_progress: called as cells end (:class:`SweepProgress`).

    Raises:
        ConfigError: the spec or a cell is invalid (every cell named), before any run.
    """
    execution = Execution(workers, scheduler, jobqueue, processes)
    the_plan = plan(spec, out)
    run_plan(the_plan, execution, keep_jobs=keep_jobs, on_progress=on_progress)
    return cell_table(the_plan.cells, the_plan.out)
