"""Read PBS Pro / OpenPBS / Torque accounting logs.

A log is one file, a ``.gz`` file, or a directory of daily files (``20241221``...), read in
name order as if they were one file: the ``line`` column and error messages count lines
from the first file's first line, and an error names the file and its own line. One record
a line, ``MM/DD/YYYY HH:MM:SS;TYPE;ID;key=value key=value ...``; lines starting with ``;``
are comments (see ``../shared/workloads/site-logs/SOURCES.md`` for a field guide).

Records:

* ``E`` (the job ended) completes a job: everything the trace says of it comes from its
  ``E`` record. The job's key is its id up to the server name (``123.server`` and ``123``
  are one job; ``123[4].server`` is subjob 4 of array 123). A second ``E`` for the same key
  replaces the first, which is noted ``duplicate_end_record`` (dropped);
* ``Q S D A R M C T`` are job records consulted for what happened to a job: several ``S``
  records (a rerun) are noted ``rerun`` (repaired: the job's runtime is its last run, from
  the ``E`` record's ``start``); a job with records but no ``E`` is noted
  ``deleted_without_end_record`` when it has a ``D`` or ``A`` record (deleted or aborted
  before it could end) and ``no_end_record`` otherwise (still queued or running when the
  log ends); both are dropped, since their runtime is unknown;
* array parents (``123[].server``) are not jobs, their subjobs are: noted
  ``array_parent`` (dropped), once per parent;
* ``L U Y B K k`` (licences, reservations) and unknown types are not job records: noted
  ``not_a_job_record`` (skipped), once per record.

An ``E`` record without ``start`` is a job deleted while queued: it is kept with no start,
so that cleaning counts it as ``cancelled``.

Fields of an ``E`` record, in the trace's terms (:class:`~queuesim.traces.log_frame.LogJobs`):

==================  =========================================================================
submit              ``ctime`` (when the job was created; ``qtime``, the time it entered its
                    current queue, when ``ctime`` is missing)
eligible            ``etime``
start, end          ``start``, ``end`` (epoch seconds)
requested walltime  ``Resource_List.walltime`` (``[[D:]HH:]MM:SS`` or seconds; hours may
                    exceed 24)
requested CPUs      the CPUs of ``Resource_List.select`` (sum over chunks of count x
                    ``ncpus``, 1 where not given) or of Torque's ``Resource_List.nodes``
                    (count x ``ppn``; also when Torque writes such a spec in ``nodect``);
                    else ``Resource_List.ncpus`` (Torque sets it to 1 beside
                    ``nodes=1:ppn=4``, so the chunks come first)
allocated CPUs      the CPUs of ``exec_host`` (``node/0*4`` is 4 CPUs, ``node/0-11`` 12,
                    ``node/3`` one); else ``resources_used.ncpus``; else the request
nodes               ``Resource_List.nodect``; else the chunks' node count; else the hosts
                    of ``exec_host``
CPUs per node       the chunks' common CPUs per node, when every chunk gives the same (0
                    otherwise: any spread)
memory              ``Resource_List.mem`` (else the sum of the chunks' ``mem``) and
                    ``resources_used.mem``; units ``b w kb kw mb mw gb gw tb tw pb`` (a word
                    is 8 bytes), any case, a bare number is bytes
CPU time            ``resources_used.cput``
GPUs                ``Resource_List.ngpus``; else the chunks' ``ngpus`` (select) or
                    ``gpus``/``gpu`` per node (Torque nodes) times their node count
properties          Torque nodes: the words after the counts (``nodes=2:ppn=8:infiniband``);
                    a host name in place of the count becomes ``host=name``. Select:
                    ``name=True`` is property ``name``, ``name=False`` is ``^name``,
                    ``cluster=X`` is ``X``, ``host=``/``vnode=`` are kept as they are, and
                    other resources (not ``ncpus mem vmem ngpus mpiprocs ompthreads``) are
                    kept as ``key=value``, which cleaning counts as not modelled
exclusive           ``Resource_List.place`` containing ``excl`` (``excl``, ``exclhost``,
                    ``scatter:excl``), or ``#excl`` in the nodes spec
queue, user, group  ``queue``, ``user``, ``group``; account: ``account``, else ``project``
exit status         ``Exit_status``; SWF status 1 when 0, 0 otherwise, 5 when never started,
                    -1 when not given
hosts               the distinct host names of ``exec_host``, ``+``-joined, in order
==================  =========================================================================

A malformed record - fewer than four ``;``-separated fields, a bad date, a ``key=value``
without ``=``, an ``E`` record without ``end`` (PBS writes it in every one: the record
was cut off), a number or size that does not parse - raises
:class:`~queuesim.common.errors.WorkloadError` naming the file, the line and what was
expected, unless the caller skips bad lines: then it is reported in ``bad_lines``.

Speed and memory: the log is read a piece of whole lines at a time (a few MB,
:func:`~queuesim.common.files.line_chunks`), and each piece is scanned once by compiled
code (:mod:`queuesim.traces.pbs_scan`) that records where every field and every wanted
value lies; numeric values are parsed there, the others cut into one string array per key
(kept per piece, joined at the end) and parsed once per distinct value
(:mod:`queuesim.traces.pbs_values`). Only the values are kept, not the text: which of a
job's E records wins is decided once every piece is in. A million records read in about
2.5 s (``queuesim bench --readers``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from queuesim.common.errors import WorkloadError
from queuesim.common.files import line_chunks
from queuesim.traces.log_frame import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
    LogJobs,
    log_trace,
    text_column,
)
from queuesim.traces.pbs_scan import (
    BAD_DATE,
    BAD_FIELDS,
    BAD_TYPE,
    RECORD,
    key_table,
    scan_lines,
    scan_values,
    strings,
)
from queuesim.traces.pbs_scan import (
    numbers as scanned_numbers,
)
from queuesim.traces.pbs_values import (
    Chunks,
    exec_host,
    parse_chunks,
    parse_duration,
    parse_size,
)
from queuesim.traces.sniffing import looks_like_pbs
from queuesim.traces.swf import BadLine, SwfTrace, reader_notes

_T = TypeVar("_T")

__all__ = ["looks_like_pbs", "read_pbs"]

#: job records that are consulted; E completes a job
_JOB_TYPE_BYTES = b"QSEDARMCT"
#: the keys of an E record that are read
_KEYS = (
    "user",
    "group",
    "account",
    "project",
    "queue",
    "ctime",
    "qtime",
    "etime",
    "start",
    "end",
    "exec_host",
    "Exit_status",
    "Resource_List.walltime",
    "Resource_List.ncpus",
    "Resource_List.nodect",
    "Resource_List.select",
    "Resource_List.nodes",
    "Resource_List.mem",
    "Resource_List.ngpus",
    "Resource_List.place",
    "resources_used.cput",
    "resources_used.mem",
    "resources_used.ncpus",
)


# --------------------------------------------------------------------------- reading


class _Log:
    """The files of a log, read a piece of whole lines at a time, their lines numbered
    across the files."""

    def __init__(self, path: Path) -> None:
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        if not files:
            raise WorkloadError(f"{path}: the directory holds no log files")
        self.files = files
        #: the number (across the files) of each file's first line, as far as read
        self.starts: list[tuple[int, Path]] = [(1, files[0])]

    def pieces(self) -> Iterator[tuple[int, bytes]]:
        """Pieces of whole lines (:func:`~queuesim.common.files.line_chunks`), file after
        file, each with the number of its first line across the files (a file's last line
        counts whether or not a line break ends it)."""
        self.starts = []
        first = 1
        for file in self.files:
            self.starts.append((first, file))
            number, chunk = 1, b""
            for number, chunk in line_chunks(file, "PBS accounting log"):
                yield first + number - 1, chunk
            # the lines before the last piece, and its own (the last may lack a break)
            first += number - 1 + chunk.count(b"\n") + (not chunk.endswith(b"\n") and bool(chunk))

    def where(self, line: int) -> str:
        """``file:line`` of a line number counted across the files."""
        start, file = next((s, f) for s, f in reversed(self.starts) if s <= line)
        return f"{file}:{line - start + 1}"


def _line_text(buf: npt.NDArray[np.uint8], end: int) -> str:
    """The text of the line of ``buf`` that ends at ``end``."""
    start = end
    while start > 0 and buf[start - 1] != ord("\n"):
        start -= 1
    return buf[start:end].tobytes().decode("utf-8", errors="replace")


_LINE_PROBLEMS = {
    BAD_FIELDS: "expected DATE;TYPE;ID;MESSAGE (four ';'-separated fields)",
    BAD_DATE: "expected a date MM/DD/YYYY HH:MM:SS (month 01-12, day 01-31, hour 00-23) "
    "before the first ';'",
    BAD_TYPE: "expected a one-letter record type between the first two ';'",
}
_KEY_TABLE = key_table(_KEYS)
#: the keys read as numbers by the scan (the others are parsed once per distinct value)
_NUMERIC_KEYS = frozenset(
    {
        "ctime",
        "qtime",
        "etime",
        "start",
        "end",
        "Exit_status",
        "Resource_List.ncpus",
        "Resource_List.ngpus",
        "resources_used.ncpus",
    }
)


def _texts(array: pa.Array) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Codes (-1 where null) and distinct values (decoded, undecodable bytes replaced) of a
    binary or string array."""
    encoded = array.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    dictionary = encoded.dictionary
    try:
        values: list[str] = (
            dictionary.cast(pa.large_string()).to_numpy(zero_copy_only=False).tolist()
        )
    except pa.ArrowInvalid:  # not UTF-8
        values = [v.decode("utf-8", errors="replace") for v in dictionary.to_pylist()]
    return codes, values


def _objects(
    codes: npt.NDArray[np.int64], uniques: list[str], missing: str = ""
) -> npt.NDArray[np.object_]:
    table = np.array([*uniques, missing], dtype=object)
    return table[codes]


@dataclass
class _Piece:
    """What one piece of the log holds, its lines numbered across the log: the malformed
    lines; the records that are not job records (line, id); the job records (key, type,
    line, whether the key is an array parent's); whether each E record of a job has a
    token without ``=``; and, for each E record without one, the values of the wanted keys
    (text or number; ``wrong``: the numeric ones that are not numbers, by key, with their
    text) and its id."""

    bad: list[BadLine]
    other_lines: npt.NDArray[np.int64]
    other_ids: pa.Array
    keys: pa.Array
    types: npt.NDArray[np.uint8]
    lines: npt.NDArray[np.int64]
    parent: npt.NDArray[np.bool_]
    end_bad: npt.NDArray[np.bool_]
    fields: dict[str, pa.Array]
    values: dict[str, npt.NDArray[np.float64]]
    wrong: dict[str, npt.NDArray[np.bool_]]
    wrong_text: dict[tuple[str, int], str]
    source: pa.Array


def _scan_piece(buf: npt.NDArray[np.uint8], first: int) -> _Piece:
    """Scan one piece of whole lines whose first line is line ``first`` of the log."""
    lines = scan_lines(buf)
    numbers = np.arange(first, first + lines.status.shape[0], dtype=np.int64)
    bad: list[BadLine] = []
    for code, reason in _LINE_PROBLEMS.items():
        for i in np.flatnonzero(lines.status == code).tolist():
            bad.append(BadLine(int(numbers[i]), _line_text(buf, int(lines.end[i])), reason))
    record = lines.status == RECORD
    job_record = record & np.isin(lines.rtype, np.frombuffer(_JOB_TYPE_BYTES, dtype=np.uint8))
    other = record & ~job_record
    rows = np.flatnonzero(job_record)
    id_start, key_end = lines.id_start[rows], lines.key_end[rows]
    # an array parent's key ends in "[]"
    long_enough = key_end - id_start >= 2
    parent = long_enough & (buf[np.where(long_enough, key_end - 2, 0)] == ord("["))
    parent &= buf[np.where(long_enough, key_end - 1, 0)] == ord("]")
    types = lines.rtype[rows]
    end_rows = rows[(types == ord("E")) & ~parent]
    value_start, value_end, bad_token = scan_values(
        buf, lines.message_start[end_rows], lines.end[end_rows], _KEY_TABLE
    )
    for k in np.flatnonzero(bad_token >= 0).tolist():
        token_start, i = int(bad_token[k]), int(end_rows[k])
        token_end = min(token_start + 40, int(lines.end[i]))  # within its line
        token = buf[token_start:token_end].tobytes().decode("utf-8", errors="replace")
        reason = f"expected key=value, found {token.split(' ', 1)[0]!r}"
        bad.append(BadLine(int(numbers[i]), _line_text(buf, int(lines.end[i])), reason))
    # PBS and Torque write end= in every E record: one without it was cut off (a log copied
    # while being written, a full disk) and would read as a job deleted before it started
    no_end = (bad_token < 0) & (value_start[:, _KEYS.index("end")] < 0)
    for i in end_rows[no_end].tolist():
        reason = "an E record without end= (cut off? PBS writes end= in every E record)"
        bad.append(BadLine(int(numbers[i]), _line_text(buf, int(lines.end[i])), reason))
    usable = (bad_token < 0) & ~no_end
    value_start, value_end, used_rows = value_start[usable], value_end[usable], end_rows[usable]
    fields: dict[str, pa.Array] = {}
    values: dict[str, npt.NDArray[np.float64]] = {}
    wrong: dict[str, npt.NDArray[np.bool_]] = {}
    wrong_text: dict[tuple[str, int], str] = {}
    for k, name in enumerate(_KEYS):
        if name not in _NUMERIC_KEYS:
            fields[name] = strings(buf, value_start[:, k], value_end[:, k])
            continue
        values[name], wrong[name] = scanned_numbers(buf, value_start[:, k], value_end[:, k])
        for r in np.flatnonzero(wrong[name]).tolist():
            text = buf[value_start[r, k] : value_end[r, k]].tobytes()
            wrong_text[name, r] = text.decode("utf-8", errors="replace")
    return _Piece(
        bad=bad,
        other_lines=numbers[other],
        other_ids=strings(buf, lines.id_start[other], lines.id_end[other]),
        keys=strings(buf, id_start, key_end),
        types=types,
        lines=numbers[rows],
        parent=parent,
        end_bad=~usable,
        fields=fields,
        values=values,
        wrong=wrong,
        wrong_text=wrong_text,
        source=strings(buf, lines.id_start[used_rows], lines.id_end[used_rows]),
    )


def _joined(arrays: list[pa.Array]) -> pa.Array:
    return pa.concat_arrays(arrays) if arrays else pa.array([], pa.large_binary())


def read_pbs(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a PBS accounting log (module docstring) into a trace; ``path`` is a file, a
    ``.gz`` file or a directory of daily files.

    The log is read a piece of whole lines at a time (a few MB), each piece scanned as it
    comes and only what its records give kept, so a million records need memory for
    their values, not for the log's text. Which E record of a job wins is decided once
    every piece is in (the last one, wherever it lies)."""
    path = Path(path)
    log = _Log(path)
    pieces = [_scan_piece(np.frombuffer(text, np.uint8), first) for first, text in log.pieces()]
    bad = sorted((b for piece in pieces for b in piece.bad), key=lambda b: b.line)
    if bad and not skip_bad_lines:
        raise WorkloadError(f"{log.where(bad[0].line)}: {bad[0].reason}")

    def joined_numbers(name: str, dtype: Any) -> npt.NDArray[Any]:
        parts = [getattr(piece, name) for piece in pieces]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    codes, key_values = _texts(_joined([piece.keys for piece in pieces]))
    keys = np.array(key_values, dtype=object)
    types = joined_numbers("types", np.uint8)
    record_lines = joined_numbers("lines", np.int64)
    parent = joined_numbers("parent", np.bool_)
    other_ids = _joined([piece.other_ids for piece in pieces])
    notes = [
        reader_notes(
            joined_numbers("other_lines", np.int64),
            _objects(*_texts(other_ids)),
            "not_a_job_record",
            "skipped",
        )
    ]

    # several E records for one key: the last one wins
    is_end = (types == ord("E")) & ~parent
    end_lines = record_lines[is_end]
    end_codes = codes[is_end]
    usable = ~joined_numbers("end_bad", np.bool_)
    last = np.zeros(end_codes.shape[0], dtype=bool)
    candidates = np.flatnonzero(usable)
    _, from_end = np.unique(end_codes[candidates][::-1], return_index=True)
    last[candidates[candidates.shape[0] - 1 - from_end]] = True
    replaced = usable & ~last
    notes.append(
        reader_notes(
            end_lines[replaced], keys[end_codes[replaced]], "duplicate_end_record", "dropped"
        )
    )
    chosen = np.flatnonzero(last)
    # the chosen records among those the pieces kept values for (the usable ones)
    kept = (np.cumsum(usable) - 1)[chosen]
    every = kept.shape[0] == candidates.shape[0]  # no E record was replaced

    def take(array: pa.Array) -> pa.Array:
        return array if every else array.take(pa.array(kept))

    fields = {
        name: take(_joined([piece.fields[name] for piece in pieces]))
        for name in _KEYS
        if name not in _NUMERIC_KEYS
    }
    values: dict[str, npt.NDArray[np.float64]] = {}
    offsets = np.cumsum([0, *(len(piece.source) for piece in pieces)])
    for name in _KEYS:
        if name in _NUMERIC_KEYS:
            values[name] = _joined_of(pieces, "values", name)[kept]
            wrong = np.flatnonzero(_joined_of(pieces, "wrong", name)[kept])
            if wrong.size:
                row = int(kept[wrong[0]])
                p = int(np.searchsorted(offsets, row, side="right")) - 1
                found = pieces[p].wrong_text[name, row - int(offsets[p])]
                where = log.where(int(end_lines[chosen[wrong[0]]]))
                raise WorkloadError(f"{where}: {name}: expected a number, found {found!r}")
    source = take(_joined([piece.source for piece in pieces]))
    pieces.clear()  # their values are in the columns now
    has_end = np.zeros(keys.shape[0], dtype=bool)
    has_end[end_codes[chosen]] = True
    notes.extend(_record_notes(codes, keys, types, record_lines, parent, has_end))

    try:
        jobs = _jobs(fields, values, end_lines[chosen], source)
    except _BadValue as exc:
        raise WorkloadError(f"{log.where(exc.line)}: {exc.reason}") from None
    jobs.bad_lines = tuple(bad)
    jobs.notes = pd.concat(notes, ignore_index=True)
    return log_trace(path, jobs, "PBS accounting")


def _joined_of(pieces: list[_Piece], kind: str, name: str) -> npt.NDArray[Any]:
    """The pieces' arrays ``kind`` (``values`` or ``wrong``) of key ``name``, end to end."""
    parts = [getattr(piece, kind)[name] for piece in pieces]
    if parts:
        return np.concatenate(parts)
    return np.zeros(0, dtype=np.float64 if kind == "values" else np.bool_)


def _record_notes(
    codes: npt.NDArray[np.int64],
    keys: npt.NDArray[np.object_],
    types: npt.NDArray[np.uint8],
    lines: npt.NDArray[np.int64],
    parent: npt.NDArray[np.bool_],
    has_end: npt.NDArray[np.bool_],
) -> list[pd.DataFrame]:
    """Notes on the job records (by their key's code in ``keys``): array parents, reruns,
    jobs without an E record."""
    notes = []
    n = keys.shape[0]
    last_line = np.zeros(n, dtype=np.int64)
    np.maximum.at(last_line, codes, lines)
    is_parent = np.zeros(n, dtype=bool)
    is_parent[codes[parent]] = True
    shown = np.flatnonzero(is_parent)
    shown = shown[np.argsort(last_line[shown], kind="mergesort")]
    notes.append(reader_notes(last_line[shown], keys[shown], "array_parent", "dropped"))
    starts = np.bincount(codes[~parent & (types == ord("S"))], minlength=n)
    rerun = np.flatnonzero(has_end & (starts > 1))
    end_line = np.zeros(n, dtype=np.int64)
    ended = types == ord("E")
    np.maximum.at(end_line, codes[ended], lines[ended])
    rerun = rerun[np.argsort(end_line[rerun], kind="mergesort")]
    notes.append(reader_notes(end_line[rerun], keys[rerun], "rerun", "repaired"))
    gone = np.zeros(n, dtype=bool)
    gone[codes[(types == ord("D")) | (types == ord("A"))]] = True
    open_jobs = ~has_end & ~is_parent
    for chosen, reason in (
        (open_jobs & gone, "deleted_without_end_record"),
        (open_jobs & ~gone, "no_end_record"),
    ):
        which = np.flatnonzero(chosen)
        which = which[np.argsort(last_line[which], kind="mergesort")]
        notes.append(reader_notes(last_line[which], keys[which], reason, "dropped"))
    return notes


class _BadValue(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def _per_value(
    array: pa.Array, lines: npt.NDArray[np.int64], key: str, parse: Callable[[str], _T]
) -> tuple[npt.NDArray[np.int64], list[_T]]:
    """``parse`` of every distinct value of ``array``: each row's code (-1: absent) and the
    parsed values by code; a value that does not parse is a :class:`_BadValue`."""
    codes, uniques = _texts(array)
    parsed = []
    for k, value in enumerate(uniques):
        try:
            parsed.append(parse(value))
        except ValueError as exc:
            line = int(lines[np.argmax(codes == k)])
            raise _BadValue(line, f"{key}: {exc}") from None
    return codes, parsed


def _floats(
    array: pa.Array, lines: npt.NDArray[np.int64], key: str, parse: Callable[[str], float]
) -> npt.NDArray[np.float64]:
    """``parse`` of every value as a float (NaN where absent)."""
    codes, parsed = _per_value(array, lines, key, parse)
    return np.array([*parsed, np.nan], dtype=np.float64)[codes]


def _chunks(text: str, *, torque: bool) -> Chunks:
    return parse_chunks(text, torque=torque)


def _chunk_columns(
    fields: dict[str, pa.Array], lines: npt.NDArray[np.int64]
) -> dict[str, npt.NDArray[Any]]:
    """Per job, what its select spec (else its Torque nodes spec) asks for, and its
    ``nodect`` as a number (``nodect``; NaN when it is not one)."""
    # Torque writes nodect as a nodes spec at times (nodect=1:ppn=24:gpu=4): read it so
    nodect_codes, nodect_values = _texts(fields["Resource_List.nodect"])
    spec = np.array([":" in v for v in nodect_values] + [False], dtype=bool)[nodect_codes]
    nodect = pd.to_numeric(pd.Series([*nodect_values, ""]), errors="coerce").to_numpy()
    nodes_given = pc.is_valid(fields["Resource_List.nodes"]).to_numpy(zero_copy_only=False)
    torque = pc.if_else(
        pa.array(~nodes_given & spec), fields["Resource_List.nodect"], fields["Resource_List.nodes"]
    )
    columns: dict[str, npt.NDArray[Any]] = {}
    for name, array, is_torque in (
        ("select", fields["Resource_List.select"], False),
        ("torque", torque, True),
    ):
        key = "Resource_List.select" if not is_torque else "Resource_List.nodes"
        codes, parsed = _per_value(array, lines, key, partial(_chunks, torque=is_torque))
        for field in ("nodes", "cpus", "ppn", "gpus", "mem_bytes", "properties", "exclusive"):
            none = {"mem_bytes": np.nan, "properties": (), "exclusive": False}.get(field, 0)
            table = np.empty(len(parsed) + 1, dtype=object)
            table[:] = [getattr(c, field) for c in parsed] + [none]
            columns[f"{name}.{field}"] = table[codes]
        columns[f"{name}.given"] = codes >= 0
    chosen = columns["select.given"]
    return {
        "nodect": nodect[nodect_codes],
        **{
            field: np.where(chosen, columns[f"select.{field}"], columns[f"torque.{field}"])
            for field in ("nodes", "cpus", "ppn", "gpus", "mem_bytes", "properties", "exclusive")
        },
    }


def _jobs(
    fields: dict[str, pa.Array],
    values: dict[str, npt.NDArray[np.float64]],
    lines: npt.NDArray[np.int64],
    source: pa.Array,
) -> LogJobs:
    """The jobs of the E records' fields (``values``: the numeric ones; ``lines``: the
    records' lines)."""

    def number(key: str) -> npt.NDArray[np.float64]:
        return values[key]

    def text(key: str) -> pd.Categorical:
        return text_column(*_texts(fields[key]))

    ctime, qtime = number("ctime"), number("qtime")
    start = number("start")
    start = np.where(start > 0, start, np.nan)
    walltime = _floats(
        fields["Resource_List.walltime"], lines, "Resource_List.walltime", parse_duration
    )
    cput = _floats(fields["resources_used.cput"], lines, "resources_used.cput", parse_duration)
    req_mem = _floats(fields["Resource_List.mem"], lines, "Resource_List.mem", parse_size)
    used_mem = _floats(fields["resources_used.mem"], lines, "resources_used.mem", parse_size)
    chunks = _chunk_columns(fields, lines)

    def host_entry(value: str) -> tuple[int, str]:
        try:
            return exec_host(value)
        except ValueError:
            raise ValueError(f"expected node/cpu+node/cpu..., found {value!r}") from None

    host_codes, parsed_hosts = _per_value(fields["exec_host"], lines, "exec_host", host_entry)
    exec_cpus = np.array([h[0] for h in parsed_hosts] + [0], dtype=np.int64)[host_codes]
    hosts = text_column(host_codes, [h[1] for h in parsed_hosts])
    host_count = np.array([h[1].count("+") + 1 for h in parsed_hosts] + [0])[host_codes]

    ncpus = number("Resource_List.ncpus")
    chunk_cpus = chunks["cpus"].astype(np.int64)
    # the chunks are the request (Torque's ncpus says 1 beside nodes=1:ppn=4)
    req_cpus = np.where(chunk_cpus > 0, chunk_cpus, np.where(ncpus > 0, ncpus, 0))
    req_cpus = req_cpus.astype(np.int64)
    used_ncpus = number("resources_used.ncpus")
    alloc = np.where(exec_cpus > 0, exec_cpus, np.where(used_ncpus > 0, used_ncpus, req_cpus))
    nodect = chunks["nodect"].astype(np.float64)
    chunk_nodes = chunks["nodes"].astype(np.int64)
    nodes = np.where(
        np.isfinite(nodect), nodect, np.where(chunk_nodes > 0, chunk_nodes, host_count)
    ).astype(np.int64)
    ngpus = number("Resource_List.ngpus")
    gpus = np.where(ngpus > 0, ngpus, chunks["gpus"].astype(np.int64)).astype(np.int64)
    req_mem = np.where(np.isfinite(req_mem), req_mem, chunks["mem_bytes"].astype(np.float64))
    place_codes, places = _texts(fields["Resource_List.place"])
    excl = np.array(["excl" in p for p in places] + [False], dtype=bool)[place_codes]
    exclusive = excl | chunks["exclusive"].astype(bool)
    exit_status = number("Exit_status")
    never = np.isnan(start)
    unknown = np.isnan(exit_status)
    status = np.where(
        never,
        STATUS_CANCELLED,
        np.where(unknown, -1, np.where(exit_status == 0, STATUS_COMPLETED, STATUS_FAILED)),
    )
    ended = np.where(unknown, "ended", np.where(exit_status == 0, "completed", "failed"))
    state = text_column(*_texts(pa.array(np.where(never, "deleted", ended))))
    account = text_column(*_texts(pc.coalesce(fields["account"], fields["project"])))
    property_codes, property_values = _texts(
        pa.array([":".join(p) for p in chunks["properties"]], pa.large_string())
    )

    return LogJobs(
        line=lines,
        source_id=text_column(*_texts(source)),
        submit=np.where(np.isfinite(ctime), ctime, qtime),
        eligible=number("etime"),
        start=start,
        end=number("end"),
        req_walltime=walltime,
        req_cpus=req_cpus,
        alloc_cpus=alloc.astype(np.int64),
        req_mem_kb=req_mem / 1024,
        used_mem_kb=used_mem / 1024,
        cpu_time=cput,
        status=status.astype(np.int64),
        exit_status=np.where(unknown, -1, exit_status).astype(np.int64),
        state=state,
        user_name=text("user"),
        group_name=text("group"),
        account=account,
        queue_name=text("queue"),
        nodes=nodes,
        ppn=chunks["ppn"].astype(np.int64),
        properties=text_column(property_codes, property_values),
        exclusive=exclusive,
        gpus=gpus,
        hosts=hosts,
    )
