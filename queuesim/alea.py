"""Read the MetaCentrum / CERIT-SC material shipped with the Alea simulator.

Three kinds of file, none of them a standard Parallel Workloads Archive file:

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

import gzip
import json
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import yaml

from queuesim.errors import WorkloadError
from queuesim.swf import (
    INT_FIELDS,
    SWF_FIELDS,
    BadLine,
    SwfHeader,
    SwfTrace,
    parse_numeric_lines,
    read_bytes,
    read_swf,
)

__all__ = [
    "ALEA_EXTRA_COLUMNS",
    "MachineGroup",
    "Nodespec",
    "clusters_yaml",
    "machine_format",
    "parse_nodespec",
    "read_alea_swf",
    "read_machine_file",
    "read_machines",
    "read_mwf",
    "read_trace",
]

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_KIB = 1024
_UNITS = (("GB", _KIB**3), ("MB", _KIB**2), ("KB", _KIB))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")


# =========================================================================== machines


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
        "properties = [gpu] when column 8 (gpus_per_node) is above 0;",
        "columns 5 (cpu_rating), 7 (speed) and 8 (GPUs) are noted per cluster.",
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
        text = _decode(raw).strip()
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
        groups.append(
            MachineGroup(
                name=name,
                nodes=nodes,
                cpus_per_node=cpus,
                memory_per_node=memory,
                properties=properties,
                line=number,
                layout=layout,
                notes=tuple(notes),
            )
        )
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
            groups.append(
                MachineGroup(
                    name=group_name,
                    nodes=n,
                    cpus_per_node=cpus,
                    memory_per_node=memory,
                    properties=properties,
                    line=number,
                    layout="mwf",
                    notes=tuple(group_notes),
                )
            )
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
    return "\n".join(lines) + "\n"


# =========================================================================== nodespec


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
        properties=":".join(_unique(properties)),
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

_N_ALEA = 21
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
_INT_LIMIT = 2.0**63
_INT_COLUMNS = [i for i, name in enumerate(SWF_FIELDS) if name in INT_FIELDS]
_HEADER_FIELD = re.compile(r"^\s*;\s*([A-Z][A-Za-z0-9_]*)\s*:(.*)$")
# Submit times at least this large are Unix epoch times (1973-03-03), not relative ones.
_EPOCH_THRESHOLD = 1e8
_FIELD = {name: index for index, name in enumerate(SWF_FIELDS)}


def _alea_reason(line: bytes) -> str:
    """Say what is wrong with an extended-SWF line (one that failed the line pattern)."""
    tokens = line.split()
    if len(tokens) != _N_ALEA:
        return (
            f"expected {_N_ALEA} whitespace-separated fields (18 SWF numbers, {{node ids}}, "
            f"queue name, nodespec), found {len(tokens)}"
        )
    for position, (name, token) in enumerate(zip(SWF_FIELDS, tokens, strict=False), start=1):
        if not _NUMBER.fullmatch(token):
            return f"field {position} ({name}) is not a number: {_decode(token)!r}"
    return (
        "field 19 (per-CPU node ids) must be a list in braces like {12,12}, found "
        f"{_decode(tokens[18])!r}"
    )


def _value_reason(values: npt.NDArray[np.float64]) -> str | None:
    """Why a row of 18 parsed numbers is not acceptable, or None."""
    for index, name in enumerate(SWF_FIELDS):
        value = float(values[index])
        where = f"field {index + 1} ({name})"
        if not math.isfinite(value):
            return f"{where} is out of range: {value!r}"
        if name in INT_FIELDS:
            if value != math.trunc(value):
                return f"{where} must be a whole number, found {value:g}"
            if abs(value) >= _INT_LIMIT:
                return f"{where} is out of range for an integer: {value:g}"
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
    data = read_bytes(path, "workload file")
    comments: list[str] = []
    numbers: list[int] = []
    raws: list[bytes] = []
    prefixes: list[bytes] = []
    tails: list[tuple[str, str]] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped[:1] == b";":
            comments.append(_decode(raw))
            continue
        match = _ALEA_LINE.fullmatch(raw)
        if match is None:
            bad.append(BadLine(number, _decode(raw), _alea_reason(raw)))
            continue
        numbers.append(number)
        raws.append(raw)
        prefixes.append(raw[: match.end(len(SWF_FIELDS))])
        tails.append((_decode(match.group(20)), _decode(match.group(21))))

    values = parse_numeric_lines(prefixes)
    if values is None:  # cannot happen: every prefix matched 18 numeric tokens
        raise RuntimeError(f"{path}: validated SWF fields failed to parse")
    ints = values[:, _INT_COLUMNS]
    ok = np.isfinite(values).all(axis=1)
    ok &= ((ints == np.trunc(ints)) & (np.abs(ints) < _INT_LIMIT)).all(axis=1)
    keep = np.ones(len(numbers), dtype=bool)
    specs: dict[str, Nodespec | str] = {}
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
            bad.append(BadLine(numbers[row], _decode(raws[row]), reason))
    if bad:
        bad.sort(key=lambda b: b.line)
        if not skip_bad_lines:
            raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")

    values = values[keep]
    kept_numbers = np.asarray(numbers, dtype=np.int64)[keep]
    kept_tails = [t for t, k in zip(tails, keep, strict=True) if k]
    header, values = _standardise(values, comments, path)
    frame = _frame(values, kept_numbers)
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
        known, req_bytes / _KIB / np.where(known, procs, 1.0), -1.0
    )

    fields: dict[str, str] = {}
    notes: list[str] = []
    for line in comments:
        match = _HEADER_FIELD.match(line)
        if match is None:
            free = line.strip()[1:].strip()
            if free:
                notes.append(free)
        else:
            fields.setdefault(match.group(1), match.group(2).strip())
            if match.group(1) == "Note":
                notes.append(match.group(2).strip())
    lines = list(comments)
    start = _leading_int(fields.get("UnixStartTime"))
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
        fields["UnixStartTime"] = str(start)
        notes.append(note)
        lines += [f"; UnixStartTime: {start}", f"; Note: {note}"]
    header = SwfHeader(
        fields=fields,
        max_nodes=_positive(_leading_int(fields.get("MaxNodes"))),
        max_procs=_positive(_leading_int(fields.get("MaxProcs"))),
        unix_start_time=start,
        time_zone_string=fields.get("TimeZoneString") or None,
        queues={},
        partitions={},
        notes=tuple(notes),
        lines=tuple(lines),
    )
    return header, values


def _leading_int(value: str | None) -> int | None:
    if value is None:
        return None
    match = re.match(r"\s*([+-]?\d+)(?![\d.])", value)
    return int(match.group(1)) if match else None


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


def _frame(values: npt.NDArray[np.float64], numbers: npt.NDArray[np.int64]) -> pd.DataFrame:
    columns: dict[str, npt.NDArray[np.int64] | npt.NDArray[np.float64]] = {}
    for index, name in enumerate(SWF_FIELDS):
        column = values[:, index]
        columns[name] = column.astype(np.int64) if name in INT_FIELDS else column.copy()
    columns["line"] = numbers.astype(np.int64)
    return pd.DataFrame(columns)


# =========================================================================== either trace


def _first_job_line(path: Path, *, skip_bad_lines: bool) -> tuple[int, int] | None:
    """(line number, field count) of the job line that decides the format: the first one,
    or with ``skip_bad_lines`` the first with 18 or 21 fields; None when there is none.

    Reads only as far as needed (the file is read again, whole, by the chosen reader).
    """
    fallback: tuple[int, int] | None = None
    try:
        with path.open("rb") as raw_stream:
            compressed = path.suffix.lower() == ".gz" or raw_stream.read(2) == _GZIP_MAGIC
            raw_stream.seek(0)
            stream: Iterable[bytes] = (
                gzip.GzipFile(fileobj=raw_stream) if compressed else raw_stream
            )
            for number, raw in enumerate(stream, start=1):
                stripped = raw.strip()
                if number == 1 and stripped.startswith(_UTF8_BOM):
                    stripped = stripped[len(_UTF8_BOM) :].strip()
                if not stripped or stripped[:1] == b";":
                    continue
                count = len(stripped.split())
                if not skip_bad_lines or count in (len(SWF_FIELDS), _N_ALEA):
                    return number, count
                fallback = fallback or (number, count)
    except (OSError, EOFError, zlib.error):
        read_bytes(path, "workload file")  # raises the reader's one-line error
        raise
    return fallback


def read_trace(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a standard SWF or an Alea extended SWF, told apart by the first job line.

    18 fields: :func:`queuesim.swf.read_swf`; 21 fields: :func:`read_alea_swf`. With
    ``skip_bad_lines`` the first line with 18 or 21 fields decides (the others are reported
    by the reader); without, any other count on the first job line is a
    :class:`WorkloadError`. A file without job lines is read as SWF.
    """
    path = Path(path)
    first = _first_job_line(path, skip_bad_lines=skip_bad_lines)
    if first is not None:
        number, count = first
        if count == _N_ALEA:
            return read_alea_swf(path, skip_bad_lines=skip_bad_lines)
        if count != len(SWF_FIELDS) and not skip_bad_lines:
            raise WorkloadError(
                f"{path}:{number}: cannot tell the trace format: expected {len(SWF_FIELDS)} "
                f"whitespace-separated fields (SWF) or {_N_ALEA} (Alea extended SWF), "
                f"found {count}"
            )
    return read_swf(path, skip_bad_lines=skip_bad_lines)
