"""Reading site files: YAML, every validation problem of a file at once with its key path
(``queues[1].max_walltime: ...``), clusters files, and site files found by bundled name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from queuesim.common import bundled
from queuesim.common.errors import ConfigError
from queuesim.common.yaml_files import read_yaml_document, refuse_problems
from queuesim.site.checks import cross_reference_problems
from queuesim.site.model import Site

_UNION_TAGS = frozenset({"int", "str", "float", "bool"})


def format_location(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith("function-") or part in _UNION_TAGS:
            continue  # pydantic's validator and union-branch tags are not keys
        else:
            path += f".{part}" if path else part
    return path or "(top level)"


def _describe(error: Any) -> str:
    kind = error["type"]
    msg = str(error["msg"])
    msg = msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown key (check the spelling; see the documented keys in site-configs/)"
    if kind == "missing":
        return "required key is missing"
    given = error.get("input")
    if kind not in ("value_error", "assertion_error") and not isinstance(given, dict | list):
        return f"{msg} (got {given!r})"
    return msg


def site_errors(data: object) -> list[str]:
    """Every validation problem of a parsed site document, as ``key.path: message`` lines."""
    if data is None:
        return ["(top level): the file is empty; a site needs at least 'name' and 'clusters'"]
    if not isinstance(data, dict):
        return [f"(top level): expected a mapping of keys, got {type(data).__name__}"]
    try:
        Site.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        failed_parents = {tuple(e["loc"][:1]) for e in errors if len(e["loc"]) > 1}
        lines: list[str] = []
        for error in errors:
            loc = tuple(error["loc"])
            if error["type"] == "too_short" and loc in failed_parents:
                continue  # the list's items failed; their own errors say why
            where = format_location(loc)
            text = _describe(error)
            # cross-reference problems already carry their own key paths
            if where == "(top level)" and ": " in text:
                lines.extend(part for part in text.split("; "))
            else:
                lines.append(f"{where}: {text}")
        lines.extend(cross_reference_problems(data))
        return list(dict.fromkeys(lines))  # a union's branches may repeat one problem
    return []


def read_site_document(path: str | Path) -> object:
    """Parse a site file's YAML (:func:`~queuesim.common.yaml_files.read_yaml`: UTF-8,
    the safe subset, no key twice), with a clear error for a missing or unreadable file."""
    document, repeated = _read_document(Path(path))
    refuse_problems(Path(path), repeated, "repeated key")
    return document


def _read_document(path: Path) -> tuple[object, list[str]]:
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{path}: no such site file{_bundled_hint(path)}")
    return read_yaml_document(path, "site file")


def _bundled_hint(path: Path) -> str:
    """For a missing bare name, the bundled site files it could have named."""
    if path.parent != Path("."):
        return ""
    names = bundled.bundled_names(bundled.site_configs_folder(), bundled.SITE_SUFFIXES)
    return f" (nor a bundled one: {', '.join(n.rsplit('.', 1)[0] for n in names)})"


def read_clusters(path: str | Path, where: str) -> object:
    """The ``clusters`` list of a clusters file (a YAML file with a ``clusters`` key, as
    ``queuesim import-machines`` writes), for ``clusters_from`` or ``--clusters``."""
    path = bundled.clusters_file(path)
    doc = read_site_document(path)
    if not isinstance(doc, dict) or "clusters" not in doc:
        raise ConfigError(f"{where}: {path} has no 'clusters' key (expected a clusters file)")
    return doc["clusters"]


def site_problems(
    path: str | Path, clusters: str | Path | None = None
) -> tuple[Path, object, list[str]]:
    """Every problem of a site file at once, each a line with its line or key path: keys
    written twice, ``clusters_from``, the fields and the keys checked against each other.
    Returns the file found (:func:`~queuesim.common.bundled.site_file`), the document as
    parsed (``clusters_from`` and ``clusters`` resolved) and the problems. Only a file
    that cannot be read or parsed at all raises (ConfigError).

    A site file may take its clusters from another file with ``clusters_from: PATH``
    (relative to the site file); ``clusters`` (a clusters file) replaces them, to run one
    setup on another machine."""
    path = bundled.site_file(path)
    data, problems = _read_document(path)
    sourced = len(problems)
    if isinstance(data, dict) and "clusters_from" in data:
        source = data.pop("clusters_from")
        if "clusters" in data:
            problems.append("clusters_from: give either clusters or clusters_from")
        elif not isinstance(source, str):
            problems.append(f"clusters_from: expected a file path, got {source!r}")
        else:
            try:
                data["clusters"] = read_clusters(Path(path).parent / source, "clusters_from")
            except ConfigError as exc:
                problems.append(f"clusters_from: {exc}")
    if clusters is not None and isinstance(data, dict):
        data["clusters"] = read_clusters(clusters, "--clusters")
    no_clusters = len(problems) > sourced  # clusters_from failed: say so once, not twice
    problems += [p for p in site_errors(data) if not (no_clusters and p.startswith("clusters"))]
    return path, data, problems


def site_document(path: str | Path, clusters: str | Path | None = None) -> object:
    """A site file's document as :func:`load_site` validates it (``clusters_from`` and
    ``clusters`` resolved), refused with every problem unless it is a valid site: a sweep
    changes keys of a valid site and validates each changed copy with :func:`site_errors`."""
    path, data, problems = site_problems(path, clusters)
    refuse_problems(path, problems, "problem", " in the site file")
    return data


def load_site(path: str | Path, clusters: str | Path | None = None) -> Site:
    """Load and validate a site file; raise :class:`ConfigError` listing every problem
    (:func:`site_problems`). ``path`` may also name a bundled site file
    (``metacentrum-historic``; see :mod:`queuesim.common.bundled`), as may ``clusters``."""
    path, data, problems = site_problems(path, clusters)
    refuse_problems(path, problems, "problem", " in the site file")
    return Site.model_validate(data)
