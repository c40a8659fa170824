"""The HTML report in a real browser (headless Chromium through Playwright): it loads
without a console error, every image renders, every link resolves, sorting a table
works, and a script-named queue never runs (issue 18, issue 20 item 7).

Skipped, with the reason, when Playwright or a Chromium binary is missing; .ci/run says
whether they ran. Set QUEUESIM_CHROMIUM to use another Chromium than /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_report import demo_comparison
from test_report_escaping import SCRIPT, hostile_comparison

from queuesim.reports.bundle import write_bundle

CHROMIUM = os.environ.get("QUEUESIM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
    )
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


class Loaded:
    """A page opened from a file, with what it complained about."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "bundle"
    write_bundle(out, demo_comparison(), command="queuesim compare demo")
    return out


def test_report_loads_without_console_errors_and_every_image_renders(
    browser: Any, bundle: Path
) -> None:
    loaded = Loaded(browser, bundle / "report.html")
    widths = loaded.page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
    assert len(widths) >= 2 and all(w > 0 for w in widths)
    assert loaded.errors == []


def test_every_link_of_the_report_resolves(browser: Any, bundle: Path) -> None:
    """Contents links point at a heading of the page; file links at a file of the bundle."""
    loaded = Loaded(browser, bundle / "report.html")
    hrefs = loaded.page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    inside = [h for h in hrefs if h.startswith("#")]
    assert inside, "the table of contents has links"
    for href in inside:
        assert loaded.page.query_selector(f"[id='{href[1:]}']") is not None, href
    for href in (h for h in hrefs if not h.startswith("#")):
        assert (bundle / href).exists(), href


def test_clicking_a_header_sorts_the_table_by_its_numbers(browser: Any, bundle: Path) -> None:
    """The AWWT column (durations such as 2h 9m) sorts by its values, both ways."""
    loaded = Loaded(browser, bundle / "report.html")
    table = loaded.page.locator("table").nth(1)  # performance and fairness
    header = table.locator("th", has_text="AWWT")
    column = table.locator("th").all_inner_texts().index(header.inner_text())

    def keys() -> list[float]:
        cells = table.locator(f"tbody tr td:nth-child({column + 1})")
        return [float(v) for v in cells.evaluate_all("els => els.map(e => e.dataset.v)")]

    header.click()
    assert keys() == sorted(keys())
    header.click()
    assert keys() == sorted(keys(), reverse=True)
    assert loaded.errors == []


def test_a_script_named_queue_never_runs(browser: Any, tmp_path: Path) -> None:
    """The queue, site and workload named <script>alert(1)</script>: no dialog opens."""
    write_bundle(tmp_path / "b", hostile_comparison(SCRIPT, 7, "s<b>|"), figures=False)
    loaded = Loaded(browser, tmp_path / "b" / "report.html")
    assert loaded.dialogs == [] and loaded.errors == []
    assert SCRIPT in loaded.page.inner_text("body")  # shown as written


def test_a_study_report_loads_links_and_sorts_signed_percentages(
    browser: Any, tmp_path: Path
) -> None:
    """The DPSA study's page (hand-made frame of two traces): no console error, every link
    resolves, and its change column (+100.0 %, -10.0 % ...) sorts as numbers."""
    from test_dpsa_report import report

    from queuesim.reports.render_html import to_html

    (tmp_path / "exact-estimates").mkdir()
    (tmp_path / "exact-estimates" / "study.md").write_text("companion\n", encoding="utf-8")
    (tmp_path / "study.html").write_text(to_html(report(discussion=True)), encoding="utf-8")
    loaded = Loaded(browser, tmp_path / "study.html")
    hrefs = loaded.page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    for href in hrefs:
        if href.startswith("#"):
            assert loaded.page.query_selector(f"[id='{href[1:]}']") is not None, href
        else:
            assert (tmp_path / href).exists(), href
    table = loaded.page.locator("table").first
    header = table.locator("th", has_text="DPSAw bsld")
    column = table.locator("th").all_inner_texts().index(header.inner_text())
    header.click()
    header.click()  # descending
    cells = table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()
    assert cells == ["+100.0 %", "+10.0 %"]
    header.click()
    assert table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts() == [
        "+10.0 %",
        "+100.0 %",
    ]
    assert loaded.errors == []


def test_the_committed_dfrs_study_page_renders_its_plot(browser: Any) -> None:
    """reports/dfrs/study.html, as regenerate.sh wrote it: its plot renders and the page
    logs no error."""
    page = Path(__file__).resolve().parents[1] / "reports" / "dfrs" / "study.html"
    loaded = Loaded(browser, page)
    widths = loaded.page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
    assert widths and all(w > 0 for w in widths)
    assert loaded.errors == []
