"""A :class:`~.document.Report` as Markdown (GitHub-flavoured: pipe tables).

Every plain string is escaped: the characters that Markdown reads as markup or as raw HTML
(``\\ ` * _ [ ] < > | ~ & #``) get a backslash, a newline becomes a space, and a block that
would start like a list, quote or heading has its first character escaped. So a queue named
``<script>alert(1)</script>`` or ``a|b`` is shown as written, never run or split
(CommonMark 0.31, sections 2.4 "Backslash escapes" and 6.1 "Code spans"; GFM tables, 4.10).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from queuesim.reports.document import (
    Block,
    Code,
    Figure,
    Link,
    Note,
    Para,
    Report,
    Strong,
    Table,
    Text,
)

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
_BLOCK_START = re.compile(r"^(\s*)([-+=>]|\d+[.)])")


def escape(text: str) -> str:
    """``text`` as literal Markdown text, on one line."""
    flat = re.sub(r"[\r\n\t\f\v]+", " ", text)
    return _SPECIAL.sub(r"\\\1", flat)


def _code(text: str, in_table: bool) -> str:
    flat = re.sub(r"[\r\n\t\f\v]+", " ", text)
    if in_table:
        flat = flat.replace("|", "\\|")  # GFM reads the pipe before the code span
    runs = [len(r) for r in re.findall(r"`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def inline(text: Text, *, in_table: bool = False) -> str:
    out = []
    for part in text:
        if isinstance(part, Code):
            out.append(_code(part.text, in_table))
        elif isinstance(part, Strong):
            out.append(f"**{escape(part.text)}**")
        elif isinstance(part, Link):
            out.append(f"[{escape(part.text)}]({quote(part.href, safe='/#._-~')})")
        else:
            out.append(escape(part))
    line = "".join(out)
    return _BLOCK_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", line, count=1)


def _table(block: Table) -> str:
    header = [escape(block.heading(j)) for j in range(len(block.header))]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if r else "---" for r in block.right) + "|",
    ]
    for i, row in enumerate(block.rows):
        cells = [
            f"**{escape(c)}**" if (i, j) in block.bold and c else escape(c)
            for j, c in enumerate(row)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if block.caption:
        lines += ["", inline(block.caption)]
    return "\n".join(lines)


def block_markdown(block: Block) -> str:
    if isinstance(block, Para):
        return inline(block.text)
    if isinstance(block, Note):
        return "> " + inline(block.text)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        return f"![{escape(block.caption)}]({quote(block.file, safe='/._-~')})"
    return "\n".join(f"- {inline(item)}" for item in block.items)


def to_markdown(report: Report) -> str:
    out = ["# " + escape(report.title)]
    out += [block_markdown(b) for b in report.lead]
    for section in report.sections:
        out.append("## " + escape(section.title))
        out += [block_markdown(b) for b in section.blocks]
    return "\n\n".join(out) + "\n"
