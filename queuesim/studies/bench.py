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

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from queuesim.common.errors import QueuesimError
from queuesim.studies.real_traces import resolve_traces

DEFAULT_TRACES = ("HPC2N-2002", "SDSC-BLUE-2000")
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
    result = simulate(site, workload)
    cpu = time.process_time() - cpu_before
    print(
        json.dumps(
            {
                "jobs": len(result.jobs),
                "read_seconds": read,
                "sim_seconds": result.wall_seconds,
                "sim_cpu_seconds": cpu,
                "passes": result.passes,
            }
        )
    )


def _run_child(trace: Path, site: Path, policy: str) -> dict[str, float]:
    command = [sys.executable, "-m", "queuesim.studies.bench", str(trace), str(site), policy]
    return run_child(command, f"{trace.name} / {policy}")


def run_child(command: list[str], label: str) -> dict[str, float]:
    """Run ``command`` (a Python child that prints its figures as JSON on its last line)
    and return them with its peak memory (``peak_mb``)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise QueuesimError(f"bench run {label} failed:\n{err.strip()}")
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
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
    specs = resolve_traces(traces, workloads, site_configs)
    table = Table(title="queuesim bench (each run in a fresh process)")
    columns = ("trace", "policy", "jobs", "read s", "sim s", "sim CPU s", "jobs/s", "peak MB")
    for column in columns:
        table.add_column(column, justify="left" if column in ("trace", "policy") else "right")
    for spec in specs:
        for policy in policies:
            console.print(f"running {spec.workload.name} / {policy} ...", highlight=False)
            fig = _run_child(spec.workload, spec.site, policy)
            table.add_row(
                spec.name,
                policy,
                f"{int(fig['jobs']):,}",
                f"{fig['read_seconds']:.2f}",
                f"{fig['sim_seconds']:.2f}",
                f"{fig['sim_cpu_seconds']:.2f}",
                f"{fig['jobs'] / fig['sim_seconds']:,.0f}",
                f"{fig['peak_mb']:.0f}",
            )
    console.print(table)


if __name__ == "__main__":
    _child(*sys.argv[1:4])
