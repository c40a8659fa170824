"""Read Alea's extended SWF, the MetaCentrum / CERIT-SC trace format of the Alea simulator.

**Alea's extended SWF** (``wagap-2013.swf``), read by :func:`read_alea_swf`: no header,
21 whitespace-separated fields per job: the 18 SWF fields, then ``{per-CPU node ids}``
(``{1241,1241,...}``, one id per allocated CPU), the queue name (``q_1d``) and the PBS
nodespec (``1:ppn=64:x86_64:cl_zewura#excl``). In ``wagap-2013.swf`` (17,900 jobs):

* field 10 is the requested memory of the **whole job in bytes** (always a multiple of
  1024). Per job, not per CPU: read per CPU, 2,762 jobs would need more memory on one node
  than a 505 GB zewura node has (a 64-CPU job asking 64 GiB would need 4 TiB); read per
  job, only one (a 512 GiB request) does. The two commonest values, 500 MiB and 4 GiB, are
  asked by 1-CPU and multi-CPU jobs alike. The reader converts it to standard SWF
  units, KB per processor: ``bytes / 1024 / requested processors`` (field 8, else field 5),
  a float (2,294 jobs do not divide evenly); ``-1`` when not positive;
* fields 6 and 7 are placeholders (1 and 1024 on every line) and are read as ``-1``; so
  are fields 17 and 18 (preceding job and think time: 1 on every line, which as SWF would
  make every job depend on job 1). Fields 13, 14 and 16 (group, executable, partition)
  are also 1 on every line; read as they are, they mean one group, one executable and one
  partition, which is harmless and is kept;
* two jobs (lines 4186 and 4200) have a requested time of 0 and a runtime of minus their
  start time (an end time of 0); they are kept as they are, for cleaning to count;
* fields 5 and 8 are equal on every line; field 15 (queue number) is ``-1`` on every line,
  the queue is the name in field 20: q_2h (4392 jobs), q_4h (1267), q_1d (5301), q_2d
  (1435), q_4d (1060), q_1w (3414), q_2w (844), q_2w_plus (68), backfill (104),
  priority_long (4) and ops (11);
* submit times are absolute Unix times. As in any SWF, the frame holds them relative to
  the header's ``UnixStartTime``: when the smallest submit time is at least 10^8 s
  (1973-03-03), it becomes the header's ``UnixStartTime`` and is subtracted from every
  submit time (a file whose times are already relative is left as it is).

The nodespec (``qsub -l nodes=...``, Torque syntax) is kept raw in ``nodespec`` and parsed
into ``nodes``, ``ppn``, ``nodespec_cpus``, ``nodespec_properties`` and ``exclusive`` by
:func:`parse_nodespec`. The variants in ``wagap-2013.swf`` (N, P numbers; counts of jobs):

* ``N:ppn=P`` (10,531 jobs), often with properties after it: ``N:ppn=P:x86_64:brno:nfs4``,
  ``N:ppn=P:cl_zewura`` (a cluster), ``N:ppn=P:debian``, ``N:ppn=P:nodecpus80``... (7,335
  jobs have some property, host or resource in their nodespec);
* ``#excl`` at the end (231, always ``1:ppn=64:x86_64:cl_zewura#excl``): the whole node;
* no ppn (25): ``N`` alone (22: ``1``, ``2``) and ``N:property`` (``2:infiniband``,
  ``1:zegox17.cerit-sc.cz``);
* host names in the place of a property (99 jobs): ``1:ppn=1:zegox20.cerit-sc.cz``,
  ``1:ppn=5:host=zewura10``, or excluded with ``^`` (84): ``1:ppn=12:^zewura12.cerit-sc.cz``;
* a host name in the place of the count: ``zewura19.cerit-sc.cz:ppn=12:brno`` (1), which
  in PBS is one node;
* ``ppn`` after a property: ``1:zewura15.cerit-sc.cz:ppn=12``,
  ``1:^zewura17...:^zewura12...:ppn=24``;
* ``mem=`` inside the spec: ``1:ppn=14:mem=3gb`` (14; field 10 of these jobs holds the
  400 MiB, not the ``mem=``);
* a fractional ppn: ``1:ppn=1.5:brno`` (20; these jobs got 1 CPU);
* several chunks joined by ``+``: ``1:ppn=1+2:ppn=2``, ``1:ppn=1+3:ppn=2`` (12);
* repeated properties: ``1:ppn=8:cl_zewura:cl_zewura:cl_zewura`` (48).

Parsing: chunks are split at ``+``; a chunk's first token is its node count when it is a
whole number, else (a host name or property) the chunk is one node and the token a
property; ``ppn=P`` anywhere in the chunk gives its processors per node, a fraction read as
its integer part (``1.5`` -> 1); every other token (properties, host names, ``^host``,
``host=...``, ``mem=...``) goes, in order and without repeats, into ``nodespec_properties``
joined by ``:`` (``""`` when none). ``nodes`` is the sum of the chunks' counts; ``ppn`` the
chunks' common ppn, ``0`` when no chunk gives one or when they differ; ``nodespec_cpus`` the
sum of count x ppn (ppn 1 where not given, as in PBS). ``#excl`` sets ``exclusive``
(``#shared`` is accepted and does not). On every line of ``wagap-2013.swf``,
``nodespec_cpus`` equals field 8, and ``nodes`` equals the number of distinct node ids of
field 19. A nodespec that does not follow this (an empty chunk or token, a count or ppn of
0, a ppn that is not a number, an unknown ``#`` flag) makes the line malformed.

Field 19 is checked for its shape (``{}`` or ``{id,id,...}``) and not kept.

:func:`read_trace` reads either kind of trace, telling them apart by the first job line (18
fields: :func:`queuesim.swf.read_swf`; 21 fields: :func:`read_alea_swf`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from queuesim.common.errors import WorkloadError
from queuesim.common.files import decode_line, line_chunks
from queuesim.traces.format_names import ALEA_FIELDS
from queuesim.traces.swf import (
    SWF_FIELDS,
    BadLine,
    SwfHeader,
    SwfTrace,
    content_lines,
    field_problem,
    jobs_frame,
    joined_pieces,
    parse_header,
    parse_numeric_lines,
    valid_rows,
)

__all__ = ["ALEA_EXTRA_COLUMNS", "ALEA_FIELDS", "Nodespec", "parse_nodespec", "read_alea_swf"]


@dataclass(frozen=True)
class Nodespec:
    """What a PBS nodespec asks for (see the module docstring for the grammar)."""

    nodes: int
    """Nodes over all chunks."""
    ppn: int
    """Processors per node when every chunk gives the same; 0 when none gives one or they
    differ."""
    cpus: int
    """Sum over chunks of count x ppn (ppn 1 where not given)."""
    properties: str
    """Every other token, in order, without repeats, joined by ``:``."""
    exclusive: bool
    """``#excl``."""


_FLAGS = {"excl": True, "shared": False}


def parse_nodespec(text: str) -> Nodespec:
    """Parse a PBS nodespec such as ``2:ppn=12:x86_64:cl_zegox#excl``.

    Raises ValueError saying what is wrong.
    """
    spec, *flags = text.split("#")
    exclusive = False
    for flag in flags:
        if flag not in _FLAGS:
            raise ValueError(f"unknown flag '#{flag}' (expected #excl or #shared)")
        exclusive = exclusive or _FLAGS[flag]
    nodes = 0
    cpus = 0
    ppns: list[int | None] = []
    properties: list[str] = []
    for chunk in spec.split("+"):
        tokens = chunk.split(":")
        if any(not t for t in tokens):
            raise ValueError(f"empty part in {text!r}")
        count = 1
        if tokens[0].isdigit():
            count = int(tokens[0])
            tokens = tokens[1:]
            if count < 1:
                raise ValueError(f"node count 0 in {text!r}")
        ppn: int | None = None
        for token in tokens:
            if token.startswith("ppn="):
                value = token[4:]
                if not re.fullmatch(r"\d+(?:\.\d*)?", value) or int(float(value)) < 1:
                    raise ValueError(f"ppn must be a number of at least 1, found {token!r}")
                if ppn is not None and ppn != int(float(value)):
                    raise ValueError(f"two different ppn in one chunk of {text!r}")
                ppn = int(float(value))
            else:
                properties.append(token)
        nodes += count
        cpus += count * (ppn or 1)
        ppns.append(ppn)
    common = ppns[0] if all(p == ppns[0] for p in ppns) and ppns[0] is not None else 0
    return Nodespec(
        nodes=nodes,
        ppn=common,
        cpus=cpus,
        properties=":".join(dict.fromkeys(p for p in properties if p)),
        exclusive=exclusive,
    )


# =========================================================================== extended SWF

ALEA_EXTRA_COLUMNS: tuple[str, ...] = (
    "queue_name",
    "nodespec",
    "nodes",
    "ppn",
    "nodespec_cpus",
    "nodespec_properties",
    "exclusive",
)
"""The columns :func:`read_alea_swf` adds after ``line``."""

_NUM = rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NODE_IDS = rb"\{(?:\d+(?:,\d+)*)?\}"
_ALEA_LINE = re.compile(
    rb"[ \t]*"
    + rb"[ \t]+".join([rb"(" + _NUM + rb")"] * len(SWF_FIELDS))
    + rb"[ \t]+("
    + _NODE_IDS
    + rb")[ \t]+(\S+)[ \t]+(\S+)[ \t\r]*"
)
_NUMBER = re.compile(_NUM)
# Submit times at least this large are Unix epoch times (1973-03-03), not relative ones.
_EPOCH_THRESHOLD = 1e8
_FIELD = {name: index for index, name in enumerate(SWF_FIELDS)}


def _alea_reason(line: bytes) -> str:
    """Say what is wrong with an extended-SWF line (one that failed the line pattern)."""
    tokens = line.split()
    if len(tokens) != ALEA_FIELDS:
        return (
            f"expected {ALEA_FIELDS} whitespace-separated fields (18 SWF numbers, {{node ids}}, "
            f"queue name, nodespec), found {len(tokens)}"
        )
    for position, (name, token) in enumerate(zip(SWF_FIELDS, tokens, strict=False), start=1):
        if not _NUMBER.fullmatch(token):
            return f"field {position} ({name}) is not a number: {decode_line(token)!r}"
    return (
        "field 19 (per-CPU node ids) must be a list in braces like {12,12}, found "
        f"{decode_line(tokens[18])!r}"
    )


def _value_reason(values: npt.NDArray[np.float64]) -> str | None:
    """Why a row of 18 parsed numbers is not acceptable, or None."""
    for index, name in enumerate(SWF_FIELDS):
        value = float(values[index])
        problem = field_problem(name, value, f"{value:g}")
        if problem:
            return f"field {index + 1} ({name}) {problem}"
    return None


def read_alea_swf(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read Alea's extended SWF (21 fields, no header; gzip when so named or so made).

    Returns the 18 SWF columns with standard SWF semantics (see the module docstring: field
    10 becomes KB per processor, fields 6, 7, 17 and 18 become -1, absolute submit times become
    relative to the header's ``UnixStartTime``), ``line``, then :data:`ALEA_EXTRA_COLUMNS`:
    ``queue_name`` (field 20), ``nodespec`` (field 21, raw), ``nodes``, ``ppn``,
    ``nodespec_cpus`` (int64), ``nodespec_properties`` (str) and ``exclusive`` (bool),
    parsed by :func:`parse_nodespec`.

    Lines starting with ``;`` are kept as header comments and blank lines are skipped, as
    in :func:`queuesim.swf.read_swf`. A malformed job line raises :class:`WorkloadError`
    naming the file, the line and what was expected, unless ``skip_bad_lines`` is set: then
    it is recorded in :attr:`SwfTrace.bad_lines` and left out.
    """
    path = Path(path)
    comments: list[str] = []
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]] = []
    kept_tails: list[tuple[str, str]] = []
    specs: dict[str, Nodespec | str] = {}
    bad: list[BadLine] = []
    # a piece of the file at a time: only its lines are held as text (issue 20)
    for first, text in line_chunks(path):
        values, numbers, tails, keep = _read_piece(text, first, comments, specs, bad)
        if bad and not skip_bad_lines:
            bad.sort(key=lambda b: b.line)
            raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
        parts.append((values[keep], numbers[keep]))
        kept_tails += [t for t, k in zip(tails, keep, strict=True) if k]
    bad.sort(key=lambda b: b.line)
    values, kept_numbers = joined_pieces(parts)
    parts.clear()
    header, values = _standardise(values, comments, path)
    frame = jobs_frame(values, kept_numbers)
    parsed_specs = [specs[nodespec] for _, nodespec in kept_tails]
    frame["queue_name"] = pd.Series([q for q, _ in kept_tails], dtype=object)
    frame["nodespec"] = pd.Series([n for _, n in kept_tails], dtype=object)
    frame["nodes"] = np.array([_spec(s).nodes for s in parsed_specs], dtype=np.int64)
    frame["ppn"] = np.array([_spec(s).ppn for s in parsed_specs], dtype=np.int64)
    frame["nodespec_cpus"] = np.array([_spec(s).cpus for s in parsed_specs], dtype=np.int64)
    frame["nodespec_properties"] = pd.Series(
        [_spec(s).properties for s in parsed_specs], dtype=object
    )
    frame["exclusive"] = np.array([_spec(s).exclusive for s in parsed_specs], dtype=bool)
    return SwfTrace(path=path, header=header, jobs=frame, bad_lines=tuple(bad))


def _read_piece(
    text: bytes,
    first: int,
    comments: list[str],
    specs: dict[str, Nodespec | str],
    bad: list[BadLine],
) -> tuple[
    npt.NDArray[np.float64], npt.NDArray[np.int64], list[tuple[str, str]], npt.NDArray[np.bool_]
]:
    """The job lines of one piece of the file (its first line: ``first``): their 18 SWF
    values, line numbers, (queue, nodespec) texts and whether each is good; its comments
    go to ``comments``, its bad lines to ``bad``, each new nodespec parsed into ``specs``."""
    numbers: list[int] = []
    raws: list[bytes] = []
    prefixes: list[bytes] = []
    tails: list[tuple[str, str]] = []
    for number, raw, comment in content_lines(text, first):
        if comment:
            comments.append(decode_line(raw))
            continue
        match = _ALEA_LINE.fullmatch(raw)
        if match is None:
            bad.append(BadLine(number, decode_line(raw), _alea_reason(raw)))
            continue
        numbers.append(number)
        raws.append(raw)
        prefixes.append(raw[: match.end(len(SWF_FIELDS))])
        tails.append((decode_line(match.group(20)), decode_line(match.group(21))))

    values = parse_numeric_lines(prefixes)
    if values is None:  # cannot happen: every prefix matched 18 numeric tokens
        raise RuntimeError("validated SWF fields failed to parse")
    ok = valid_rows(values)
    keep = np.ones(len(numbers), dtype=bool)
    for row, (_, nodespec) in enumerate(tails):
        reason = None if ok[row] else _value_reason(values[row])
        if reason is None:
            parsed = specs.get(nodespec)
            if parsed is None:
                try:
                    parsed = parse_nodespec(nodespec)
                except ValueError as exc:
                    parsed = f"field 21 (nodespec) {nodespec!r}: {exc}"
                specs[nodespec] = parsed
            if isinstance(parsed, str):
                reason = parsed
        if reason is not None:
            keep[row] = False
            bad.append(BadLine(numbers[row], decode_line(raws[row]), reason))
    return values, np.asarray(numbers, dtype=np.int64), tails, keep


def _spec(parsed: Nodespec | str) -> Nodespec:
    assert isinstance(parsed, Nodespec)
    return parsed


def _standardise(
    values: npt.NDArray[np.float64], comments: list[str], path: Path
) -> tuple[SwfHeader, npt.NDArray[np.float64]]:
    """Standard SWF units and times; the header that goes with them."""
    values = values.copy()
    values[:, _FIELD["avg_cpu_time"]] = -1.0
    values[:, _FIELD["used_memory"]] = -1.0
    values[:, _FIELD["prev_job"]] = -1.0
    values[:, _FIELD["think_time"]] = -1.0
    req_bytes = values[:, _FIELD["req_memory"]]
    procs = values[:, _FIELD["req_procs"]]
    procs = np.where(procs > 0, procs, values[:, _FIELD["alloc_procs"]])
    known = (req_bytes > 0) & (procs > 0)
    values[:, _FIELD["req_memory"]] = np.where(
        known, req_bytes / 1024 / np.where(known, procs, 1.0), -1.0
    )

    lines = list(comments)
    header = parse_header(lines)
    start = header.unix_start_time
    submit = values[:, _FIELD["submit"]]
    valid = submit[submit >= 0]
    if start is None and len(valid) and float(valid.min()) >= _EPOCH_THRESHOLD:
        start = int(valid.min())
        values[:, _FIELD["submit"]] = np.where(submit >= 0, submit - start, submit)
        note = (
            f"converted by queuesim from Alea extended SWF {path.name}: submit times made "
            "relative to UnixStartTime, requested memory bytes per job -> KB per processor, "
            "fields 6, 7, 17 and 18 (placeholders) -> -1"
        )
        lines += [f"; UnixStartTime: {start}", f"; Note: {note}"]
        header = parse_header(lines)
    return header, values
