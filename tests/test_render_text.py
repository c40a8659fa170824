"""The report model's terminal renderer (issue 18): wide tables split by columns without
wrapping a number, a section's figures replaced by the caller's drawing, sections left
out on request."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from queuesim.reports.document import Figure, Para, Report, Section, Table
from queuesim.reports.render_text import print_report, print_table, rich_tables


def wide_table() -> Table:
    header = ["setup", *(f"metric number {k}" for k in range(6))]
    rows = [["alpha", *(f"{k},123.45" for k in range(6))], ["beta", *(["7"] * 6)]]
    return Table(header, rows, [False] + [True] * 6, units=["", "h", "", "", "", "", ""])


def printed(report: Report, width: int, **options: object) -> str:
    console = Console(width=width, record=True, color_system=None)
    print_report(console, report, **options)  # type: ignore[arg-type]
    return console.export_text()


def test_a_table_that_fits_is_one_table() -> None:
    """At a width that holds every column unwrapped, the table is not split."""
    assert len(rich_tables(wide_table(), 200)) == 1


def test_a_wide_table_splits_by_columns_repeating_the_first() -> None:
    """Too wide for 60 columns: several tables, each within the width, each starting with
    the setup column (marked continued after the first), every value on one line."""
    text = printed(Report("t", [], [Section("s", [wide_table()])]), 60)
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= 60
    headers = [line for line in lines if line.startswith("setup")]
    assert len(headers) >= 2
    assert headers[0].split()[:2] == ["setup", "metric"]
    assert all(h.startswith("setup (continued)") for h in headers[1:])
    assert "metric number 0 (h)" in text  # the unit stays with its column
    for k in range(6):
        assert f"{k},123.45" in text  # never wrapped
    assert sum(line.startswith("alpha") for line in lines) == len(headers)


def test_drawings_replace_figures_and_skipped_sections_are_left_out() -> None:
    """A section's figure is replaced by the caller's drawing; a skipped section is not
    printed; a figure without a drawing is named by its file."""
    report = Report(
        "title",
        [],
        [
            Section("Heat", [Para.of("before"), Figure("heat.png", "heat", b"png")]),
            Section("Other", [Figure("other.png", "other figure", b"png")]),
            Section("Files", [Para.of("file list")]),
        ],
    )
    text = printed(report, 80, drawings={"Heat": Text("DRAWN")}, skip=("Files",))
    assert "DRAWN" in text and "heat.png" not in text
    assert text.index("before") < text.index("DRAWN")
    assert "[figure: other figure - other.png]" in text
    assert "file list" not in text and "Files" not in text


def test_a_drawing_for_a_section_without_figures_follows_its_text() -> None:
    """With no figure in the section (the terminal report draws none), the drawing comes
    after the section's text."""
    report = Report("title", [], [Section("Heat", [Para.of("words")])])
    text = printed(report, 80, drawings={"Heat": Text("DRAWN")})
    assert text.index("words") < text.index("DRAWN")


def test_a_prose_column_wraps_at_spaces_before_the_table_splits() -> None:
    """A table too wide only because of a long text column stays one table: that column
    wraps at spaces (no word broken), the numbers stay on one line."""
    meaning = "the jobs that waited longer in the simulation than in the site's own logs"
    table = Table(
        ["cause", "jobs", "share", "meaning"],
        [["limits", "1,234", "12.5 %", meaning], ["pools", "7", "0.1 %", "short"]],
        [False, True, True, False],
    )
    assert len(rich_tables(table, 60)) == 1
    text = printed(Report("t", [], [Section("s", [table])]), 60)
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= 60
    assert not any("(continued)" in line for line in lines)
    assert "1,234" in text and "12.5 %" in text
    tokens = text.split()
    assert all(word in tokens for word in meaning.split())  # wrapped between words only


def test_a_command_table_prints_under_its_title_within_the_width() -> None:
    """print_table (the benchmarks' and check-invariants' tables) puts the title first and
    lays the table out as a report's: within the console's width, no number wrapped."""
    console = Console(width=50, record=True, color_system=None)
    print_table(console, "bench", wide_table())
    lines = console.export_text().splitlines()
    assert lines[0] == "bench"
    assert max(cell_len(line) for line in lines) <= 50
    assert all(f"{k},123.45" in "\n".join(lines) for k in range(6))
