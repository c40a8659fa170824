"""The site files and sample workloads shipped with queuesim, found by name.

The repository's ``site-configs/`` and ``workloads/`` are the package's ``bundled/``
folder (links in a checkout, copies in an installed wheel: see ``pyproject.toml``), so
``queuesim run kth-sp2 kth-sp2-sample.swf`` works from any directory, in a checkout and
after ``pip install``. A path that exists always wins. Otherwise a bare name (no folder
part) is looked up among the bundled files, and so is a relative path written from the
repository's root (``site-configs/kth-sp2.yaml``, ``workloads/kth-sp2-sample.swf``), so
the README's commands work from any directory; any other path is left as given, for the
caller's "no such file" error.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

SITE_SUFFIXES = (".yaml", ".yml")


def _folder(name: str) -> Path:
    """The bundled folder ``name`` as a file-system path."""
    with as_file(files("queuesim") / "bundled" / name) as folder:
        return Path(folder)


def site_configs_folder() -> Path:
    """The bundled site files (``site-configs/`` of the repository)."""
    return _folder("site-configs")


def workloads_folder() -> Path:
    """The bundled sample workloads (``workloads/`` of the repository)."""
    return _folder("workloads")


def _lookup(given: str | Path, folder: Path, suffixes: tuple[str, ...], root: str) -> Path:
    """``given`` if it exists; else, for a bare name, the file of that name (with one of
    ``suffixes`` appended if it has none) in the bundled ``folder``, and for a path
    ``root/...`` (the folder's place in the repository) that file below the bundled one;
    else ``given``, so that the caller's own "no such file" error names what the user
    wrote."""
    path = Path(given)
    if path.exists():
        return path
    if path.parent == Path("."):
        for candidate in (path.name, *(path.name + s for s in suffixes)):
            if (folder / candidate).is_file():
                return folder / candidate
    elif not path.is_absolute() and path.parts[0] == root:
        inside = folder.joinpath(*path.parts[1:])
        if inside.is_file():
            return inside
    return path


def site_file(given: str | Path) -> Path:
    """A site file by path, or by the name of a bundled one (``metacentrum-historic``)."""
    return _lookup(given, site_configs_folder(), SITE_SUFFIXES, "site-configs")


def clusters_file(given: str | Path) -> Path:
    """A clusters file by path, or by the name of a bundled one (``cerit-wagap-clusters``)."""
    if Path(given).parent == Path("."):
        return _lookup(given, site_configs_folder() / "clusters", SITE_SUFFIXES, "site-configs")
    return _lookup(given, site_configs_folder(), SITE_SUFFIXES, "site-configs")


def workload_file(given: str | Path) -> Path:
    """A workload by path, or by the name of a bundled one (``kth-sp2-sample.swf``)."""
    return _lookup(given, workloads_folder(), (".swf", ".swf.gz"), "workloads")


def bundled_names(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The names of the files in a bundled ``folder`` ending in one of ``suffixes``, sorted."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.endswith(suffixes))
