"""What an importer of a batch system's configuration (``queuesim import slurm|pbs``) did
with every setting it read, so that nothing vanishes without a line.

Three lists:

* **mapped** - a setting turned into a site-file key (with a note where the mapping is an
  approximation or a choice);
* **not modelled** - a setting read and understood that the site model cannot express,
  with its value, so the admin can judge whether it matters;
* **not understood** - a line the importer could not read as a setting at all.

Every entry names the file and line(s) it comes from. The importers also share here the
reading of configuration files as numbered lines (:func:`config_lines`), which raises
:class:`ConfigError` naming the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from queuesim.common.errors import ConfigError, WorkloadError
from queuesim.common.files import decode_line, read_bytes

__all__ = [
    "ImportReport",
    "Mapped",
    "NotModelled",
    "NotUnderstood",
    "Where",
    "config_lines",
    "format_where",
]


@dataclass(frozen=True, order=True)
class Where:
    """A line of a configuration file (1-based)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def format_where(where: Sequence[Where], most: int = 4) -> str:
    """``a.conf:3,7`` for lines of one file, ``a.conf:3, b.conf:1`` for several; more than
    ``most`` lines end with ``(+N more)``."""
    if not where:
        return "(default)"
    shown: dict[str, list[int]] = {}
    for w in sorted(set(where))[:most]:
        shown.setdefault(w.file, []).append(w.line)
    text = ", ".join(f"{f}:{','.join(map(str, lines))}" for f, lines in shown.items())
    extra = len(set(where)) - most
    return text + (f" (+{extra} more)" if extra > 0 else "")


@dataclass(frozen=True)
class Mapped:
    key: str
    value: str
    where: tuple[Where, ...]
    to: str
    """The site-file key it became (``queues[gpu].max_walltime``)."""
    note: str = ""


@dataclass(frozen=True)
class NotModelled:
    key: str
    value: str
    where: tuple[Where, ...]
    reason: str
    setting: bool = True
    """False: the state or identity of something at the time of the dump (a node's
    state, its host name), reported but not a setting the site's ``not_modelled`` lists"""


@dataclass(frozen=True)
class NotUnderstood:
    where: Where
    text: str
    reason: str


def _where(where: Where | Iterable[Where]) -> tuple[Where, ...]:
    return (where,) if isinstance(where, Where) else tuple(where)


@dataclass
class ImportReport:
    """Everything an import did, setting by setting."""

    system: str
    """``slurm`` or ``pbs``."""
    files: list[str] = field(default_factory=list)
    mapped: list[Mapped] = field(default_factory=list)
    not_modelled: list[NotModelled] = field(default_factory=list)
    not_understood: list[NotUnderstood] = field(default_factory=list)

    def map(
        self, key: str, value: object, where: Where | Iterable[Where], to: str, note: str = ""
    ) -> None:
        self.mapped.append(Mapped(key, str(value), _where(where), to, note))

    def skip(
        self,
        key: str,
        value: object,
        where: Where | Iterable[Where],
        reason: str,
        setting: bool = True,
    ) -> None:
        """A setting read and understood that the site model does not express
        (``setting=False``: a state or identity at the time of the dump)."""
        self.not_modelled.append(NotModelled(key, str(value), _where(where), reason, setting))

    def unknown(self, where: Where, text: str, reason: str) -> None:
        self.not_understood.append(NotUnderstood(where, text, reason))

    @property
    def counts(self) -> dict[str, int]:
        return {
            "mapped": len(self.mapped),
            "not_modelled": len(self.not_modelled),
            "not_understood": len(self.not_understood),
        }

    def to_json(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""

        def where(ws: Sequence[Where]) -> list[str]:
            return [str(w) for w in ws]

        return {
            "system": self.system,
            "files": list(self.files),
            "counts": self.counts,
            "mapped": [
                {"key": m.key, "value": m.value, "where": where(m.where), "to": m.to}
                | ({"note": m.note} if m.note else {})
                for m in self.mapped
            ],
            "not_modelled": [
                {"key": n.key, "value": n.value, "where": where(n.where), "reason": n.reason}
                for n in self.not_modelled
            ],
            "not_understood": [
                {"where": str(u.where), "text": u.text, "reason": u.reason}
                for u in self.not_understood
            ],
        }

    def text_lines(self) -> list[str]:
        """The report as plain text lines (``--report``, and the site file's header)."""
        c = self.counts
        lines = [
            f"Import report ({self.system}): {c['mapped']} settings mapped, "
            f"{c['not_modelled']} read but not modelled, {c['not_understood']} lines not "
            "understood.",
            "Files: " + ", ".join(self.files),
            "",
            "MAPPED (setting = value [where] -> site key; note)",
        ]
        for m in self.mapped:
            note = f"; {m.note}" if m.note else ""
            lines.append(f"  {m.key} = {m.value} [{format_where(m.where)}] -> {m.to}{note}")
        lines += ["", "NOT MODELLED (setting = value [where]: why)"]
        for n in self.not_modelled:
            lines.append(f"  {n.key} = {n.value} [{format_where(n.where)}]: {n.reason}")
        lines += ["", "NOT UNDERSTOOD (where: line: why)"]
        for u in self.not_understood:
            lines.append(f"  {u.where}: {u.text!r}: {u.reason}")
        if not self.not_understood:
            lines.append("  (none)")
        return lines


def config_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """Every line of a configuration file as (1-based number, text without the line
    break); a missing or unreadable file is a :class:`ConfigError` naming it and ``what``
    it should have been."""
    try:
        data = read_bytes(Path(path), what)
    except WorkloadError as exc:
        raise ConfigError(str(exc)) from None
    return [(n, decode_line(raw)) for n, raw in enumerate(data.split(b"\n"), start=1)]
