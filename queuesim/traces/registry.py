"""One entry point for every trace format: :func:`read_trace` reads a file in the format it
is named, or the one its first job line shows.

Each format is a :class:`TraceFormat` in :data:`FORMATS`: its name (for ``--format`` and
error messages), its reader, and the number of whitespace-separated fields of its job lines,
by which it is recognised. Today: ``swf`` (the Standard Workload Format of the Parallel
Workloads Archive, 18 fields; :mod:`queuesim.traces.swf`) and ``alea-swf`` (Alea's extended
SWF, 21 fields; :mod:`queuesim.traces.alea_swf`). A file without job lines is read as SWF.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from queuesim.common import bundled
from queuesim.common.errors import WorkloadError
from queuesim.common.files import GZIP_MAGIC, UTF8_BOM, read_bytes
from queuesim.traces.alea_swf import ALEA_FIELDS, read_alea_swf
from queuesim.traces.swf import SWF_FIELDS, SwfTrace, read_swf


@dataclass(frozen=True)
class TraceFormat:
    name: str
    description: str
    fields: int  #: whitespace-separated fields of a job line, by which the format is told
    read: Callable[..., SwfTrace]  #: ``read(path, *, skip_bad_lines)``


FORMATS: dict[str, TraceFormat] = {
    f.name: f
    for f in (
        TraceFormat("swf", "Standard Workload Format", len(SWF_FIELDS), read_swf),
        TraceFormat("alea-swf", "Alea extended SWF", ALEA_FIELDS, read_alea_swf),
    )
}
_BY_FIELDS = {f.fields: f for f in FORMATS.values()}


def read_trace(
    path: str | Path, *, skip_bad_lines: bool = False, format: str | None = None
) -> SwfTrace:
    """Read a trace in ``format`` (a name in :data:`FORMATS`), or in the format its first
    job line shows by its field count.

    With ``skip_bad_lines`` the first line whose field count names a format decides (the
    others are reported by the reader); without, any other count on the first job line is
    a :class:`WorkloadError` naming the file and line. A file without job lines is SWF.
    ``path`` may also name a bundled sample workload (``kth-sp2-sample.swf``; see
    :mod:`queuesim.common.bundled`).
    """
    path = bundled.workload_file(path)
    if format is not None:
        try:
            chosen = FORMATS[format]
        except KeyError:
            raise WorkloadError(
                f"unknown trace format {format!r}; known formats: {', '.join(FORMATS)}"
            ) from None
        return chosen.read(path, skip_bad_lines=skip_bad_lines)
    first = _first_job_line(path, skip_bad_lines=skip_bad_lines)
    if first is not None:
        number, count = first
        if count in _BY_FIELDS:
            return _BY_FIELDS[count].read(path, skip_bad_lines=skip_bad_lines)
        if not skip_bad_lines:
            expected = " or ".join(f"{f.fields} ({f.description})" for f in FORMATS.values())
            raise WorkloadError(
                f"{path}:{number}: cannot tell the trace format: expected {expected} "
                f"whitespace-separated fields, found {count}"
            )
    return read_swf(path, skip_bad_lines=skip_bad_lines)


def _first_job_line(path: Path, *, skip_bad_lines: bool) -> tuple[int, int] | None:
    """(line number, field count) of the job line that decides the format: the first one,
    or with ``skip_bad_lines`` the first whose count names a format; None when there is none.

    Reads only as far as needed (the file is read again, whole, by the chosen reader).
    """
    fallback: tuple[int, int] | None = None
    try:
        with path.open("rb") as raw_stream:
            compressed = path.suffix.lower() == ".gz" or raw_stream.read(2) == GZIP_MAGIC
            raw_stream.seek(0)
            stream: Iterable[bytes] = (
                gzip.GzipFile(fileobj=raw_stream) if compressed else raw_stream
            )
            for number, raw in enumerate(stream, start=1):
                stripped = raw.strip()
                if number == 1 and stripped.startswith(UTF8_BOM):
                    stripped = stripped[len(UTF8_BOM) :].strip()
                if not stripped or stripped[:1] == b";":
                    continue
                count = len(stripped.split())
                if not skip_bad_lines or count in _BY_FIELDS:
                    return number, count
                fallback = fallback or (number, count)
    except (OSError, EOFError, zlib.error):
        read_bytes(path, "workload file")  # raises the reader's one-line error
        raise
    return fallback
