"""Where a sweep's cells run: Dask, on this machine, on a running cluster, or on workers
that PBS or Slurm start through dask-jobqueue.

* by default a ``LocalCluster`` of one single-threaded worker process per CPU core
  (``workers`` to choose; ``processes=False`` keeps the workers as threads of this
  process, for tests);
* ``scheduler="tcp://HOST:PORT"``: a cluster already running (``dask scheduler`` and
  ``dask worker ... --nthreads 1`` started by hand, or by a site's tooling);
* ``JobQueue(system="pbs" | "slurm", ...)``: a scheduler here and workers in batch jobs
  submitted with ``qsub`` / ``sbatch`` (dask-jobqueue), each job running ``cores``
  single-threaded workers; :func:`job_script` shows the script without submitting.

Dask and dask-jobqueue are imported here only, when a sweep runs, so that the other
commands do not pay for them at start-up. The workers must see the trace files at the same
paths (a shared file system); each checks the file's checksum before use.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from queuesim.common.errors import QueuesimError
from queuesim.studies.sweep_cell import CellTask, run_cell
from queuesim.studies.sweep_store import write_jobs, write_row

__all__ = ["Execution", "JobQueue", "SweepProgress", "connect", "job_script", "run_tasks"]

#: what the dry run puts where the scheduler's address will be
SCHEDULER_PLACEHOLDER = "tcp://SCHEDULER-HOST:8786"


@dataclass(frozen=True)
class JobQueue:
    """Workers from a batch system through dask-jobqueue: ``jobs`` batch jobs, each with
    ``cores`` CPUs (one single-threaded worker each), ``memory`` in all (e.g. ``16GB``),
    ``walltime`` (``HH:MM:SS``), in ``queue`` (a PBS queue, a Slurm partition), charged to
    ``account``."""

    system: Literal["pbs", "slurm"]
    jobs: int = 1
    cores: int = 1
    memory: str = "4GB"
    walltime: str = "01:00:00"
    queue: str | None = None
    account: str | None = None
    prologue: tuple[str, ...] = ()  #: shell lines run before the workers (module load ...)

    def job_kwargs(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "account": self.account,
            "cores": self.cores,
            "processes": self.cores,
            "memory": self.memory,
            "walltime": self.walltime,
            "job_name": "queuesim-sweep",
            "job_script_prologue": list(self.prologue),
        }


@dataclass(frozen=True)
class Execution:
    """Where the cells run (see the module docstring); the default is a LocalCluster."""

    workers: int | None = None
    scheduler: str | None = None
    jobqueue: JobQueue | None = None
    processes: bool = True

    def __post_init__(self) -> None:
        if self.scheduler is not None and self.jobqueue is not None:
            raise QueuesimError("give either a scheduler address or a batch cluster, not both")
        if self.workers is not None and self.workers < 1:
            raise QueuesimError(f"workers must be at least 1, got {self.workers}")
        if self.scheduler is not None and "://" not in self.scheduler:
            raise QueuesimError(
                f"scheduler expects an address like tcp://HOST:8786, got {self.scheduler!r}"
            )


@dataclass(frozen=True)
class SweepProgress:
    """Where a sweep stands: cells to run, ended (of which failed), and running now - the
    cells not ended, up to the workers' threads (the scheduler holds the rest back)."""

    total: int
    done: int
    failed: int
    running: int
    dashboard: str | None = None


def _job_class(system: str) -> Any:
    if system == "pbs":
        from dask_jobqueue.pbs import PBSJob

        return PBSJob
    from dask_jobqueue.slurm import SLURMJob

    return SLURMJob


def job_script(jobqueue: JobQueue, scheduler: str = SCHEDULER_PLACEHOLDER) -> str:
    """The batch script one worker job would be submitted with (nothing is submitted)."""
    job = _job_class(jobqueue.system)(
        scheduler=scheduler, name="queuesim-sweep", **jobqueue.job_kwargs()
    )
    text: str = job.job_script()
    return text


def _dashboard(client: Any) -> str | None:
    """The dashboard's address when the scheduler serves one (it needs bokeh)."""
    if importlib.util.find_spec("bokeh") is None:
        return None
    link = getattr(client, "dashboard_link", None)
    return str(link) if link else None


@contextlib.contextmanager
def connect(execution: Execution) -> Iterator[Any]:
    """A Dask client for ``execution``; the cluster it started is closed on the way out."""
    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if execution.scheduler is not None:
        try:
            client = Client(execution.scheduler, timeout="20s")
        except OSError as exc:
            raise QueuesimError(
                f"cannot reach the scheduler {execution.scheduler}: {exc}"
            ) from None
        with client:
            yield client
        return
    if execution.jobqueue is not None:
        jq = execution.jobqueue
        import dask_jobqueue

        kind = dask_jobqueue.PBSCluster if jq.system == "pbs" else dask_jobqueue.SLURMCluster
        cluster = kind(**jq.job_kwargs())
        cluster.scale(jobs=jq.jobs)
    else:
        workers = execution.workers or os.cpu_count() or 1
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=execution.processes,
            dashboard_address=":0",  # a free port: two sweeps on one machine do not clash
            silence_logs=logging.ERROR,
        )
    with cluster, Client(cluster) as client:
        yield client


def run_tasks(
    client: Any,
    tasks: Sequence[CellTask],
    out: Path,
    on_progress: Callable[[SweepProgress], None] | None = None,
) -> int:
    """Run every task on ``client``'s workers, writing each row (and per-job table) as its
    cell ends; returns the number of failed cells. A task whose worker died is recorded
    as failed too. Interrupted (Ctrl-C), the cells still queued are cancelled; the rows
    already written stay, so the next run resumes."""
    from distributed import as_completed

    dashboard = _dashboard(client)
    futures = {
        client.submit(run_cell, task, key=f"queuesim-cell-{task.key}", pure=False): task
        for task in tasks
    }
    done = failed = 0

    def report() -> None:
        if on_progress is not None:
            threads = sum(client.nthreads().values()) if futures else 0
            running = min(len(tasks) - done, threads)
            on_progress(SweepProgress(len(tasks), done, failed, running, dashboard))

    report()
    try:
        for future in as_completed(futures):
            task = futures[future]
            jobs: pd.DataFrame | None = None
            try:
                row, jobs = future.result()
            except Exception as exc:  # the worker died or could not unpickle the task
                row = {"key": task.key, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}
            if jobs is not None:
                write_jobs(out, task.key, jobs)
            write_row(out, row)
            done += 1
            failed += row["status"] != "done"
            report()
    except BaseException:
        client.cancel(list(futures))
        raise
    return failed
