"""Progress of long work on the console: one bar per run (simulated time reached, jobs
submitted so far, jobs per second, time left), shown only once the work has lasted a
second; on a console that is not a terminal, a plain line at each quarter instead; nothing
with ``--quiet`` (the caller then passes no callback at all).

The engine knows nothing of this: it calls ``progress(done, total)`` (jobs submitted so
far, of all) and the command turns that into a display through :class:`RunProgress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from queuesim.site.units import format_duration

__all__ = ["RunProgress", "TaskProgress", "simulated_at"]

#: A bar appears once the work has lasted this long (seconds).
SHOW_AFTER = 1.0


def simulated_at(submits: np.ndarray, done: int) -> float:
    """The simulated time reached once ``done`` jobs are submitted: the last one's submit
    time, from the first's (``submits`` sorted)."""
    if done <= 0 or len(submits) == 0:
        return 0.0
    return float(submits[min(done, len(submits)) - 1] - submits[0])


class _Shown:
    """What both displays share: a rich progress display, once started, stops on exit."""

    bar: Progress | None = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()


class RunProgress(_Shown):
    """Progress bars for runs, one per label, created as runs report."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.perf_counter()
        self.bar: Progress | None = None
        self.tasks: dict[str, TaskID] = {}
        self.quarters: dict[str, int] = {}
        #: when each run reported its start (kernels ready): jobs/s counts from there
        self.begun: dict[str, float] = {}

    def __enter__(self) -> RunProgress:
        return self

    def for_trace(self, label: str, submits: np.ndarray) -> Callable[[int, int], None]:
        """The engine's ``progress(done, total)`` for the run ``label`` of a trace whose
        submit times are ``submits``."""
        ordered = np.sort(np.asarray(submits, dtype=np.float64))

        def update(done: int, total: int) -> None:
            self.update(label, done, total, simulated_at(ordered, done))

        return update

    def update(self, label: str, done: int, total: int, simulated: float) -> None:
        now = time.perf_counter()
        elapsed = now - self.started
        running = now - self.begun.setdefault(label, now)
        # a run's first report starts its clock: no rate until a later one
        rate = f"{done / running:,.0f}" if running > 0 else "-"
        reached = format_duration(simulated)
        if not self.console.is_terminal:
            quarter = 4 * done // max(total, 1)
            if elapsed >= SHOW_AFTER and quarter > self.quarters.get(label, 0) and done < total:
                self.quarters[label] = quarter
                speed = "" if running <= 0 else f", {rate} jobs/s"
                self.console.print(
                    f"{label}: {done:,} of {total:,} jobs submitted, simulated {reached}{speed}",
                    highlight=False,
                )
            return
        if self.bar is None:
            if elapsed < SHOW_AFTER or done >= total:
                return
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("jobs, simulated {task.fields[simulated]}, {task.fields[rate]} jobs/s"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(label, total=total, simulated="0s", rate="-")
        self.bar.update(self.tasks[label], completed=done, simulated=reached, rate=rate)


class TaskProgress(_Shown):
    """Progress of a study: one bar counting its finished tasks (runs, bounds) with the
    last one finished and the time left, shown only once the work has lasted a second; on
    a console that is not a terminal, a plain line at each quarter instead. A study run
    with ``--quiet`` makes none."""

    def __init__(self, console: Console, what: str, total: int) -> None:
        self.console = console
        self.what = what
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.quarter = 0

    def __enter__(self) -> TaskProgress:
        return self

    def finished(self, last: str, total: int | None = None) -> None:
        """One more task is done; ``last`` says which and how it went; ``total``: the number
        of tasks, when the caller learnt it only once the work began."""
        self.done += 1
        self.total = self.total if total is None else total
        elapsed = time.perf_counter() - self.started
        if not self.console.is_terminal:
            quarter = 4 * self.done // max(self.total, 1)
            if elapsed >= SHOW_AFTER and quarter > self.quarter and self.done < self.total:
                self.quarter = quarter
                self.console.print(
                    f"{self.done:,} of {self.total:,} {self.what} done, last: {last}",
                    highlight=False,
                    markup=False,
                )
            return
        if self.bar is None:
            if elapsed < SHOW_AFTER or self.done >= self.total:
                return
            self.bar = Progress(
                TextColumn(self.what),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                TextColumn("last: {task.fields[last]}"),
                console=self.console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.what, total=self.total, last="")
        assert self.task is not None
        self.bar.update(self.task, completed=self.done, last=escape(last))
