"""The one report model: a title, sections of paragraphs, tables with units, figures,
bullets and notes. Every report (a run, a comparison) is built as a :class:`Report` and
rendered by :mod:`.render_markdown`, :mod:`.render_html` and :mod:`.render_text` (terminal
and JSON); no report writes Markdown or HTML itself.

Text is *inline*: a sequence of plain strings and :class:`Code`, :class:`Strong` and
:class:`Link` spans. A plain string is always text - every renderer escapes it - so a queue
or user named ``<script>`` or ``**x**`` shows as written. Markup exists only as spans, and
:func:`markup` turns the report's own wording (```code``` and ``**bold**``, never a value
read from a file) into spans.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Link:
    text: str
    href: str  #: a file relative to the report, or ``#anchor``


Inline = str | Code | Strong | Link
Text = tuple[Inline, ...]


def markup(source: str) -> Text:
    """The report's own wording as spans: ```x``` is code, ``**x**`` bold, the rest text.
    Never pass a value read from a file here: wrap it in a span or pass it as a string."""
    parts: list[Inline] = []
    for piece in re.split(r"(`[^`]+`|\*\*[^*]+\*\*)", source):
        if not piece:
            continue
        if piece.startswith("`"):
            parts.append(Code(piece[1:-1]))
        elif piece.startswith("**"):
            parts.append(Strong(piece[2:-2]))
        else:
            parts.append(piece)
    return tuple(parts)


def as_text(value: str | Inline | Sequence[Inline]) -> Text:
    """A paragraph's content as spans: a plain ``str`` is the report's own wording (see
    :func:`markup`); a span or a sequence of spans is taken as is."""
    if isinstance(value, str):
        return markup(value)
    if isinstance(value, Code | Strong | Link):
        return (value,)
    return tuple(value)


def plain(text: Text) -> str:
    """The words of ``text`` without markup (for titles, alt text, JSON)."""
    return "".join(p if isinstance(p, str) else p.text for p in text)


@dataclass(frozen=True)
class Verbatim:
    """A plain string inside :meth:`Para.of`: text, never markup (a name read from a file)."""

    text: str


@dataclass(frozen=True)
class Para:
    text: Text

    @classmethod
    def of(cls, *parts: str | Verbatim | Inline) -> Para:
        """Wording and values in order: each ``str`` is the report's wording (markup
        allowed); a value read from a file goes in as :class:`Verbatim` or a span."""
        return cls(text_of(*parts))


def text_of(*parts: str | Verbatim | Inline) -> Text:
    """Spans from wording (``str``, markup allowed), values (:class:`Verbatim`) and spans."""
    out: list[Inline] = []
    for part in parts:
        if isinstance(part, str):
            out += markup(part)
        elif isinstance(part, Verbatim):
            out.append(part.text)
        else:
            out.append(part)
    return tuple(out)


@dataclass(frozen=True)
class Note:
    """A remark set apart from the text (a caveat, where the numbers come from)."""

    text: Text


@dataclass(frozen=True)
class Table:
    """A table of cells already formatted for reading. ``units`` gives each column's unit
    (``""``: none, or each cell carries its own, as ``2h 9m``); ``keys`` optionally gives
    each cell the number it sorts by (``None``: sort by its text)."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[bool]  #: right-align this column (numbers)
    bold: frozenset[tuple[int, int]] = frozenset()  #: (row, column) cells to emphasise
    units: Sequence[str] = ()
    keys: Sequence[Sequence[float | None]] = ()
    caption: Text = ()

    def unit(self, column: int) -> str:
        return self.units[column] if column < len(self.units) else ""

    def heading(self, column: int) -> str:
        """A column's header with its unit, as ``mean wait (h)``."""
        unit = self.unit(column)
        return f"{self.header[column]} ({unit})" if unit else self.header[column]


@dataclass(frozen=True)
class Figure:
    """An image, as PNG (embedded in HTML) and optionally SVG; ``file`` is where the PNG
    lies beside the Markdown report."""

    file: str
    caption: str
    png: bytes = field(repr=False)
    svg: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Bullets:
    items: Sequence[Text]


Block = Para | Note | Table | Figure | Bullets


@dataclass(frozen=True)
class Section:
    title: str
    blocks: Sequence[Block]

    @property
    def anchor(self) -> str:
        """The section's id in HTML (``#performance-and-fairness``)."""
        return anchor_of(self.title)


@dataclass(frozen=True)
class Report:
    """A whole report: title, a lead (paragraphs before the first section), sections, and
    ``facts``: what produced it (version, command, site, policy, trace) for JSON readers."""

    title: str
    lead: Sequence[Block]
    sections: Sequence[Section]
    facts: Mapping[str, object] = field(default_factory=dict)


def anchor_of(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug or "section"
