"""``queuesim bench``: jobs simulated per second on full real traces.

Each (trace, policy) run happens in a fresh Python process, so that its peak memory
(the child's maximum resident set size, from ``os.wait4``) is its own and no cache of an
earlier run helps a later one. Reading the trace is timed apart from the simulation, and
the simulation both in wall seconds and in CPU seconds of the process: on a busy machine
the wall time grows with the other load, the CPU time much less. (The simulation also
includes the warm-up that loads the compiled kernels from numba's cache; jobs/s is over
wall seconds.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from queuesim.common.errors import QueuesimError
from queuesim.studies.real_traces import resolve_traces

if TYPE_CHECKING:  # a benchmark's child imports no terminal code
    from rich.console import Console

DEFAULT_TRACES = ("HPC2N-2002", "SDSC-BLUE-2000")

#: the sha256 of the start times (float64, job order) the pass-by-pass implementation gave
#: before the compiled run (commit a0d3b9e), per (trace file, site file, policy): a run of
#: the benchmark says whether it still gives them, to the last bit
REFERENCE_STARTS = {
    (
        "HPC2N-2002-2.2-cln.swf.gz",
        "hpc2n.yaml",
        "conservative",
    ): "bbcf92283446b7fd06b3335820168faf45b877fcf6001e10ab3380d90e697d64",
    (
        "HPC2N-2002-2.2-cln.swf.gz",
        "hpc2n.yaml",
        "easy",
    ): "8f2d752fe79ec2ef2bf5de3028dc81777ccf343897f2ddeac506152ea7d8108c",
    (
        "HPC2N-2002-2.2-cln.swf.gz",
        "hpc2n.yaml",
        "fcfs",
    ): "cfa355db17052ffb8af4e341291a3898ed9f43b82faa80358272ffea7b82ec07",
    (
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "kth-sp2.yaml",
        "conservative",
    ): "a4f91e0fe68017c4105c0b2057f36118e089cac7dd1dc3be997b8c1b008aa0f9",
    (
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "kth-sp2.yaml",
        "easy",
    ): "15a9c77e9cec08b341dbf6dbbe56f4e793dbb364013d460c81bd17b458183405",
    (
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "kth-sp2.yaml",
        "fcfs",
    ): "e5b4f9f17d6203aa72821cf0e58b716734123c2babe72e3afaf9373a40db3fe7",
    # slurm: as its pass-by-pass run gave them before its compiled run (commit 58b6043)
    (
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "kth-sp2.yaml",
        "slurm",
    ): "bd40fd95e96ccc79338476d27c5e9c67ad162eaab5eaa8ba1f7f519eee5ad326",
    (
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "sdsc-sp2.yaml",
        "conservative",
    ): "ea56ec2ef6d776bc9fe701f9336e147a2f7ec32d35ef3916c7b98e7994edc747",
    (
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "sdsc-sp2.yaml",
        "easy",
    ): "0cdc00ad808a44c0b6ecd7f5359cc642967483c1bcc1cbbabe43dc76fddae0cb",
    (
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "sdsc-sp2.yaml",
        "fcfs",
    ): "6a67db67ce37b154548b13c4c188167b6834fc86f1bec5b27fd975aff2b29678",
    (
        "METACENTRUM-2009-2.swf.gz",
        "metacentrum-complex.yaml",
        "scan",
    ): "f77907b02e79c3713772eae67644b6b31f02cc269e6fe295aa979ebc9d02e4ea",
    (
        "METACENTRUM-2009-2.swf.gz",
        "metacentrum-conservative.yaml",
        "scan",
    ): "f6a305d2e248b2863ea2f3799818d8e69deebf9b3ea07379d3e60ada4707b238",
    (
        "METACENTRUM-2009-2.swf.gz",
        "metacentrum-historic.yaml",
        "scan",
    ): "ee4d719c443980c463279c9f653d7cc68258990a0e8e77a4211f1b3fec5b4eb2",
}


def start_digest(starts: np.ndarray) -> str:
    """The sha256 of start times as :data:`REFERENCE_STARTS` holds them."""
    data = np.ascontiguousarray(starts, dtype=np.float64).tobytes()
    return hashlib.sha256(data).hexdigest()


def same_starts(trace: str, site: str, policy: str, digest: str) -> str:
    """``same`` or ``DIFFERENT`` from the reference, or ``-`` when there is none."""
    expected = REFERENCE_STARTS.get((Path(trace).name, Path(site).name, policy))
    if expected is None:
        return "-"
    return "same" if expected == digest else "DIFFERENT"


DEFAULT_POLICIES = ("fcfs", "easy", "conservative")


def _child(trace: str, site_file: str, policy: str) -> None:
    """Run one simulation and print its figures as JSON (in the child process)."""
    from queuesim.core.workload import load_workload
    from queuesim.site.loading import load_site
    from queuesim.studies.simulate import simulate

    site = load_site(site_file).with_scheduler(policy)
    t0 = time.perf_counter()
    workload = load_workload(trace, site)
    read = time.perf_counter() - t0
    cpu_before = time.process_time()
    result = simulate(site, workload, kernels="compiled")
    cpu = time.process_time() - cpu_before
    digest = start_digest(result.jobs["start"].to_numpy())
    print(
        json.dumps(
            {
                "jobs": len(result.jobs),
                "read_seconds": read,
                "sim_seconds": result.wall_seconds,
                "sim_cpu_seconds": cpu,
                "compile_seconds": result.compile_seconds,
                "passes": result.passes,
                "starts": same_starts(trace, site_file, policy, digest),
            }
        )
    )


def _run_child(trace: Path, site: Path, policy: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "queuesim.studies.bench", str(trace), str(site), policy]
    return run_child(command, f"{trace.name} / {policy}")


def run_child(command: list[str], label: str, timeout: float | None = None) -> dict[str, Any]:
    """Run ``command`` (a Python child that prints its figures as JSON on its last line)
    and return them with its peak memory (``peak_mb``); a child still running after
    ``timeout`` seconds is killed and reported as ``{"timed_out": True}``."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        proc.kill()

    timer = threading.Timer(timeout, stop) if timeout else None
    if timer is not None:
        timer.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if timer is not None:
        timer.cancel()
    if fired.is_set():
        return {"timed_out": True}
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise QueuesimError(f"bench run {label} failed:\n{err.strip()}")
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    figures["peak_mb"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return figures


def run_bench(
    console: Console,
    *,
    traces: Sequence[str] = DEFAULT_TRACES,
    policies: Sequence[str] = DEFAULT_POLICIES,
    workloads: Path,
    site_configs: Path,
) -> None:
    """Run every trace (a name of :data:`~.real_traces.TRACE_SITES` or its start, found in
    ``workloads``) under every policy, each in a fresh process, and print the table of
    their figures."""
    from queuesim.reports.document import Table
    from queuesim.reports.render_text import print_table

    specs = resolve_traces(traces, workloads, site_configs)
    rows: list[list[str]] = []
    columns = (
        "trace",
        "policy",
        "jobs",
        "read s",
        "kernels s",
        "sim s",
        "sim CPU s",
        "jobs/s",
        "peak MB",
        "starts vs reference",
    )
    for spec in specs:
        for policy in policies:
            console.print(f"running {spec.workload.name} / {policy} ...", highlight=False)
            fig = _run_child(spec.workload, spec.site, policy)
            rows.append(
                [
                    spec.name,
                    policy,
                    f"{int(fig['jobs']):,}",
                    f"{fig['read_seconds']:.2f}",
                    f"{fig['compile_seconds']:.2f}",
                    f"{fig['sim_seconds']:.2f}",
                    f"{fig['sim_cpu_seconds']:.2f}",
                    f"{fig['jobs'] / fig['sim_seconds']:,.0f}",
                    f"{fig['peak_mb']:.0f}",
                    str(fig["starts"]),
                ]
            )
    right = [column not in ("trace", "policy", "starts vs reference") for column in columns]
    print_table(
        console, "queuesim bench (each run in a fresh process)", Table(columns, rows, right)
    )


if __name__ == "__main__":
    _child(*sys.argv[1:4])
