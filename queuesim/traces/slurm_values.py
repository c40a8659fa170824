"""The values of Slurm accounting fields: TRES lists, ReqMem, time limits, exit codes,
states, host lists, constraints, partitions and array index ranges (see
:mod:`queuesim.traces.slurm` for how each field is used)."""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

from queuesim.traces.log_frame import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
)

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
CodeArray = npt.NDArray[np.int32]  #: codes into a column's distinct values
TextArray = npt.NDArray[np.object_]
BoolArray = npt.NDArray[np.bool_]


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


#: the most names one host list may stand for: more than the nodes of any machine
#: (Fugaku, the largest, has 158,976), so a larger list is a corrupt record, never expanded
MAX_HOSTS = 1_000_000
#: the most indices a job array may have: Slurm's MaxArraySize cannot exceed 4,000,001
#: (slurm.conf(5)), so more is a corrupt record, never expanded
MAX_ARRAY_INDICES = 4_000_001


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
        if len(values) + int(high) - int(low) >= MAX_HOSTS:
            raise ValueError(f"range {part!r} names more than {MAX_HOSTS:,} hosts")
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
                values = _range_values(piece[1:-1])
                if (len(names) + len(hosts)) * len(values) > MAX_HOSTS:
                    raise ValueError(f"host list {item!r} names more than {MAX_HOSTS:,} hosts")
                names = [n + v for n in names for v in values]
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
        if len(indices) + (last - int(low)) // step >= MAX_ARRAY_INDICES:
            raise ValueError(f"array index range {part!r}: more than {MAX_ARRAY_INDICES:,}")
        indices.extend(range(int(low), last + 1, step))
    return indices
