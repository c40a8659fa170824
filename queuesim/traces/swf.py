"""Read and write job traces in the Parallel Workloads Archive's Standard Workload Format.

An SWF file is plain text (often gzip-compressed). Lines whose first non-blank character is
``;`` are comments; at the top of a file they form the header, where most lines have the
shape ``; Key: value`` (``; MaxProcs: 240``, ``; UnixStartTime: 1027839845``,
``; Queue:  1  express``, ``; Note: ...``) and a few are free text that continues a note.
Every other non-blank line describes one job with exactly 18 numbers separated by
whitespace, always in the order of :data:`SWF_FIELDS`: job number, submit time, wait time,
run time, allocated processors, average CPU time, used memory, requested processors,
requested time, requested memory, status, user, group, executable, queue, partition,
preceding job and think time. Times are in seconds relative to the header's
``UnixStartTime``; the value ``-1`` means "not known" and is kept as it is here (cleaning
is the job of :mod:`queuesim.core.workload`).

:func:`read_swf` parses a whole file into a :class:`SwfTrace`: the header (raw lines and the
fields the simulator uses), a :class:`pandas.DataFrame` with one row per job line, and the
malformed lines that were skipped when the caller allowed it. A malformed line is otherwise
a :class:`~queuesim.common.errors.WorkloadError` whose message names the file, the 1-based line
number and what was expected. :func:`write_swf` writes a frame back in the same format,
deterministically and atomically.

Speed and memory: the file is read a piece of whole lines at a time
(:func:`~queuesim.common.files.line_chunks`, a few MB of text), and each piece's job lines
are parsed in one go by pandas' C tokenizer, so a million-job trace needs memory for its
numbers, not for its text. Only when that fails (or when some values break the rules,
such as a fraction in an integer field) are a piece's lines walked one by one to find the
exact culprits.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.common.atomic import atomic_path
from queuesim.common.errors import WorkloadError
from queuesim.common.files import decode_line, line_chunks
from queuesim.traces.text_columns import SPILL, fill_integers, put_text

__all__ = [
    "INT_FIELDS",
    "NOTE_ACTIONS",
    "SWF_FIELDS",
    "BadLine",
    "SwfHeader",
    "SwfTrace",
    "read_swf",
    "reader_notes",
    "write_swf",
]

#: the 18 SWF fields in file order, each with whether it holds an identifier or a count
_FIELD_TABLE: tuple[tuple[str, bool], ...] = (
    ("job_id", True),
    ("submit", False),
    ("wait", False),
    ("runtime", False),
    ("alloc_procs", True),
    ("avg_cpu_time", False),
    ("used_memory", False),
    ("req_procs", True),
    ("req_time", False),
    ("req_memory", False),
    ("status", True),
    ("user", True),
    ("group", True),
    ("executable", True),
    ("queue", True),
    ("partition", True),
    ("prev_job", True),
    ("think_time", False),
)

SWF_FIELDS: tuple[str, ...] = tuple(name for name, _ in _FIELD_TABLE)
"""The 18 SWF fields, in file order (the names are the columns of :attr:`SwfTrace.jobs`)."""

INT_FIELDS: frozenset[str] = frozenset(name for name, whole in _FIELD_TABLE if whole)
"""Fields that hold identifiers or counts: read as ``int64``, written without decimals."""

_N_FIELDS = len(SWF_FIELDS)
_INT_COLUMNS = np.array([i for i, name in enumerate(SWF_FIELDS) if name in INT_FIELDS])
# Largest magnitude a float64 can hold and still be cast to int64 without overflow.
_INT_LIMIT = 2.0**63
# When the whole file does not parse in one go, it is retried in blocks of this many lines.
_BLOCK_LINES = 4096
#: job lines laid out at a time when writing
_WRITE_ROWS = 32768

# "; Key: value" -- keys are capitalised words, as in every PWA header. A lower-case word
# before a colon (";\tsee: http://...") is the continuation of a note, not a key.
_HEADER_FIELD = re.compile(r"^\s*;\s*([A-Z][A-Za-z0-9_]*)\s*:(.*)$")
# Value of a "Queue:" or "Partition:" line: a number, then a name.
_NUMBERED_NAME = re.compile(r"^\s*([+-]?\d+)\s+(\S.*?)\s*$")
# A leading integer of a header value: "240", "338 (batch partition; 512 total)".
_LEADING_INT = re.compile(r"^\s*([+-]?\d+)(?![\d.])")
# What a numeric token may look like (ASCII digits only; no nan, inf, hex or underscores).
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class SwfHeader:
    """The comment lines of an SWF file and the header fields queuesim uses."""

    fields: dict[str, str]
    """Every ``; Key: value`` line, value stripped; for a repeated key the first one wins."""
    max_nodes: int | None
    max_procs: int | None
    unix_start_time: int | None
    time_zone_string: str | None
    queues: dict[int, str]
    """Queue number -> name from the ``; Queue: <n> <name>`` lines that have both."""
    partitions: dict[int, str]
    """Partition number -> name from the ``; Partition: <n> <name>`` lines that have both."""
    notes: tuple[str, ...]
    """``Note`` values and free comment lines (not ``Key: value``), in file order."""
    lines: tuple[str, ...]
    """The raw comment lines, without line ends, to copy into a written schedule."""


@dataclass(frozen=True)
class BadLine:
    """A job line that could not be read."""

    line: int
    """1-based line number in the file."""
    text: str
    """The line as found (without its line end)."""
    reason: str
    """What was wrong, e.g. ``expected 18 whitespace-separated numeric fields, found 17``."""


@dataclass(frozen=True, eq=False)
class SwfTrace:
    """A parsed SWF file."""

    path: Path
    header: SwfHeader
    jobs: pd.DataFrame
    """One row per job line, in file order: the columns of :data:`SWF_FIELDS` (``int64``
    for :data:`INT_FIELDS`, ``float64`` otherwise) and ``line``, the 1-based line number."""
    bad_lines: tuple[BadLine, ...]
    """Malformed job lines left out of :attr:`jobs` (only with ``skip_bad_lines=True``)."""
    notes: pd.DataFrame = field(default_factory=lambda: reader_notes())
    """What the reader did beyond parsing, one row per affected record or job (see
    :func:`reader_notes`): records it folded, dropped or repaired, requirements it could
    not express. Cleaning (:mod:`queuesim.core.workload`) counts them by reason."""


#: what a reader may do with a record or job, as :func:`reader_notes` records it
#: ("skipped": a record that is not a job, such as a licence record)
NOTE_ACTIONS = ("dropped", "repaired", "warning", "skipped")


def reader_notes(
    lines: Iterable[int] | npt.NDArray[np.int64] = (),
    jobs: Iterable[object] = (),
    reasons: Sequence[str] | str = (),
    action: str = "dropped",
) -> pd.DataFrame:
    """A frame of reader notes: ``line`` (1-based line of the record), ``job`` (its id as
    the log writes it), ``reason`` (a snake_case key the reader documents) and ``action``
    (one of :data:`NOTE_ACTIONS`). Concatenate several with :func:`pandas.concat`."""
    if action not in NOTE_ACTIONS:
        raise ValueError(f"action must be one of {NOTE_ACTIONS}, got {action!r}")
    line_values = np.asarray(
        list(lines) if not isinstance(lines, np.ndarray) else lines, dtype=np.int64
    )
    n = line_values.shape[0]
    reason_values = [reasons] * n if isinstance(reasons, str) else list(reasons)
    return pd.DataFrame(
        {
            "line": line_values,
            "job": pd.Series(list(jobs), dtype=object),
            "reason": pd.Series(reason_values, dtype=object),
            "action": pd.Series([action] * n, dtype=object),
        }
    )


# --------------------------------------------------------------------------- reading


def read_swf(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read an SWF file (gzip-compressed when its name ends in ``.gz``).

    Comment lines (first non-blank character ``;``) form the header wherever they are;
    blank lines are ignored; every other line must be a job line of 18 numbers, integers
    in :data:`INT_FIELDS` (``32.0`` is accepted there, ``3.5`` is not). A malformed job
    line raises :class:`WorkloadError` naming the file and line, unless
    ``skip_bad_lines`` is set: then it is recorded in :attr:`SwfTrace.bad_lines` and left
    out of the jobs. A file without job lines gives an empty frame (the caller decides
    whether that is an error).
    """
    path = Path(path)
    comment_lines: list[str] = []
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]] = []
    bad_lines: list[BadLine] = []
    # a piece of the file at a time: only its lines are held as text (issue 20)
    for first, text in line_chunks(path):
        job_lines: list[bytes] = []
        job_numbers: list[int] = []
        for number, raw, comment in content_lines(text, first):
            if comment:
                comment_lines.append(decode_line(raw))
            else:
                job_lines.append(raw)
                job_numbers.append(number)
        values, bad_rows = _parse_job_lines(job_lines)
        numbers = np.asarray(job_numbers, dtype=np.int64)
        if bad_rows:
            if not skip_bad_lines:
                first_bad = bad_rows[0]
                reason = _diagnose(job_lines[first_bad])
                raise WorkloadError(f"{path}:{job_numbers[first_bad]}: {reason}")
            bad_lines += [
                BadLine(
                    line=job_numbers[row],
                    text=decode_line(job_lines[row]),
                    reason=_diagnose(job_lines[row]),
                )
                for row in bad_rows
            ]
            keep = np.ones(len(job_lines), dtype=bool)
            keep[bad_rows] = False
            numbers, values = numbers[keep], values[keep]
        parts.append((values, numbers))
    values, numbers = joined_pieces(parts)
    parts.clear()  # the pieces' arrays are not kept beside the frame made of them
    return SwfTrace(
        path=path,
        header=parse_header(comment_lines),
        jobs=jobs_frame(values, numbers),
        bad_lines=tuple(bad_lines),
    )


def joined_pieces(
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The values and line numbers of every piece, in file order."""
    if not parts:
        return np.empty((0, _N_FIELDS), dtype=np.float64), np.empty(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([v for v, _ in parts]), np.concatenate([n for _, n in parts])


def _parse_job_lines(lines: list[bytes]) -> tuple[npt.NDArray[np.float64], list[int]]:
    """Parse job lines into an ``(n, 18)`` array; also return the indices of bad lines.

    The array has one row per input line; rows of bad lines hold garbage and must be
    dropped by the caller.
    """
    values = parse_numeric_lines(lines)
    unparsed: list[int] = []
    if values is None:
        # Something does not parse: retry block by block so that only the blocks holding
        # a bad line are walked line by line.
        blocks: list[npt.NDArray[np.float64]] = []
        for start in range(0, len(lines), _BLOCK_LINES):
            block_lines = lines[start : start + _BLOCK_LINES]
            block = parse_numeric_lines(block_lines)
            if block is None:
                block, block_unparsed = _parse_slow(block_lines)
                unparsed.extend(start + row for row in block_unparsed)
            blocks.append(block)
        values = np.concatenate(blocks)
    invalid = _invalid_rows(values)
    bad = sorted(set(unparsed) | set(invalid))
    return values, bad


def parse_numeric_lines(lines: list[bytes]) -> npt.NDArray[np.float64] | None:
    """The 18 numbers of every line, as an (n, 18) array, through pandas' C tokenizer;
    None when any line does not fit (the caller then looks for the bad line)."""
    if not lines:
        return np.empty((0, _N_FIELDS), dtype=np.float64)
    try:
        frame = pd.read_csv(
            io.BytesIO(b"\n".join(lines)),
            sep=r"\s+",
            header=None,
            dtype=np.float64,
            engine="c",
            quoting=csv.QUOTE_NONE,
            na_filter=False,
        )
    except (ValueError, OverflowError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    if frame.shape != (len(lines), _N_FIELDS):
        return None
    return frame.to_numpy(dtype=np.float64)


def _parse_slow(lines: list[bytes]) -> tuple[npt.NDArray[np.float64], list[int]]:
    """Line by line; returns the array (bad rows hold -1) and the unparsable rows."""
    filler = [-1.0] * _N_FIELDS
    rows: list[list[float]] = []
    unparsed: list[int] = []
    for index, line in enumerate(lines):
        tokens = line.split()
        if len(tokens) == _N_FIELDS and b"_" not in line:
            try:
                rows.append(list(map(float, tokens)))
                continue
            except ValueError:
                pass
        rows.append(filler)
        unparsed.append(index)
    return np.array(rows, dtype=np.float64).reshape(-1, _N_FIELDS), unparsed


def content_lines(data: bytes, first: int = 1) -> Iterator[tuple[int, bytes, bool]]:
    """The lines of a trace (or of a piece of one whose first line is line ``first``)
    that are not blank: their number, raw bytes, and whether each is a comment (``;``
    first, as SWF headers are)."""
    for number, raw in enumerate(data.split(b"\n"), start=first):
        stripped = raw.strip()
        if stripped:
            yield number, raw, stripped[:1] == b";"


def valid_rows(values: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Per row of parsed SWF fields, whether every value is finite and every integer field
    a whole number within range (:func:`field_problem` says what is wrong otherwise)."""
    ints = values[:, _INT_COLUMNS]
    whole = (ints == np.trunc(ints)) & (np.abs(ints) < _INT_LIMIT)
    return np.asarray(np.isfinite(values).all(axis=1) & whole.all(axis=1), dtype=np.bool_)


def _invalid_rows(values: npt.NDArray[np.float64]) -> list[int]:
    """Rows with a non-finite value, or a fraction or overflow in an integer field."""
    return [int(i) for i in np.flatnonzero(~valid_rows(values))]


def _diagnose(line: bytes) -> str:
    """Say what is wrong with a job line, naming the first offending field."""
    tokens = line.split()
    if len(tokens) != _N_FIELDS:
        return f"expected {_N_FIELDS} whitespace-separated numeric fields, found {len(tokens)}"
    for position, (name, token) in enumerate(zip(SWF_FIELDS, tokens, strict=True), start=1):
        text = token.decode("utf-8", errors="replace")
        where = f"field {position} ({name})"
        if not _NUMBER.fullmatch(token):
            return f"{where} is not a number: {text!r}"
        problem = field_problem(name, float(token), repr(text))
        if problem:
            return f"{where} {problem}"
    return f"expected {_N_FIELDS} whitespace-separated numeric fields"  # not reached in practice


def field_problem(name: str, value: float, shown: str) -> str | None:
    """What is wrong with the value of the SWF field ``name`` (``shown`` as it is to be
    quoted): not finite, or a fraction or overflow in an integer field; None if nothing."""
    if not math.isfinite(value):
        return f"is out of range: {shown}"
    if name in INT_FIELDS:
        if value != math.trunc(value):
            return f"must be a whole number, found {shown}"
        if abs(value) >= _INT_LIMIT:
            return f"is out of range for an integer: {shown}"
    return None


def jobs_frame(values: npt.NDArray[np.float64], numbers: npt.NDArray[np.int64]) -> pd.DataFrame:
    """The 18 SWF fields of parsed job lines as typed columns, with each job's line number."""
    columns: dict[str, npt.NDArray[np.int64] | npt.NDArray[np.float64]] = {}
    for index, name in enumerate(SWF_FIELDS):
        column = values[:, index]
        columns[name] = column.astype(np.int64) if name in INT_FIELDS else column.copy()
    columns["line"] = numbers.astype(np.int64)
    return pd.DataFrame(columns)


def parse_header(lines: list[str]) -> SwfHeader:
    """The header that the comment lines of a trace give (``; Key: value`` fields, notes,
    numbered queue and partition names)."""
    fields: dict[str, str] = {}
    queues: dict[int, str] = {}
    partitions: dict[int, str] = {}
    notes: list[str] = []
    for line in lines:
        match = _HEADER_FIELD.match(line)
        if match is None:
            free = line.strip()[1:].strip()
            if free:
                notes.append(free)
            continue
        key, value = match.group(1), match.group(2).strip()
        fields.setdefault(key, value)
        if key == "Note":
            notes.append(value)
        elif key in ("Queue", "Partition"):
            numbered = _NUMBERED_NAME.match(value)
            if numbered is not None:
                table = queues if key == "Queue" else partitions
                table.setdefault(int(numbered.group(1)), " ".join(numbered.group(2).split()))
    zone = fields.get("TimeZoneString", "").strip()
    return SwfHeader(
        fields=fields,
        max_nodes=_positive(_leading_int(fields.get("MaxNodes"))),
        max_procs=_positive(_leading_int(fields.get("MaxProcs"))),
        unix_start_time=_leading_int(fields.get("UnixStartTime")),
        time_zone_string=zone or None,
        queues=queues,
        partitions=partitions,
        notes=tuple(notes),
        lines=tuple(lines),
    )


def _leading_int(value: str | None) -> int | None:
    """The integer a header value starts with (``"338 (batch partition)"`` -> 338)."""
    if value is None:
        return None
    match = _LEADING_INT.match(value)
    return int(match.group(1)) if match else None


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


# --------------------------------------------------------------------------- writing


def write_swf(path: str | Path, jobs: pd.DataFrame, header_lines: Sequence[str] = ()) -> None:
    """Write ``jobs`` as an SWF file, atomically (gzip when ``path`` ends in ``.gz``).

    The header lines come first, each prefixed with ``"; "`` unless it already starts
    with ``;``. Then one line per row with the 18 fields of :data:`SWF_FIELDS` in order,
    each column right-aligned; a field missing from the frame, or NaN, is written as
    ``-1``. Integer fields are written as integers (a fractional value there raises
    ``ValueError``); other fields as integers when integral, else with at most 2
    decimals. The same frame always gives the same bytes (gzip output has no timestamp).

    Speed: the job lines are laid out as one byte matrix (a row per job, a byte per
    character) filled a column at a time (:mod:`queuesim.traces.text_columns`), so
    200,000 jobs take a tenth of a second; only fractional cells are formatted one by one.
    """
    path = Path(path)
    if isinstance(header_lines, str):
        header_lines = [header_lines]
    out: list[str] = []
    for entry in header_lines:
        for line in str(entry).splitlines() or [""]:
            if line.lstrip().startswith(";"):
                out.append(line)  # copied as it is, e.g. from SwfHeader.lines
            else:
                out.append(f"; {line}" if line.strip() else ";")

    head = "".join(f"{line}\n" for line in out).encode("utf-8")
    n_rows = len(jobs)
    columns = [_column_cells(jobs, name, n_rows) for name in SWF_FIELDS] if n_rows else []
    widths = [cells.width() for cells in columns]
    blocks = (
        _job_lines([cells.rows(start, start + _WRITE_ROWS) for cells in columns], widths)
        for start in range(0, n_rows, _WRITE_ROWS)
    )
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".gz":
            payload = head + b"".join(blocks)
            tmp.write_bytes(gzip.compress(payload, compresslevel=6, mtime=0))
        else:  # block by block: the text of 200,000 jobs is never all in memory at once
            with tmp.open("wb") as file:
                file.write(head)
                for block in blocks:
                    file.write(block)


@dataclass(frozen=True)
class _Cells:
    """One field of every row, ready to lay out: whole values, and the text of the few
    that are not whole (written with at most two decimals)."""

    whole: npt.NDArray[np.int64]
    """Every row's value as an integer (0 where the value is fractional)."""
    fraction_rows: npt.NDArray[np.intp]
    fraction_text: list[str]

    def rows(self, start: int, stop: int) -> _Cells:
        """The cells of rows ``start`` to ``stop - 1``."""
        keep = (self.fraction_rows >= start) & (self.fraction_rows < stop)
        return _Cells(
            self.whole[start:stop],
            self.fraction_rows[keep] - start,
            [t for t, k in zip(self.fraction_text, keep.tolist(), strict=True) if k],
        )

    def width(self) -> int:
        """The length of the longest value as written."""
        low, high = int(self.whole.min()), int(self.whole.max())
        return max(len(str(low)), len(str(high)), *(len(t) for t in self.fraction_text))


def _column_cells(jobs: pd.DataFrame, name: str, n_rows: int) -> _Cells:
    """One field of every row, checked: NaN and a missing column are -1."""
    none = np.empty(0, dtype=np.intp)
    if name not in jobs.columns:
        return _Cells(np.full(n_rows, -1, dtype=np.int64), none, [])
    series = jobs[name]
    if pd.api.types.is_bool_dtype(series.dtype):
        raise ValueError(f"column {name!r} holds booleans, expected numbers")
    if pd.api.types.is_integer_dtype(series.dtype) and not series.hasnans:
        return _Cells(series.to_numpy(dtype=np.int64), none, [])
    try:
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError(f"column {name!r} holds non-numeric values") from None
    values = np.where(np.isnan(values), -1.0, values)
    if not np.isfinite(values).all():
        raise ValueError(f"column {name!r} holds an infinite value")
    integral = (values == np.trunc(values)) & (np.abs(values) < _INT_LIMIT)
    fractional = np.flatnonzero(~integral)
    if name in INT_FIELDS and len(fractional):
        first = int(fractional[0])
        raise ValueError(
            f"column {name!r} must hold whole numbers within the int64 range, "
            f"found {float(values[first])!r} at position {first}"
        )
    whole = np.where(integral, values, 0.0).astype(np.int64)
    text = [_format_fraction(float(values[row])) for row in fractional]
    return _Cells(whole, fractional, text)


def _job_lines(columns: list[_Cells], widths: list[int]) -> bytes:
    """The job lines of ``columns`` (the same rows of every field): each column
    right-aligned to ``widths`` (its widest value in the whole table), one space between
    columns, ``\n`` after each line; as one ASCII buffer (see
    :mod:`queuesim.traces.text_columns`)."""
    n_rows = columns[0].whole.shape[0]
    ends = np.cumsum(np.add(widths, 1)) - 1 + SPILL
    matrix = np.full((n_rows, int(ends[-1]) + 1), ord(" "), dtype=np.uint8)
    matrix[:, -1] = ord("\n")
    # right to left: a column's leading digits may write spaces left of its start, over
    # the space between columns and the next column to be written
    for cells, width, end in reversed(list(zip(columns, widths, ends, strict=True))):
        fill_integers(matrix, int(end), width, cells.whole)
        put_text(matrix, cells.fraction_rows, int(end), width, cells.fraction_text, ord(" "))
    return matrix[:, SPILL:].tobytes()


def _format_fraction(value: float) -> str:
    """At most two decimals, trailing zeros dropped: 3.5 -> "3.5", 2.999 -> "3"."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
