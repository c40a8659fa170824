"""How fast the site-log readers read: PBS accounting records and sacct rows per second.

The shipped real logs are small (656 PBS records, 11,704 sacct rows), so the benchmark
makes million-record inputs by repeating each one with its job ids shifted (every copy a
new set of jobs) and, for PBS, its epoch times shifted by a week a copy, then reads each in
a fresh process (its peak memory its own) through :func:`queuesim.traces.registry.read_trace`,
content sniffing included.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from rich.console import Console

from queuesim.common.errors import QueuesimError
from queuesim.studies.bench import run_child

PBS_LOG = Path("site-logs/pbs/cesnet-openpbs-2024-12.log")
SACCT_LOG = Path("site-logs/slurm/xdmod-pozidriv-2016-12.sacct.log.gz")
WEEK = 7 * 86400
# a PBS job id before its server name, or an epoch time after ctime= qtime= etime= start= end=
_PBS_NUMBERS = re.compile(rb"(\d+)(?=[.\[][^;]*;)|(?<=time=)(\d+)|(?<=start=)(\d+)|(?<=end=)(\d+)")
_SACCT_IDS = re.compile(rb"^(\d+)", re.MULTILINE)


def _repeat(
    text: bytes, pattern: re.Pattern[bytes], copies: int, shifts: tuple[int, ...], out: BinaryIO
) -> None:
    """Write ``copies`` copies of ``text`` to ``out``, the numbers each group of ``pattern``
    captures shifted by copy number x the group's entry of ``shifts``. One copy is held at
    a time: a reader's peak memory is measured in a child process, and a child started
    from a process that once held the whole input would report that as its own peak
    (Linux carries the parent's high-water mark into the child's ``ru_maxrss``)."""
    parts = pattern.split(text)
    groups = pattern.groups
    for copy in range(copies):
        pieces = []
        for index, part in enumerate(parts):
            slot = index % (groups + 1)
            if slot == 0:
                pieces.append(part)
            elif part is not None:
                pieces.append(b"%d" % (int(part) + copy * shifts[slot - 1]))
        out.write(b"".join(pieces))


def make_pbs_log(source: Path, target: Path, records: int) -> int:
    """A PBS log of about ``records`` records from ``source``; returns its record count."""
    text = source.read_bytes()
    if not text.endswith(b"\n"):
        text += b"\n"
    body = b"\n".join(line for line in text.split(b"\n") if line and not line.startswith(b";"))
    body += b"\n"
    per_copy = body.count(b"\n")
    copies = max(1, -(-records // per_copy))
    with target.open("wb") as out:
        _repeat(body, _PBS_NUMBERS, copies, (10**6, WEEK, WEEK, WEEK), out)
    return copies * per_copy


def make_sacct_log(source: Path, target: Path, rows: int) -> int:
    """A headerless sacct export of about ``rows`` rows from ``source``; returns its rows."""
    text = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    if not text.endswith(b"\n"):
        text += b"\n"
    per_copy = text.count(b"\n")
    copies = max(1, -(-rows // per_copy))
    with target.open("wb") as out:
        _repeat(text, _SACCT_IDS, copies, (10**7,), out)
    return copies * per_copy


def _child(path: str) -> None:
    """Read one log and print the figures as JSON (in the child process)."""
    from queuesim.traces.registry import read_trace

    t0 = time.perf_counter()
    trace = read_trace(path)
    seconds = time.perf_counter() - t0
    print(json.dumps({"jobs": len(trace.jobs), "seconds": seconds}))


def run_reader_bench(
    console: Console, workloads: Path, records: int = 1_000_000, repeat: int = 3
) -> None:
    """Make the inputs, read each ``repeat`` times, each in a fresh process (compiled
    kernels loaded from numba's cache included), and print the median run."""
    sources: list[tuple[str, Path, Callable[[Path, Path, int], int], str]] = [
        ("PBS accounting", workloads / PBS_LOG, make_pbs_log, "records"),
        ("Slurm sacct", workloads / SACCT_LOG, make_sacct_log, "rows"),
    ]
    missing = [str(s[1]) for s in sources if not s[1].is_file()]
    if missing:
        raise QueuesimError(f"the reader benchmark needs {', '.join(missing)}")
    from queuesim.reports.document import Table
    from queuesim.reports.render_text import print_table

    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="queuesim-readers-") as folder:
        for label, source, make, unit in sources:
            target = Path(folder) / f"{source.stem}.big"
            count = make(source, target, records)
            runs = [
                run_child([sys.executable, "-m", __name__, str(target)], label)
                for _ in range(repeat)
            ]
            figures = sorted(runs, key=lambda f: f["seconds"])[len(runs) // 2]  # the median
            rate = count / figures["seconds"]
            rows.append(
                [
                    label,
                    f"{count:,} {unit}",
                    f"{int(figures['jobs']):,}",
                    f"{figures['seconds']:.2f}",
                    f"{rate:,.0f} {unit}/s",
                    f"{figures['peak_mb']:,.0f}",
                ]
            )
            target.unlink()
    columns = ["log", "input", "jobs", "seconds", "per second", "peak MB"]
    title = f"log readers (read_trace, fresh process, median of {repeat})"
    print_table(console, title, Table(columns, rows, [c != "log" for c in columns]))


if __name__ == "__main__":
    _child(sys.argv[1])
