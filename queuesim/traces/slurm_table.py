"""The rows of a Slurm sacct export, column by column: splitting the file (Arrow's CSV
reader, or line by line to number malformed lines), header or XDMoD column order, and the
per-distinct-value conversions :mod:`queuesim.traces.slurm` builds jobs from."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from queuesim.common.errors import WorkloadError
from queuesim.common.files import UTF8_BOM, decode_line, line_chunks, mapped_bytes
from queuesim.traces.log_frame import (
    text_column,
)
from queuesim.traces.slurm_values import (
    _COUNTS,
    _CPU_FIELDS,
    _DISTINCT,
    _FREE_TEXT_LAST,
    _JOB_ID,
    _KNOWN,
    _NO_TIME,
    _PIPE_STAND_IN,
    _REQUIRED,
    _TIME_FORMAT,
    _TIMES,
    _USED,
    XDMOD_FIELDS,
    CodeArray,
    FloatArray,
    IntArray,
    TextArray,
    _count,
)
from queuesim.traces.swf import BadLine


@dataclass
class _Table:
    """The rows of a log as strings, column by column (pyarrow arrays or numpy object
    arrays), with each row's 1-based line."""

    n: int
    line: IntArray
    columns: dict[str, Any]
    rows: IntArray | None = None
    """Where set, :meth:`factorized`, :meth:`mapped` and :meth:`times` give these rows."""
    cache: dict[str, tuple[CodeArray, list[str]]] = field(default_factory=dict)
    converted: dict[str, Any] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.columns

    def _arrow(self, name: str) -> Any:
        column = self.columns.get(name)
        if isinstance(column, pa.ChunkedArray | pa.Array):
            return column
        return None

    def digits(self, name: str) -> npt.NDArray[np.bool_]:
        """Per row (all rows), whether the value is a plain number."""
        column = self._arrow(name)
        if column is not None:
            if self._integers(name) is not None:
                return np.ones(self.n, dtype=bool)
            matched = pc.ascii_is_decimal(column)
            return np.asarray(matched.to_numpy(zero_copy_only=False), dtype=bool)
        return np.fromiter((str(s).isdigit() for s in self.text(name)), bool, count=self.n)

    def factorized(self, name: str) -> tuple[CodeArray, list[str]]:
        """Codes into the distinct values, and those values (``[""]`` when absent)."""
        codes, uniques = self._factorized(name)
        return (codes if self.rows is None else codes[self.rows]), uniques

    def _factorized(self, name: str) -> tuple[CodeArray, list[str]]:
        if name not in self.cache:
            self.cache[name] = self._factorize(name)
        return self.cache[name]

    def _factorize(self, name: str) -> tuple[CodeArray, list[str]]:
        # 32-bit codes (Arrow's dictionary indices as they are): the cache holds one
        # array per column for the whole read
        column = self.columns.get(name)
        if column is None:
            return np.zeros(self.n, dtype=np.int32), [""]
        if isinstance(column, pa.ChunkedArray | pa.Array):
            if isinstance(column, pa.Array):
                column = pa.chunked_array([column])
            if not pa.types.is_dictionary(column.type):
                column = column.dictionary_encode()
            column = column.unify_dictionaries()
            if column.num_chunks == 0:
                return np.zeros(0, dtype=np.int32), [""]
            codes = np.concatenate(
                [c.indices.to_numpy(zero_copy_only=False) for c in column.chunks]
            ).astype(np.int32, copy=False)
            return codes, [str(v) for v in column.chunk(0).dictionary.to_pylist()]
        found, uniques = pd.factorize(pd.Series(column, dtype=object), sort=False)
        return found.astype(np.int32), [str(v) for v in uniques]

    def strings(self, name: str) -> pa.Array:
        """The column (all rows) as one Arrow string array: a million ids cost their bytes
        and offsets, not a million Python objects."""
        column = self.columns.get(name)
        if column is None:
            return pa.array([""] * self.n, type=pa.string())
        if isinstance(column, pa.ChunkedArray | pa.Array):
            if pa.types.is_dictionary(column.type):
                column = column.cast(pa.string())
            if isinstance(column, pa.ChunkedArray):
                return column.combine_chunks() if column.num_chunks else pa.array([], pa.string())
            return column
        return pa.array(column, type=pa.string())

    def cell(self, name: str, row: int) -> str:
        """The value of one row of the column, as text ("" when the column is absent):
        what a bad line's note quotes, read alone rather than from the whole column."""
        column = self.columns.get(name)
        if column is None:
            return ""
        if isinstance(column, pa.ChunkedArray | pa.Array):
            return str(column[row].as_py())
        return str(column[row])

    def text(self, name: str) -> TextArray:
        column = self.columns.get(name)
        if column is None:
            return np.full(self.n, "", dtype=object)
        if isinstance(column, pa.ChunkedArray | pa.Array):
            if pa.types.is_dictionary(column.type):
                codes, uniques = self._factorized(name)
                return np.array(uniques, dtype=object)[codes]
            return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
        return np.asarray(column, dtype=object)

    def _integers(self, name: str) -> Any:
        """The column as pyarrow integers when every value is one, else None."""
        key = f"{name} as integers"
        if key not in self.converted:
            try:
                self.converted[key] = pc.cast(self._arrow(name), pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                self.converted[key] = None
        return self.converted[key]

    def all_distinct(self, name: str) -> bool:
        """Whether no value repeats (False when it cannot tell cheaply)."""
        column = self._arrow(name)
        if column is None:
            return False
        integers = self._integers(name)
        if integers is not None:  # sorted copy: 8 bytes a row, where hashing costs ~100
            ordered = np.sort(np.asarray(integers.to_numpy(), dtype=np.int64))
            return bool((ordered[1:] != ordered[:-1]).all())
        return int(pc.count_distinct(column).as_py()) == len(column)

    def counts(self, name: str) -> IntArray:
        """A whole-number column (0 where empty or not a number)."""
        column = self._arrow(name)
        if column is not None and pa.types.is_integer(column.type):
            filled = pc.fill_null(column, 0).to_numpy()
            values: IntArray = np.maximum(np.asarray(filled, dtype=np.int64), 0)
            return values if self.rows is None else values[self.rows]
        return np.asarray(self.mapped(name, _count, np.int64), dtype=np.int64)

    def mapped(self, name: str, convert: Callable[[str], Any], dtype: Any) -> Any:
        """``convert`` applied to each distinct value, spread over the rows."""
        codes, values = self.distinct(name, convert, dtype)
        return values[codes]

    def distinct(
        self, name: str, convert: Callable[[str], Any], dtype: Any
    ) -> tuple[CodeArray, Any]:
        """The codes of the rows and ``convert`` applied to each distinct value: where
        ``convert`` gives several numbers, the caller spreads only the ones it needs
        (``values[:, k][codes]``) rather than a row of all of them per job."""
        codes, uniques = self.factorized(name)
        return codes, np.array([convert(u) for u in uniques or [""]], dtype=dtype)

    def text_of(self, name: str, convert: Callable[[str], str] = str) -> pd.Categorical:
        """``convert`` applied to each distinct value, as a categorical text column."""
        codes, uniques = self.factorized(name)
        return text_column(codes, [convert(u) for u in uniques or [""]])

    def malformed(self, name: str) -> tuple[IntArray, list[str]]:
        """The rows (of :attr:`rows` when set) whose time or count in column ``name`` is
        text that is none (not a time ``YYYY-MM-DDTHH:MM:SS``, a count that is negative or
        not a whole number; empty, ``Unknown`` and ``None`` are unknown, not malformed),
        and those values."""
        column = self.columns.get(name)
        if column is None or not len(column):
            return np.zeros(0, dtype=np.int64), []
        arrow = isinstance(column, pa.ChunkedArray | pa.Array)
        if arrow and pa.types.is_timestamp(column.type):
            flags = np.zeros(0, dtype=bool)  # the reader parsed every value
        elif arrow and pa.types.is_integer(column.type):
            flags = np.asarray(pc.fill_null(pc.less(column, 0), False), dtype=bool)
        elif name in _TIMES and arrow and not pa.types.is_dictionary(column.type):
            stamps = pc.strptime(column, format=_TIME_FORMAT, unit="s", error_is_null=True)
            unknown = pc.is_in(column, pa.array(sorted(_NO_TIME)))
            flags = np.asarray(pc.and_(pc.is_null(stamps), pc.invert(unknown)), dtype=bool)
        elif name in _TIMES and not arrow:
            text = pd.Series(column, dtype=object)
            parsed = pd.to_datetime(text, format=_TIME_FORMAT, errors="coerce")
            flags = (parsed.isna() & ~text.isin(sorted(_NO_TIME))).to_numpy(dtype=bool)
        else:  # judged once per distinct value
            codes, uniques = self._factorized(name)
            check = _not_a_time if name in _TIMES else _not_a_count
            flags = np.array([check(u) for u in uniques], dtype=bool)[codes]
        if self.rows is not None and flags.size:
            flags = flags[self.rows]
        found = np.flatnonzero(flags)
        if not found.size:
            return found, []
        at = found if self.rows is None else self.rows[found]
        return found, [self.cell(name, int(at[0]))]

    def times(self, name: str) -> FloatArray:
        """Epoch seconds of ``YYYY-MM-DDTHH:MM:SS`` read as UTC; NaN when not a time."""
        values = self._times(name)
        return values if self.rows is None else values[self.rows]

    def _times(self, name: str) -> FloatArray:
        column = self.columns.get(name)
        if column is None:
            return np.full(self.n, np.nan)
        if isinstance(column, pa.ChunkedArray | pa.Array):
            if pa.types.is_timestamp(column.type):
                seconds = pc.cast(column, pa.int64()).to_numpy(zero_copy_only=False)
                return np.asarray(seconds, dtype=np.float64)  # nulls became NaN
            try:
                stamps = pc.cast(column, pa.timestamp("s"))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                stamps = pc.strptime(column, format=_TIME_FORMAT, unit="s", error_is_null=True)
            seconds = pc.cast(stamps, pa.int64()).to_numpy(zero_copy_only=False)
            return np.asarray(seconds, dtype=np.float64)  # nulls became NaN
        parsed = pd.to_datetime(
            pd.Series(column, dtype=object), format=_TIME_FORMAT, errors="coerce"
        )
        values = parsed.to_numpy(dtype="datetime64[s]").astype(np.int64).astype(np.float64)
        return np.where(parsed.isna().to_numpy(), np.nan, values)


def _not_a_time(text: str) -> bool:
    if text in _NO_TIME:
        return False
    try:
        datetime.strptime(text, _TIME_FORMAT)
    except ValueError:
        return True
    return False


def _not_a_count(text: str) -> bool:
    """Neither a whole number, unknown, nor a range ``1-2`` (NNodes of a job that asked
    for a range of nodes: unknown, the caller takes the nodes from the TRES)."""
    text = text.strip()
    return not (text in _NO_TIME or _COUNT_OR_RANGE.fullmatch(text))


_COUNT_OR_RANGE = re.compile(r"\d+(-\d+)?")


def _blank(body: bytes | memoryview) -> bool:
    return not bytes(body[:4096]).strip() and (len(body) <= 4096 or bytes(body).isspace())


def _parse_rows(
    body: bytes | memoryview, names: Sequence[str], wanted: frozenset[str]
) -> dict[str, Any] | None:
    """The columns of ``|``-separated rows that all have len(names) fields; None when
    some row does not (pyarrow) - the caller then walks the lines."""
    keep = [n for n in names if n in wanted]
    if _blank(body):
        return {n: np.empty(0, dtype=object) for n in keep}
    bad = 0

    def invalid(_row: Any) -> str:
        nonlocal bad
        bad += 1
        return "skip"

    columns = [f"c{i}" for i in range(len(names))]
    chosen = [columns[names.index(n)] for n in keep]

    def read(typed: bool) -> Any:
        types = {
            c: pa.timestamp("s")
            if typed and n in _TIMES
            else pa.int64()
            if typed and n in _COUNTS
            else pa.string()
            if n in _DISTINCT or n in _TIMES
            else pa.dictionary(pa.int32(), pa.string())
            for n, c in zip(keep, chosen, strict=True)
        }
        return pa_csv.read_csv(
            pa.BufferReader(pa.py_buffer(body)),
            read_options=pa_csv.ReadOptions(column_names=columns, block_size=1 << 22),
            parse_options=pa_csv.ParseOptions(
                delimiter="|",
                quote_char=False,
                escape_char=False,
                invalid_row_handler=invalid,
                ignore_empty_lines=False,  # a blank line is then an invalid row
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                include_columns=chosen,
                null_values=sorted(_NO_TIME),  # applies to times and counts only
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )

    try:
        try:
            # times and counts typed by the reader; any other text in them: strings
            table = read(typed=True)
        except pa.ArrowInvalid:
            bad = 0
            table = read(typed=False)
    except pa.ArrowInvalid:  # not UTF-8: decode with replacement and retry
        fixed = bytes(body).decode("utf-8", errors="replace").encode("utf-8")
        if fixed == body:
            return None
        return _parse_rows(fixed, names, wanted)
    if bad:
        return None
    return {n: table.column(columns[names.index(n)]) for n in keep}


def read_rows(path: Path, *, skip_bad_lines: bool) -> tuple[_Table, list[BadLine]]:
    """The sacct rows of the file at ``path`` by column name, and the malformed lines.

    The file is read a piece of whole lines at a time (:func:`line_chunks`, a few MB),
    each piece split by Arrow's CSV reader as it comes, so only the columns are held, not
    the file's text. A file where some piece does not split cleanly (a malformed row, a
    blank line) or whose pieces' columns come out typed differently is read whole
    (:func:`_read_table`), line by line where it must be: the same rows either way."""
    names: list[str] | None = None
    parts: list[dict[str, Any]] = []
    numbers: list[IntArray] = []
    for first, text in line_chunks(path, "sacct file"):
        body, number = memoryview(text), first
        if names is None:
            if not text.strip():  # only blank lines so far: left to the whole read
                break
            names, start, number = _layout(path, body)
            body = body[start:]
        if _blank(body):
            continue
        columns = _parse_rows(body, names, _USED)
        if columns is None or (parts and any(columns[n].type != parts[0][n].type for n in columns)):
            break
        parts.append(columns)
        rows = len(next(iter(columns.values()))) if columns else 0
        numbers.append(np.arange(number, number + rows, dtype=np.int64))
    else:
        if parts:
            line = np.concatenate(numbers)
            joined = {
                n: pa.chunked_array(
                    [chunk for part in parts for chunk in part[n].chunks], parts[0][n].type
                )
                for n in parts[0]
            }
            return _Table(line.shape[0], line, joined), []
    parts.clear()
    return _read_table(path, mapped_bytes(path, "sacct file"), skip_bad_lines=skip_bad_lines)


def _layout(path: Path, data: memoryview) -> tuple[list[str], int, int]:
    """The column names of the sacct text ``data`` (from its header line, else Open
    XDMoD's order), where its rows start and the number of their first line."""
    # the first non-blank line: a header, or the first job line of a header-less file
    head = bytes(data[: 1 << 16])
    if not head.strip() and len(data) > len(head):
        head = bytes(data)
    offset = 0
    first_number = 1
    while True:
        end = head.find(b"\n", offset)
        end = len(head) if end < 0 else end
        if head[offset:end].strip() or end >= len(head):
            break
        offset = end + 1
        first_number += 1
    if end >= len(head) and len(data) > len(head):  # a first line longer than the head
        end = bytes(data).find(b"\n", offset)
        end = len(data) if end < 0 else end
        head = bytes(data[: end + 1])
    first = head[offset:end].rstrip(b"\r")
    fields = [f.strip().decode("utf-8", "replace") for f in first.split(b"|")]
    header = bool(first.strip()) and any(f.lower() in ("jobid", "jobidraw") for f in fields)
    if header and not _JOB_ID.fullmatch(fields[0]):
        names = [_KNOWN.get(f.lower(), f"?{i}:{f}") for i, f in enumerate(fields)]
        missing = [r for r in _REQUIRED if r not in names]
        if not any(c in names for c in _CPU_FIELDS):
            missing.append(" or ".join(_CPU_FIELDS))
        if missing:
            raise WorkloadError(
                f"{path}:{first_number}: the sacct header lacks the required column(s) "
                f"{', '.join(missing)}"
            )
        body_start, body_number = min(end + 1, len(data)), first_number + 1
    else:
        names = list(XDMOD_FIELDS)
        if first.strip() and not (
            len(fields) == len(names) or (len(fields) > len(names) and names[-1] == "JobName")
        ):
            raise WorkloadError(
                f"{path}:{first_number}: no sacct header line (field names) and "
                f"{len(fields)} |-separated fields; a header-less file must have the "
                f"{len(names)} fields of Open XDMoD's order ({','.join(names)})"
            )
        body_start, body_number = offset, first_number
    return names, body_start, body_number


def _read_table(
    path: Path, content: bytes | memoryview, *, skip_bad_lines: bool
) -> tuple[_Table, list[BadLine]]:
    """The sacct rows of ``content`` by column name, and the malformed lines."""
    data = memoryview(content)
    if bytes(data[: len(UTF8_BOM)]) == UTF8_BOM:
        data = data[len(UTF8_BOM) :]
    names, body_start, body_number = _layout(path, data)
    view = data[body_start:]
    if len(view):
        # every line is a row when none is invalid (pyarrow calls a blank line invalid)
        columns = _parse_rows(view, names, _USED)
        if columns is not None:
            n = len(next(iter(columns.values()))) if columns else 0
            table = _Table(n, np.arange(body_number, body_number + n, dtype=np.int64), columns)
            return table, []
    return _read_table_slowly(path, bytes(view), body_number, names, _USED, skip_bad_lines)


def _read_table_slowly(
    path: Path,
    body: bytes,
    body_number: int,
    names: list[str],
    wanted: frozenset[str],
    skip_bad_lines: bool,
) -> tuple[_Table, list[BadLine]]:
    """Line by line: blank lines skipped, rows with the wrong field count malformed (or,
    extra ``|`` given back to a free-text last column)."""
    expected = len(names) - 1
    absorbs = names[-1] in _FREE_TEXT_LAST
    good: list[bytes] = []
    numbers: list[int] = []
    bad: list[BadLine] = []
    absorbed = False
    for number, raw in enumerate(body.split(b"\n"), start=body_number):
        line = raw.rstrip(b"\r").replace(b"\r", b" ")  # a lone CR would end a row
        if not line.strip():
            continue
        pipes = line.count(b"|")
        if pipes > expected and absorbs:
            head = line.split(b"|", expected)
            line = b"|".join(head[:-1]) + b"|" + head[-1].replace(b"|", b"\x1f")
            absorbed = True
        elif pipes != expected:
            bad.append(
                BadLine(
                    number,
                    decode_line(line),
                    f"expected {len(names)} |-separated fields, found {pipes + 1}",
                )
            )
            continue
        good.append(line)
        numbers.append(number)
    if bad and not skip_bad_lines:
        raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    columns = _parse_rows(b"\n".join(good) + b"\n", names, wanted) if good else None
    if columns is None:
        columns = {n: np.empty(0, dtype=object) for n in names if n in wanted}
        if good:  # cannot happen: every line has the right field count
            raise WorkloadError(f"{path}: could not split the sacct rows")
    table = _Table(len(good), np.asarray(numbers, dtype=np.int64), columns)
    if absorbed and names[-1] in columns:
        last = names[-1]
        restored = [str(v).replace(_PIPE_STAND_IN, "|") for v in table.text(last)]
        table.columns[last] = np.array(restored, dtype=object)
        table.cache.pop(last, None)
    return table, bad
