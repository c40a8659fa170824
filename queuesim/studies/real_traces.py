"""The real traces the studies and the benchmark run, and the site file of each.

The traces are the Parallel Workloads Archive's cleaned logs in ``../shared/workloads``
(not shipped with queuesim; ``--workloads`` names another folder); each has a site file
among the bundled ones (:mod:`queuesim.common.bundled`) that models its machine.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from queuesim.common.errors import QueuesimError

#: trace file -> the site file that models its machine
TRACE_SITES = {
    "HPC2N-2002-2.2-cln.swf.gz": "hpc2n.yaml",
    "SDSC-BLUE-2000-4.2-cln.swf.gz": "sdsc-blue.yaml",
    "SDSC-SP2-1998-4.2-cln.swf.gz": "sdsc-sp2.yaml",
    "KTH-SP2-1996-2.1-cln.swf.gz": "kth-sp2.yaml",
    "CTC-SP2-1996-3.1-cln.swf.gz": "ctc-sp2.yaml",
    "LLNL-Thunder-2007-1.1-cln.swf.gz": "llnl-thunder.yaml",
    "LLNL-Atlas-2006-2.1-cln.swf.gz": "llnl-atlas.yaml",
    "SDSC-Par-1996-3.1-cln.swf.gz": "sdsc-par96.yaml",
}


@dataclass(frozen=True)
class TraceSpec:
    """One trace of a study: a short name, the trace file and its site file."""

    name: str
    workload: Path
    site: Path


def short_name(trace_file: str) -> str:
    """The name without the archive's version and suffix: ``SDSC-SP2-1998-4.2-cln.swf.gz``
    -> ``SDSC-SP2-1998``, ``HPC2N-2002-2.2-cln.swf.gz`` -> ``HPC2N-2002``."""
    parts = trace_file.split("-")
    kept = list(itertools.takewhile(lambda part: "." not in part, parts))
    return "-".join(kept) or trace_file


def resolve_traces(names: Sequence[str], workloads: Path, configs: Path) -> list[TraceSpec]:
    """Trace files (full names, or short ones such as ``KTH-SP2`` that pick one trace of
    :data:`TRACE_SITES`) to the files of the study, checked to exist."""
    if not configs.is_dir():
        raise QueuesimError(f"{configs}: no site-configs folder here (use --site-configs DIR)")
    specs = []
    for name in names:
        matches = [t for t in TRACE_SITES if t == name] or [
            t for t in TRACE_SITES if t.lower().startswith(name.lower())
        ]
        if len(matches) != 1:
            what = "matches several traces" if matches else "is not a known trace"
            raise QueuesimError(
                f"--trace {name!r} {what}; known traces: " + ", ".join(sorted(TRACE_SITES))
            )
        trace = matches[0]
        path = workloads / trace
        if not path.is_file():
            raise QueuesimError(f"{path}: trace not found (use --workloads DIR)")
        site = configs / TRACE_SITES[trace]
        if not site.is_file():
            raise QueuesimError(f"{site}: site file not found (use --site-configs DIR)")
        specs.append(TraceSpec(short_name(trace), path, site))
    return specs
