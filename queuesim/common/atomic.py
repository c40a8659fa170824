"""Atomic file output: write to a temporary file beside the target, then rename; and the
checks that an output place can be written at all, made before any work is done.

A crash or an exception mid-write never leaves a half-written report: the target either
keeps its old content or gets the complete new one. A process killed outright (``kill -9``)
cannot remove its temporary file; such leftovers are named ``.<target>.<random>.tmp`` and
:func:`remove_stale_temporaries` clears them on the next write into that folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from queuesim.common.errors import OutputError

#: the suffix of every temporary file or folder queuesim writes beside a target
TEMPORARY_SUFFIX = ".tmp"


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``target`` atomically."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(target: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` newlines) to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")


def stale_temporaries(folder: Path, stem: str = "") -> list[Path]:
    """The temporaries a killed writer left in ``folder`` (``.<stem>*.tmp``, files or
    folders), sorted; none when ``folder`` is not a readable directory."""
    try:
        entries = sorted(folder.glob(f".{stem}*{TEMPORARY_SUFFIX}"))
    except OSError:
        return []
    return [p for p in entries if p.name.count(".") >= 3]


def remove_stale_temporaries(folder: Path, stem: str = "") -> list[Path]:
    """Remove what :func:`stale_temporaries` finds; returns what was removed. Two writers
    into one folder at the same time are not supported (each would clear the other's)."""
    removed = stale_temporaries(folder, stem)
    for path in removed:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return removed


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (``.`` for a relative path)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _probe(folder: Path, option: str, target: Path) -> None:
    """Create and remove a temporary folder in ``folder``: the only sure test that it can
    be written (permissions, read-only mounts, ``/proc``; root ignores mode bits)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".queuesim-probe.", dir=folder))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(
            f"{option} {target}: cannot write in {folder} ({reason}); choose a folder you "
            "can write to"
        ) from None


def _check_folder(folder: Path, option: str, target: Path) -> None:
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        if existing == target:
            raise OutputError(f"{option} {target}: exists and is not a directory")
        raise OutputError(f"{option} {target}: {existing} is a file, not a directory")
    _probe(existing, option, target)


def check_writable_dir(folder: str | Path, option: str = "--out") -> None:
    """Refuse an output folder that cannot be written - a file, a path through a file, a
    read-only or virtual folder - before any work is done, naming what is wrong. A missing
    folder is fine when its nearest existing ancestor can be written (it is created when
    the files are written)."""
    _check_folder(Path(folder), option, Path(folder))


def check_writable_file(path: str | Path, option: str = "--out") -> None:
    """Refuse an output file that cannot be written: a folder, a path through a file, a
    place that cannot be written (checked before any work is done)."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a directory; give a file name inside it")
    _check_folder(path.parent, option, path)
