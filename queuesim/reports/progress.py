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
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from queuesim.site.units import format_duration

__all__ = ["RunProgress", "simulated_at"]

#: A bar appears once the work has lasted this long (seconds).
SHOW_AFTER = 1.0


def simulated_at(submits: np.ndarray, done: int) -> float:
    """The simulated time reached once ``done`` jobs are submitted: the last one's submit
    time, from the first's (``submits`` sorted)."""
    if done <= 0 or len(submits) == 0:
        return 0.0
    return float(submits[min(done, len(submits)) - 1] - submits[0])


class RunProgress:
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

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

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
        rate = done / running if running > 0 else 0.0
        reached = format_duration(simulated)
        if not self.console.is_terminal:
            quarter = 4 * done // max(total, 1)
            if elapsed >= SHOW_AFTER and quarter > self.quarters.get(label, 0) and done < total:
                self.quarters[label] = quarter
                self.console.print(
                    f"{label}: {done:,} of {total:,} jobs submitted, simulated {reached}, "
                    f"{rate:,.0f} jobs/s",
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
        self.bar.update(self.tasks[label], completed=done, simulated=reached, rate=f"{rate:,.0f}")
