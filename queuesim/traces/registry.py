"""One entry point for every trace format: :func:`read_trace` reads a file in the format it
is named, or the one its content shows.

Each format is a :class:`TraceFormat` in :data:`FORMATS`: its name (for ``--format`` and
error messages), its reader, and how its content is recognised from the first lines that
are neither blank nor comments:

* ``pbs`` - PBS Pro / OpenPBS / Torque accounting logs (``MM/DD/YYYY HH:MM:SS;E;id;...``;
  a file, a ``.gz`` or a directory of daily files; :mod:`queuesim.traces.pbs`);
* ``slurm-jobcomp`` - Slurm's ``jobcomp/filetxt`` log (``JobId=... UserId=...``);
* ``sacct`` - Slurm ``sacct --parsable2`` output (``|``-separated, with or without a
  header line; :mod:`queuesim.traces.slurm`);
* ``alea-swf`` - Alea's extended SWF, 21 whitespace-separated fields
  (:mod:`queuesim.traces.alea_swf`);
* ``swf`` - the Standard Workload Format of the Parallel Workloads Archive, 18 fields
  (:mod:`queuesim.traces.swf`). A file without job lines is read as SWF.

The log formats are tried first, in that order; SWF and Alea's SWF are told apart by the
field count of the first job line.
"""

from __future__ import annotations

import gzip
import importlib
import io
import itertools
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from queuesim.common import bundled
from queuesim.common.errors import WorkloadError
from queuesim.common.files import GZIP_MAGIC, MAX_LINE_BYTES, UTF8_BOM, line_too_long, read_bytes
from queuesim.traces.format_names import ALEA_FIELDS, FORMAT_NAMES
from queuesim.traces.sniffing import looks_like_jobcomp, looks_like_pbs, looks_like_sacct
from queuesim.traces.swf import SWF_FIELDS, SwfTrace, read_swf
from queuesim.traces.trace_cache import read_cached

#: how many content lines sniffing looks at
SNIFF_LINES = 20
#: how many bytes sniffing reads at most (comments and blank lines included): the rest is
#: the chosen reader's
SNIFF_BYTES = 4 * MAX_LINE_BYTES


@dataclass(frozen=True)
class TraceFormat:
    name: str
    description: str
    read: Callable[..., SwfTrace]  #: ``read(path, *, skip_bad_lines)``
    #: whether the first content lines (raw bytes, comments and blanks left out) are of
    #: this format; None: told by ``fields`` instead
    sniff: Callable[[list[bytes]], bool] | None = None
    #: whitespace-separated fields of a job line, for the SWF family (0: not told so)
    fields: int = 0


def _reader(module: str, name: str) -> Callable[..., SwfTrace]:
    """The reader ``name`` of ``module``, imported when first called: a run reads one
    format, and the other readers' modules (their value parsers, compiled scans, pyarrow's
    CSV reader) are not imported for it."""

    def read(path: Path, **options: bool) -> SwfTrace:
        found: Callable[..., SwfTrace] = getattr(importlib.import_module(module), name)
        return found(path, **options)

    read.__name__ = read.__qualname__ = name
    return read


_READERS: dict[str, tuple[Callable[..., SwfTrace], Callable[[list[bytes]], bool] | None, int]] = {
    "pbs": (_reader("queuesim.traces.pbs", "read_pbs"), looks_like_pbs, 0),
    "slurm-jobcomp": (
        _reader("queuesim.traces.slurm", "read_slurm_jobcomp"),
        looks_like_jobcomp,
        0,
    ),
    "sacct": (_reader("queuesim.traces.slurm", "read_sacct"), looks_like_sacct, 0),
    "alea-swf": (_reader("queuesim.traces.alea_swf", "read_alea_swf"), None, ALEA_FIELDS),
    "swf": (read_swf, None, len(SWF_FIELDS)),
}
#: every format, in the order sniffing tries them (named and described in
#: :mod:`.format_names`, which the command line reads without importing the readers)
FORMATS: dict[str, TraceFormat] = {
    name: TraceFormat(name, description, *_READERS[name])
    for name, description in FORMAT_NAMES.items()
}
_BY_FIELDS = {f.fields: f for f in FORMATS.values() if f.fields}


def format_named(name: str) -> TraceFormat:
    """The format called ``name``, or a :class:`WorkloadError` listing the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise WorkloadError(
            f"unknown trace format {name!r}; known formats: {', '.join(FORMATS)}"
        ) from None


def read_trace(
    path: str | Path, *, skip_bad_lines: bool = False, format: str | None = None
) -> SwfTrace:
    """Read a trace in ``format`` (a name in :data:`FORMATS`), or in the format its content
    shows (see the module docstring).

    Without ``skip_bad_lines``, a first job line that fits no format is a
    :class:`WorkloadError` naming the file and line; with it, the first line whose field
    count names an SWF format decides (the others are reported by the reader). ``path``
    may also name a bundled sample workload (``kth-sp2-sample.swf``; see
    :mod:`queuesim.common.bundled`). A large SWF file read before comes from the parsed-trace
    cache (:mod:`.trace_cache`).
    """
    given = Path(path)
    path = given if given.is_dir() else bundled.workload_file(path)
    chosen = detect_format(path, skip_bad_lines=skip_bad_lines, format=format)
    if chosen.name == "swf" and not path.is_dir():
        resolved = path
        return read_cached(
            path, skip_bad_lines, lambda: chosen.read(resolved, skip_bad_lines=skip_bad_lines)
        )
    return chosen.read(path, skip_bad_lines=skip_bad_lines)


def detect_format(
    path: Path, *, skip_bad_lines: bool = False, format: str | None = None
) -> TraceFormat:
    """The format ``path`` is read in: ``format`` when given, else the one its content
    shows (a directory is a PBS log of daily files)."""
    if format is not None:
        return format_named(format)
    if path.is_dir():
        return FORMATS["pbs"]
    lines = _first_lines(path)
    content = [line for _, line in lines]
    for candidate in FORMATS.values():
        if candidate.sniff is not None and content and candidate.sniff(content):
            return candidate
    first = _first_job_line(lines, skip_bad_lines=skip_bad_lines)
    if first is not None:
        number, count = first
        if count in _BY_FIELDS:
            return _BY_FIELDS[count]
        if not skip_bad_lines:
            expected = " or ".join(
                f"{f.fields} ({f.description})" for f in FORMATS.values() if f.fields
            )
            logs = ", ".join(f.description for f in FORMATS.values() if f.sniff)
            raise WorkloadError(
                f"{path}:{number}: cannot tell the trace format: not a {logs}, and "
                f"expected {expected} whitespace-separated fields, found {count} "
                f"(name the format with --format: {', '.join(FORMATS)})"
            )
    return FORMATS["swf"]


def _first_lines(path: Path) -> list[tuple[int, bytes]]:
    """The first :data:`SNIFF_LINES` lines that are neither blank nor ``;`` comments, with
    their line numbers; reads only as far as needed and never more than
    :data:`SNIFF_BYTES` (the chosen reader reads the file again from its start). A line longer
    than :data:`~queuesim.common.files.MAX_LINE_BYTES` is an error naming it."""
    lines: list[tuple[int, bytes]] = []
    read = 0
    try:
        with path.open("rb") as raw_stream:
            compressed = path.suffix.lower() == ".gz" or raw_stream.read(2) == GZIP_MAGIC
            raw_stream.seek(0)
            stream: io.BufferedIOBase = (
                gzip.GzipFile(fileobj=raw_stream) if compressed else raw_stream
            )
            for number in itertools.count(1):
                raw = stream.readline(MAX_LINE_BYTES + 2)  # room for the line break
                if not raw or read > SNIFF_BYTES:
                    break
                read += len(raw)
                if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
                    raise line_too_long(path, number, "workload file")
                stripped = raw.strip()
                if number == 1 and stripped.startswith(UTF8_BOM):
                    stripped = stripped[len(UTF8_BOM) :].strip()
                if not stripped or stripped[:1] == b";":
                    continue
                lines.append((number, stripped))
                if len(lines) >= SNIFF_LINES:
                    break
    except (OSError, EOFError, zlib.error):
        read_bytes(path, "workload file")  # raises the reader's one-line error
        raise
    return lines


def _first_job_line(
    lines: list[tuple[int, bytes]], *, skip_bad_lines: bool
) -> tuple[int, int] | None:
    """(line number, field count) of the line that decides between the SWF formats: the
    first one, or with ``skip_bad_lines`` the first whose count names a format."""
    fallback: tuple[int, int] | None = None
    for number, line in lines:
        count = len(line.split())
        if not skip_bad_lines or count in _BY_FIELDS:
            return number, count
        fallback = fallback or (number, count)
    return fallback
