"""Read the machine descriptions shipped with the Alea simulator (MetaCentrum / CERIT-SC).

Two kinds of file, neither a standard Parallel Workloads Archive file:

**Machine files** (``*.machines``), one cluster of identical nodes per line, read by
:func:`read_machines`. Two layouts, told apart by their number of columns:

* Alea (6 columns): ``id name nodes cpus_per_node cpu_speed ram_per_node_KB``
  (``wagap-2013.swf.machines``: zewura 20 x 80 CPUs, 529426432 KB; zegox 48 x 12 CPUs,
  94035968 KB);
* AleaNG (8 columns): ``id name nodes cpus_per_node cpu_rating ram_per_node_GB speed
  gpus_per_node`` (``NGI_CZ.swf.machines``, 47 clusters).

**The machine description of MetaCentrum 2009** (``metacentrum-org.mwf``; despite the name
it holds no jobs), read by :func:`read_mwf`: one tab-separated line per cluster, ``id name
cpu_MHz ram_KB arch os properties n_machines n_cpus cpus_per_machine_list global_cpu_ids``
(the last three lists comma-separated). ``ram_KB`` is read as the memory of *one machine*:
cluster 2 has ten 1-CPU machines with 1009000 KB, and no job of the MetaCentrum 2009 trace
ran there with more than 982240 KB used; a cluster-wide total would give a 2009 node a few
hundred MB. What the file says, cluster by cluster:

* the 14 clusters hold 806 CPUs, as on the PWA page of the log;
* ``cluster_6`` is heterogeneous: 35 machines with 4 CPUs and one with 8 (148 CPUs). It
  becomes two groups, ``cluster_6-4cpu`` and ``cluster_6-8cpu``, with the one ``ram_KB``
  of the line each (the file has no per-machine memory);
* ``cluster_11`` says 19 machines and 152 CPUs (and lists 152 global CPU ids) but its
  per-machine list has 20 entries of 8. The first ``n_machines`` entries are used when they
  add up to ``n_cpus``, and the discrepancy is noted; any other disagreement is an error;
* ``cluster_0`` and ``cluster_1`` are one SMP machine each (8 and 16 CPUs), where the PWA
  page lists 8 and 16 nodes; the file is followed.

KB is 1024 bytes (``cluster_5`` has 1048576 KB = exactly 1 GiB).

A :class:`MachineGroup` is one group of identical nodes; :func:`clusters_yaml` renders
groups as the ``clusters:`` section of a site file (see ``site-configs/README.md``), with
comments that say where each number came from.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from queuesim.common.errors import WorkloadError
from queuesim.common.files import decode_line, read_bytes

__all__ = [
    "MachineGroup",
    "clusters_yaml",
    "format_memory",
    "machine_format",
    "read_machine_file",
    "read_machines",
    "read_mwf",
    "with_properties",
]

_KIB = 1024
_UNITS = (("GB", _KIB**3), ("MB", _KIB**2), ("KB", _KIB))


@dataclass(frozen=True)
class MachineGroup:
    """A group of identical nodes read from a machine description."""

    name: str
    nodes: int
    cpus_per_node: int
    memory_per_node: int | None
    """Memory of one node in bytes; None when the file gives none (0)."""
    properties: tuple[str, ...]
    line: int
    """1-based line of the file the group comes from."""
    layout: str = ""
    """The file layout it was read from: ``alea``, ``aleang`` or ``mwf``."""
    notes: tuple[str, ...] = ()
    """What else the line says or how it was read (speed, GPUs, a split), for comments."""
    gpus_per_node: int = 0

    @property
    def cpus(self) -> int:
        return self.nodes * self.cpus_per_node

    def cluster_dict(self) -> dict[str, object]:
        """The group as a ``clusters[]`` entry of a site file (memory in bytes)."""
        entry: dict[str, object] = {
            "name": self.name,
            "nodes": self.nodes,
            "cpus_per_node": self.cpus_per_node,
        }
        if self.memory_per_node is not None:
            entry["memory_per_node"] = self.memory_per_node
        if self.properties:
            entry["properties"] = list(self.properties)
        if self.gpus_per_node:
            entry["gpus_per_node"] = self.gpus_per_node
        return entry


_LAYOUTS: dict[str, str] = {
    "alea": "Alea machine file, 6 columns: id name nodes cpus_per_node cpu_speed ram_per_node_KB",
    "aleang": "AleaNG machine file, 8 columns: id name nodes cpus_per_node cpu_rating "
    "ram_per_node_GB speed gpus_per_node",
    "mwf": "Alea machine description (.mwf), tab-separated: id name cpu_MHz ram_KB arch os "
    "properties n_machines n_cpus cpus_per_machine_list global_cpu_ids",
}

_HOW_READ: dict[str, tuple[str, ...]] = {
    "alea": (
        "nodes = column 3; cpus_per_node = column 4;",
        "memory_per_node = column 6 (KB per node, 1 KB = 1024 bytes);",
        "column 5 (cpu_speed) is not modelled and is noted per cluster.",
    ),
    "aleang": (
        "nodes = column 3; cpus_per_node = column 4;",
        "memory_per_node = column 6 (GB per node, 1 GB = 2^30 bytes);",
        "gpus_per_node = column 8, and properties = [gpu] when it is above 0;",
        "columns 5 (cpu_rating) and 7 (speed) are not modelled and are noted per cluster.",
    ),
    "mwf": (
        "nodes = n_machines (column 8); cpus_per_node = the entries of",
        "cpus_per_machine_list (column 10): a cluster whose machines differ is split into",
        "one cluster per CPU count, named <name>-<N>cpu (see the comment above it);",
        "memory_per_node = ram_KB (column 4), the memory of one machine (1 KB = 1024 bytes),",
        "the same for every group of a split cluster;",
        "properties = arch, os, then the properties list (columns 5, 6, 7);",
        "column 3 (cpu_MHz) is noted per cluster; global_cpu_ids are only counted.",
    ),
}


def machine_format(path: str | Path) -> str:
    """``machines`` or ``mwf`` from a file name (``x.machines``, ``x.mwf``, also ``.gz``)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(".machines"):
        return "machines"
    if name.endswith(".mwf"):
        return "mwf"
    raise WorkloadError(
        f"{path}: cannot tell the machine file format from the name (expected a name ending "
        "in .machines or .mwf); give --format machines or --format mwf"
    )


def read_machine_file(path: str | Path, file_format: str | None = None) -> list[MachineGroup]:
    """Read a machine file of the given format (``machines`` or ``mwf``; by default from
    the file name, see :func:`machine_format`)."""
    if file_format is None and not Path(path).exists():
        raise WorkloadError(f"{path}: no such machine file")
    fmt = file_format or machine_format(path)
    if fmt == "machines":
        return read_machines(path)
    if fmt == "mwf":
        return read_mwf(path)
    raise WorkloadError(f"{path}: unknown machine file format {fmt!r} (expected machines or mwf)")


def _data_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines that are neither blank nor comments (# or ;)."""
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(read_bytes(path, what).split(b"\n"), start=1):
        text = decode_line(raw).strip()
        if text and text[0] not in "#;":
            out.append((number, text))
    return out


def _whole(token: str, where: str, what: str, *, minimum: int) -> int:
    if not re.fullmatch(r"[+-]?\d+", token):
        raise WorkloadError(f"{where}: {what} must be a whole number, found {token!r}")
    value = int(token)
    if value < minimum:
        raise WorkloadError(f"{where}: {what} must be at least {minimum}, found {token!r}")
    return value


def _number(token: str, where: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    if not re.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", token) or not (
        math.isfinite(value)
    ):
        raise WorkloadError(f"{where}: {what} must be a number, found {token!r}")
    if value < 0:
        raise WorkloadError(f"{where}: {what} cannot be negative, found {token!r}")
    return value


def _memory(value: float, unit: int, where: str, what: str) -> int | None:
    """``value`` units of ``unit`` bytes as whole bytes; None for 0."""
    size = value * unit
    if size == 0:
        return None
    if size != math.floor(size):
        raise WorkloadError(f"{where}: {what} is not a whole number of bytes: {value!r}")
    return int(size)


def _plain(value: float) -> str:
    """A number as written in the file: 529426432, 5.9."""
    if value == math.trunc(value) and abs(value) < 2.0**53:
        return str(int(value))
    return repr(value)


def _gib(size: int | None) -> str:
    return "no memory" if size is None else f"{size / _KIB**3:.4g} GiB"


def read_machines(path: str | Path) -> list[MachineGroup]:
    """Read an Alea (6 columns, RAM in KB) or AleaNG (8 columns, RAM in GB) machine file.

    The layout is taken from the first line and every line must have its column count.
    Blank lines and lines starting with ``#`` or ``;`` are skipped. Anything else wrong (a
    column count other than 6 or 8, a count that is not a positive whole number, a
    repeated name) is a :class:`WorkloadError` naming the file and line.
    """
    path = Path(path)
    groups: list[MachineGroup] = []
    layout = ""
    first = 0
    seen: dict[str, int] = {}
    for number, text in _data_lines(path, "machine file"):
        where = f"{path}:{number}"
        cols = text.split()
        if not layout:
            if len(cols) not in (6, 8):
                raise WorkloadError(
                    f"{where}: expected 6 columns (Alea: id name nodes cpus_per_node cpu_speed "
                    "ram_per_node_KB) or 8 columns (AleaNG: id name nodes cpus_per_node "
                    f"cpu_rating ram_per_node_GB speed gpus_per_node), found {len(cols)}"
                )
            layout, first = ("alea" if len(cols) == 6 else "aleang"), number
        expected = 6 if layout == "alea" else 8
        if len(cols) != expected:
            raise WorkloadError(
                f"{where}: expected {expected} columns like line {first} ({_LAYOUTS[layout]}), "
                f"found {len(cols)}"
            )
        _whole(cols[0], where, "column 1 (id)", minimum=0)
        name = cols[1]
        if name in seen:
            raise WorkloadError(f"{where}: cluster name {name!r} already used on line {seen[name]}")
        seen[name] = number
        nodes = _whole(cols[2], where, "column 3 (nodes)", minimum=1)
        cpus = _whole(cols[3], where, "column 4 (cpus_per_node)", minimum=1)
        notes: list[str] = []
        properties: tuple[str, ...] = ()
        gpus = 0
        if layout == "alea":
            speed = _number(cols[4], where, "column 5 (cpu_speed)")
            ram = _number(cols[5], where, "column 6 (ram_per_node_KB)")
            memory = _memory(ram, _KIB, where, "column 6 (ram_per_node_KB)")
            notes.append(
                f"cpu_speed {_plain(speed)}; ram_per_node_KB {_plain(ram)} ({_gib(memory)})"
            )
        else:
            rating = _number(cols[4], where, "column 5 (cpu_rating)")
            ram = _number(cols[5], where, "column 6 (ram_per_node_GB)")
            memory = _memory(ram, _KIB**3, where, "column 6 (ram_per_node_GB)")
            speed = _number(cols[6], where, "column 7 (speed)")
            gpus = _whole(cols[7], where, "column 8 (gpus_per_node)", minimum=0)
            text_gpus = f"; {gpus} GPUs per node" if gpus else ""
            notes.append(f"cpu_rating {_plain(rating)}; speed {_plain(speed)}{text_gpus}")
            if gpus:
                properties = ("gpu",)
        if memory is None:
            notes.append("memory 0 in the file: not modelled")
        group = MachineGroup(
            name, nodes, cpus, memory, properties, number, layout, tuple(notes), gpus
        )
        groups.append(group)
    if not groups:
        raise WorkloadError(f"{path}: no machine lines (expected one cluster per line)")
    return groups


_MWF_COLUMNS = (
    "id",
    "name",
    "cpu_MHz",
    "ram_KB",
    "arch",
    "os",
    "properties",
    "n_machines",
    "n_cpus",
    "cpus_per_machine_list",
    "global_cpu_ids",
)


def _int_list(text: str, where: str, what: str, *, minimum: int) -> list[int]:
    parts = text.split(",")
    if not text or any(not re.fullmatch(r"\d+", p) for p in parts):
        raise WorkloadError(
            f"{where}: {what} must be whole numbers separated by commas, found {text!r}"
        )
    values = [int(p) for p in parts]
    if min(values) < minimum:
        raise WorkloadError(f"{where}: {what} must all be at least {minimum}, found {text!r}")
    return values


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def read_mwf(path: str | Path) -> list[MachineGroup]:
    """Read an Alea ``.mwf`` machine description (MetaCentrum 2009's ``metacentrum-org.mwf``).

    One cluster per line, 11 columns (tab-separated; whitespace when the line has no tab):
    ``id name cpu_MHz ram_KB arch os properties n_machines n_cpus cpus_per_machine_list
    global_cpu_ids``. A cluster whose machines differ in CPU count is split into one group
    per count, named ``<name>-<N>cpu``, in the order the counts first appear. The per-machine
    list must have ``n_machines`` entries adding up to ``n_cpus``; a longer list whose first
    ``n_machines`` entries add up to ``n_cpus`` is accepted with a note (``cluster_11``).
    """
    path = Path(path)
    groups: list[MachineGroup] = []
    seen: dict[str, int] = {}
    for number, text in _data_lines(path, "machine description"):
        where = f"{path}:{number}"
        cols = [c.strip() for c in text.split("\t")] if "\t" in text else text.split()
        if len(cols) != len(_MWF_COLUMNS):
            raise WorkloadError(
                f"{where}: expected {len(_MWF_COLUMNS)} columns ({' '.join(_MWF_COLUMNS)}), "
                f"found {len(cols)}"
            )
        _whole(cols[0], where, "column 1 (id)", minimum=0)
        name = cols[1]
        if not name:
            raise WorkloadError(f"{where}: column 2 (name) is empty")
        mhz = _number(cols[2], where, "column 3 (cpu_MHz)")
        ram = _number(cols[3], where, "column 4 (ram_KB)")
        memory = _memory(ram, _KIB, where, "column 4 (ram_KB)")
        properties = _unique([cols[4], cols[5], *cols[6].split(",")])
        n_machines = _whole(cols[7], where, "column 8 (n_machines)", minimum=1)
        n_cpus = _whole(cols[8], where, "column 9 (n_cpus)", minimum=1)
        per_machine = _int_list(cols[9], where, "column 10 (cpus_per_machine_list)", minimum=1)
        cpu_ids = _int_list(cols[10], where, "column 11 (global_cpu_ids)", minimum=0)

        notes: list[str] = []
        if len(per_machine) != n_machines or sum(per_machine) != n_cpus:
            head = per_machine[:n_machines]
            if len(per_machine) > n_machines and sum(head) == n_cpus:
                notes.append(
                    f"cpus_per_machine_list has {len(per_machine)} entries ({sum(per_machine)} "
                    f"CPUs) for n_machines {n_machines}; its first {n_machines} entries were "
                    f"used, which add up to n_cpus {n_cpus}"
                    + (
                        f" as do the {len(cpu_ids)} global_cpu_ids"
                        if len(cpu_ids) == n_cpus
                        else ""
                    )
                )
                per_machine = head
            else:
                raise WorkloadError(
                    f"{where}: cpus_per_machine_list has {len(per_machine)} entries adding up to "
                    f"{sum(per_machine)} CPUs; expected n_machines ({n_machines}) entries adding "
                    f"up to n_cpus ({n_cpus})"
                )
        if len(cpu_ids) != n_cpus:
            notes.append(f"global_cpu_ids lists {len(cpu_ids)} ids for n_cpus {n_cpus}")

        counts: dict[int, int] = {}
        for cpus in per_machine:
            counts[cpus] = counts.get(cpus, 0) + 1
        base = f"cpu_MHz {_plain(mhz)}; ram_KB {_plain(ram)} per machine ({_gib(memory)})"
        if len(counts) > 1:
            shape = " + ".join(f"{n} x {c} CPUs" for c, n in counts.items())
            split_note = (
                f"{name} has {n_machines} machines of differing CPU counts ({shape}, "
                f"{n_cpus} CPUs), split into {len(counts)} clusters by CPU count"
            )
            if memory is not None:
                split_note += "; each gets the line's one ram_KB"
        for cpus, n in counts.items():
            group_name = f"{name}-{cpus}cpu" if len(counts) > 1 else name
            if group_name in seen:
                raise WorkloadError(
                    f"{where}: cluster name {group_name!r} already used on line {seen[group_name]}"
                )
            seen[group_name] = number
            group_notes = [base, *notes]
            if len(counts) > 1:
                group_notes.insert(0, split_note)
            notes_of_group = tuple(group_notes)
            group = MachineGroup(
                group_name, n, cpus, memory, properties, number, "mwf", notes_of_group
            )
            groups.append(group)
    if not groups:
        raise WorkloadError(f"{path}: no cluster lines (expected one cluster per line)")
    return groups


def format_memory(size: int) -> str:
    """Bytes in the largest of GB, MB, KB that holds them exactly (else bytes)."""
    for unit, factor in _UNITS:
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _scalar(value: str) -> str:
    """A YAML scalar that reads back as the string ``value``."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", value):
        try:
            if yaml.safe_load(value) == value:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def with_properties(groups: Sequence[MachineGroup], given: Sequence[str]) -> list[MachineGroup]:
    """``groups`` with the node properties of ``given`` (``CLUSTER=P1,P2`` each) added,
    noted as given by hand; a malformed entry or an unknown cluster is a
    :class:`WorkloadError`."""
    added: dict[str, list[str]] = {}
    names = [g.name for g in groups]
    for entry in given:
        name, sep, props = entry.partition("=")
        values = [p.strip() for p in props.split(",") if p.strip()]
        if not sep or not name or not values:
            raise WorkloadError(
                f"--property {entry!r}: expected CLUSTER=P1,P2 (a cluster name, '=', "
                "properties separated by commas)"
            )
        if name not in names:
            raise WorkloadError(
                f"--property {entry!r}: no cluster {name!r} in the machine file "
                f"(clusters: {', '.join(names)})"
            )
        added.setdefault(name, []).extend(values)
    return [
        replace(
            g,
            properties=tuple(dict.fromkeys([*g.properties, *added[g.name]])),
            notes=(*g.notes, "properties: given with --property"),
        )
        if g.name in added
        else g
        for g in groups
    ]


def clusters_yaml(
    groups: Sequence[MachineGroup], source: str | Path, *, command: str | None = None
) -> str:
    """Render ``groups`` as the ``clusters:`` section of a site file, with comments.

    The header names ``source`` (and ``command``, when given: how the text was made), says
    how each number was read, and the total; each cluster gets a comment with its source
    line and whatever else the line said. Memory is written as ``<n>GB`` when whole GB,
    else ``<n>MB``, else ``<n>KB`` (exact in each case). The text is deterministic.
    """
    lines = [f"# Clusters read from {Path(source).name} by queuesim ({source})."]
    if command:
        lines.append(f"# Made with: {command}")
    for layout in dict.fromkeys(g.layout for g in groups if g.layout):
        lines.append(f"# Format: {_LAYOUTS[layout]}.")
        lines.extend(f"#   {text}" for text in _HOW_READ[layout])
    total_nodes = sum(g.nodes for g in groups)
    total_cpus = sum(g.cpus for g in groups)
    sources = len({g.line for g in groups})
    lines.append(
        f"# {len(groups)} clusters from {sources} lines: {total_nodes} nodes, {total_cpus} CPUs."
    )
    lines.append("# A cluster section only: paste it into a site file (site-configs/README.md).")
    lines.append("clusters:")
    for group in groups:
        lines.append(f"  # {group.name}: line {group.line}")
        for note in group.notes:
            lines.append(f"  #   {note}")
        lines.append(f"  - name: {_scalar(group.name)}")
        lines.append(f"    nodes: {group.nodes}")
        lines.append(f"    cpus_per_node: {group.cpus_per_node}")
        if group.memory_per_node is not None:
            lines.append(f"    memory_per_node: {format_memory(group.memory_per_node)}")
        if group.properties:
            props = ", ".join(_scalar(p) for p in group.properties)
            lines.append(f"    properties: [{props}]")
        if group.gpus_per_node:
            lines.append(f"    gpus_per_node: {group.gpus_per_node}")
    return "\n".join(lines) + "\n"
