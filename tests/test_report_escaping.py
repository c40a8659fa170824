"""Names read from files (queue, user, site, setup, workload file) are shown as written in
every renderer: never run as HTML, never read as Markdown markup, never split a table
(issue 20, item 7)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import J, make_workload

from queuesim.core.result import Result
from queuesim.reports.bundle import write_bundle
from queuesim.reports.document import Bullets, Code, Link, Para, Report, Section, Table, Verbatim
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import escape, to_markdown
from queuesim.results.comparison import Comparison
from queuesim.site.model import Site

SCRIPT = "<script>alert(1)</script>"
HOSTILE = [SCRIPT, "a|b", "*star*", "`tick`", "two\nlines", "[x](http://e.x)", "_u_", "# h"]


def outside_code(md: str) -> str:
    """Markdown without its code spans (which show HTML as text, CommonMark 6.1)."""
    return re.sub(r"(?<!\\)(`+)(?:(?!\1).)+?\1", "", md)


def unescape_md(text: str) -> str:
    """What a Markdown viewer shows for text escaped by ``escape`` (backslash escapes)."""
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("name", HOSTILE)
def test_markdown_escape_shows_the_name_as_written(name: str) -> None:
    """Escaped text has no unescaped markup character and reads back as the name (newlines
    as spaces)."""
    out = escape(name)
    assert "\n" not in out
    assert unescape_md(out) == name.replace("\n", " ")
    assert not re.search(r"(?<!\\)[<>|*`\[\]_#]", out)


def hostile_comparison(queue: str, user: int, site: str) -> Comparison:
    """Two hand-made runs on a site named ``site`` with one queue named ``queue`` and one
    user (numbers in a run's job table: SWF writes them; names are escaped as any cell, see
    the hand-built report below)."""
    model = Site.model_validate(
        {
            "name": site,
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
            "queues": [{"name": queue}],
        }
    )
    workload = make_workload([J(1, 0.0, 100.0, 1), J(2, 10.0, 100.0, 1)], model)

    def result(policy: str, waits: list[float]) -> Result:
        submit, runtime = np.array([0.0, 10.0]), np.array([100.0, 100.0])
        start = submit + np.array(waits)
        jobs = pd.DataFrame(
            {
                "job_id": [1, 2],
                "user": [user, user],
                "group": 1,
                "queue": [queue, queue],
                "submit": submit,
                "start": start,
                "end": start + runtime,
                "wait": np.array(waits),
                "runtime": runtime,
                "cpus": [1, 1],
                "estimate": runtime,
                "walltime": runtime,
                "status": "completed",
            }
        )
        return Result(jobs, model, policy, {}, workload, 1.0, 1)

    results = {f"{site}/easy": result("easy", [0, 50]), f"{site}/fcfs": result("fcfs", [0, 90])}
    return Comparison.from_results(results, top=3, workload=f"{SCRIPT}|*.swf")


def test_bundle_reports_never_carry_a_hostile_name_raw(tmp_path: Path) -> None:
    """report.md and report.html of a comparison with a script-named queue, site, setup and
    workload contain no raw <script> and no unescaped pipe inside a table row."""
    comp = hostile_comparison(SCRIPT, 7, "s<b>|")
    write_bundle(tmp_path / "out", comp, command=f"queuesim compare {SCRIPT}", figures=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    for text in (outside_code(md), page):
        assert "<script>alert" not in text
        assert "<b>" not in text
    assert "`queuesim compare <script>alert(1)</script>`" in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\<script\\>alert(1)\\</script\\>" in md  # shown as written in Markdown
    # every table row keeps its column count: no name split a row
    for table in re.findall(r"((?:^\|.*\|\n)+)", md, flags=re.M):
        counts = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(counts) == 1, table


def test_hand_built_report_escapes_every_kind_of_span() -> None:
    """Headings, paragraphs, code, links, bullets and table cells are all escaped in both
    renderers; the report's own markup (bold, code) still works."""
    name = "x`|<i>*"
    report = Report(
        title=f"t {SCRIPT}",
        lead=[Para.of("the **baseline** is ", Verbatim(name), " in ", Code(name))],
        sections=[
            Section(
                f"s {SCRIPT}",
                [
                    Table(["queue"], [[name]], [False]),
                    Bullets([(Link(f"{name}.csv", f"{name}.csv"),)]),
                ],
            )
        ],
    )
    md, page = to_markdown(report), to_html(report)
    assert "<i>" not in outside_code(md) and "<i>" not in page
    assert page.count("<script>") == 1  # the page's own sorting script only
    assert "**baseline**" in md and "<strong>baseline</strong>" in page
    assert "**" not in page  # no literal Markdown in HTML
    assert "| x\\`\\|\\<i\\>\\* |" in md
    assert "``x`\\|<i>*``" not in md.split("\n\n")[1]  # paragraph: no table escape in code
    assert "``x`|<i>*``" in md
    assert 'href="x%60%7C%3Ci%3E%2A.csv"' in page


def test_terminal_renderer_shows_rich_markup_in_names_as_text() -> None:
    """A queue named ``[bold red]x[/]`` prints as written in the terminal rendering."""
    from rich.console import Console

    from queuesim.reports.render_text import print_report

    name = "[bold red]x[/]"
    report = Report(
        title=name,
        lead=[Para.of("queue ", Verbatim(name))],
        sections=[Section("s", [Table(["queue"], [[name]], [False])])],
    )
    console = Console(record=True, width=80, color_system=None)
    print_report(console, report)
    text = console.export_text()
    assert text.count(name) == 3
