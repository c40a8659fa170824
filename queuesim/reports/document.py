"""A tiny document model - headings, paragraphs, tables, images, bullets - rendered as
Markdown and as one self-contained HTML page."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: The ``kind`` of ``comparison.json``: marks a folder queuesim may replace as a whole.


# --- a tiny document model, rendered as markdown and as HTML ---------------------------------


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Para:
    text: str  #: plain text; `backticks` mark code


@dataclass(frozen=True)
class DocTable:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[bool]  #: right-align this column (numbers)
    bold: frozenset[tuple[int, int]] = frozenset()  #: (row, column) cells to emphasise


@dataclass(frozen=True)
class Image:
    file: str
    alt: str
    png: bytes = field(repr=False)


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]


Block = Heading | Para | DocTable | Image | Bullets


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(blocks: Iterable[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append("#" * block.level + " " + block.text)
        elif isinstance(block, Para):
            out.append(block.text)
        elif isinstance(block, DocTable):
            lines = [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "|".join("---:" if r else "---" for r in block.right) + "|",
            ]
            for i, row in enumerate(block.rows):
                cells = [
                    f"**{_md_cell(c)}**" if (i, j) in block.bold and c else _md_cell(c)
                    for j, c in enumerate(row)
                ]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
        elif isinstance(block, Image):
            out.append(f"![{block.alt}]({block.file})")
        else:
            out.append("\n".join(f"- {item}" for item in block.items))
    return "\n\n".join(out) + "\n"


def _inline_html(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


_CSS = """\
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 72rem;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; }
th { border-bottom: 2px solid #888; vertical-align: bottom; }
td.n, th.n { text-align: right; }
td strong { color: #17692e; }
code { background: #f3f3f3; padding: 0 0.2rem; }
img { max-width: 100%; }
"""


def to_html(blocks: Iterable[Block], title: str) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>\n{_CSS}</style>",
        "</head>",
        "<body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            out.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, DocTable):
            out.append("<table>")

            def cls(j: int, tbl: DocTable = block) -> str:
                return ' class="n"' if tbl.right[j] else ""

            out.append(
                "<tr>"
                + "".join(f"<th{cls(j)}>{html.escape(h)}</th>" for j, h in enumerate(block.header))
                + "</tr>"
            )
            for i, row in enumerate(block.rows):
                cells = []
                for j, c in enumerate(row):
                    text = html.escape(c)
                    if (i, j) in block.bold and c:
                        text = f"<strong>{text}</strong>"
                    cells.append(f"<td{cls(j)}>{text}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
        elif isinstance(block, Image):
            data = base64.b64encode(block.png).decode("ascii")
            out.append(
                f'<p><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"></p>'
            )
        else:
            out.append("<ul>")
            out.extend(f"<li>{_inline_html(item)}</li>" for item in block.items)
            out.append("</ul>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
