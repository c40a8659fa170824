"""What a comparison and its report need of one run - its per-job table and a few facts
(site, policy, CPUs, queues, cleaning counts, the trace's clock) - taken from a
:class:`~queuesim.core.result.Result` just simulated or read back from a saved run folder
(:func:`queuesim.reports.run_dir.read_run_dir`), so that a report is made again from saved
outputs without simulating."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from queuesim.core.result import Result
from queuesim.results.heatmap import TraceClock


@dataclass(frozen=True, eq=False)
class RunFacts:
    jobs: pd.DataFrame
    site: str
    policy: str
    params: dict[str, Any]
    total_cpus: int
    queues: tuple[str, ...]  #: the site's queues, in its file's order
    cleaning: dict[str, int]  #: jobs each cleaning rule dropped or repaired
    clock: TraceClock
    workload: str = ""  #: the trace's file name
    extra: dict[str, Any] = field(default_factory=dict)  #: anything else worth showing

    @classmethod
    def of(cls, result: Result) -> RunFacts:
        return cls(
            jobs=result.jobs,
            site=result.site.name,
            policy=result.policy,
            params=dict(result.params),
            total_cpus=result.site.total_cpus,
            queues=tuple(q.name for q in result.site.queues),
            cleaning=dict(result.workload.cleaning.counts),
            clock=TraceClock.of(result),
        )
