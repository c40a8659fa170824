"""Reading site files: YAML, every validation problem of a file at once with its key path
(``queues[1].max_walltime: ...``), clusters files, and site files found by bundled name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    ValidationError,
)

from queuesim.common import bundled
from queuesim.common.errors import ConfigError
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
    """Parse a site file's YAML, with a clear error for a missing or unreadable file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such site file{_bundled_hint(path)}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the site file ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML at {where}: {problem}") from None


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


def site_document(path: str | Path, clusters: str | Path | None = None) -> object:
    """A site file's document as :func:`load_site` validates it: the YAML with
    ``clusters_from`` (or ``clusters``, a clusters file) resolved into ``clusters``. A sweep
    changes keys of it and validates each changed copy with :func:`site_errors`."""
    path = bundled.site_file(path)
    data = read_site_document(path)
    if isinstance(data, dict) and "clusters_from" in data:
        source = data.pop("clusters_from")
        if "clusters" in data:
            raise ConfigError(f"{path}: clusters_from: give either clusters or clusters_from")
        if not isinstance(source, str):
            raise ConfigError(f"{path}: clusters_from: expected a file path, got {source!r}")
        data["clusters"] = read_clusters(Path(path).parent / source, f"{path}: clusters_from")
    if clusters is not None and isinstance(data, dict):
        data["clusters"] = read_clusters(clusters, "--clusters")
    return data


def load_site(path: str | Path, clusters: str | Path | None = None) -> Site:
    """Load and validate a site file; raise :class:`ConfigError` listing every problem.

    A site file may take its clusters from another file with ``clusters_from: PATH``
    (relative to the site file); ``clusters`` (a clusters file) replaces them, to run one
    setup on another machine. ``path`` may also name a bundled site file
    (``metacentrum-historic``; see :mod:`queuesim.common.bundled`), as may ``clusters``."""
    path = bundled.site_file(path)
    data = site_document(path, clusters)
    problems = site_errors(data)
    if problems:
        listing = "\n".join(f"  {path}: {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        raise ConfigError(f"{path}: {len(problems)} {noun} in the site file:\n{listing}")
    return Site.model_validate(data)
