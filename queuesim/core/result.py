"""What a simulation produced: the per-job table and the run's facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from queuesim.core.cluster import Allocation
from queuesim.core.workload import Workload
from queuesim.site.model import Site


@dataclass(frozen=True)
class Result:
    """What a simulation produced; metrics and reports read it and never change it."""

    jobs: pd.DataFrame
    site: Site
    policy: str
    params: dict[str, Any]
    workload: Workload
    wall_seconds: float
    passes: int
    #: seconds spent compiling (or loading from the cache) the kernels, not in ``wall_seconds``
    compile_seconds: float = 0.0
    #: ``compiled`` or ``interpreted``: how the kernels ran (:mod:`queuesim.core.kernels`)
    kernels: str = "compiled"
    #: the compiled kernels were not in numba's cache: ``compile_seconds`` compiled them
    compiled_now: bool = False
    #: jobs the passes decided for one by one, over the run (compiled runs; 0 otherwise)
    jobs_scanned: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    #: with ``record_allocations``: job number -> where it ran (for invariant checks)
    allocations: dict[int, Allocation] | None = None
    #: with the site's ``fairshare.usage_log``: time, account, effective usage
    fairshare_usage: pd.DataFrame | None = None

    @property
    def jobs_per_second(self) -> float:
        return len(self.jobs) / self.wall_seconds if self.wall_seconds > 0 else float("inf")
