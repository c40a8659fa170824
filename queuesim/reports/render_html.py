"""A :class:`~.document.Report` as one self-contained HTML page: inline CSS, a small inline
script that sorts tables, figures embedded as base64 PNG, a table of contents, no
network access (it opens from a mail attachment).

Every string is escaped with :func:`html.escape` (quotes included), so names read from
files never become markup.
"""

from __future__ import annotations

import base64
import html
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

__all__ = ["to_html"]

_CSS = """\
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 76rem;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; }
th { border-bottom: 2px solid #888; vertical-align: bottom; cursor: pointer; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.n, th.n { text-align: right; }
td strong { color: #17692e; }
code { background: #f3f3f3; padding: 0 0.2rem; }
img { max-width: 100%; }
nav { background: #f7f7f7; padding: 0.5rem 1rem; }
.note { border-left: 3px solid #bbb; padding-left: 0.8rem; color: #555; }
caption { caption-side: bottom; text-align: left; color: #555; padding-top: 0.3rem; }
figure { margin: 1rem 0; } figcaption { color: #555; }
"""

#: Click a header to sort by that column (again: the other way). Cells sort by their
#: data-v number when they have one, else as numbers when they read as one, else as text.
_SCRIPT = """\
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") === "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        var v = cell.getAttribute("data-v");
        if (v !== null) { return v === "" ? NaN : parseFloat(v); }
        var t = cell.textContent.replace(/[,%\\s]/g, "");
        return /^[-+]?[0-9.]+$/.test(t) ? parseFloat(t) : cell.textContent;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), r;
        if (typeof x === "number" && typeof y === "number") {
          if (isNaN(x)) { return 1; } if (isNaN(y)) { return -1; } r = x - y;
        } else { r = String(x).localeCompare(String(y)); }
        return down ? -r : r;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def inline(text: Text) -> str:
    out = []
    for part in text:
        if isinstance(part, Code):
            out.append(f"<code>{_e(part.text)}</code>")
        elif isinstance(part, Strong):
            out.append(f"<strong>{_e(part.text)}</strong>")
        elif isinstance(part, Link):
            href = part.href if part.href.startswith("#") else quote(part.href, safe="/._-~")
            out.append(f'<a href="{_e(href)}">{_e(part.text)}</a>')
        else:
            out.append(_e(part))
    return "".join(out)


def _table(block: Table) -> list[str]:
    def cls(j: int) -> str:
        return ' class="n"' if block.right[j] else ""

    out = ['<table class="sortable">']
    if block.caption:
        out.append(f"<caption>{inline(block.caption)}</caption>")
    heads = "".join(f"<th{cls(j)}>{_e(block.heading(j))}</th>" for j in range(len(block.header)))
    out += [f"<thead><tr>{heads}</tr></thead>", "<tbody>"]
    for i, row in enumerate(block.rows):
        keys = block.keys[i] if i < len(block.keys) else ()
        cells = []
        for j, c in enumerate(row):
            text = f"<strong>{_e(c)}</strong>" if (i, j) in block.bold and c else _e(c)
            key = keys[j] if j < len(keys) else None
            data = f' data-v="{key!r}"' if key is not None and key == key else ""
            cells.append(f"<td{cls(j)}{data}>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


def _block(block: Block) -> list[str]:
    if isinstance(block, Para):
        return [f"<p>{inline(block.text)}</p>"]
    if isinstance(block, Note):
        return [f'<p class="note">{inline(block.text)}</p>']
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        data = base64.b64encode(block.png).decode("ascii")
        return [
            "<figure>",
            f'<img alt="{_e(block.caption)}" src="data:image/png;base64,{data}">',
            f"<figcaption>{_e(block.caption)}</figcaption>",
            "</figure>",
        ]
    return ["<ul>", *(f"<li>{inline(item)}</li>" for item in block.items), "</ul>"]


def unique_anchors(anchors: list[str]) -> list[str]:
    """``anchors`` with ``-2``, ``-3``... added to repeats (and ``contents`` kept for the
    table of contents), so every link of the page has exactly one target."""
    seen = {"contents"}
    out = []
    for anchor in anchors:
        name, n = anchor, 1
        while name in seen:
            n += 1
            name = f"{anchor}-{n}"
        seen.add(name)
        out.append(name)
    return out


def to_html(report: Report) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{_e(report.title)}</title>",
        f"<style>\n{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    for block in report.lead:
        out += _block(block)
    anchors = unique_anchors([s.anchor for s in report.sections])
    out += ['<nav id="contents"><strong>Contents</strong>', "<ol>"]
    out += [
        f'<li><a href="#{a}">{_e(s.title)}</a></li>'
        for s, a in zip(report.sections, anchors, strict=True)
    ]
    out += ["</ol>", "</nav>"]
    for section, anchor in zip(report.sections, anchors, strict=True):
        out.append(f'<h2 id="{anchor}">{_e(section.title)}</h2>')
        for block in section.blocks:
            out += _block(block)
    out += [f"<script>\n{_SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
