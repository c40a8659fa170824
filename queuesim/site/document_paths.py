"""Paths into a site document, as a sweep's axes name the keys they change.

``queues[q_long].cpu_pool``: keys separated by dots, ``[N]`` a list item by position,
``[NAME]`` a list item by its ``name`` key. :func:`set_path` changes the parsed YAML of a
site file (before validation), so that the changed document is validated by the site
model itself and a problem names the key as in a site file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: the path that scales a trace's submit times instead of naming a site key
LOAD_FACTOR = "load_factor"

# --- paths into the site document -------------------------------------------------------------

_STEP = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def parse_path(path: str) -> list[str | int | tuple[str]]:
    """``queues[q_long].cpu_pool`` -> ``['queues', ('q_long',), 'cpu_pool']``; ``[2]`` -> 2.

    A name in brackets is kept as a 1-tuple: the list item whose ``name`` it is."""
    if path == LOAD_FACTOR:
        return [LOAD_FACTOR]
    steps: list[str | int | tuple[str]] = []
    pos = 0
    for match in _STEP.finditer(path):
        gap = path[pos : match.start()]
        if gap not in ("", "."):
            raise ValueError(f"path {path!r}: cannot read {gap!r}")
        key, bracket = match.groups()
        if key is not None:
            steps.append(key)
        elif bracket.isdigit():
            steps.append(int(bracket))
        else:
            steps.append((bracket,))
        pos = match.end()
    if pos != len(path) or not steps or not isinstance(steps[0], str):
        raise ValueError(f"path {path!r}: expected keys like fairshare.half_life or queues[q].x")
    return steps


def set_path(document: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at ``path`` in ``document`` (changed in place), creating missing
    mappings on the way; a list item that is not there is an error naming the path."""
    steps = parse_path(path)
    node: Any = document
    for k, step in enumerate(steps):
        last = k == len(steps) - 1
        if isinstance(step, str):
            if not isinstance(node, dict):
                raise ValueError(f"{path}: {_walked(steps, k)} is not a mapping")
            if last:
                node[step] = value
            else:
                node = node.setdefault(step, {} if isinstance(steps[k + 1], str) else [])
            continue
        if not isinstance(node, list):
            raise ValueError(f"{path}: {_walked(steps, k)} is not a list")
        if isinstance(step, int):
            if step >= len(node):
                raise ValueError(f"{path}: {_walked(steps, k)} has {len(node)} items")
            index = step
        else:
            names = [item.get("name") for item in node if isinstance(item, dict)]
            if step[0] not in names:
                raise ValueError(
                    f"{path}: no item named {step[0]!r} in {_walked(steps, k)} "
                    f"(there: {', '.join(map(str, names))})"
                )
            index = names.index(step[0])
        if last:
            node[index] = value
        else:
            node = node[index]


def _walked(steps: Sequence[str | int | tuple[str]], upto: int) -> str:
    out = ""
    for step in steps[:upto]:
        if isinstance(step, str):
            out += f".{step}" if out else step
        else:
            out += f"[{step if isinstance(step, int) else step[0]}]"
    return out or "(top level)"
