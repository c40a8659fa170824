"""Read Slurm accounting: ``sacct --parsable2`` output and the ``jobcomp/filetxt`` log.

**sacct** (:func:`read_sacct`). The command a site runs, for one month, one line per job::

    TZ=UTC sacct --allusers --allocations --parsable2 \\
        --starttime 2024-01-01T00:00:00 --endtime 2024-02-01T00:00:00 \\
        --format=JobID,JobIDRaw,Cluster,Partition,QOS,Account,Group,GID,User,UID,\\
    Submit,Eligible,Start,End,Elapsed,ExitCode,State,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,\\
    AllocTRES,Timelimit,NodeList,Constraints > jobs.sacct

(the fields are :data:`SACCT_FIELDS`; add ``--clusters=NAME`` on a multi-cluster database).

* ``--allocations`` (``-X``) is recommended: a job's row already holds what a simulator
  needs (its times, CPUs, nodes, memory and GPU request); the step rows (``123.batch``,
  ``123.extern``, ``123.0``) only multiply the rows. Files with steps are read too: each
  step is folded into its job (the job row wins) and counted, one ``step_folded`` note per
  step row; a step whose job row is absent is dropped (``orphan_step``).
* no ``--duplicates`` (``-D``): sacct then shows only the last run of a requeued job, which
  is what a trace wants. With ``-D`` the earlier runs (state ``REQUEUED``) are dropped,
  one ``requeued`` note each, and the last record is kept as it is.
* ``TZ=UTC``: sacct prints times (``YYYY-MM-DDTHH:MM:SS``) in the time zone of the shell
  that runs it. They are read as naive wall-clock times turned into epoch seconds as if
  UTC; with ``TZ=UTC`` that is exact, otherwise DST shifts are not corrected (an hour
  lost or repeated twice a year). ``Unknown``, ``None`` and empty are unknown (NaN).
* ``--parsable2`` separates fields with ``|`` and escapes nothing, so a ``|`` in a
  free-text value (a job name, an OR constraint ``a|b``) adds a field. When the **last**
  column is ``Constraints`` or ``JobName`` the extra fields are given back to it (this is
  why the recommended list ends with ``Constraints`` and leaves ``JobName`` out: it says
  nothing a simulator uses). Any other row with the wrong field count is malformed.
* ``--starttime/--endtime`` select the jobs eligible or running in the window, including
  jobs still pending or running at ``--endtime``: those are not ended and are dropped
  (``not_ended``). Choose an end time some days in the past.

A header line (field names, ``|``-separated, as sacct prints without ``--noheader``) names
the columns: they are taken by name (case-insensitive), in any order, unknown ones
ignored; ``JobID``, ``Submit``, ``Start``, ``End`` and ``State`` are required, and one of
``NCPUS``, ``ReqCPUS``, ``AllocTRES`` or ``ReqTRES``. Without a header the file must have
the 26 fields of Open XDMoD's Slurm shredder, :data:`XDMOD_FIELDS` (``JobID`` to
``JobName``; Open XDMoD runs ``sacct --noheader`` with that ``--format``).

What each column becomes (``LogJobs``, :mod:`queuesim.traces.log_frame`):

* JobID: the job's ``source_id``. Array elements ``123_4`` are jobs. An unstarted array
  range ``123_[1-3,7%2]`` stands for its elements (``123_1``, ``123_2``, ``123_3``,
  ``123_7``; ``%2`` is a throttle), each one job, as Open XDMoD expands them; pending ones
  are then dropped as ``not_ended``. Components of a heterogeneous job ``123+0``,
  ``123+1`` are each a job (they start together; the simulator does not tie them), one
  ``het_component`` warning each;
* State -> SWF status: ``COMPLETED`` 1; ``FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY
  PREEMPTED BOOT_FAIL DEADLINE`` 0; ``CANCELLED`` (``CANCELLED by 123``) 5 (cleaning
  keeps cancelled jobs that ran); ``PENDING RUNNING SUSPENDED REQUEUED RESIZING
  REQUEUE_HOLD REQUEUE_FED SPECIAL_EXIT`` at the end of the log: not ended, dropped
  (``not_ended``); ``REVOKED`` (a federated sibling that ran elsewhere) dropped
  (``revoked``); any other state is kept as failed (0) with an ``unknown_state`` warning
  (Open XDMoD skips such jobs with a warning). ``state`` keeps the text as written;
* ExitCode ``N:S``: ``exit_status`` N, or 128 + S when a signal S killed it; -1 unknown;
* Submit, Eligible, Start, End: times (above). The runtime is End - Start (Elapsed is not
  needed, and differs only for suspended jobs);
* Timelimit -> requested walltime: ``[D-]HH:MM:SS``, ``D-HH[:MM]``, ``MM:SS``, a plain
  number of minutes, fractions of a second ignored; ``UNLIMITED``, ``Partition_Limit``
  (the partition's limit, unknown here) and ``0`` are unknown, with a
  ``walltime_unlimited`` warning for the first two;
* CPUs: requested = ReqCPUS, else the ``cpu`` of ReqTRES; allocated = NCPUS, else the
  ``cpu`` of AllocTRES. Nodes = NNodes, else the ``node`` of AllocTRES, else ReqTRES.
  GPUs = the ``gres/gpu`` of AllocTRES (or the sum of its typed ``gres/gpu:TYPE``
  entries), else of ReqTRES;
* ReqMem -> the job's memory: ``48000Mn`` per node (x nodes), ``3000Mc`` per CPU (x the
  requested, else allocated CPUs), units ``K M G T`` (M when none). A plain ``48000M``
  (Slurm 21.08 and later print no suffix) is the job's total, as the ``mem`` of ReqTRES
  is. Slurm before 17.02 flagged per-CPU memory with bit 31 of a 32-bit number; a newer
  sacct shows such records as ``2147486448Mn``: values above 2^31 and below 2^32 MB are
  decoded as (value - 2^31) MB per CPU. In the 2016 XDMoD log this equals the ``mem`` of
  ReqTRES on all 10,626 such jobs; a decoded value that ReqTRES does not confirm gets a
  ``memory_per_cpu_flag`` note (repaired). Other values from 2^31 up (and text that is not
  a size) are unknown, with a ``memory_unset`` warning. ``0`` (``--mem=0``: all of a
  node's memory) is unknown. Without ReqMem the ``mem`` of ReqTRES is used;
* Partition -> ``queue_name`` (a pending job's list ``a,b``: the first, with a
  ``partition_list`` warning); Account -> ``account``; User (else UID) -> ``user_name``;
  Group (else GID) -> ``group_name``;
* NodeList -> ``hosts``: host ranges expanded (``cpn-f13-03-[01-02,05]``, several bracket
  groups, zero padding kept), joined by ``+``; ``None assigned`` -> ``""``;
* ``ppn``: a Slurm job's node count is a hard request, so when the CPUs (allocated, else
  requested) divide evenly over the nodes, ppn = CPUs / nodes (a one-node job: all its
  CPUs on one node); otherwise 0 (free spread) with a ``ppn_uneven`` warning;
* Constraints (``--constraint``, node features) -> ``properties``: ``a&b`` -> ``a:b``; OR
  (``a|b``), brackets, counts (``a*2``) or commas cannot be expressed: no properties and a
  ``constraint_not_modelled`` warning;
* ``exclusive``: sacct has no column that tells ``--exclusive`` (it shows only what was
  allocated); always False;
* optional extra column TotalCPU (``[D-]HH:MM:SS`` or ``MM:SS.mmm``): the CPU time;
  without it the SWF average CPU time is unknown. Used memory is always unknown (MaxRSS
  lives on step rows).

The same job id twice (``-D``, or two clusters' ids in one file: the key is Cluster and
JobID): an earlier record in a requeue state is dropped (``requeued``, repaired); any other
earlier record stays a job of its own, with a ``duplicate_id`` warning.

Notes (:attr:`SwfTrace.notes`) come grouped by reason, each group in file order.

Speed: a plain file is memory-mapped and split by pyarrow's CSV reader, times parsed by
it, every other value a string; the columns other
than JobID and the times are read as dictionaries and converted through their distinct
values (a million-job log has a few thousand distinct ReqMem, TRES, NodeList...). Only when
a row has the wrong field count (or there is a blank line) are the lines walked one by one,
to number them. A million-row sacct file (the 2016 XDMoD log repeated with shifted ids and
times, 350 MB) reads in about 2 s on one core.

**jobcomp/filetxt** (:func:`read_slurm_jobcomp`): the file ``JobCompLoc`` names when
``JobCompType=jobcomp/filetxt``, one line per ended job: ``JobId=123 UserId=alice(1000)
GroupId=g(100) Name=x JobState=COMPLETED Partition=p TimeLimit=60 StartTime=... EndTime=...
NodeList=n[1-2] NodeCnt=2 ProcCnt=24 WorkDir=/home/x ReservationName= Tres=cpu=24,...
Account=a QOS=normal WcKey= Cluster=c SubmitTime=... EligibleTime=... DerivedExitCode=0:0
ExitCode=0:0``. Pairs are split at `` Key=`` for the keys of :data:`JOBCOMP_KEYS` (so that
Name and WorkDir may hold spaces; an unknown key stays inside the value before it).
TimeLimit is in minutes (or ``UNLIMITED``); ``Tres`` is what was allocated (AllocTRES);
NodeCnt and ProcCnt are NNodes and NCPUS; the rest is read as for sacct. No real
jobcomp file with a licence that allows redistribution was found: the tests use lines
written by hand from the Slurm documentation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from queuesim.common.errors import WorkloadError
from queuesim.common.files import GZIP_MAGIC, UTF8_BOM, decode_line, read_bytes
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
    "JOBCOMP_KEYS",
    "SACCT_FIELDS",
    "XDMOD_FIELDS",
    "expand_hostlist",
    "gpus_of_tres",
    "looks_like_jobcomp",
    "looks_like_sacct",
    "read_sacct",
    "read_slurm_jobcomp",
]

SACCT_FIELDS: tuple[str, ...] = (
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
    "Constraints",
)
"""The ``--format`` fields recommended (module docstring): Constraints last."""

XDMOD_FIELDS: tuple[str, ...] = (*SACCT_FIELDS[:-1], "JobName")
"""The 26 fields of a header-less file, in Open XDMoD's order."""

_REQUIRED = ("JobID", "Submit", "Start", "End", "State")
_CPU_FIELDS = ("NCPUS", "ReqCPUS", "AllocTRES", "ReqTRES")
_KNOWN = {name.lower(): name for name in (*SACCT_FIELDS, "JobName", "TotalCPU")}
# the columns the reader uses (the others are not converted at all)
_USED = frozenset(_KNOWN.values()) - {"JobIDRaw", "QOS", "Elapsed", "JobName"}
_FREE_TEXT_LAST = ("JobName", "Constraints")
# columns read as plain strings; the others, with few distinct values, as dictionaries
_DISTINCT = frozenset({"JobID", "Submit", "Eligible", "Start", "End", "TotalCPU"})
_TIMES = frozenset({"Submit", "Eligible", "Start", "End"})
_COUNTS = frozenset({"NNodes", "NCPUS", "ReqCPUS"})
_NO_TIME = frozenset({"", "Unknown", "None"})  # what sacct writes for a time not set
# replaces a "|" given back to the last column while the rows go through the CSV reader
_PIPE_STAND_IN = "\x1f"

JOBCOMP_KEYS: tuple[str, ...] = (
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
    "ArrayJobId",
    "ArrayTaskId",
    "HetJobId",
    "HetJobOffset",
    "DerivedExitCode",
    "ExitCode",
    "StdIn",
    "StdOut",
    "StdErr",
)
"""The ``Key=`` words of a jobcomp/filetxt line that separate its values."""

# jobcomp key -> sacct column
_JOBCOMP_COLUMNS = {
    "JobId": "JobID",
    "Name": "JobName",
    "JobState": "State",
    "Partition": "Partition",
    "TimeLimit": "Timelimit",
    "StartTime": "Start",
    "EndTime": "End",
    "NodeList": "NodeList",
    "NodeCnt": "NNodes",
    "ProcCnt": "NCPUS",
    "Tres": "AllocTRES",
    "Account": "Account",
    "QOS": "QOS",
    "Cluster": "Cluster",
    "SubmitTime": "Submit",
    "EligibleTime": "Eligible",
    "ExitCode": "ExitCode",
}
_JOBCOMP_REQUIRED = ("JobId", "JobState", "StartTime", "EndTime")

_COMPLETED = {"COMPLETED"}
_FAILED = {
    "FAILED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}
_CANCELLED = {"CANCELLED"}
_NOT_ENDED = {
    "PENDING",
    "RUNNING",
    "SUSPENDED",
    "REQUEUED",
    "RESIZING",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "SPECIAL_EXIT",
}
_REQUEUE = {"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}
_REVOKED = {"REVOKED"}

_JOB_ID = re.compile(
    r"(?P<base>\d+)(?:_(?P<task>\d+|\[[^\]]*\]))?(?:\+(?P<het>\d+))?(?:\.(?P<step>.+))?"
)
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
_UNITS_MB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_REQ_MEM = re.compile(r"(\d+(?:\.\d+)?)([KMGTP]?)([nc]?)")
_TRES_MEM = re.compile(r"(\d+(?:\.\d+)?)([KMGTP]?)")
_FLAG_BIT = 2**31
_DURATION = (
    # D-HH[:MM[:SS]]
    (re.compile(r"(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?(?:\.\d+)?"), (86400, 3600, 60, 1)),
    # HH:MM:SS
    (re.compile(r"(\d+):(\d+):(\d+)(?:\.\d+)?"), (3600, 60, 1)),
    # MM:SS
    (re.compile(r"(\d+):(\d+)(?:\.\d+)?"), (60, 1)),
)
_MINUTES = re.compile(r"\d+")
_UNLIMITED = {"UNLIMITED", "PARTITION_LIMIT", "INFINITE"}
_USER_ID = re.compile(r"(.*?)\((\d+)\)")

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
TextArray = npt.NDArray[np.object_]
BoolArray = npt.NDArray[np.bool_]


# =========================================================================== sniffers


def _first_content(first_lines: list[bytes]) -> bytes | None:
    for index, raw in enumerate(first_lines):
        line = raw.removeprefix(UTF8_BOM).strip() if index == 0 else raw.strip()
        if line:
            return line
    return None


def looks_like_sacct(first_lines: list[bytes]) -> bool:
    """Whether the first lines of a file look like ``sacct --parsable2`` output: a header
    line naming JobID, or a job line of the 26 XDMoD fields starting with a job id."""
    line = _first_content(first_lines)
    if line is None or b"|" not in line:
        return False
    fields = [f.strip().decode("utf-8", "replace") for f in line.split(b"|")]
    if any(f.lower() == "jobid" for f in fields):
        return True
    return len(fields) == len(XDMOD_FIELDS) and _JOB_ID.fullmatch(fields[0]) is not None


def looks_like_jobcomp(first_lines: list[bytes]) -> bool:
    """Whether the first lines of a file look like a Slurm jobcomp/filetxt log."""
    line = _first_content(first_lines)
    return (
        line is not None
        and line.startswith(b"JobId=")
        and (b" JobState=" in line or b" UserId=" in line)
    )


# =========================================================================== the table


@dataclass
class _Table:
    """The rows of a log as strings, column by column (pyarrow arrays or numpy object
    arrays), with each row's 1-based line."""

    n: int
    line: IntArray
    columns: dict[str, Any]
    rows: IntArray | None = None
    """Where set, :meth:`factorized`, :meth:`mapped` and :meth:`times` give these rows."""
    cache: dict[str, tuple[IntArray, list[str]]] = field(default_factory=dict)
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

    def factorized(self, name: str) -> tuple[IntArray, list[str]]:
        """Codes into the distinct values, and those values (``[""]`` when absent)."""
        codes, uniques = self._factorized(name)
        return (codes if self.rows is None else codes[self.rows]), uniques

    def _factorized(self, name: str) -> tuple[IntArray, list[str]]:
        if name not in self.cache:
            self.cache[name] = self._factorize(name)
        return self.cache[name]

    def _factorize(self, name: str) -> tuple[IntArray, list[str]]:
        column = self.columns.get(name)
        if column is None:
            return np.zeros(self.n, dtype=np.int64), [""]
        if isinstance(column, pa.ChunkedArray | pa.Array):
            if isinstance(column, pa.Array):
                column = pa.chunked_array([column])
            if not pa.types.is_dictionary(column.type):
                column = column.dictionary_encode()
            column = column.unify_dictionaries()
            if column.num_chunks == 0:
                return np.zeros(0, dtype=np.int64), [""]
            codes = np.concatenate(
                [c.indices.to_numpy(zero_copy_only=False) for c in column.chunks]
            ).astype(np.int64)
            return codes, [str(v) for v in column.chunk(0).dictionary.to_pylist()]
        codes, uniques = pd.factorize(pd.Series(column, dtype=object), sort=False)
        return codes.astype(np.int64), [str(v) for v in uniques]

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
        column = column if integers is None else integers
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
        codes, uniques = self.factorized(name)
        values = np.array([convert(u) for u in uniques or [""]], dtype=dtype)
        return values[codes]

    def text_of(self, name: str, convert: Callable[[str], str] = str) -> pd.Categorical:
        """``convert`` applied to each distinct value, as a categorical text column."""
        codes, uniques = self.factorized(name)
        return text_column(codes, [convert(u) for u in uniques or [""]])

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


def _read_table(
    path: Path, content: bytes | memoryview, *, skip_bad_lines: bool
) -> tuple[_Table, list[BadLine]]:
    """The sacct rows of ``content`` by column name, and the malformed lines."""
    data = memoryview(content)
    if bytes(data[: len(UTF8_BOM)]) == UTF8_BOM:
        data = data[len(UTF8_BOM) :]
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


# =========================================================================== values


def _count(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else 0


def _tres(text: str) -> tuple[float, float, float, float]:
    """(cpu, node, mem MB, GPUs) of a TRES list; NaN (GPUs 0) for what it lacks."""
    cpu = node = mem = np.nan
    gpus = 0.0
    typed = 0.0
    untyped: float | None = None
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        if key == "cpu" and value.isdigit():
            cpu = float(value)
        elif key == "node" and value.isdigit():
            node = float(value)
        elif key == "mem":
            match = _TRES_MEM.fullmatch(value)
            if match:
                mem = float(match.group(1)) * _UNITS_MB[match.group(2) or "M"]
        elif key == "gres/gpu" and value.isdigit():
            untyped = float(value)
        elif key.startswith("gres/gpu:") and value.isdigit():
            typed += float(value)
    gpus = untyped if untyped is not None else typed
    return cpu, node, mem, gpus


def gpus_of_tres(text: str) -> int:
    """The GPUs a TRES list (``AllocTRES``, ``ReqTRES``) gives: ``gres/gpu=N``, else the
    sum of the typed ``gres/gpu:TYPE=N`` entries; 0 when none."""
    return int(_tres(text)[3])


# ReqMem kinds and what became of the value
_MEM_TOTAL, _MEM_PER_NODE, _MEM_PER_CPU = 0, 1, 2
_MEM_OK, _MEM_FLAG, _MEM_UNSET = 0, 1, 2


def _req_mem(text: str) -> tuple[float, float, float]:
    """(MB, kind, outcome) of a ReqMem value; MB NaN when unknown."""
    text = text.strip()
    if not text:
        return np.nan, _MEM_TOTAL, _MEM_OK
    match = _REQ_MEM.fullmatch(text)
    if match is None:
        return np.nan, _MEM_TOTAL, _MEM_UNSET
    value = float(match.group(1))
    unit = match.group(2) or "M"
    kind = {"n": _MEM_PER_NODE, "c": _MEM_PER_CPU, "": _MEM_TOTAL}[match.group(3)]
    if unit == "M" and value >= _FLAG_BIT:
        if value >= 2 * _FLAG_BIT or value == _FLAG_BIT:
            return np.nan, kind, _MEM_UNSET
        return value - _FLAG_BIT, _MEM_PER_CPU, _MEM_FLAG
    mb = value * _UNITS_MB[unit]
    return (mb if mb > 0 else np.nan), kind, _MEM_OK


def _duration(text: str) -> tuple[float, float]:
    """(seconds, whether unlimited) of a Timelimit / Elapsed / TotalCPU value."""
    text = text.strip()
    if text.upper() in _UNLIMITED:
        return np.nan, 1.0
    if _MINUTES.fullmatch(text):
        minutes = int(text)
        return (minutes * 60.0 if minutes > 0 else np.nan), 0.0
    for pattern, scales in _DURATION:
        match = pattern.fullmatch(text)
        if match:
            parts = [int(g) if g else 0 for g in match.groups()]
            return float(sum(p * s for p, s in zip(parts, scales, strict=False))), 0.0
    return np.nan, 0.0


def _exit_status(text: str) -> int:
    code, _, signal = text.strip().partition(":")
    if not code.isdigit():
        return -1
    if signal.isdigit() and int(signal) > 0:
        return 128 + int(signal)
    return int(code)


def _state(text: str) -> tuple[str, int, str]:
    """(state word, SWF status, what to do: "" keep, not_ended, revoked, unknown_state)."""
    word = text.strip().split(" ")[0].rstrip("+").upper() if text.strip() else ""
    if word in _COMPLETED:
        return word, STATUS_COMPLETED, ""
    if word in _FAILED:
        return word, STATUS_FAILED, ""
    if word in _CANCELLED:
        return word, STATUS_CANCELLED, ""
    if word in _NOT_ENDED:
        return word, STATUS_FAILED, "not_ended"
    if word in _REVOKED:
        return word, STATUS_FAILED, "revoked"
    return word, STATUS_FAILED, "unknown_state"


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _range_values(spec: str) -> list[str]:
    """``01-03,05`` -> ``["01", "02", "03", "05"]`` (zero padding kept)."""
    values: list[str] = []
    for part in spec.split(","):
        low, dash, high = part.strip().partition("-")
        if not dash:
            if not low.isdigit():
                raise ValueError(f"bad range {part!r}")
            values.append(low)
            continue
        if not (low.isdigit() and high.isdigit()) or int(high) < int(low):
            raise ValueError(f"bad range {part!r}")
        width = len(low) if low.startswith("0") else 0
        values.extend(str(v).zfill(width) for v in range(int(low), int(high) + 1))
    return values


def expand_hostlist(text: str) -> list[str]:
    """The host names of a Slurm host list: ``cpn-f13-03-[01-02,05],d09n[04-05]s[01-02]``
    -> every name (several bracket groups multiply); ``None assigned`` and ``""`` -> []."""
    text = text.strip()
    if not text or text.lower().startswith("none") or text == "(null)":
        return []
    hosts: list[str] = []
    for item in _split_top(text):
        names = [""]
        for piece in re.split(r"(\[[^\]]*\])", item):
            if piece.startswith("[") and piece.endswith("]"):
                names = [n + v for n in names for v in _range_values(piece[1:-1])]
            elif piece:
                names = [n + piece for n in names]
        hosts.extend(names)
    return hosts


def _hosts(text: str) -> str:
    try:
        return "+".join(expand_hostlist(text))
    except ValueError:
        return text.strip()


def _constraint(text: str) -> tuple[str, bool]:
    """(properties joined by ``:``, whether the expression could not be expressed)."""
    text = text.strip()
    if not text or text == "(null)":
        return "", False
    if any(c in text for c in "|[]()*,"):
        return "", True
    parts = [p.strip() for p in text.split("&")]
    if any(not p for p in parts):
        return "", True
    return ":".join(dict.fromkeys(parts)), False


def _partition(text: str) -> tuple[str, bool]:
    parts = [p.strip() for p in text.split(",")]
    return parts[0], len(parts) > 1


def _array_indices(spec: str) -> list[int]:
    """``[1-3,7%2]`` (brackets optional) -> [1, 2, 3, 7]; ``1-7:2`` steps by 2."""
    spec = spec.strip().removeprefix("[").removesuffix("]").split("%")[0]
    indices: list[int] = []
    for part in spec.split(","):
        span, _, step_text = part.partition(":")
        low, dash, high = span.partition("-")
        step = int(step_text) if step_text else 1
        if not low.isdigit() or (dash and not high.isdigit()) or step < 1:
            raise ValueError(f"bad array index range {part!r}")
        last = int(high) if dash else int(low)
        indices.extend(range(int(low), last + 1, step))
    return indices


# =========================================================================== jobs


class _Notes:
    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []

    def add(self, lines: Any, jobs: Any, reason: str, action: str) -> None:
        if len(lines):
            self.frames.append(reader_notes(np.asarray(lines), np.asarray(jobs), reason, action))

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return reader_notes()
        return pd.concat(self.frames, ignore_index=True)


def _row_text(table: _Table, row: int) -> str:
    return "|".join(str(table.text(name)[row]) for name in table.columns)


def _job_ids(
    path: Path, table: _Table, bad: list[BadLine], *, skip_bad_lines: bool
) -> tuple[TextArray, BoolArray, BoolArray, BoolArray, dict[int, list[int]]]:
    """Per row: the id of the job it belongs to (its JobID without a step), whether it is
    a step, a heterogeneous job's component, malformed; and the array indices of
    unstarted ranges by row."""
    ids = table.text("JobID")
    odd_rows = np.flatnonzero(~table.digits("JobID"))
    keys = ids.copy() if odd_rows.size else ids
    is_step = np.zeros(table.n, dtype=bool)
    is_het = np.zeros(table.n, dtype=bool)
    malformed = np.zeros(table.n, dtype=bool)
    ranges: dict[int, list[int]] = {}
    for row in odd_rows:
        text = str(ids[row]).strip()
        match = _JOB_ID.fullmatch(text)
        reason = None
        if match is None:
            reason = f"JobID {text!r} is not a Slurm job id (123, 123_4, 123_[1-3], 123+0, 123.0)"
        else:
            step = match.group("step")
            keys[row] = text[: match.start("step") - 1] if step else text
            is_step[row] = step is not None
            is_het[row] = match.group("het") is not None
            task = match.group("task")
            if task and task.startswith("[") and step is None:
                try:
                    ranges[int(row)] = _array_indices(task)
                except ValueError as exc:
                    reason = f"JobID {text!r}: {exc}"
        if reason is not None:
            malformed[row] = True
            bad.append(BadLine(int(table.line[row]), _row_text(table, int(row)), reason))
    if bad:
        bad.sort(key=lambda b: b.line)
        if not skip_bad_lines:
            raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    return keys, is_step, is_het, malformed, ranges


def _jobs(path: Path, table: _Table, bad: list[BadLine], *, skip_bad_lines: bool) -> LogJobs:
    """The jobs of the rows of ``table`` (module docstring)."""
    notes = _Notes()
    lines = table.line
    keys, is_step, is_het, malformed, ranges = _job_ids(
        path, table, bad, skip_bad_lines=skip_bad_lines
    )
    cluster_codes, _ = table.factorized("Cluster")

    # steps: folded into their job row
    job_rows = np.flatnonzero(~is_step & ~malformed)
    step_rows = np.flatnonzero(is_step & ~malformed)
    if step_rows.size:
        job_keys = pd.MultiIndex.from_arrays([cluster_codes[job_rows], keys[job_rows]])
        parents = pd.MultiIndex.from_arrays([cluster_codes[step_rows], keys[step_rows]])
        found = np.asarray(parents.isin(job_keys), dtype=bool)
        step_ids = table.text("JobID")[step_rows]
        notes.add(lines[step_rows[found]], step_ids[found], "step_folded", "dropped")
        notes.add(lines[step_rows[~found]], step_ids[~found], "orphan_step", "dropped")

    # unstarted array ranges: one job per index
    every_row = job_rows.size == table.n
    rows = job_rows
    source = keys if every_row else keys[job_rows]
    if ranges:
        position = {int(r): i for i, r in enumerate(job_rows)}
        repeat = np.ones(job_rows.size, dtype=np.int64)
        for row, indices in ranges.items():
            repeat[position[row]] = len(indices)
        starts = np.concatenate([[0], np.cumsum(repeat)[:-1]])
        rows = np.repeat(job_rows, repeat)
        source = np.repeat(source, repeat)
        for row, indices in ranges.items():
            start = int(starts[position[row]])
            base = str(keys[row]).split("_")[0]
            source[start : start + len(indices)] = [f"{base}_{i}" for i in indices]
    job_lines = lines if every_row and not ranges else lines[rows]

    # states
    state_codes, state_uniques = table.factorized("State")
    decoded = [_state(u) for u in state_uniques]
    status_of = np.array([d[1] for d in decoded], dtype=np.int64)
    action_of = np.array([d[2] for d in decoded], dtype=object)
    requeue_of = np.array([d[0] in _REQUEUE for d in decoded], dtype=bool)
    codes = state_codes[rows]
    action = action_of[codes]

    keep = np.ones(rows.size, dtype=bool)
    # the same id twice: earlier records of a requeued job are dropped
    if not ranges and table.all_distinct("JobID"):
        duplicated = np.zeros(rows.size, dtype=bool)
    else:
        id_codes, _ = pd.factorize(source)
        key_codes = id_codes.astype(np.int64) * (int(cluster_codes.max(initial=0)) + 1)
        key_codes += cluster_codes[rows]
        duplicated = pd.Series(key_codes).duplicated(keep="last").to_numpy()
    if duplicated.any():
        requeued = duplicated & requeue_of[codes]
        notes.add(job_lines[requeued], source[requeued], "requeued", "repaired")
        keep &= ~requeued
        other = duplicated & ~requeued
        notes.add(job_lines[other], source[other], "duplicate_id", "warning")
    for reason in ("not_ended", "revoked"):
        mask = keep & (action == reason)
        notes.add(job_lines[mask], source[mask], reason, "dropped")
        keep &= ~mask
    unknown = keep & (action == "unknown_state")
    notes.add(job_lines[unknown], source[unknown], "unknown_state", "warning")
    if not keep.all():
        rows, source, job_lines, codes = rows[keep], source[keep], job_lines[keep], codes[keep]
    if rows.size != table.n or not np.array_equal(rows, np.arange(table.n)):
        table.rows = rows

    def noted(mask: npt.NDArray[np.bool_], reason: str, action: str) -> None:
        notes.add(job_lines[mask], source[mask], reason, action)

    noted(is_het[rows], "het_component", "warning")

    # resources
    req_tres = table.mapped("ReqTRES", _tres, np.float64)
    alloc_tres = table.mapped("AllocTRES", _tres, np.float64)
    ncpus = table.counts("NCPUS")
    reqcpus = table.counts("ReqCPUS")
    nnodes = table.counts("NNodes")
    alloc_cpus = np.where(ncpus > 0, ncpus, np.nan_to_num(alloc_tres[:, 0])).astype(np.int64)
    req_cpus = np.where(reqcpus > 0, reqcpus, np.nan_to_num(req_tres[:, 0])).astype(np.int64)
    tres_nodes = np.where(np.isfinite(alloc_tres[:, 1]), alloc_tres[:, 1], req_tres[:, 1])
    nodes = np.where(nnodes > 0, nnodes, np.nan_to_num(tres_nodes)).astype(np.int64)
    gpus = np.where(alloc_tres[:, 3] > 0, alloc_tres[:, 3], req_tres[:, 3]).astype(np.int64)

    mem = table.mapped("ReqMem", _req_mem, np.float64)
    mem_cpus = np.where(req_cpus > 0, req_cpus, alloc_cpus).astype(np.float64)
    factor = np.select(
        [mem[:, 1] == _MEM_PER_NODE, mem[:, 1] == _MEM_PER_CPU],
        [np.where(nodes > 0, nodes, np.nan), np.where(mem_cpus > 0, mem_cpus, np.nan)],
        1.0,
    )
    no_req_mem = table.mapped("ReqMem", lambda s: not s.strip(), bool)
    mem_mb = np.where(no_req_mem, req_tres[:, 2], mem[:, 0] * factor)
    # the decoded per-CPU value is noted unless ReqTRES confirms the job's total
    confirmed = np.isclose(mem_mb, req_tres[:, 2], rtol=1e-3)
    noted((mem[:, 2] == _MEM_FLAG) & ~confirmed, "memory_per_cpu_flag", "repaired")
    noted(mem[:, 2] == _MEM_UNSET, "memory_unset", "warning")

    limit = table.mapped("Timelimit", _duration, np.float64)
    noted(limit[:, 1] > 0, "walltime_unlimited", "warning")
    cpu_time = table.mapped("TotalCPU", _duration, np.float64)[:, 0]

    def names(name: str, fallback: str | None = None) -> TextArray:
        name_codes, uniques = table.factorized(name)
        stripped = [u.strip() for u in uniques]
        values = np.array(stripped, dtype=object)[name_codes]
        if fallback is not None and table.has(fallback) and "" in stripped:
            empty = np.isin(name_codes, [i for i, u in enumerate(stripped) if not u])
            values = np.where(empty, names(fallback), values)
        return np.asarray(values, dtype=object)

    queue_name = table.text_of("Partition", lambda s: _partition(s)[0])
    noted(table.mapped("Partition", lambda s: _partition(s)[1], bool), "partition_list", "warning")
    properties = table.mapped("Constraints", lambda s: _constraint(s)[0], object)
    odd = table.mapped("Constraints", lambda s: _constraint(s)[1], bool)
    noted(odd, "constraint_not_modelled", "warning")

    shape_cpus = np.where(alloc_cpus > 0, alloc_cpus, req_cpus)
    known = (nodes > 0) & (shape_cpus > 0)
    even = known & (shape_cpus % np.maximum(nodes, 1) == 0)
    ppn = np.where(even, shape_cpus // np.maximum(nodes, 1), 0).astype(np.int64)
    noted(known & ~even, "ppn_uneven", "warning")

    state_names, state_words = table.factorized("State")
    return LogJobs(
        line=job_lines.astype(np.int64),
        source_id=np.asarray(source, dtype=object),
        submit=table.times("Submit"),
        eligible=table.times("Eligible"),
        start=table.times("Start"),
        end=table.times("End"),
        req_walltime=limit[:, 0],
        req_cpus=req_cpus,
        alloc_cpus=alloc_cpus,
        req_mem_kb=mem_mb * 1024.0,
        used_mem_kb=np.full(rows.size, np.nan),
        cpu_time=cpu_time,
        status=status_of[codes],
        exit_status=table.mapped("ExitCode", _exit_status, np.int64),
        state=np.array([w.strip() for w in state_words], dtype=object)[state_names],
        user_name=names("User", "UID"),
        group_name=names("Group", "GID"),
        account=names("Account"),
        queue_name=queue_name,
        nodes=nodes,
        ppn=ppn,
        properties=properties,
        exclusive=np.zeros(rows.size, dtype=bool),
        gpus=gpus,
        hosts=table.text_of("NodeList", _hosts),
        notes=notes.frame(),
        bad_lines=tuple(bad),
    )


# =========================================================================== readers


def read_sacct(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read ``sacct --parsable2`` output (gzip when so named or so made; module docstring).

    A malformed row (wrong field count, a job id that is not one) raises
    :class:`WorkloadError` naming the file and line, unless ``skip_bad_lines`` is set:
    then it is recorded in :attr:`SwfTrace.bad_lines` and left out.
    """
    path = Path(path)
    table, bad = _read_table(path, _content(path), skip_bad_lines=skip_bad_lines)
    jobs = _jobs(path, table, bad, skip_bad_lines=skip_bad_lines)
    return log_trace(path, jobs, "Slurm sacct")


def _content(path: Path) -> bytes | memoryview:
    """The bytes of a sacct file: memory-mapped when it is plain text and pyarrow reads it
    (no copy of a large file), else read (and decompressed) whole."""
    if path.suffix.lower() == ".gz":
        return read_bytes(path, "sacct file")
    try:
        view = memoryview(pa.memory_map(str(path), "r").read_buffer())
    except (OSError, pa.ArrowException):
        return read_bytes(path, "sacct file")  # raises its one-line error, or reads
    if bytes(view[: len(GZIP_MAGIC)]) == GZIP_MAGIC:
        return read_bytes(path, "sacct file")
    return view


def _jobcomp_pairs(line: str) -> dict[str, str]:
    pieces = _JOBCOMP_SPLIT.split(" " + line)
    pairs: dict[str, str] = {}
    for index in range(1, len(pieces) - 1, 2):
        pairs.setdefault(pieces[index], pieces[index + 1].strip())
    return pairs


_JOBCOMP_SPLIT = re.compile(r"\s(" + "|".join(JOBCOMP_KEYS) + r")=")


def read_slurm_jobcomp(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a Slurm jobcomp/filetxt log (gzip when so named or so made; module docstring).

    A line without ``JobId=``, ``JobState=``, ``StartTime=`` and ``EndTime=`` raises
    :class:`WorkloadError` naming the file and line, unless ``skip_bad_lines`` is set.
    """
    path = Path(path)
    data = read_bytes(path, "jobcomp file")
    columns: dict[str, list[str]] = {
        c: [] for c in (*_JOBCOMP_COLUMNS.values(), "User", "UID", "Group", "GID")
    }
    numbers: list[int] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = decode_line(raw).strip()
        if not text:
            continue
        pairs = _jobcomp_pairs(text)
        missing = [k for k in _JOBCOMP_REQUIRED if k not in pairs]
        if missing or not text.startswith("JobId="):
            bad.append(
                BadLine(
                    number,
                    decode_line(raw),
                    f"not a jobcomp/filetxt line: no {', '.join(missing or ['JobId'])}=",
                )
            )
            continue
        numbers.append(number)
        for key, column in _JOBCOMP_COLUMNS.items():
            columns[column].append(pairs.get(key, ""))
        for key, name, ident in (("UserId", "User", "UID"), ("GroupId", "Group", "GID")):
            value = pairs.get(key, "")
            match = _USER_ID.fullmatch(value)
            columns[name].append(match.group(1) if match else value)
            columns[ident].append(match.group(2) if match else "")
    if bad and not skip_bad_lines:
        raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    table = _Table(
        len(numbers),
        np.asarray(numbers, dtype=np.int64),
        {name: np.array(values, dtype=object) for name, values in columns.items()},
    )
    jobs = _jobs(path, table, bad, skip_bad_lines=skip_bad_lines)
    return log_trace(path, jobs, "Slurm jobcomp")
