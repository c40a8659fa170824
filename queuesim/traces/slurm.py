"""Read Slurm accounting: ``sacct --parsable2`` output and the ``jobcomp/filetxt`` log.

**sacct.** What a site runs to export a period (one line per job allocation, ``|``
separated, with a header line)::

    sacct --allusers --allocations --parsable2 --duplicates \\
      --starttime 2024-01-01 --endtime 2024-02-01 --state CD,F,TO,CA,NF,OOM,PR,BF,DL \\
      --format JobID,JobIDRaw,Cluster,Partition,QOS,Account,Group,GID,User,UID,Submit,\\
    Eligible,Start,End,Elapsed,ExitCode,State,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,\\
    AllocTRES,Timelimit,NodeList,JobName,Constraints > jobs.sacct

(``--allocations`` leaves the steps out; without it, steps such as ``123.batch``,
``123.extern`` and ``123.0`` are folded into their job: noted ``step_folded``, skipped.
``--duplicates`` lists every run of a requeued job; the last one is the job, the earlier
ones are noted ``requeued``, dropped. ``Constraints`` gives the node features a job
required; leave it out on Slurm older than 21.08, which does not have it.)

Columns are taken by name from the header line, in any order; extra columns are ignored.
A file without a header line must have the 26 columns of Open XDMoD's export, in this
order: JobID, JobIDRaw, Cluster, Partition, QOS, Account, Group, GID, User, UID, Submit,
Eligible, Start, End, Elapsed, ExitCode, State, NNodes, NCPUS, ReqCPUS, ReqMem, ReqTRES,
AllocTRES, Timelimit, NodeList, JobName (:data:`XDMOD_FIELDS`).

Fields, in the trace's terms (:class:`~queuesim.traces.log_frame.LogJobs`):

==================  =========================================================================
submit, eligible    ``Submit``, ``Eligible``; times ``YYYY-MM-DDTHH:MM:SS`` are the
start, end          cluster's local wall-clock time and are read as if UTC (a daylight-saving
                    change shifts a job by an hour; ``Unknown``, ``None`` or empty: not set)
requested walltime  ``Timelimit`` (``[D-]HH:MM:SS``, ``MM:SS``, minutes; ``UNLIMITED`` and
                    ``Partition_Limit``: not known)
requested CPUs      ``ReqCPUS``, else ReqTRES ``cpu``
allocated CPUs      ``NCPUS``, else AllocTRES ``cpu``
nodes               ``NNodes``, else AllocTRES / ReqTRES ``node``; when the nodes divide
                    the CPUs evenly, the CPUs per node are fixed (a Slurm node count is a
                    hard request), else any spread
memory              ReqTRES ``mem`` (the whole job), else ``ReqMem`` (``Mn`` per node, ``Mc``
                    per CPU, no suffix per node; units K M G T), else AllocTRES ``mem``;
                    ReqMem of 2^31 MB or more means "not set" (noted ``memory_unset``,
                    warning, when no TRES has ``mem`` either)
GPUs                AllocTRES ``gres/gpu`` (also typed, ``gres/gpu:volta=2``), else ReqTRES
queue               ``Partition`` (the first, for a pending job's ``a,b``)
user, group         ``User``, ``Group`` (else ``UID``, ``GID``); account ``Account``
properties          ``Constraints``: ``a&b`` becomes ``a:b``; ``|``, ``[ ]`` or counts
                    (``a*2``) cannot be expressed: noted ``constraint_not_modelled``
                    (warning) and left out
exclusive           not in sacct's output: exclusive jobs show as the whole nodes' CPUs
exit status         the first number of ``ExitCode``
status              ``COMPLETED`` 1; ``FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY PREEMPTED
                    BOOT_FAIL DEADLINE`` 0; ``CANCELLED`` (also ``CANCELLED by N``) 5
hosts               ``NodeList``, a Slurm host list (``cpn-f13-03-[01-02]``; see
                    :func:`expand_hostlist`)
==================  =========================================================================

Job ids: ``123`` and array elements ``123_4`` are jobs; a range of array elements
``123_[1-3,7]`` (throttle ``%N`` allowed) is one job per element, as Open XDMoD counts
them; heterogeneous job components ``123+0`` are jobs each (noted ``het_component``,
warning: they started together, which the simulation does not enforce). Jobs that had not
ended when the export was made (``PENDING RUNNING SUSPENDED REQUEUED RESIZING``) are noted
``not_ended``, states Slurm does not document ``unknown_state``; both dropped.

**jobcomp/filetxt.** One line per job, ``Key=value`` pairs separated by spaces
(``JobId=... UserId=alice(1000) GroupId=g(100) Name=... JobState=COMPLETED
Partition=... TimeLimit=60 StartTime=... EndTime=... NodeList=... NodeCnt=2 ProcCnt=24
WorkDir=... ReservationName= Tres=cpu=24,mem=...,node=2 Account=... QOS=... WcKey=
Cluster=... SubmitTime=... EligibleTime=... DerivedExitCode=0:0 ExitCode=0:0``; values may
hold spaces, a key starts after a space). ``TimeLimit`` is in minutes. Read as sacct, with
``ProcCnt`` for the CPUs, ``NodeCnt`` for the nodes and ``Tres`` for the TRES. No real
jobcomp log with a licence that allows redistribution was found; the tests use lines
written from Slurm's documentation.

A malformed line - the wrong number of fields, a time or number that does not parse -
raises :class:`~queuesim.common.errors.WorkloadError` naming the file, the line and what
was expected, unless the caller skips bad lines: then it is reported in ``bad_lines``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from queuesim.common.errors import WorkloadError
from queuesim.common.files import decode_line, read_bytes
from queuesim.traces.log_frame import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
    LogJobs,
    log_trace,
    text_column,
)
from queuesim.traces.swf import BadLine, SwfTrace, reader_notes

__all__ = [
    "XDMOD_FIELDS",
    "expand_hostlist",
    "looks_like_jobcomp",
    "looks_like_sacct",
    "parse_tres",
    "read_sacct",
    "read_slurm_jobcomp",
]

XDMOD_FIELDS: tuple[str, ...] = (
    "JobID",
    "JobIDRaw",
    "Cluster",
    "Partition",
    "QOS",
    "Account",
    "Group",
    "GID",
    "User",
    "UID",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "ExitCode",
    "State",
    "NNodes",
    "NCPUS",
    "ReqCPUS",
    "ReqMem",
    "ReqTRES",
    "AllocTRES",
    "Timelimit",
    "NodeList",
    "JobName",
)
"""The columns of a headerless export (Open XDMoD's), in order."""

#: columns a header must name
REQUIRED = ("JobID", "Submit", "Start", "End", "State")
#: the columns read
_USED = frozenset(
    [
        *("JobID", "User", "UID", "Group", "GID", "Account", "Partition", "State", "ExitCode"),
        *("Submit", "Eligible", "Start", "End", "NNodes", "NCPUS", "ReqCPUS", "ReqMem"),
        *("ReqTRES", "AllocTRES", "Timelimit", "NodeList", "Constraints"),
    ]
)
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
#: the columns the CSV reader parses itself (times as seconds, counts)
_TYPED: dict[str, pa.DataType] = {
    **dict.fromkeys(("Submit", "Eligible", "Start", "End"), pa.timestamp("s")),
    **dict.fromkeys(("NNodes", "NCPUS", "ReqCPUS"), pa.float64()),
}
_ENDED_OK = {"COMPLETED": STATUS_COMPLETED, "CANCELLED": STATUS_CANCELLED}
_FAILED = ("FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE")
_NOT_ENDED = ("PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING", "REQUEUE_HOLD")
_UNSET = ("", "Unknown", "None", "none", "N/A")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
_LIMIT = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+)(?::(\d+))?$")
_MEM = re.compile(r"^(\d+(?:\.\d*)?)([KMGTP]?)([nc]?)$")
_MB = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_ARRAY = re.compile(r"^(\d+)_\[([^\]]*)\]$")
_SIMPLE_CONSTRAINT = re.compile(r"[A-Za-z0-9_.\-]+(?:&[A-Za-z0-9_.\-]+)*")
_UNSET_MB = 2.0**31


def looks_like_sacct(first_lines: list[bytes]) -> bool:
    """Whether the first content lines are sacct ``--parsable2`` output (a header naming
    JobID, or the 26 XDMoD columns)."""
    first = first_lines[0] if first_lines else b""
    if first.startswith(b"JobID|") or b"|JobID|" in first:
        return True
    return bool(first_lines) and all(
        line.count(b"|") == len(XDMOD_FIELDS) - 1 for line in first_lines[:5]
    )


def looks_like_jobcomp(first_lines: list[bytes]) -> bool:
    """Whether the first content lines are ``jobcomp/filetxt`` records."""
    return bool(first_lines) and all(
        line.startswith(b"JobId=") and b" JobState=" in line for line in first_lines[:5]
    )


# --------------------------------------------------------------------------- values


def parse_tres(text: str) -> dict[str, float]:
    """A TRES list (``billing=12,cpu=12,gres/gpu:volta=2,mem=31000M,node=1``) as cpu,
    node, gpu counts and mem in MB; ValueError when an entry is not ``name=value``."""
    out: dict[str, float] = {}
    for entry in (e for e in text.split(",") if e):
        name, sep, value = entry.partition("=")
        if not sep:
            raise ValueError(f"expected name=value in the TRES list {text!r}, found {entry!r}")
        if name in ("cpu", "node"):
            out[name] = float(value)
        elif name == "gres/gpu" or name.startswith("gres/gpu:"):
            out["gpu"] = out.get("gpu", 0.0) + float(value)
        elif name == "mem":
            match = _MEM.match(value)
            if match is None:
                raise ValueError(f"expected a memory such as 31000M, found {value!r}")
            out["mem"] = float(match.group(1)) * _MB[match.group(2)]
    return out


def _limit_seconds(text: str) -> float:
    """Seconds of a Timelimit (``3-00:00:00``, ``14:20:00``, ``30:00``, ``60`` minutes);
    NaN for ``UNLIMITED``/``Partition_Limit``; ValueError otherwise."""
    if text in ("UNLIMITED", "Partition_Limit", "INVALID", *_UNSET):
        return np.nan
    match = _LIMIT.match(text)
    if match is None:
        raise ValueError(f"expected a time limit such as 3-00:00:00, found {text!r}")
    days, first, second, third = match.groups()
    if third is not None:  # [D-]HH:MM:SS
        hours, minutes, seconds = int(first or 0), int(second), int(third)
    elif first is not None:  # MM:SS, or D-HH:MM
        hours, minutes, seconds = (
            (int(first), int(second), 0) if days else (0, int(first), int(second))
        )
    else:  # minutes, or D-HH
        hours, minutes, seconds = (int(second), 0, 0) if days else (0, int(second), 0)
    return float(int(days or 0) * 86400 + hours * 3600 + minutes * 60 + seconds)


def expand_hostlist(text: str) -> list[str]:
    """The host names of a Slurm host list (``a[01-02,05],b7``); ``+``-joined names and
    ``None assigned`` are understood too."""
    if not text or text.startswith("None"):
        return []
    names: list[str] = []
    for item in re.findall(r"[^,\[+]+(?:\[[^\]]*\][^,\[+]*)*", text):
        names.extend(_expand_one(item))
    return names


def _expand_one(item: str) -> list[str]:
    match = re.search(r"\[([^\]]*)\]", item)
    if match is None:
        return [item]
    head, tail = item[: match.start()], item[match.end() :]
    out = []
    for part in match.group(1).split(","):
        low, _, high = part.partition("-")
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            out.extend(_expand_one(f"{head}{number:0{width}d}{tail}"))
    return out


def _array_elements(text: str) -> list[int]:
    """The elements of an array range ``1-3,7%2``."""
    text = text.split("%")[0]
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return out


# --------------------------------------------------------------------------- reading


def read_sacct(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read sacct ``--parsable2`` output (module docstring)."""
    path = Path(path)
    data = read_bytes(path, "sacct file")
    head = data[: 1 << 16].split(b"\n")
    header_row = next((i for i, line in enumerate(head) if line.strip()), None)
    if header_row is None:
        raise WorkloadError(f"{path}: the sacct file is empty")
    first = head[header_row].rstrip(b"\r").split(b"|")
    if b"JobID" in first:
        names = [f.decode("utf-8", errors="replace").strip() for f in first]
        missing = [c for c in REQUIRED if c not in names]
        if missing:
            raise WorkloadError(
                f"{path}:{header_row + 1}: the header names no {', '.join(missing)} column "
                f"(sacct --format should include {', '.join(REQUIRED)})"
            )
        skip = header_row + 1
    else:
        names = list(XDMOD_FIELDS)
        skip = header_row
    bad: list[BadLine] = []
    bad_numbers: list[int] = []

    def invalid(row: pacsv.InvalidRow) -> str:
        bad_numbers.append(-1 if row.number is None else int(row.number))
        return "skip"

    wanted = [n for n in names if n in _USED]

    def read(types: dict[str, pa.DataType], threads: bool = True) -> pa.Table:
        bad_numbers.clear()
        return pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(
                column_names=names, skip_rows=skip, use_threads=threads, encoding="utf8"
            ),
            parse_options=pacsv.ParseOptions(
                delimiter="|",
                quote_char=False,
                escape_char=False,
                invalid_row_handler=invalid,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                include_columns=wanted,
                null_values=list(_UNSET),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                timestamp_parsers=["%Y-%m-%dT%H:%M:%S"],
            ),
        )

    # text as dictionaries (categoricals in pandas): string work once per distinct value
    typed = {
        n: _TYPED.get(n, pa.string() if n in ("JobID", "NodeList") else _DICTIONARY) for n in wanted
    }
    try:  # times and counts parsed by the CSV reader; a value it cannot parse ...
        table = read(typed)
        if -1 in bad_numbers:  # a bad row read in parallel has no line number
            table = read(typed, threads=False)
    except pa.ArrowInvalid:  # ... is found, and named, column by column below
        table = read(dict.fromkeys(wanted, pa.string()), threads=False)
    frame = table.to_pandas(types_mapper=_pandas_type)
    # line numbers: the non-blank lines after the header, in order, minus the bad ones
    content = _content_lines(data, skip, table.num_rows + len(bad_numbers))
    raw_lines = data.split(b"\n") if bad_numbers else []
    for line in bad_numbers:  # pyarrow numbers rows by their line in the file
        text = decode_line(raw_lines[line - 1])
        reason = f"expected {len(names)} '|'-separated fields, found {text.count('|') + 1}"
        bad.append(BadLine(line, text, reason))
    good = ~np.isin(content, bad_numbers)
    frame["line"] = content[good][: len(frame)]
    return _finish(path, frame, bad, skip_bad_lines, "Slurm sacct")


def _pandas_type(arrow: pa.DataType) -> pd.ArrowDtype | None:
    """Dictionaries become categoricals (None: pandas' default), the rest Arrow-backed."""
    return None if pa.types.is_dictionary(arrow) else pd.ArrowDtype(arrow)


def _content_lines(data: bytes, skip: int, rows: int) -> npt.NDArray[np.int64]:
    """1-based numbers of the lines after the first ``skip`` that are not blank (``rows``
    of them were read, good and bad)."""
    total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if rows == total - skip:  # no blank line: every line after the header is a row
        return np.arange(skip + 1, total + 1, dtype=np.int64)
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    if not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    starts = np.concatenate([[0], ends[:-1] + 1])
    length = ends - starts
    carriage = (length == 1) & (raw[np.minimum(starts, max(len(data) - 1, 0))] == 13)
    numbers = np.arange(1, ends.shape[0] + 1, dtype=np.int64)
    kept: npt.NDArray[np.int64] = numbers[(numbers > skip) & (length > 0) & ~carriage]
    return kept


def read_slurm_jobcomp(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a Slurm ``jobcomp/filetxt`` log (module docstring)."""
    path = Path(path)
    data = read_bytes(path, "Slurm jobcomp log")
    keys = [
        "JobId",
        "UserId",
        "GroupId",
        "Name",
        "JobState",
        "Partition",
        "TimeLimit",
        "StartTime",
        "EndTime",
        "NodeList",
        "NodeCnt",
        "ProcCnt",
        "WorkDir",
        "ReservationName",
        "Tres",
        "Account",
        "QOS",
        "WcKey",
        "Cluster",
        "SubmitTime",
        "EligibleTime",
        "DerivedExitCode",
        "ExitCode",
    ]
    splitter = re.compile(r"(?:^| )(" + "|".join(keys) + r")=")
    rows: list[dict[str, str]] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = decode_line(raw).strip()
        if not text:
            continue
        pieces = splitter.split(text)
        if pieces[0] or len(pieces) < 3:
            bad.append(BadLine(number, text, "expected Key=value pairs starting with JobId="))
            continue
        record = dict(zip(pieces[1::2], pieces[2::2], strict=True))
        if "JobId" not in record or "JobState" not in record:
            bad.append(BadLine(number, text, "expected JobId= and JobState="))
            continue
        limit = record.get("TimeLimit", "")
        rows.append(
            {
                "JobID": record["JobId"],
                "User": re.sub(r"\(\d+\)$", "", record.get("UserId", "")),
                "Group": re.sub(r"\(\d+\)$", "", record.get("GroupId", "")),
                "Partition": record.get("Partition", ""),
                "Account": record.get("Account", ""),
                "Submit": record.get("SubmitTime", ""),
                "Eligible": record.get("EligibleTime", ""),
                "Start": record.get("StartTime", ""),
                "End": record.get("EndTime", ""),
                "State": record["JobState"],
                "NNodes": record.get("NodeCnt", ""),
                "NCPUS": record.get("ProcCnt", ""),
                "AllocTRES": record.get("Tres", ""),
                "Timelimit": limit if not limit.isdigit() else f"{int(limit)}",
                "NodeList": record.get("NodeList", ""),
                "ExitCode": record.get("ExitCode", ""),
                "line": str(number),
            }
        )
    frame = pd.DataFrame(rows, dtype=object)
    if not frame.empty:
        frame["line"] = frame["line"].astype(np.int64)
    return _finish(path, frame, bad, skip_bad_lines, "Slurm jobcomp")


_TEXT = pd.ArrowDtype(pa.string())


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column as Arrow-backed text ("" where missing), so that string operations run in
    Arrow's compiled kernels; a column the CSV reader typed (times, counts) as it is."""
    if name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            return column
        typed = (
            isinstance(column.dtype, pd.ArrowDtype)
            and not pa.types.is_large_string(column.dtype.pyarrow_dtype)
            and not pa.types.is_string(column.dtype.pyarrow_dtype)
        )
        return column if typed else column.astype(_TEXT).fillna("")
    return pd.Series([""] * len(frame), index=frame.index, dtype=_TEXT)


class _BadValue(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line, self.reason = line, reason


def _per_value(
    column: pd.Series, lines: npt.NDArray[np.int64], name: str, parse: object
) -> tuple[npt.NDArray[np.intp], list[object]]:
    """``parse`` of every distinct value of ``column``: the code of each row and the parsed
    values by code (the last one, None, for code -1)."""
    codes, uniques = pd.factorize(column)
    parsed = []
    for k, value in enumerate(uniques):
        try:
            parsed.append(parse(str(value)))  # type: ignore[operator]
        except ValueError as exc:
            raise _BadValue(int(lines[np.argmax(codes == k)]), f"{name}: {exc}") from None
    parsed.append(None)
    return codes, parsed


def _arrow(column: pd.Series) -> pa.Array:
    array = (
        pa.array(column.array) if not hasattr(column.array, "_pa_array") else column.array._pa_array
    )
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _times(column: pd.Series, lines: npt.NDArray[np.int64], name: str) -> npt.NDArray[np.float64]:
    """Epoch seconds of wall-clock times (read as UTC); NaN where not set."""
    if isinstance(column.dtype, pd.ArrowDtype) and pa.types.is_timestamp(
        column.dtype.pyarrow_dtype
    ):
        stamps = _arrow(column)
        seconds = pc.cast(stamps, pa.int64()).to_numpy(zero_copy_only=False)
        return np.where(pc.is_null(stamps).to_numpy(zero_copy_only=False), np.nan, seconds)
    text = _arrow(column)
    parsed = pc.strptime(text, format="%Y-%m-%dT%H:%M:%S", unit="s", error_is_null=True)
    missing = pc.is_null(parsed).to_numpy(zero_copy_only=False)
    unset = pc.is_in(text, value_set=pa.array(_UNSET)).to_numpy(zero_copy_only=False)
    wrong = missing & ~unset
    if wrong.any():
        k = int(np.argmax(wrong))
        raise _BadValue(
            int(lines[k]),
            f"{name}: expected a time YYYY-MM-DDTHH:MM:SS or Unknown, found {text[k].as_py()!r}",
        )
    seconds = pc.cast(parsed, pa.int64()).to_numpy(zero_copy_only=False)
    return np.where(missing, np.nan, seconds).astype(np.float64)


def _counts(column: pd.Series, lines: npt.NDArray[np.int64], name: str) -> npt.NDArray[np.float64]:
    """Numbers of a column; NaN where not set."""
    if isinstance(column.dtype, pd.ArrowDtype) and pa.types.is_floating(column.dtype.pyarrow_dtype):
        counts: npt.NDArray[np.float64] = column.to_numpy(dtype=np.float64, na_value=np.nan)
        return counts
    text = _arrow(column)
    unset = pc.is_in(text, value_set=pa.array(_UNSET))
    try:
        values = pc.cast(pc.if_else(unset, pa.scalar(None, pa.string()), text), pa.float64())
    except pa.ArrowInvalid:
        numbers = pd.to_numeric(column.where(~column.isin(_UNSET)), errors="coerce")
        wrong = numbers.isna().to_numpy() & ~column.isin(_UNSET).to_numpy()
        k = int(np.argmax(wrong))
        raise _BadValue(
            int(lines[k]), f"{name}: expected a number, found {column.iloc[k]!r}"
        ) from None
    result: npt.NDArray[np.float64] = values.to_numpy(zero_copy_only=False).astype(np.float64)
    return result


def _finish(
    path: Path, frame: pd.DataFrame, bad: list[BadLine], skip_bad_lines: bool, label: str
) -> SwfTrace:
    if bad and not skip_bad_lines:
        bad.sort(key=lambda b: b.line)
        raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    try:
        jobs = _jobs(frame)
    except _BadValue as exc:
        raise WorkloadError(f"{path}:{exc.line}: {exc.reason}") from None
    jobs.bad_lines = tuple(sorted(bad, key=lambda b: b.line))
    return log_trace(path, jobs, label)


def _jobs(frame: pd.DataFrame) -> LogJobs:
    """The jobs of sacct rows (or jobcomp records in sacct's column names)."""
    if frame.empty:
        frame = pd.DataFrame({"JobID": [], "State": [], "line": []})
    notes = []
    job_id = _column(frame, "JobID")
    lines = frame["line"].to_numpy(dtype=np.int64)
    step = job_id.str.contains(".", regex=False).to_numpy()
    notes.append(reader_notes(lines[step], job_id[step], "step_folded", "skipped"))
    frame, job_id, lines = frame[~step], job_id[~step], lines[~step]

    # a range of array elements: one row per element
    ranges = job_id.str.match(_ARRAY.pattern).to_numpy()
    if ranges.any():
        repeat = np.ones(len(frame), dtype=np.int64)
        elements: list[str] = []
        for k in np.flatnonzero(ranges).tolist():
            match = _ARRAY.match(job_id.iloc[k])
            assert match is not None
            members = _array_elements(match.group(2))
            repeat[k] = len(members)
            elements.extend(f"{match.group(1)}_{m}" for m in members)
        frame = frame.loc[frame.index.repeat(repeat)].copy()
        expanded = np.repeat(ranges, repeat)
        ids = _column(frame, "JobID").to_numpy(dtype=object).copy()
        ids[expanded] = elements
        frame["JobID"] = ids
        job_id = pd.Series(ids, index=frame.index, dtype=object)
        lines = frame["line"].to_numpy(dtype=np.int64)

    state = pd.Series(
        _mapped(_column(frame, "State"), lambda v: v.split(" ", 1)[0]), index=frame.index
    )
    known = state.isin([*_ENDED_OK, *_FAILED, *_NOT_ENDED]).to_numpy()
    not_ended = state.isin(_NOT_ENDED).to_numpy()
    # requeued runs listed before the last: the last row of an id is the job
    last = ~job_id.duplicated(keep="last").to_numpy()
    earlier = ~last
    notes.append(reader_notes(lines[earlier], job_id[earlier], "requeued", "dropped"))
    still = last & not_ended
    notes.append(reader_notes(lines[still], job_id[still], "not_ended", "dropped"))
    unknown = last & ~known
    notes.append(reader_notes(lines[unknown], job_id[unknown], "unknown_state", "dropped"))
    keep = last & known & ~not_ended
    frame, job_id, lines, state = frame[keep], job_id[keep], lines[keep], state[keep]
    het = job_id.str.contains("+", regex=False).to_numpy()
    notes.append(reader_notes(lines[het], job_id[het], "het_component", "warning"))

    def col(name: str) -> pd.Series:
        return _column(frame, name)

    req_tres = _per_value(col("ReqTRES"), lines, "ReqTRES", parse_tres)
    alloc_tres = _per_value(col("AllocTRES"), lines, "AllocTRES", parse_tres)

    def tres(table: tuple[npt.NDArray[np.intp], list[object]], key: str) -> npt.NDArray[np.float64]:
        codes, parsed = table
        by_code = np.array(
            [t.get(key, np.nan) if isinstance(t, dict) else np.nan for t in parsed],
            dtype=np.float64,
        )
        return by_code[codes]

    ncpus = _counts(col("NCPUS"), lines, "NCPUS")
    alloc = np.where(ncpus > 0, ncpus, tres(alloc_tres, "cpu"))
    req = _counts(col("ReqCPUS"), lines, "ReqCPUS")
    req = np.where(req > 0, req, tres(req_tres, "cpu"))
    nnodes = _counts(col("NNodes"), lines, "NNodes")
    nodes = np.where(nnodes > 0, nnodes, tres(alloc_tres, "node"))
    nodes = np.where(nodes > 0, nodes, tres(req_tres, "node"))
    nodes = np.nan_to_num(nodes).astype(np.int64)
    cpus = np.nan_to_num(np.where(req > 0, req, alloc)).astype(np.int64)
    even = (nodes > 0) & (cpus > 0) & (cpus % np.maximum(nodes, 1) == 0)
    ppn = np.where(even, cpus // np.maximum(nodes, 1), 0).astype(np.int64)
    gpus = tres(alloc_tres, "gpu")
    gpu_count = np.nan_to_num(np.where(np.isnan(gpus), tres(req_tres, "gpu"), gpus))

    mem_mb = tres(req_tres, "mem")
    mem_codes, req_mem = _per_value(col("ReqMem"), lines, "ReqMem", _req_mem)
    mems = [m if isinstance(m, tuple) else (np.nan, "") for m in req_mem]
    per = np.array([m[1] for m in mems], dtype=object)[mem_codes]
    amount = np.array([m[0] for m in mems], dtype=np.float64)[mem_codes]
    unset = amount >= _UNSET_MB
    unknown_mem = unset & ~np.isfinite(mem_mb)
    notes.append(reader_notes(lines[unknown_mem], job_id[unknown_mem], "memory_unset", "warning"))
    amount = np.where(unset, np.nan, amount)
    from_req_mem = np.where(
        per == "c", amount * np.where(cpus > 0, cpus, np.nan), amount * np.maximum(nodes, 1)
    )
    mem_mb = np.where(np.isfinite(mem_mb), mem_mb, from_req_mem)
    mem_mb = np.where(np.isfinite(mem_mb), mem_mb, tres(alloc_tres, "mem"))

    constraints = col("Constraints")
    simple = _mapped(constraints, lambda v: bool(_SIMPLE_CONSTRAINT.fullmatch(v))).astype(bool)
    properties = _mapped_text(
        constraints, lambda v: v.replace("&", ":") if _SIMPLE_CONSTRAINT.fullmatch(v) else ""
    )
    complicated = (constraints != "").to_numpy() & ~simple
    notes.append(
        reader_notes(lines[complicated], job_id[complicated], "constraint_not_modelled", "warning")
    )

    status = np.where(
        state == "COMPLETED",
        STATUS_COMPLETED,
        np.where(state == "CANCELLED", STATUS_CANCELLED, STATUS_FAILED),
    ).astype(np.int64)
    exit_code = _mapped(col("ExitCode"), _exit_status).astype(np.int64)
    partition = _mapped_text(col("Partition"), lambda v: v.split(",", 1)[0])
    nodes_list = col("NodeList")
    user = _or_other(col("User"), col("UID"))
    group = _or_other(col("Group"), col("GID"))
    limit_codes, limits = _per_value(col("Timelimit"), lines, "Timelimit", _limit_seconds)
    limit_seconds = np.array([np.nan if v is None else v for v in limits], dtype=np.float64)[
        limit_codes
    ]
    return LogJobs(
        line=lines,
        source_id=_mapped_text(job_id),
        submit=_times(col("Submit"), lines, "Submit"),
        eligible=_times(col("Eligible"), lines, "Eligible"),
        start=_times(col("Start"), lines, "Start"),
        end=_times(col("End"), lines, "End"),
        req_walltime=limit_seconds,
        req_cpus=np.nan_to_num(req).astype(np.int64),
        alloc_cpus=np.nan_to_num(alloc).astype(np.int64),
        req_mem_kb=mem_mb * 1024,
        used_mem_kb=np.full(len(lines), np.nan),
        cpu_time=np.full(len(lines), np.nan),
        status=status,
        exit_status=exit_code,
        state=_mapped_text(col("State")),
        user_name=user,
        group_name=group,
        account=_mapped_text(col("Account")),
        queue_name=partition,
        nodes=nodes,
        ppn=ppn,
        properties=properties,
        exclusive=np.zeros(len(lines), dtype=bool),
        gpus=gpu_count.astype(np.int64),
        hosts=_mapped_text(nodes_list, lambda v: "" if v.startswith("None") else v),
        notes=pd.concat(notes, ignore_index=True),
    )


def _exit_status(text: str) -> int:
    """The exit status of an ExitCode ``N:S`` (-1 when not a number)."""
    head = text.split(":", 1)[0]
    return int(head) if head.lstrip("-").isdigit() else -1


def _mapped(column: pd.Series, function: Callable[[str], object]) -> npt.NDArray[np.object_]:
    """``function`` of every distinct value of a text column, per row (``""`` stands for
    a missing value): string work done once per value, not once per row."""
    codes, uniques = pd.factorize(column)
    table = np.empty(len(uniques) + 1, dtype=object)
    table[:] = [function(str(u)) for u in uniques] + [function("")]
    result: npt.NDArray[np.object_] = table[codes]
    return result


def _or_other(column: pd.Series, other: pd.Series) -> pd.Categorical:
    """``column`` as text, ``other`` where it is empty (a User without a name: its UID)."""
    text = _mapped_text(column)
    empty = np.asarray(text == "")
    if not empty.any():
        return text
    values = np.where(
        empty, np.asarray(_mapped_text(other), dtype=object), np.asarray(text, dtype=object)
    )
    mixed: pd.Categorical = pd.Categorical(values.astype(object))
    return mixed


def _mapped_text(column: pd.Series, function: Callable[[str], str] | None = None) -> pd.Categorical:
    """:func:`_mapped` for text (``None``: the values as they are), as a categorical
    column (see :func:`~queuesim.traces.log_frame.text_column`)."""
    if function is None and isinstance(column.dtype, pd.CategoricalDtype):
        categorical: pd.Categorical = column.array
        return categorical
    codes, uniques = pd.factorize(column)
    values = np.asarray(uniques, dtype=object)
    if function is not None:
        values = np.array([function(str(u)) for u in values] or [], dtype=object)
    return text_column(codes.astype(np.int64), values)


def _req_mem(text: str) -> tuple[float, str] | None:
    """(MB, "n" per node / "c" per CPU / "" per node) of a ReqMem value; None if unset."""
    if text in _UNSET or text in ("0", "0n", "0c"):
        return None
    match = _MEM.match(text)
    if match is None:
        raise ValueError(f"expected a memory such as 48000Mn or 3000Mc, found {text!r}")
    return float(match.group(1)) * _MB[match.group(2)], match.group(3)
