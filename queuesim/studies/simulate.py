"""The Python API, mirroring the command line, for scripts and notebooks.

>>> import queuesim
>>> result = queuesim.simulate("site-configs/kth-sp2.yaml", "workloads/kth-sp2-sample.swf",
...                            policy="easy")                          # doctest: +SKIP
>>> result.metrics.awwt                                                  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from queuesim.core.engine import Simulation
from queuesim.core.kernels import KernelMode
from queuesim.core.result import Result
from queuesim.core.workload import CleaningOptions, Workload, load_workload
from queuesim.policies.registry import make_policy
from queuesim.results.metrics import Metrics, compute_metrics
from queuesim.site.loading import load_site
from queuesim.site.model import Site


def simulate(
    site: Site | str | Path,
    workload: Workload | str | Path,
    policy: str | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    cleaning: CleaningOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
    kernels: KernelMode = "auto",
    on_compile: Callable[[], None] | None = None,
) -> Result:
    """Replay ``workload`` on ``site``; ``policy`` and ``params`` override the site file's.
    ``kernels``: ``auto``, ``compiled`` or ``interpreted`` (:mod:`queuesim.core.kernels`);
    ``on_compile`` is called before the run when its kernels are about to be compiled (not
    in numba's cache yet)."""
    if not isinstance(site, Site):
        site = load_site(site)
    site = site.with_scheduler(policy, dict(params) if params else None)
    if not isinstance(workload, Workload):
        workload = load_workload(workload, site, cleaning or CleaningOptions())
    scheduler = make_policy(site.scheduler.policy, site.scheduler.params)
    sim = Simulation(
        site,
        workload,
        scheduler,
        params=site.scheduler.params,
        progress=progress,
        kernels=kernels,
        on_compile=on_compile,
    )
    return sim.run()


def metrics_of(result: Result, *, tau: float = 10.0) -> Metrics:
    """The metrics of a result (bounded slowdown threshold ``tau`` seconds)."""
    return compute_metrics(result.jobs, total_cpus=result.site.total_cpus, tau=tau)
