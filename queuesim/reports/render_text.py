"""A :class:`~.document.Report` for the terminal (rich) and as JSON.

In the terminal, names are shown as text (rich markup is never read from them), a figure
is named by its file unless the caller gives a drawing of its own for the section (the
heatmap as coloured blocks), and a table wider than the console has its text columns
wrapped at spaces when that is enough, else is shown as several, each repeating the first
column, so that no number is wrapped. The JSON holds the report's
structure - sections, tables with their units and sort keys, figures by file - for other
tools; images are not embedded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table as RichTable
from rich.text import Text as RichText

from queuesim.reports.document import (
    Block,
    Bullets,
    Code,
    Figure,
    Link,
    Note,
    Para,
    Report,
    Strong,
    Table,
    Text,
    plain,
)

__all__ = ["print_report", "print_table", "report_renderable", "rich_tables", "to_json"]

_BEST = Style(bold=True, color="green")
#: the narrowest a wrapped text column is made (in cells)
_FOLDED_MIN = 12


def _rich(text: Text) -> RichText:
    out = RichText()
    for part in text:
        if isinstance(part, Code):
            out.append(part.text, style="cyan")
        elif isinstance(part, Strong):
            out.append(part.text, style="bold")
        elif isinstance(part, Link):
            out.append(part.text, style="underline")
        else:
            out.append(part)
    return out


def _rich_table(
    block: Table, columns: Sequence[int], continued: bool = False, fold: bool = False
) -> RichTable:
    """``block``'s ``columns`` as one rich table; numbers and the first column never wrap,
    and the other text columns wrap at spaces only with ``fold``."""
    out = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    if block.caption and columns[-1] == len(block.header) - 1:
        out.caption = _rich(block.caption)
        out.caption_justify = "left"
    for j in columns:
        heading = block.heading(j) + (" (continued)" if continued and j == columns[0] else "")
        wraps = fold and j != columns[0] and _fold_saving(block, j) > 0
        out.add_column(
            heading,
            justify="right" if block.right[j] else "left",
            no_wrap=not wraps,
            overflow="fold",
        )
    for i, row in enumerate(block.rows):
        out.add_row(
            *(RichText(row[j], style=_BEST if (i, j) in block.bold else "") for j in columns)
        )
    return out


def _width(table: RichTable) -> int:
    return Console(width=100_000, color_system=None).measure(table).maximum


def _fold_saving(block: Table, j: int) -> int:
    """How many cells wrapping text column ``j`` at spaces can save: its widest cell down
    to its longest word (or :data:`_FOLDED_MIN`); none for a column of numbers."""
    if block.right[j]:
        return 0
    cells = [block.heading(j), *(row[j] for row in block.rows)]
    longest_word = max(cell_len(word) for cell in cells for word in cell.split(" "))
    return max(0, max(cell_len(cell) for cell in cells) - max(longest_word, _FOLDED_MIN))


def rich_tables(block: Table, width: int) -> list[RichTable]:
    """``block`` as one rich table if it fits ``width`` columns unwrapped, or with its text
    columns (other than the first) wrapped at spaces; else as several: the first column,
    then as many of the next ones as fit, each table after the first marked (continued).
    A number is never wrapped."""
    everything = list(range(len(block.header)))
    whole = _rich_table(block, everything)
    if len(everything) <= 2 or _width(whole) <= width:
        return [whole]
    if _width(whole) - sum(_fold_saving(block, j) for j in everything[1:]) <= width:
        return [_rich_table(block, everything, fold=True)]
    groups: list[list[int]] = [[]]
    for j in everything[1:]:
        trial = _rich_table(block, [0, *groups[-1], j], len(groups) > 1)
        if groups[-1] and _width(trial) > width:
            groups.append([])
        groups[-1].append(j)
    return [_rich_table(block, [0, *g], k > 0) for k, g in enumerate(groups)]


def _block_renderables(block: Block, width: int) -> list[RenderableType]:
    if isinstance(block, Para):
        return [_rich(block.text)]
    if isinstance(block, Note):
        text = _rich(block.text)
        text.stylize("dim")
        return [text]
    if isinstance(block, Table):
        return list(rich_tables(block, width))
    if isinstance(block, Figure):
        return [RichText(f"[figure: {block.caption} - {block.file}]", style="dim")]
    return [RichText("• ") + _rich(item) for item in block.items]


def print_table(console: Console, title: str, block: Table) -> None:
    """``block`` under a bold ``title``, laid out for the console's width as a report's
    tables are (text wrapped at spaces or the table split by columns, no number wrapped)."""
    console.print(RichText(title, style="bold"))
    for table in rich_tables(block, console.width):
        console.print(table)


def report_renderable(
    report: Report,
    width: int,
    *,
    drawings: Mapping[str, RenderableType] | None = None,
    skip: Collection[str] = (),
) -> RenderableType:
    """``report`` laid out for ``width`` columns, without the sections titled in ``skip``;
    ``drawings`` maps a section's title to what the terminal draws for its figures (shown
    in their place, or after the section's text when it has none)."""
    drawings = drawings or {}
    parts: list[RenderableType] = [RichText(report.title, style="bold")]
    for block in report.lead:
        parts += _block_renderables(block, width)
    for section in report.sections:
        if section.title in skip:
            continue
        parts += [RichText(""), RichText(section.title, style="bold underline")]
        drawing = drawings.get(section.title)
        for block in section.blocks:
            if isinstance(block, Figure) and drawing is not None:
                parts.append(drawing)
                drawing = None
            elif not (isinstance(block, Figure) and section.title in drawings):
                parts += _block_renderables(block, width)
        if drawing is not None:
            parts.append(drawing)
    return Group(*parts)


def print_report(
    console: Console,
    report: Report,
    *,
    drawings: Mapping[str, RenderableType] | None = None,
    skip: Collection[str] = (),
) -> None:
    """Print :func:`report_renderable` at the console's width."""
    console.print(report_renderable(report, console.width, drawings=drawings, skip=skip))


def _json_block(block: Block) -> dict[str, Any]:
    if isinstance(block, Para | Note):
        kind = "paragraph" if isinstance(block, Para) else "note"
        return {"kind": kind, "text": plain(block.text)}
    if isinstance(block, Table):
        return {
            "kind": "table",
            "columns": [{"name": h, "unit": block.unit(j)} for j, h in enumerate(block.header)],
            "rows": [list(r) for r in block.rows],
            "values": [
                [k if k is not None and math.isfinite(k) else None for k in row]
                for row in block.keys
            ],
            "emphasised": sorted([i, j] for i, j in block.bold),
            "caption": plain(block.caption),
        }
    if isinstance(block, Figure):
        return {"kind": "figure", "file": block.file, "caption": block.caption}
    assert isinstance(block, Bullets)
    return {"kind": "list", "items": [plain(i) for i in block.items]}


def to_json(report: Report) -> str:
    document = {
        "kind": "queuesim-report",
        "title": report.title,
        "facts": dict(report.facts),
        "lead": [_json_block(b) for b in report.lead],
        "sections": [
            {"title": s.title, "blocks": [_json_block(b) for b in s.blocks]}
            for s in report.sections
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
