"""The values of PBS accounting records: sizes, durations, the chunks of a ``select`` or
Torque ``nodes`` spec, and ``exec_host`` (see :mod:`queuesim.traces.pbs` for how each
field of a record is read)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Chunks", "exec_host", "parse_chunks", "parse_duration", "parse_size"]


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


def exec_host(text: str) -> tuple[int, str]:
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
