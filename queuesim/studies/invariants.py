"""The invariants of :mod:`queuesim.results.invariants` checked on the full real traces,
for every batch policy and the MetaCentrum setups: the maintainers' check before a
release (``queuesim check-invariants``; ``.ci/maintain invariants``).

One run at a time, in this process (the figures are the run's seconds, not a benchmark).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from queuesim.results.invariants import invariant_violations

#: the batch policies every trace runs under (DFRS time-shares nodes: its own checks)
POLICIES = ("fcfs", "easy", "conservative")
#: a site file's own policy, by name in --policy
OWN = "own"


@dataclass(frozen=True)
class Case:
    """One trace on one site under one policy (``own``: the site file's)."""

    trace: str  #: relative to the workloads folder
    site: str  #: a site file name among the bundled ones (or in --site-configs)
    policy: str


def _cases(trace: str, sites: Sequence[str], policies: Sequence[str]) -> list[Case]:
    return [Case(trace, site, policy) for site in sites for policy in policies]


MC = "metacentrum/METACENTRUM-2009-2.swf.gz"
MC_SETUPS = (
    "metacentrum-historic.yaml",
    "metacentrum-conservative.yaml",
    "metacentrum-complex.yaml",
)

#: the release check: KTH-SP2, SDSC-SP2, HPC2N under every batch policy; METACENTRUM-2009
#: under its three setups and wagap-2013 under its site, each with its own policy too
RELEASE = (
    *_cases("KTH-SP2-1996-2.1-cln.swf.gz", ["kth-sp2.yaml"], POLICIES),
    *_cases("SDSC-SP2-1998-4.2-cln.swf.gz", ["sdsc-sp2.yaml"], POLICIES),
    *_cases("HPC2N-2002-2.2-cln.swf.gz", ["hpc2n.yaml"], POLICIES),
    *_cases(MC, MC_SETUPS, (OWN, *POLICIES)),
    *_cases("metacentrum/wagap-2013.swf.gz", ["cerit-wagap.yaml"], (OWN, *POLICIES)),
)
#: the quick check (CI): KTH-SP2 under every batch policy
QUICK = RELEASE[:3]


@dataclass(frozen=True)
class Checked:
    """One case's outcome."""

    case: Case
    jobs: int
    rejected: int
    seconds: float
    violations: tuple[str, ...]


def check_cases(cases: Sequence[Case], workloads: Path, configs: Path) -> Iterator[Checked]:
    """Run each case and check its invariants (a missing trace is a QueuesimError)."""
    from queuesim.common.errors import QueuesimError
    from queuesim.core.workload import CleaningOptions, load_workload
    from queuesim.site.loading import load_site
    from queuesim.studies.simulate import simulate

    for case in cases:
        trace = workloads / case.trace
        if not trace.is_file():
            raise QueuesimError(f"{trace}: trace not found (use --workloads DIR)")
        started = time.perf_counter()
        site = load_site(configs / case.site)
        if case.policy != OWN:
            site = site.with_scheduler(case.policy)
        # jobs no queue can run are rejected and counted (--reject-unrunnable): that each
        # has its reason is one of the invariants
        workload = load_workload(trace, site, CleaningOptions(reject_unrunnable=True))
        result = simulate(site, workload)
        violations = tuple(invariant_violations(result))
        yield Checked(
            case,
            len(result.jobs),
            result.workload.cleaning.rejected,
            time.perf_counter() - started,
            violations,
        )


def select(cases: Sequence[Case], traces: Sequence[str], policies: Sequence[str]) -> list[Case]:
    """The cases whose trace starts with one of ``traces`` (case-insensitive) and whose
    policy is among ``policies`` (all when empty)."""

    def chosen(case: Case) -> bool:
        name = Path(case.trace).name.lower()
        return (not traces or any(name.startswith(t.lower()) for t in traces)) and (
            not policies or case.policy in policies
        )

    return [c for c in cases if chosen(c)]
