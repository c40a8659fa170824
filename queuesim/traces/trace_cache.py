"""Parsed SWF traces kept in the user's cache directory: the next run of the same file
loads the parsed columns instead of parsing the text again (a what-if study runs one trace
dozens of times; HPC2N-2002's 202,871 jobs parse in about half a second).

An entry is keyed by the sha256 of the file's bytes as stored (compressed or not), whether
bad lines are skipped, and the sha256 of the source of the code that parses it (this
module, :mod:`.swf`, :mod:`.registry`, :mod:`queuesim.common.files`): a changed file or a
changed reader is another entry, never a stale one. An entry is one ``.npz`` file (numpy's
format, read without pickle): a column per job field, and the header and bad lines as
JSON. It is written atomically, so a reader never sees half an entry. The cache is an
optimisation only: no cache directory, a read-only one, a damaged or foreign entry - the
trace is then parsed as if there were no cache, and nothing is reported.

Where: ``$QUEUESIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/queuesim``, else
``~/.cache/queuesim`` (under ``traces/``); ``QUEUESIM_CACHE_DIR=off`` turns it off. Files
under :data:`CACHE_FROM_BYTES` are not cached: they parse in a few milliseconds. The folder
is kept under :data:`CACHE_MAX_BYTES`: each new entry removes the least recently used ones
beyond it (an entry is marked used each time it is loaded), so entries of traces or readers
that changed do not pile up.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from queuesim.common.atomic import atomic_path
from queuesim.traces.swf import BadLine, SwfHeader, SwfTrace

#: the smallest file (bytes as stored) whose parse is cached
CACHE_FROM_BYTES = 1 << 20
#: the most the entries may take together; the least recently used go first
CACHE_MAX_BYTES = 2 << 30
#: the entry layout; part of the key
_LAYOUT = b"queuesim parsed trace 1"
#: the modules whose source decides what a parse gives (their source is part of the key)
_READER_MODULES = (
    "queuesim.traces.trace_cache",
    "queuesim.traces.swf",
    "queuesim.traces.registry",
    "queuesim.common.files",
)


def cache_dir() -> Path | None:
    """The folder of cached traces, or None when the cache is turned off."""
    chosen = os.environ.get("QUEUESIM_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        root = Path(chosen)
    elif xdg := os.environ.get("XDG_CACHE_HOME"):
        root = Path(xdg) / "queuesim"
    else:
        try:
            root = Path.home() / ".cache" / "queuesim"
        except (RuntimeError, KeyError):  # no home folder: no cache
            return None
    return root / "traces"


@functools.cache
def reader_digest() -> str | None:
    """The sha256 of the reader's source, or None when it cannot be read (then nothing is
    cached: an entry could not be told stale)."""
    digest = hashlib.sha256(_LAYOUT)
    for name in _READER_MODULES:
        source = getattr(sys.modules.get(name), "__file__", None)
        try:
            digest.update(Path(source).read_bytes() if source else b"")
        except OSError:
            return None
        if not source:
            return None
    return digest.hexdigest()


def read_cached(path: Path, skip_bad_lines: bool, parse: Callable[[], SwfTrace]) -> SwfTrace:
    """The trace ``parse()`` gives for ``path``, from the cache when an entry for the same
    bytes and reader is there; otherwise parsed, and kept for the next time."""
    folder = cache_dir()
    reader = reader_digest()
    try:
        if folder is None or reader is None or path.stat().st_size < CACHE_FROM_BYTES:
            return parse()
        data = path.read_bytes()
    except OSError:
        return parse()
    key = hashlib.sha256(data)
    del data
    key.update(f"\0{reader}\0skip={skip_bad_lines}".encode())
    entry = folder / f"{key.hexdigest()}.npz"
    cached = _load(entry, path)
    if cached is not None:
        with contextlib.suppress(OSError):  # a read-only cache still serves
            os.utime(entry)
        return cached
    trace = parse()
    with contextlib.suppress(OSError, ValueError):  # read-only or full: parsed next time too
        _store(entry, trace)
        prune(folder, keep=entry)
    return trace


def prune(folder: Path, keep: Path, limit: int = CACHE_MAX_BYTES) -> None:
    """Remove the least recently used entries of ``folder`` until the rest (``keep``, the
    entry just written, always among them) take at most ``limit`` bytes."""
    entries = []
    for candidate in folder.glob("*.npz"):
        with contextlib.suppress(OSError):  # removed meanwhile by another run
            status = candidate.stat()
            entries.append((candidate != keep, -status.st_mtime, candidate.name, status.st_size))
    total = 0
    for _, _, name, size in sorted(entries):
        total += size
        if total > limit and name != keep.name:
            with contextlib.suppress(OSError):
                (folder / name).unlink()


def _store(entry: Path, trace: SwfTrace) -> None:
    jobs = trace.jobs
    header = trace.header
    meta = {
        "columns": [str(c) for c in jobs.columns],
        "header": {
            "fields": header.fields,
            "max_nodes": header.max_nodes,
            "max_procs": header.max_procs,
            "unix_start_time": header.unix_start_time,
            "time_zone_string": header.time_zone_string,
            "queues": sorted(header.queues.items()),
            "partitions": sorted(header.partitions.items()),
            "notes": list(header.notes),
            "lines": list(header.lines),
        },
        "bad_lines": [[b.line, b.text, b.reason] for b in trace.bad_lines],
    }
    arrays: dict[str, Any] = {f"c{i}": jobs[c].to_numpy() for i, c in enumerate(jobs.columns)}
    if any(a.dtype.kind not in "iuf" for a in arrays.values()):
        return  # only numeric columns are kept (SWF has no others)
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_path(entry) as tmp, tmp.open("wb") as out:
        np.savez(out, **arrays)


def _load(entry: Path, path: Path) -> SwfTrace | None:
    """The trace an entry holds (for a file now at ``path``), or None when there is no
    usable entry."""
    try:
        with np.load(entry, allow_pickle=False) as stored:
            meta = json.loads(str(stored["meta"]))
            columns = {name: stored[f"c{i}"] for i, name in enumerate(meta["columns"])}
        h = meta["header"]
        header = SwfHeader(
            fields=dict(h["fields"]),
            max_nodes=h["max_nodes"],
            max_procs=h["max_procs"],
            unix_start_time=h["unix_start_time"],
            time_zone_string=h["time_zone_string"],
            queues={int(k): str(v) for k, v in h["queues"]},
            partitions={int(k): str(v) for k, v in h["partitions"]},
            notes=tuple(h["notes"]),
            lines=tuple(h["lines"]),
        )
        bad = tuple(BadLine(int(n), str(t), str(r)) for n, t, r in meta["bad_lines"])
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None  # none, or damaged: parse again (and replace it)
    return SwfTrace(path=path, header=header, jobs=pd.DataFrame(columns), bad_lines=bad)
