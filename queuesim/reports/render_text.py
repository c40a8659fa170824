"""A :class:`~.document.Report` for the terminal (rich) and as JSON.

In the terminal, names are shown as text (rich markup is never read from them) and a
figure is named by its file. The JSON holds the report's structure - sections, tables with
their units and sort keys, figures by file - for other tools; images are not embedded.
"""

from __future__ import annotations

import json
import math
from typing import Any

from rich import box
from rich.console import Console
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

__all__ = ["print_report", "to_json"]

_BEST = Style(bold=True, color="green")


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


def _rich_table(block: Table) -> RichTable:
    out = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    if block.caption:
        out.caption = _rich(block.caption)
        out.caption_justify = "left"
    for j in range(len(block.header)):
        out.add_column(block.heading(j), justify="right" if block.right[j] else "left")
    for i, row in enumerate(block.rows):
        out.add_row(
            *(RichText(c, style=_BEST if (i, j) in block.bold else "") for j, c in enumerate(row))
        )
    return out


def _print_block(console: Console, block: Block) -> None:
    if isinstance(block, Para):
        console.print(_rich(block.text))
    elif isinstance(block, Note):
        console.print(_rich(block.text), style="dim")
    elif isinstance(block, Table):
        console.print(_rich_table(block))
    elif isinstance(block, Figure):
        console.print(RichText(f"[figure: {block.caption} - {block.file}]", style="dim"))
    else:
        for item in block.items:
            console.print(RichText("• ") + _rich(item))


def print_report(console: Console, report: Report) -> None:
    console.print(RichText(report.title, style="bold"))
    for block in report.lead:
        _print_block(console, block)
    for section in report.sections:
        console.print()
        console.print(RichText(section.title, style="bold underline"))
        for block in section.blocks:
            _print_block(console, block)


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
