"""The DFRS study's configuration: its algorithms and instances, and the figures of its runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from queuesim.common import bundled
from queuesim.common.errors import ConfigError, QueuesimError

if TYPE_CHECKING:  # pandas only in annotations: the command line's options need this module
    import pandas as pd

    from queuesim.reports.document import Report


#: the batch baselines of both papers (they never preempt: one run serves every penalty)
BATCH_ALGORITHMS = ("FCFS", "EASY")
#: the DFRS algorithms of ``002`` Fig. 1 (OPT=MIN, as there) and ``000``'s DynMCB8 variants
DFRS_ALGORITHMS = (
    "Greedy*/OPT=MIN",
    "GreedyP*/OPT=MIN",
    "GreedyPM*/OPT=MIN",
    "DynMCB8-per/OPT=MIN",
    "DynMCB8-asap-per/OPT=MIN",
    "GreedyPM*/per/OPT=MIN/MINVT=600",
)
DEFAULT_ALGORITHMS = BATCH_ALGORITHMS + DFRS_ALGORITHMS
DEFAULT_LOADS = tuple(round(0.1 * k, 1) for k in range(1, 10))
#: no penalty, and the papers' 5-minute rescheduling penalty
DEFAULT_PENALTIES = (0.0, 300.0)
DEFAULT_TRACES_PER_LOAD = 4
DEFAULT_JOBS = 500
DEFAULT_HPC2N_WEEKS = 8
DEFAULT_SEED = 1
DEFAULT_OUT = "reports/dfrs"
#: generated traces and the bounds' cache (``out/`` is ignored by git)
DEFAULT_CACHE = "out/dfrs-cache"
#: the HPC2N log whose first weeks are the study's real instances
HPC2N_TRACE = "HPC2N-2002-2.2-cln.swf.gz"
TAU = 10.0  #: bounded-stretch threshold (s), as in ``002``
RTOL = 1e-3  #: relative accuracy of the bound's binary search
#: a degradation from bound below ``1 - BOUND_SLACK`` would mean the bound is wrong
BOUND_SLACK = 1e-6


def load_text(load: float) -> str:
    """A load level as the study writes it (``0.1``, ``0.9``)."""
    return f"{load:g}"


#: the batch policies' registered names, by the label the papers give them
_BATCH_POLICIES = {"FCFS": "fcfs", "EASY": "easy"}
_PNG_METADATA: dict[str, Any] = {"Software": None}
_RC: Any = {"font.size": 9}


# --- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of the study: its label in the tables, the policy name given to
    :func:`~queuesim.studies.simulate.simulate`, and whether it takes the rescheduling
    ``penalty``."""

    label: str
    policy: str
    uses_penalty: bool


@dataclass(frozen=True)
class StudyConfig:
    """What to run (see the module docstring)."""

    loads: tuple[float, ...] = DEFAULT_LOADS
    traces_per_load: int = DEFAULT_TRACES_PER_LOAD
    jobs: int = DEFAULT_JOBS
    seed: int = DEFAULT_SEED
    hpc2n_weeks: int = DEFAULT_HPC2N_WEEKS
    penalties: tuple[float, ...] = DEFAULT_PENALTIES
    algorithms: tuple[AlgorithmSpec, ...] = ()
    cache: Path = Path(DEFAULT_CACHE)
    workloads: Path = Path("..", "shared", "workloads")
    site_configs: Path = field(default_factory=bundled.site_configs_folder)


@dataclass(frozen=True)
class Instance:
    """One trace of the study, written in the cache, with the site file it runs on."""

    name: str
    trace_set: str  #: :data:`SYNTHETIC` or :data:`HPC2N`
    load: float | None
    seed: int | None
    week: int | None
    path: Path
    site: Path
    hosts: int
    jobs: int = 0  #: jobs left after the workload's cleaning
    digest: str = ""  #: of the bound's inputs (:func:`bound_digest`)


@dataclass(frozen=True)
class BoundFigures:
    """The lower bound of one instance."""

    instance: str
    digest: str
    hosts: int
    bound: float
    upper: float
    solves: int
    seconds: float


@dataclass(frozen=True)
class RunFigures:
    """What one (instance, algorithm, penalty) simulation contributes; ``penalty`` is None
    for an algorithm that does not take one."""

    instance: str
    algorithm: str
    penalty: float | None
    max_stretch: float
    preemptions: int
    migrations: int
    moved_memory_mb: float
    run_seconds: float


@dataclass
class StudyResult:
    """What :func:`run_study` computed and wrote."""

    frame: pd.DataFrame  #: the rows of ``study.csv``
    timings: pd.DataFrame  #: the rows of ``timings.csv``
    instances: list[Instance]
    notes: list[str]
    bounds_computed: int
    bounds_cached: int
    seconds: float
    files: list[Path] = field(default_factory=list)
    report: Report | None = None  #: what ``study.md`` and ``study.html`` render


# --- algorithms ---------------------------------------------------------------------------


def _penalty_value(penalty: float) -> int | float:
    """Seconds as an int when whole (a policy may declare the parameter as int)."""
    return int(penalty) if float(penalty).is_integer() else float(penalty)


def _policy_works(name: str, params: dict[str, Any] | None) -> bool:
    from queuesim.policies.registry import make_policy

    try:
        make_policy(name, params)
    except QueuesimError:
        return False
    return True


def _available(penalties: Sequence[float]) -> list[str]:
    """The study's own algorithms that this build can run, then the other policies."""
    from queuesim.policies.registry import known_policies

    study = [
        name
        for name in DEFAULT_ALGORITHMS
        if name in _BATCH_POLICIES
        or all(_policy_works(name, {"penalty": _penalty_value(p)}) for p in penalties)
    ]
    taken = {_BATCH_POLICIES.get(name, name) for name in study}
    return study + [p for p in known_policies() if p not in taken]


def resolve_algorithms(names: Sequence[str], penalties: Sequence[float]) -> list[AlgorithmSpec]:
    """Algorithm names (the study's labels such as ``EASY`` or ``GreedyPM*/OPT=MIN``, or any
    registered policy) to what the runs need; an algorithm takes the penalty when its policy
    accepts a ``penalty`` parameter. An unknown name is an error listing the valid ones."""
    from queuesim.policies.registry import known_policies

    specs: list[AlgorithmSpec] = []
    registered = {p.lower(): p for p in known_policies()}
    for name in names:
        batch = next((b for b in _BATCH_POLICIES if b.lower() == name.lower()), None)
        if batch is not None:
            spec = AlgorithmSpec(batch, _BATCH_POLICIES[batch], uses_penalty=False)
        elif all(_policy_works(name, {"penalty": _penalty_value(p)}) for p in penalties):
            spec = AlgorithmSpec(name, name, uses_penalty=True)
        elif _policy_works(registered.get(name.lower(), name), None):
            policy = registered.get(name.lower(), name)
            label = next((b for b, p in _BATCH_POLICIES.items() if p == policy), policy)
            spec = AlgorithmSpec(label, policy, uses_penalty=False)
        else:
            valid = ", ".join(_available(penalties))
            if name in DFRS_ALGORITHMS:
                raise ConfigError(
                    f"algorithm {name!r} is one of the study's DFRS algorithms, but this "
                    f"build has no such policy (or it takes no 'penalty'); valid: {valid}"
                )
            raise ConfigError(f"unknown algorithm {name!r}; valid: {valid}")
        if any(s.label == spec.label for s in specs):
            raise ConfigError(f"algorithm {spec.label!r} is given twice")
        specs.append(spec)
    if not specs:
        raise ConfigError("no algorithm to run")
    return specs
