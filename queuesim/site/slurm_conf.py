"""Reading Slurm's configuration files as ``slurm.conf(5)``, ``gres.conf(5)`` and
``topology.conf(5)`` describe them, and the ``sacctmgr show assoc|qos -P`` dumps.

The syntax (slurm.conf(5)): ``Key=Value`` pairs, keys case-insensitive; ``#`` starts a
comment; a line ending in ``\\`` continues on the next; ``Include FILE`` reads another
file (relative to the including file's folder); ``NodeName=DEFAULT`` and
``PartitionName=DEFAULT`` lines set defaults for the lines after them. Host lists
(``node[001-004,010]``, ``tux[0-3]-ib``) and Slurm's time formats are read here too.
A line that is not ``Key=Value`` pairs is reported as not understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where, config_lines

__all__ = [
    "ConfLine",
    "DumpRow",
    "expand_hostlist",
    "read_conf",
    "read_sacctmgr",
    "slurm_minutes",
    "slurm_time",
]

_PAIR = re.compile(r'\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*("[^"]*"|[^\s"]*)')


@dataclass(frozen=True)
class ConfLine:
    """One logical line of ``Key=Value`` pairs (keys lower-cased, values unquoted)."""

    where: Where
    pairs: tuple[tuple[str, str], ...]
    keys: tuple[str, ...]
    """the keys as written, for the report"""

    @property
    def first(self) -> str:
        return self.pairs[0][0]

    def get(self, key: str) -> str | None:
        for k, v in self.pairs:
            if k == key:
                return v
        return None


def _strip_comment(text: str) -> str:
    quoted = False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted and (i == 0 or text[i - 1] != "\\"):
            return text[:i]
    return text


def _logical_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """(first line number, text) with comments dropped and continuations joined."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in config_lines(path, what):
        text = _strip_comment(raw).rstrip()
        if pending is not None:  # joined as Slurm does: the backslash and line break go
            start, before = pending
            text = before + text
            number = start
            pending = None
        if text.endswith("\\"):
            pending = (number, text[:-1])
            continue
        if text.strip():
            out.append((number, text.strip()))
    if pending is not None and pending[1].strip():
        out.append((pending[0], pending[1].strip()))
    return out


def read_conf(
    path: Path, report: ImportReport, what: str = "slurm.conf", *, _depth: int = 0
) -> list[ConfLine]:
    """The ``Key=Value`` lines of a Slurm configuration file, ``Include`` files read in
    place; other lines go to the report as not understood."""
    if _depth > 8:
        raise ConfigError(f"{path}: Include nested more than 8 deep (an Include loop?)")
    report.files.append(str(path))
    lines: list[ConfLine] = []
    for number, text in _logical_lines(path, what):
        where = Where(str(path), number)
        include = re.fullmatch(r"(?i)include\s+(\S+)", text)
        if include:
            target = Path(include.group(1).strip('"'))
            if not target.is_absolute():
                target = path.parent / target
            if not target.exists():
                raise ConfigError(f"{where}: Include names {target}, which does not exist")
            report.map("Include", include.group(1), where, "(read in place)")
            lines += read_conf(target, report, what, _depth=_depth + 1)
            continue
        pairs: list[tuple[str, str]] = []
        keys: list[str] = []
        pos = 0
        for match in _PAIR.finditer(text):
            if match.start() != pos:
                break
            keys.append(match.group(1))
            pairs.append((match.group(1).lower(), match.group(2).strip('"')))
            pos = match.end()
        if not pairs or text[pos:].strip():
            report.unknown(where, text, "expected Key=Value pairs")
            continue
        lines.append(ConfLine(where, tuple(pairs), tuple(keys)))
    return lines


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


#: the most nodes one host list may name: more than any machine has (Fugaku: 158,976), so
#: a larger list is a mistake, refused before it is expanded
MAX_HOSTS = 1_000_000


def _expand_one(pattern: str, where: Where) -> list[str]:
    pieces = re.split(r"(\[[^\]]*\])", pattern)
    choices: list[list[str]] = []
    count = 1
    for piece in pieces:
        if not (piece.startswith("[") and piece.endswith("]")):
            if "[" in piece or "]" in piece:
                raise ConfigError(f"{where}: unbalanced brackets in host list {pattern!r}")
            choices.append([piece])
            continue
        values: list[str] = []
        for span in piece[1:-1].split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", span)
            if not m:
                raise ConfigError(
                    f"{where}: expected a range such as [001-004,010] in host list "
                    f"{pattern!r}, found [{piece[1:-1]}]"
                )
            lo, hi = m.group(1), m.group(2) or m.group(1)
            if int(hi) < int(lo):
                raise ConfigError(f"{where}: range {lo}-{hi} runs backwards in {pattern!r}")
            if len(values) + int(hi) - int(lo) >= MAX_HOSTS:
                raise ConfigError(
                    f"{where}: host list {pattern!r} names more than {MAX_HOSTS:,} nodes"
                )
            width = len(lo)
            values += [f"{n:0{width}d}" for n in range(int(lo), int(hi) + 1)]
        count *= len(values)
        if count > MAX_HOSTS:
            raise ConfigError(f"{where}: host list {pattern!r} names more than {MAX_HOSTS:,} nodes")
        choices.append(values)
    return ["".join(p) for p in product(*choices)]


def expand_hostlist(text: str, where: Where) -> list[str]:
    """``node[001-003,010],gpu1`` as the node names it stands for, in order."""
    names: list[str] = []
    for part in _split_top(text):
        names += _expand_one(part, where)
    return list(dict.fromkeys(names))


_UNLIMITED = {"unlimited", "infinite", "-1"}


def slurm_time(value: str, where: Where, key: str) -> float | None:
    """A Slurm time limit in seconds (None: UNLIMITED/INFINITE). Formats (slurm.conf(5)):
    ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``,
    ``days-hours:minutes``, ``days-hours:minutes:seconds``."""
    text = value.strip().lower()
    if text in _UNLIMITED:
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if not m:
        raise ConfigError(
            f"{where}: {key}={value}: expected a time such as 30, 1:00:00, 2-00:00:00 or UNLIMITED"
        )
    days, a, b, c = m.groups()
    nums = [int(x) for x in (a, b, c) if x is not None]
    if days is not None:  # days-hours[:minutes[:seconds]]
        h, mi, s = [*nums, 0, 0][:3]
        return float(int(days) * 86400 + h * 3600 + mi * 60 + s)
    if len(nums) == 1:
        return float(nums[0] * 60)
    if len(nums) == 2:
        return float(nums[0] * 60 + nums[1])
    return float(nums[0] * 3600 + nums[1] * 60 + nums[2])


def slurm_minutes(value: str, where: Where, key: str) -> float:
    """A plain whole number (of minutes, MB, ...) from a Slurm setting."""
    if not re.fullmatch(r"\d+", value.strip()):
        raise ConfigError(f"{where}: {key}={value}: expected a whole number")
    return float(value)


@dataclass(frozen=True)
class DumpRow:
    """One row of a ``sacctmgr show ... -P`` dump, by lower-cased column name."""

    where: Where
    values: dict[str, str]
    names: dict[str, str]
    """column name as written, by lower-cased name"""


def read_sacctmgr(path: Path, report: ImportReport, what: str) -> list[DumpRow]:
    """The rows of a ``sacctmgr show assoc|qos -P`` dump: a header line of ``|``-separated
    column names, then one row per line with as many fields."""
    report.files.append(str(path))
    lines = [(n, t) for n, t in config_lines(path, what) if t.strip()]
    if not lines:
        raise ConfigError(f"{path}: empty; expected the output of sacctmgr show ... -P")
    first, header_text = lines[0]
    written = [h.strip() for h in header_text.split("|")]
    header = [h.lower() for h in written]
    if len(header) < 2 or not all(re.fullmatch(r"[a-z][a-z ]*", h) for h in header):
        raise ConfigError(
            f"{path}:{first}: expected a header of |-separated column names such as "
            f"Cluster|Account|User|Partition|Share|..., found {header_text!r}"
        )
    rows: list[DumpRow] = []
    for number, text in lines[1:]:
        where = Where(str(path), number)
        fields = text.split("|")
        if fields and fields[-1] == "" and len(fields) == len(header) + 1:
            fields = fields[:-1]
        if len(fields) != len(header):
            report.unknown(
                where, text, f"expected {len(header)} |-separated fields, found {len(fields)}"
            )
            continue
        values = dict(zip(header, (f.strip() for f in fields), strict=True))
        rows.append(DumpRow(where, values, dict(zip(header, written, strict=True))))
    return rows
