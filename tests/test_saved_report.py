"""``queuesim report DIR... -o FILE``: the report made again from saved runs, without
simulating, in the format the suffix names (issue 18)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import demo_comparison, run_cli

from queuesim.reports.bundle import write_bundle


def section(md: str, title: str) -> str:
    """The text of one ``## title`` section of a Markdown report."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", md, flags=re.M | re.S)
    assert match is not None, title
    return match.group(1)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    demo = demo_comparison()
    write_bundle(out, demo, command="queuesim compare demo", jobs_format="csv", figures=False)
    return out


def test_report_of_a_bundle_has_the_numbers_compare_wrote(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read back from the saved job tables, every table of the comparison is the one
    compare wrote (same baseline, same figures, same per-queue waits)."""
    code, out, err = run_cli(
        capsys, "report", bundle, "-o", tmp_path / "again.md", "--top", "3", "--no-figures"
    )
    assert code == 0, err
    # the terminal wraps long paths anywhere: compare without whitespace
    assert "again-heatmap.png" in "".join(out.split())
    assert (tmp_path / "again-heatmap.png").is_file()
    first = (bundle / "report.md").read_text(encoding="utf-8")
    again = (tmp_path / "again.md").read_text(encoding="utf-8")
    for title in (
        "Performance and fairness",
        "Wait times against the baseline",
        "Users who lost the most",
        "Wait per queue",
    ):
        assert section(again, title) == section(first, title)
    assert "**demo/easy**" in again  # the bundle's baseline


def test_report_of_run_folders_picks_the_baseline_asked(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two run folders and --baseline: a comparison against that one, as HTML with the
    figure inline and every file linked."""
    runs = [bundle / "demo" / "fcfs", bundle / "demo" / "easy"]
    page_path = tmp_path / "r.html"
    code, _, err = run_cli(capsys, "report", *runs, "-o", page_path, "--baseline", "demo/easy")
    assert code == 0, err
    page = page_path.read_text(encoding="utf-8")
    assert "the baseline is <strong>demo/easy</strong>" in page
    assert page.count("<figure>") == 1 + 6  # heatmap; 4 of the baseline, 2 against it
    assert '<a href="bundle/demo/fcfs">' in page


def test_report_as_json_keeps_sections_tables_and_units(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON: the sections in order; tables with column names, units and raw values."""
    code, _, err = run_cli(capsys, "report", bundle, "-o", tmp_path / "r.json", "--no-figures")
    assert code == 0, err
    document = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert document["kind"] == "queuesim-report"
    titles = [s["title"] for s in document["sections"]]
    assert titles[:2] == ["Setups", "Performance and fairness"]
    queues = next(s for s in document["sections"] if s["title"] == "Wait per queue")
    table = next(b for b in queues["blocks"] if b["kind"] == "table")
    assert {"name": "median", "unit": "h"} in table["columns"]
    metrics = document["sections"][1]["blocks"][1]
    assert len(metrics["values"]) == 3 and metrics["values"][0][0] is None


def test_single_run_gives_a_run_report(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run folder: titled as a run, nothing compared."""
    code, _, err = run_cli(
        capsys, "report", bundle / "demo" / "easy", "-o", tmp_path / "r.md", "--no-figures"
    )
    assert code == 0, err
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.startswith("# Run of demo/easy on ")
    assert "nothing to compare with the baseline" in md


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda b: [str(b), "-o", "x.pdf"], "expected one of .html"),
        (lambda b: [str(b / "nope"), "-o", "x.md"], "no such result directory"),
    ],
)
def test_bad_report_requests_are_one_clear_error(
    bundle: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    """A suffix that names no format, a missing folder: one line naming it."""
    code, out, err = run_cli(capsys, "report", *make(bundle))  # type: ignore[operator]
    assert code != 0 and message in " ".join((out + err).split())
    assert "Traceback" not in out + err


def test_bundle_without_run_folders_is_refused_clearly(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A committed bundle trimmed of its setup folders says so and how to get them."""
    import shutil

    shutil.rmtree(bundle / "demo")
    code, out, err = run_cli(capsys, "report", bundle, "-o", tmp_path / "r.html")
    assert code != 0
    assert "does not hold its setups' run folders" in " ".join((out + err).split())


def test_evalys_csv_has_evalys_columns_and_disjoint_cpu_bands(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o FILE.csv` of one run: evalys's JobSet columns in its order, times as the run's,
    and CPU intervals that never overlap for jobs running together."""
    import pandas as pd

    from queuesim.results.job_columns import EVALYS_COLUMNS

    code, _, err = run_cli(capsys, "report", bundle / "demo" / "fcfs", "-o", tmp_path / "j.csv")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "j.csv")
    assert list(table.columns) == list(EVALYS_COLUMNS)
    jobs = pd.read_csv(bundle / "demo" / "fcfs" / "jobs.csv").set_index("job_id")
    mine = table.set_index("job_id").loc[jobs.index]
    assert (mine["waiting_time"] == jobs["wait"]).all()
    assert (mine["finish_time"] - mine["submission_time"] == mine["turnaround_time"]).all()

    def cpus(text: str) -> set[int]:
        """The CPUs of an evalys interval set such as ``0-3 8``."""
        out: set[int] = set()
        for part in text.split():
            first, _, last = part.partition("-")
            out |= set(range(int(first), int(last or first) + 1))
        return out

    held = [cpus(str(a)) for a in table["allocated_resources"]]
    assert [len(h) for h in held] == table["requested_number_of_resources"].tolist()
    for i, a in enumerate(held):
        for j, b in enumerate(held[:i]):
            ti, tj = table.iloc[i], table.iloc[j]
            if ti.starting_time < tj.finish_time and tj.starting_time < ti.finish_time:
                assert not a & b
    code, out, err = run_cli(capsys, "report", bundle, "-o", tmp_path / "k.csv")
    assert code != 0 and "holds one run" in out + err


def test_readme_documents_every_per_job_column_with_its_unit() -> None:
    """The README's column tables are the ones of queuesim.results.job_columns."""
    from queuesim.results.job_columns import EVALYS_COLUMNS, JOB_COLUMNS

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for columns in (JOB_COLUMNS, EVALYS_COLUMNS):
        for name, (unit, _) in columns.items():
            assert re.search(rf"^\| `{name}` \| {re.escape(unit)} \|", readme, flags=re.M), name
