"""Reading PBS Pro / OpenPBS / Torque configuration as its tools print it.

* ``qmgr -c "print server"`` (and ``print node``): ``create queue NAME``, ``set queue NAME
  attr = value`` (``+=`` adds to a list), ``set server attr = value``, ``create resource``
  / ``set resource``, ``create node`` / ``set node``; ``#`` comments;
* ``pbsnodes -av`` (``-a`` on Torque): a node name alone on a line, then indented
  ``attr = value`` lines, blocks separated by blank lines;
* the scheduler's ``sched_config``: ``option: value [prime|non_prime|all|none]``;
* the fairshare tree ``resource_group``: ``name id parent shares`` per line.

Lines none of these shapes fit are reported as not understood; values are read by the
importer (:mod:`queuesim.site.pbs_import`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from queuesim.common.errors import ConfigError
from queuesim.site.import_report import ImportReport, Where, config_lines

__all__ = [
    "Attr",
    "Qmgr",
    "SchedOption",
    "ShareEntry",
    "pbs_size",
    "pbs_walltime",
    "read_pbsnodes",
    "read_qmgr",
    "read_resource_group",
    "read_sched_config",
]


@dataclass(frozen=True)
class Attr:
    name: str
    value: str
    where: Where
    earlier: tuple[Where, ...] = ()
    """the lines a ``+=`` added to, before ``where``"""

    @property
    def lines(self) -> tuple[Where, ...]:
        return (*self.earlier, self.where)


@dataclass
class Qmgr:
    server: dict[str, Attr] = field(default_factory=dict)
    queues: dict[str, dict[str, Attr]] = field(default_factory=dict)
    queue_where: dict[str, list[Where]] = field(default_factory=dict)
    resources: dict[str, dict[str, Attr]] = field(default_factory=dict)
    nodes: dict[str, dict[str, Attr]] = field(default_factory=dict)
    node_where: dict[str, Where] = field(default_factory=dict)


_SET = re.compile(r"(?i)^set\s+(server|queue|node|resource)\s*(\S*)\s+([\w.]+)\s*(\+?=)\s*(.*)$")
_CREATE = re.compile(r"(?i)^create\s+(queue|node|resource)\s+(\S+)(?:\s+(.*))?$")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _set(table: dict[str, Attr], name: str, value: str, where: Where, add: bool) -> None:
    if add and name in table:
        before = table[name]
        table[name] = Attr(name, f"{before.value},{value}", where, before.lines)
        return
    table[name] = Attr(name, value, where)


def read_qmgr(path: Path, report: ImportReport) -> Qmgr:
    """The server, queues, resources and nodes of ``qmgr -c "print server"`` output."""
    report.files.append(str(path))
    out = Qmgr()
    for number, raw in config_lines(path, 'qmgr -c "print server" output'):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        where = Where(str(path), number)
        create = _CREATE.match(text)
        if create:
            kind, name, rest = create.group(1).lower(), create.group(2), create.group(3) or ""
            report.map(
                f"create {kind}",
                name,
                where,
                "(defines it)",
                "its attributes are mapped or reported below",
            )
            if kind == "queue":
                out.queues.setdefault(name, {})
                out.queue_where.setdefault(name, []).append(where)
                for key, value in re.findall(r"(\w+)\s*=\s*(\S+)", rest):
                    _set(out.queues[name], key.lower(), _unquote(value), where, False)
            elif kind == "node":
                out.nodes.setdefault(name, {})
                out.node_where.setdefault(name, where)
                for key, value in re.findall(r"([\w.]+)\s*=\s*(\S+)", rest):
                    _set(out.nodes[name], key, _unquote(value), where, False)
            else:
                out.resources.setdefault(name, {})
            continue
        match = _SET.match(text)
        if match:
            kind, name, attr, op, value = match.groups()
            kind, value, add = kind.lower(), _unquote(value), op == "+="
            if kind == "server":  # NAME, when given, is the server's own name
                _set(out.server, attr, value, where, add)
            elif kind == "queue" and name:
                out.queues.setdefault(name, {})
                out.queue_where.setdefault(name, []).append(where)
                _set(out.queues[name], attr, value, where, add)
            elif kind == "node" and name:
                out.nodes.setdefault(name, {})
                out.node_where.setdefault(name, where)
                _set(out.nodes[name], attr, value, where, add)
            elif kind == "resource" and name:
                _set(out.resources.setdefault(name, {}), attr, value, where, add)
            else:
                report.unknown(where, text, "expected set server|queue NAME|node NAME ...")
            continue
        if re.match(r"(?i)^(create|set|import|export)\s+(hook|pbshook)\b", text):
            report.skip("hook", text, where, "hooks run site code; not modelled")
            continue
        report.unknown(
            where,
            text,
            "expected 'create queue|node|resource NAME' or "
            "'set server|queue|node|resource ... attr = value'",
        )
    return out


def read_pbsnodes(
    path: Path, report: ImportReport
) -> tuple[dict[str, dict[str, Attr]], dict[str, Where]]:
    """The nodes of ``pbsnodes -av`` output: node -> attr -> value, and each node's line."""
    report.files.append(str(path))
    nodes: dict[str, dict[str, Attr]] = {}
    where_of: dict[str, Where] = {}
    current: str | None = None
    for number, raw in config_lines(path, "pbsnodes -av output"):
        where = Where(str(path), number)
        if not raw.strip():
            current = None
            continue
        if not raw[0].isspace():
            current = raw.strip()
            if " " in current or "=" in current:
                report.unknown(where, raw, "expected a node name alone on its line")
                current = None
                continue
            nodes.setdefault(current, {})
            where_of[current] = where
            continue
        match = re.fullmatch(r"\s+([\w.\-]+)\s*=\s*(.*)", raw)
        if current is None or not match:
            report.unknown(where, raw, "expected an indented 'attr = value' line after a node name")
            continue
        nodes[current][match.group(1)] = Attr(match.group(1), match.group(2).strip(), where)
    return nodes, where_of


@dataclass(frozen=True)
class SchedOption:
    key: str
    value: str
    prime: str
    """``all`` when the line names no prime option"""
    where: Where


_PRIME = {"prime", "non_prime", "all", "none"}


def read_sched_config(path: Path, report: ImportReport) -> list[SchedOption]:
    """The ``option: value [prime_option]`` lines of a sched_config."""
    report.files.append(str(path))
    out: list[SchedOption] = []
    for number, raw in config_lines(path, "sched_config"):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        where = Where(str(path), number)
        match = re.fullmatch(r"([A-Za-z_]\w*)\s*:\s*(\"[^\"]*\"|\S+)\s*(\S+)?", text)
        prime = (match.group(3) or "all").lower() if match else ""
        if not match or prime not in _PRIME:
            report.unknown(where, text, "expected 'option: value [prime|non_prime|all|none]'")
            continue
        out.append(SchedOption(match.group(1).lower(), _unquote(match.group(2)), prime, where))
    return out


@dataclass(frozen=True)
class ShareEntry:
    name: str
    id: str
    parent: str
    shares: float
    where: Where


def read_resource_group(path: Path, report: ImportReport) -> list[ShareEntry]:
    """The ``name id parent shares`` lines of a fairshare resource_group file."""
    report.files.append(str(path))
    out: list[ShareEntry] = []
    for number, raw in config_lines(path, "resource_group"):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        where = Where(str(path), number)
        fields = text.split()
        if len(fields) != 4 or not re.fullmatch(r"\d+(\.\d+)?", fields[3]):
            report.unknown(where, text, "expected 'name id parent shares' (shares a number)")
            continue
        out.append(ShareEntry(fields[0], fields[1], fields[2], float(fields[3]), where))
    return out


_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def pbs_size(value: str, where: Where, key: str) -> int:
    """A PBS size (``196608000kb``, ``64gb``, ``1tb``, ``512mw``; bare: bytes) in bytes;
    ``w`` is a word of 8 bytes, ``b`` a byte, units powers of 1024."""
    m = re.fullmatch(r"(\d+)\s*([kmgtp]?)([bw]?)", value.strip().lower())
    if not m:
        raise ConfigError(f"{where}: {key} = {value}: expected a size such as 64gb or 196608000kb")
    return int(m.group(1)) * _SIZE_UNITS[m.group(2)] * (8 if m.group(3) == "w" else 1)


def pbs_walltime(value: str, where: Where, key: str) -> float:
    """A PBS duration (``[[hours:]minutes:]seconds[.ms]``, hours may exceed 24) in seconds."""
    m = re.fullmatch(r"(?:(?:(\d+):)?(\d+):)?(\d+)(?:\.\d+)?", value.strip())
    if not m:
        raise ConfigError(f"{where}: {key} = {value}: expected a duration such as 24:00:00")
    h, mi, s = (int(x) if x else 0 for x in m.groups())
    return float(h * 3600 + mi * 60 + s)
