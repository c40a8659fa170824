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
without ``=``, a number or size that does not parse - raises
:class:`~queuesim.common.errors.WorkloadError` naming the file, the line and what was
expected, unless the caller skips bad lines: then it is reported in ``bad_lines``.

Speed: lines are cut and split in bulk by pyarrow's compute kernels, and the values of
every key are converted per distinct value; only records holding quoted values (``jobname="a
b"``) are split one by one in Python.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from queuesim.common.errors import WorkloadError
from queuesim.common.files import read_bytes
from queuesim.traces.log_frame import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
    LogJobs,
    log_trace,
)
from queuesim.traces.swf import BadLine, SwfTrace, reader_notes

__all__ = ["looks_like_pbs", "parse_chunks", "parse_duration", "parse_size", "read_pbs"]

_RECORD = re.compile(rb"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];[^;]*;")
_DATE = r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d$"
#: job records that are consulted; E completes a job
_JOB_TYPES = frozenset("QSEDARMCT")
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
_QUOTED = re.compile(r"""([^\s=]+)=("[^"]*"|'[^']*'|\S*)""")


def looks_like_pbs(first_lines: list[bytes]) -> bool:
    """Whether the first content lines are PBS accounting records."""
    return bool(first_lines) and all(_RECORD.match(line) for line in first_lines[:5])


# --------------------------------------------------------------------------- values


_UNITS = {
    "": 1,
    "b": 1,
    "w": 8,
    "kb": 2**10,
    "kw": 8 * 2**10,
    "mb": 2**20,
    "mw": 8 * 2**20,
    "gb": 2**30,
    "gw": 8 * 2**30,
    "tb": 2**40,
    "tw": 8 * 2**40,
    "pb": 2**50,
    "k": 2**10,
    "m": 2**20,
    "g": 2**30,
    "t": 2**40,
}
_SIZE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)([a-zA-Z]*)$")
_DURATION = re.compile(r"^(?:(\d+):)?(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d*)?)$")


def parse_size(text: str) -> float:
    """Bytes of a PBS size (``300mb``, ``12.27M``, ``664kb``, ``1024``); ValueError if
    it is not one."""
    match = _SIZE.match(text.strip())
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(f"expected a size such as 300mb or 4gb, found {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


def parse_duration(text: str) -> float:
    """Seconds of a PBS duration (``02:00:00``, ``144:00:00``, ``1:02:00:00``, ``90``);
    ValueError if it is not one."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise ValueError(f"expected a duration such as 02:00:00, found {text!r}")
    parts = [float(p) for p in match.groups() if p is not None]
    seconds = 0.0
    for factor, value in zip((1, 60, 3600, 86400), reversed(parts), strict=False):
        seconds += factor * value
    return seconds


@dataclass(frozen=True)
class Chunks:
    """What a ``select`` or Torque ``nodes`` spec asks for."""

    nodes: int
    cpus: int
    ppn: int  #: common CPUs per node, 0 when chunks differ
    gpus: int  #: whole job
    mem_bytes: float  #: whole job (NaN: not given)
    properties: tuple[str, ...]
    exclusive: bool


_IGNORED_RESOURCES = frozenset({"ncpus", "mem", "vmem", "ngpus", "mpiprocs", "ompthreads"})


def parse_chunks(spec: str, *, torque: bool) -> Chunks:
    """Parse ``select=2:ncpus=4:mem=8gb+1:ncpus=2`` (``torque=False``) or Torque's
    ``nodes=2:ppn=8:gpus=1:infiniband#excl`` (``torque=True``); ValueError when a part is
    empty or a number does not parse."""
    spec, *flags = spec.split("#")
    exclusive = any(f.startswith("excl") for f in flags)
    nodes = cpus = gpus = 0
    mem = 0.0
    has_mem = False
    per_node: set[int] = set()
    props: list[str] = []
    for chunk in spec.split("+"):
        tokens = chunk.split(":")
        if not chunk or any(not t for t in tokens):
            raise ValueError(f"empty part in {spec!r}")
        count = 1
        if tokens[0].isdigit():
            count = int(tokens[0])
            tokens = tokens[1:]
        elif torque and "=" not in tokens[0]:
            props.append(f"host={tokens[0]}")
            tokens = tokens[1:]
        ncpus, ngpus = 1, 0
        for token in tokens:
            key, sep, value = token.partition("=")
            if torque:
                if key == "ppn" and sep:
                    ncpus = int(float(value))
                elif key in ("gpus", "gpu") and sep:
                    ngpus = int(value)
                elif not sep:
                    props.append(key)
                else:
                    props.append(token)
                continue
            if not sep:
                raise ValueError(f"expected resource=value in {spec!r}, found {token!r}")
            if key == "ncpus":
                ncpus = int(value)
            elif key == "ngpus":
                ngpus = int(value)
            elif key == "mem":
                mem += count * parse_size(value)
                has_mem = True
            elif key in _IGNORED_RESOURCES:
                continue
            elif value.lower() == "true":
                props.append(key)
            elif value.lower() == "false":
                props.append(f"^{key}")
            elif key == "cluster":
                props.append(value)
            else:
                props.append(token)
        nodes += count
        cpus += count * ncpus
        gpus += count * ngpus
        per_node.add(ncpus)
    return Chunks(
        nodes=nodes,
        cpus=cpus,
        ppn=per_node.pop() if len(per_node) == 1 else 0,
        gpus=gpus,
        mem_bytes=mem if has_mem else math.nan,
        properties=tuple(dict.fromkeys(props)),
        exclusive=exclusive,
    )


def _exec_host(text: str) -> tuple[int, str]:
    """CPUs and ``+``-joined distinct hosts of an ``exec_host`` value."""
    cpus = 0
    hosts = []
    for entry in text.split("+"):
        host, _, slots = entry.partition("/")
        hosts.append(host)
        for part in slots.split(","):
            count = 1
            part, star, times = part.partition("*")
            if star:
                count = int(times)
            elif "-" in part:
                low, _, high = part.partition("-")
                count = int(high) - int(low) + 1
            cpus += count
    return cpus, "+".join(dict.fromkeys(hosts))


# --------------------------------------------------------------------------- reading


class _Lines:
    """The lines of one or more files, numbered across them."""

    def __init__(self, path: Path) -> None:
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        if not files:
            raise WorkloadError(f"{path}: the directory holds no log files")
        parts: list[bytes] = []
        self.starts: list[tuple[int, Path]] = []
        first = 1
        for file in files:
            data = read_bytes(file, "PBS accounting log")
            if data and not data.endswith(b"\n"):
                data += b"\n"
            self.starts.append((first, file))
            first += data.count(b"\n")
            parts.append(data)
        self.data = b"".join(parts)

    def where(self, line: int) -> str:
        """``file:line`` of a line number counted across the files."""
        start, file = next((s, f) for s, f in reversed(self.starts) if s <= line)
        return f"{file}:{line - start + 1}"

    def text(self, line: int) -> str:
        raws = self.data.split(b"\n")
        return raws[line - 1].decode("utf-8", errors="replace").rstrip("\r")

    def array(self) -> tuple[pa.Array, npt.NDArray[np.int64]]:
        """Every line as a string array (trailing blanks stripped) and its number."""
        data = self.data
        raw = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(raw == 10)
        offsets = np.concatenate([[0], ends + 1]).astype(np.int64)
        n = ends.shape[0]
        strings = pa.Array.from_buffers(
            pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        try:
            strings.validate(full=True)
        except pa.ArrowInvalid:  # not UTF-8: decode with replacement, once
            text = data.decode("utf-8", errors="replace").split("\n")[:n]
            strings = pa.array(text, pa.large_string())
        return pc.utf8_rtrim_whitespace(strings), np.arange(1, n + 1, dtype=np.int64)


def read_pbs(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a PBS accounting log (module docstring) into a trace; ``path`` is a file, a
    ``.gz`` file or a directory of daily files."""
    path = Path(path)
    lines = _Lines(path)
    strings, numbers = lines.array()
    content = pc.invert(pc.or_(pc.equal(pc.utf8_length(strings), 0), pc.starts_with(strings, ";")))
    strings = strings.filter(content)
    numbers = numbers[content.to_numpy(zero_copy_only=False)]
    bad: list[BadLine] = []

    def reject(line_numbers: npt.NDArray[np.int64], reason: str) -> None:
        for number in line_numbers.tolist():
            bad.append(BadLine(number, lines.text(number), reason))

    parts = pc.split_pattern(strings, ";", max_splits=3)
    whole = pc.equal(pc.list_value_length(parts), 4).to_numpy(zero_copy_only=False)
    reject(numbers[~whole], "expected DATE;TYPE;ID;MESSAGE (four ';'-separated fields)")
    parts, numbers = parts.filter(pa.array(whole)), numbers[whole]
    dates = pc.list_element(parts, 0)
    types = pc.list_element(parts, 1).to_numpy(zero_copy_only=False)
    ids = pc.list_element(parts, 2)
    messages = pc.list_element(parts, 3)
    dated = pc.match_substring_regex(dates, _DATE).to_numpy(zero_copy_only=False)
    reject(numbers[~dated], "expected a date MM/DD/YYYY HH:MM:SS before the first ';'")

    job_record = np.isin(types, list(_JOB_TYPES)) & dated
    other = ~job_record & dated
    notes = [
        reader_notes(
            numbers[other], ids.filter(pa.array(other)).to_pylist(), "not_a_job_record", "skipped"
        )
    ]
    keys = pc.extract_regex(ids, r"^(?P<k>[^.\[]*(?:\[[^\]]*\])?)")
    key = pc.struct_field(keys, [0]).to_numpy(zero_copy_only=False).astype(object)
    key = np.where(
        pc.is_valid(keys).to_numpy(zero_copy_only=False), key, ids.to_numpy(zero_copy_only=False)
    )
    records = pd.DataFrame({"key": key, "type": types, "line": numbers})[job_record]
    parent = records["key"].str.endswith("[]").to_numpy()
    ends = records[(records["type"] == "E").to_numpy() & ~parent]

    is_end = np.zeros(len(types), dtype=bool)
    is_end[np.flatnonzero(job_record)[(records["type"] == "E").to_numpy() & ~parent]] = True
    fields, bad_fields = _fields(messages.filter(pa.array(is_end)), numbers[is_end])
    for number, reason in bad_fields:
        bad.append(BadLine(number, lines.text(number), reason))
    keep_end = ~np.isin(numbers[is_end], [n for n, _ in bad_fields])
    ends = ends[keep_end]
    fields = {k: v[keep_end] for k, v in fields.items()}
    source = ids.filter(pa.array(is_end)).to_numpy(zero_copy_only=False)[keep_end]

    if bad:
        bad.sort(key=lambda b: b.line)
        if not skip_bad_lines:
            first = bad[0]
            raise WorkloadError(f"{lines.where(first.line)}: {first.reason}")

    # several E records for one key: the last one wins
    last = ~ends["key"].duplicated(keep="last").to_numpy()
    notes.append(
        reader_notes(
            ends["line"].to_numpy()[~last],
            ends["key"].to_numpy()[~last],
            "duplicate_end_record",
            "dropped",
        )
    )
    ends = ends[last]
    fields = {k: v[last] for k, v in fields.items()}
    source = source[last]
    notes.extend(_record_notes(records, parent, ends["key"].to_numpy(dtype=object)))

    try:
        jobs = _jobs(fields, ends, source)
    except _BadValue as exc:
        raise WorkloadError(f"{lines.where(exc.line)}: {exc.reason}") from None
    jobs.bad_lines = tuple(bad)
    jobs.notes = pd.concat(notes, ignore_index=True)
    return log_trace(path, jobs, "PBS accounting")


def _record_notes(
    records: pd.DataFrame, parent: npt.NDArray[np.bool_], ended: npt.NDArray[np.object_]
) -> list[pd.DataFrame]:
    """Notes on the job records: array parents, reruns, jobs without an E record."""
    notes = []
    codes, uniques = pd.factorize(records["key"].to_numpy(dtype=object))
    has_end = np.zeros(len(uniques), dtype=bool)
    has_end[pd.Index(uniques).get_indexer(ended)] = True
    lines = records["line"].to_numpy()
    types = records["type"].to_numpy()
    last_line = np.zeros(len(uniques), dtype=np.int64)
    np.maximum.at(last_line, codes, lines)
    first_parent = parent & ~pd.Series(codes).duplicated(keep="last").to_numpy()
    notes.append(
        reader_notes(lines[first_parent], uniques[codes[first_parent]], "array_parent", "dropped")
    )
    job = ~parent
    starts = np.bincount(codes[job & (types == "S")], minlength=len(uniques))
    rerun = has_end & (starts > 1)
    end_line = np.zeros(len(uniques), dtype=np.int64)
    np.maximum.at(end_line, codes[types == "E"], lines[types == "E"])
    notes.append(reader_notes(end_line[rerun], uniques[rerun], "rerun", "repaired"))
    gone = np.zeros(len(uniques), dtype=bool)
    gone[codes[np.isin(types, ["D", "A"])]] = True
    is_parent = np.zeros(len(uniques), dtype=bool)
    is_parent[codes[parent]] = True
    open_jobs = ~has_end & ~is_parent
    for chosen, reason in (
        (open_jobs & gone, "deleted_without_end_record"),
        (open_jobs & ~gone, "no_end_record"),
    ):
        order = np.argsort(last_line[chosen], kind="mergesort")
        notes.append(
            reader_notes(last_line[chosen][order], uniques[chosen][order], reason, "dropped")
        )
    return notes


class _BadValue(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def _fields(
    messages: pa.Array, numbers: npt.NDArray[np.int64]
) -> tuple[dict[str, npt.NDArray[np.object_]], list[tuple[int, str]]]:
    """The values of :data:`_KEYS` in every message (None where absent), and the lines
    with a token that is not ``key=value``."""
    n = len(messages)
    columns = {k: np.full(n, None, dtype=object) for k in _KEYS}
    bad: list[tuple[int, str]] = []
    # values in quotes with a space inside (jobname="a b") need a split that knows quotes;
    # quoted values without spaces (diag_messages='{}') split like any other
    quoted = pc.match_substring_regex(messages, r"""(?:'[^' ]* [^']*')|(?:"[^" ]* [^"]*")""")
    quoted_rows = np.flatnonzero(quoted.to_numpy(zero_copy_only=False))
    for row in quoted_rows.tolist():
        text = messages[row].as_py()
        rest = _QUOTED.sub("", text).strip()
        if rest:
            bad.append((int(numbers[row]), f"expected key=value, found {rest.split()[0]!r}"))
        for match in _QUOTED.finditer(text):
            if match.group(1) in columns:
                columns[match.group(1)][row] = match.group(2).strip("\"'")
    plain = np.ones(n, dtype=bool)
    plain[quoted_rows] = False
    rows = np.flatnonzero(plain)
    tokens = pc.split_pattern(messages.filter(pa.array(plain)), " ")
    owner = rows[pc.list_parent_indices(tokens).to_numpy()]
    flat = pc.list_flatten(tokens)
    nonempty = pc.greater(pc.utf8_length(flat), 0).to_numpy(zero_copy_only=False)
    flat, owner = flat.filter(pa.array(nonempty)), owner[nonempty]
    pairs = pc.split_pattern(flat, "=", max_splits=1)
    has_value = pc.equal(pc.list_value_length(pairs), 2).to_numpy(zero_copy_only=False)
    for position in np.flatnonzero(~has_value)[:1000].tolist():
        bad.append(
            (int(numbers[owner[position]]), f"expected key=value, found {flat[position].as_py()!r}")
        )
    pairs, owner = pairs.filter(pa.array(has_value)), owner[has_value]
    names = pc.list_element(pairs, 0).dictionary_encode()
    values = pc.utf8_trim(pc.list_element(pairs, 1), "\"'")
    index = names.indices.to_numpy(zero_copy_only=False)
    dictionary = names.dictionary.to_pylist()
    for code, name in enumerate(dictionary):
        if name in columns:
            mine = index == code
            columns[name][owner[mine]] = values.filter(pa.array(mine)).to_numpy(
                zero_copy_only=False
            )
    return columns, sorted(set(bad))


def _converted(
    column: npt.NDArray[np.object_], lines: npt.NDArray[np.int64], key: str, parse: object
) -> npt.NDArray[np.float64]:
    """``parse`` applied to every distinct value of ``column`` (NaN where absent)."""
    codes, uniques = pd.factorize(pd.Series(column, dtype=object))
    results = np.empty(len(uniques) + 1, dtype=np.float64)
    results[-1] = np.nan
    for k, value in enumerate(uniques):
        try:
            results[k] = parse(value)  # type: ignore[operator]
        except ValueError as exc:
            line = int(lines[np.argmax(codes == k)])
            raise _BadValue(line, f"{key}: {exc}") from None
    return results[codes]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, found {text!r}") from None


def _jobs(
    fields: dict[str, npt.NDArray[np.object_]], ends: pd.DataFrame, source: npt.NDArray[np.object_]
) -> LogJobs:
    """The jobs of the E records' fields."""
    lines = ends["line"].to_numpy(dtype=np.int64)

    def number(key: str) -> npt.NDArray[np.float64]:
        return _converted(fields[key], lines, key, _number)

    ctime, qtime = number("ctime"), number("qtime")
    start = number("start")
    start = np.where(start > 0, start, np.nan)
    walltime = _converted(
        fields["Resource_List.walltime"], lines, "Resource_List.walltime", parse_duration
    )
    cput = _converted(fields["resources_used.cput"], lines, "resources_used.cput", parse_duration)
    req_mem = _converted(fields["Resource_List.mem"], lines, "Resource_List.mem", parse_size)
    used_mem = _converted(fields["resources_used.mem"], lines, "resources_used.mem", parse_size)

    select = _spec_table(
        fields["Resource_List.select"], lines, "Resource_List.select", torque=False
    )
    # Torque writes nodect as a nodes spec at times (nodect=1:ppn=24:gpu=4): read it so
    nodect_text = pd.Series(fields["Resource_List.nodect"], dtype=object)
    nodect = pd.to_numeric(nodect_text, errors="coerce")
    torque_spec = pd.Series(fields["Resource_List.nodes"], dtype=object).fillna(
        nodect_text.where(nodect.isna() & nodect_text.str.contains(":", na=False))
    )
    nodes_spec = _spec_table(
        torque_spec.to_numpy(dtype=object), lines, "Resource_List.nodes", torque=True
    )
    chunks = [s if s is not None else t for s, t in zip(select, nodes_spec, strict=True)]

    host_codes, host_uniques = pd.factorize(pd.Series(fields["exec_host"], dtype=object))
    parsed_hosts = []
    for k, value in enumerate(host_uniques):
        try:
            parsed_hosts.append(_exec_host(value))
        except ValueError:
            line = int(lines[np.argmax(host_codes == k)])
            raise _BadValue(
                line, f"exec_host: expected node/cpu+node/cpu..., found {value!r}"
            ) from None
    parsed_hosts.append((0, ""))
    exec_cpus = np.array([parsed_hosts[c][0] for c in host_codes], dtype=np.int64)
    hosts = np.array([parsed_hosts[c][1] for c in host_codes], dtype=object)

    ncpus = number("Resource_List.ncpus")
    chunk_cpus = np.array([c.cpus if c else 0 for c in chunks], dtype=np.int64)
    # the chunks are the request (Torque's ncpus says 1 beside nodes=1:ppn=4)
    req_cpus = np.where(chunk_cpus > 0, chunk_cpus, np.where(ncpus > 0, ncpus, 0))
    req_cpus = req_cpus.astype(np.int64)
    used_ncpus = number("resources_used.ncpus")
    alloc = np.where(exec_cpus > 0, exec_cpus, np.where(used_ncpus > 0, used_ncpus, req_cpus))
    chunk_nodes = np.array([c.nodes if c else 0 for c in chunks], dtype=np.int64)
    host_count = np.array([h.count("+") + 1 if h else 0 for h in hosts], dtype=np.int64)
    nodes = np.where(
        nodect.notna(), nodect.fillna(0), np.where(chunk_nodes > 0, chunk_nodes, host_count)
    ).astype(np.int64)
    ngpus = number("Resource_List.ngpus")
    chunk_gpus = np.array([c.gpus if c else 0 for c in chunks], dtype=np.int64)
    gpus = np.where(ngpus > 0, ngpus, chunk_gpus).astype(np.int64)
    chunk_mem = np.array([c.mem_bytes if c else np.nan for c in chunks], dtype=np.float64)
    req_mem = np.where(np.isfinite(req_mem), req_mem, chunk_mem)
    place = pd.Series(fields["Resource_List.place"], dtype=object).fillna("")
    exclusive = place.str.contains("excl").to_numpy(dtype=bool) | np.array(
        [bool(c and c.exclusive) for c in chunks], dtype=bool
    )
    exit_status = number("Exit_status")
    status = np.where(
        np.isnan(start),
        STATUS_CANCELLED,
        np.where(
            np.isnan(exit_status), -1, np.where(exit_status == 0, STATUS_COMPLETED, STATUS_FAILED)
        ),
    )
    state = np.where(
        np.isnan(start),
        "deleted",
        np.where(np.isnan(exit_status), "ended", np.where(exit_status == 0, "completed", "failed")),
    ).astype(object)
    account = pd.Series(fields["account"], dtype=object).fillna(
        pd.Series(fields["project"], dtype=object)
    )

    def text(values: object) -> npt.NDArray[np.object_]:
        return pd.Series(values, dtype=object).fillna("").to_numpy(dtype=object)

    return LogJobs(
        line=lines,
        source_id=text(source),
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
        exit_status=np.where(np.isnan(exit_status), -1, exit_status).astype(np.int64),
        state=state,
        user_name=text(fields["user"]),
        group_name=text(fields["group"]),
        account=text(account),
        queue_name=text(fields["queue"]),
        nodes=nodes,
        ppn=np.array([c.ppn if c else 0 for c in chunks], dtype=np.int64),
        properties=np.array([":".join(c.properties) if c else "" for c in chunks], dtype=object),
        exclusive=exclusive,
        gpus=gpus,
        hosts=hosts,
    )


def _spec_table(
    column: npt.NDArray[np.object_], lines: npt.NDArray[np.int64], key: str, *, torque: bool
) -> list[Chunks | None]:
    """:func:`parse_chunks` of every value of ``column`` (None where absent)."""
    codes, uniques = pd.factorize(pd.Series(column, dtype=object))
    parsed: list[Chunks | None] = []
    for k, value in enumerate(uniques):
        try:
            parsed.append(parse_chunks(value, torque=torque))
        except ValueError as exc:
            line = int(lines[np.argmax(codes == k)])
            raise _BadValue(line, f"{key}: {exc}") from None
    parsed.append(None)
    return [parsed[c] for c in codes]
