"""The report bundle (files, sections, atomic replacement, byte-for-byte reruns), the
terminal output of a comparison at a fixed width (golden text in tests/golden/), the
``heatmap`` command on saved runs, and the curated example in reports/.

The golden comparison is built from hand-made results (not from a simulation), so that it
changes only when the rendering does. To accept a deliberate change of layout, run
``QUEUESIM_UPDATE_GOLDEN=1 pytest tests/test_report.py`` and review the diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import J, make_workload
from rich.cells import cell_len
from rich.console import Console

import queuesim.reports.bundle as report_module
from queuesim.cli import main
from queuesim.core.result import Result
from queuesim.reports.bundle import ReportError, write_bundle
from queuesim.reports.comparison_report import SECTIONS
from queuesim.reports.run_dir import read_run_dir
from queuesim.reports.terminal import print_comparison
from queuesim.results.comparison import AGAINST_COLUMNS, LOSER_COLUMNS, Comparison
from queuesim.site.model import Site
from queuesim.studies.compare import compare as run_compare
from queuesim.studies.compare import setups_for

REPO = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden"
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
EXAMPLE = REPO / "reports" / "kth-sp2-policies"
H = 3600.0
DAY = 86_400.0

TOP_FILES = [
    "report.md",
    "report.html",
    "comparison.json",
    "metrics.csv",
    "against-baseline.csv",
    "losers.csv",
    "queues.csv",
    "heatmap.png",
    "heatmap.svg",
    "heatmap.csv",
]
RUN_FILES = [
    "metrics.json",
    "jobs.csv",
    "schedule.swf",
    "cleaning.csv",
    "queues.csv",
    "users.csv",
]

# --- a hand-made comparison ------------------------------------------------------------------

DEMO_SITE = Site.model_validate(
    {
        "name": "demo",
        "clusters": [{"name": "c", "nodes": 4, "cpus_per_node": 4}],
        "queues": [
            {"name": "short", "max_walltime": "1h"},
            {"name": "long"},
            {"name": "debug", "max_walltime": "10m"},
        ],
    }
)
# (job id, user, queue, submit, runtime, cpus); day 1 has no submission, queue debug no job
DEMO_JOBS = [
    (1, 1, "short", 0.0, 1800.0, 4),
    (2, 1, "long", 600.0, 7200.0, 8),
    (3, 2, "short", 3600.0, 900.0, 2),
    (4, 2, "long", 2 * DAY, 4 * H, 16),
    (5, 3, "short", 2 * DAY + 60, 600.0, 1),
    (6, 3, "long", 2 * DAY + 120, 3 * H, 4),
]
# wait of each job (seconds) per setup
DEMO_WAITS = {
    "demo/easy": [0.0, 1800.0, 600.0, 3 * H, 0.0, 1200.0],
    "demo/fcfs": [0.0, 5400.0, 6000.0, 5 * H, 7200.0, 1200.0],
    "demo/conservative": [0.0, 900.0, 900.0, 2 * H, 0.0, 2400.0],
}


def demo_result(policy: str, waits: list[float]) -> Result:
    workload = make_workload(
        [J(j, submit, runtime, 1, user=u) for j, u, _, submit, runtime, _ in DEMO_JOBS],
        DEMO_SITE,
    )
    submit = np.array([row[3] for row in DEMO_JOBS])
    runtime = np.array([row[4] for row in DEMO_JOBS])
    start = submit + np.array(waits)
    jobs = pd.DataFrame(
        {
            "job_id": [row[0] for row in DEMO_JOBS],
            "user": [row[1] for row in DEMO_JOBS],
            "group": 1,
            "queue": [row[2] for row in DEMO_JOBS],
            "submit": submit,
            "start": start,
            "end": start + runtime,
            "wait": np.array(waits),
            "runtime": runtime,
            "cpus": [row[5] for row in DEMO_JOBS],
            "estimate": runtime,
            "walltime": runtime,
            "status": "completed",
        }
    )
    return Result(
        jobs=jobs,
        site=DEMO_SITE,
        policy=policy,
        params={},
        workload=workload,
        wall_seconds=1.0,
        passes=1,
    )


def demo_comparison() -> Comparison:
    results = {name: demo_result(name.split("/")[1], w) for name, w in DEMO_WAITS.items()}
    return Comparison.from_results(results, top=3, workload="demo.swf")


# --- the terminal output ---------------------------------------------------------------------


def render(comp: Comparison, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    print_comparison(console, comp, grids=comp.heatmap("day"))
    text = console.export_text()
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("width", [100, 80])
def test_terminal_output_at_fixed_width_matches_golden_text(width: int) -> None:
    text = render(demo_comparison(), width)
    golden = GOLDEN / f"compare_{width}.txt"
    if os.environ.get("QUEUESIM_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
    assert max(cell_len(line) for line in text.splitlines()) <= width


def test_terminal_highlights_the_best_value_of_each_column() -> None:
    """The terminal renderer shows Table 1's best value in bold green."""
    console = Console(width=100, record=True, color_system="truecolor", force_terminal=True)
    comp = demo_comparison()
    print_comparison(console, comp)
    styled = console.export_text(styles=True)
    # the conservative setup has the lowest AWWT (see DEMO_WAITS): bold green there
    awwt = comp.table["awwt"].idxmin()
    assert awwt == "demo/conservative"
    lines = styled.splitlines()
    header = next(k for k, line in enumerate(lines) if "AWWT" in line)
    row = next(line for line in lines[header:] if line.startswith(awwt))
    assert "\x1b[1;32m" in row


# --- the bundle ------------------------------------------------------------------------------


def file_hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def expected_files(setups: list[str], *, figures: bool = True) -> list[str]:
    runs = [f"{s}/{f}" for s in setups for f in RUN_FILES]
    if report_module._jobs_format() == "parquet":
        runs = [r.replace("jobs.csv", "jobs.parquet") for r in runs]
    if not figures:
        return TOP_FILES + runs
    stems = ["queues-over-time", "wait-cdf", "gantt", "fairshare"]
    stems += [
        f"{kind}-{i}" for i in range(1, len(setups)) for kind in ("winners-losers", "diff-gantt")
    ]
    figures = [f"figures/{s}.{x}" for s in stems for x in ("png", "svg")]
    return TOP_FILES + figures + runs


def test_bundle_has_the_documented_files_and_sections(tmp_path: Path) -> None:
    comp = demo_comparison()
    written = write_bundle(tmp_path / "out", comp, command="queuesim compare demo")
    names = [p.relative_to(tmp_path / "out").as_posix() for p in written]
    assert names == expected_files(list(DEMO_WAITS))
    assert sorted(file_hashes(tmp_path / "out")) == sorted(names)  # nothing else

    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert re.findall(r"^## (.+)$", md, flags=re.M) == list(SECTIONS)
    assert "![Mean wait per queue and time bin, one panel per setup](heatmap.png)" in md
    assert "`queuesim compare demo`" in md
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page
    assert 'src="heatmap.png"' not in page  # self-contained: nothing fetched from anywhere
    assert not re.search(r'src="(?!data:)', page)
    assert not re.search(r'href="[a-z]+:', page)  # links only to the bundle's own files
    assert re.findall(r"<h2 id=\"[^\"]+\">(.+?)</h2>", page) == list(SECTIONS)

    against = pd.read_csv(tmp_path / "out" / "against-baseline.csv")
    assert list(against.columns) == ["setup", *AGAINST_COLUMNS]
    assert list(pd.read_csv(tmp_path / "out" / "losers.csv").columns) == list(LOSER_COLUMNS)
    grid = pd.read_csv(tmp_path / "out" / "heatmap.csv")
    assert list(grid.columns[:2]) == ["setup", "queue"]
    assert grid["queue"].tolist() == ["short", "long", "debug"] * 3
    assert grid.iloc[:, 2:].isna().to_numpy()[:, 1].all()  # day 1: no job, blank
    document = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert document["kind"] == "queuesim-compare"
    assert document["files"] == names
    assert document["baseline"] == "demo/easy"


def test_same_inputs_give_the_same_bytes(tmp_path: Path) -> None:
    comp = demo_comparison()
    write_bundle(tmp_path / "a", comp, bin="day")
    write_bundle(tmp_path / "b", demo_comparison(), bin="day")
    assert file_hashes(tmp_path / "a") == file_hashes(tmp_path / "b")


def test_rerun_replaces_the_bundle_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_bundle(out, demo_comparison(), figures=False)
    two = {k: v for k, v in demo_comparison().results.items() if k != "demo/fcfs"}
    write_bundle(out, Comparison.from_results(two, workload="demo.swf"), figures=False)
    assert not (out / "demo" / "fcfs").exists()  # no stale setup left behind
    assert sorted(file_hashes(out)) == sorted(expected_files(list(two), figures=False))
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary folder left


def test_a_bundle_without_run_folders_lists_and_links_only_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With run_folders=False no setup folder is written, the report links no file that is
    absent, and `queuesim report` on it says it lacks the run folders."""
    out = tmp_path / "out"
    written = write_bundle(out, demo_comparison(), figures=False, run_folders=False)
    assert sorted(file_hashes(out)) == sorted(TOP_FILES)
    assert [p.relative_to(out).as_posix() for p in written] == TOP_FILES
    report = (out / "report.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)#]+)\)", report):
        assert (out / link).exists(), link
    document = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert {s["folder"] for s in document["setups"]} == {None}
    code, _, err = run_cli(capsys, "report", out, "-o", tmp_path / "again.md")
    assert code != 0 and "does not hold its setups' run folders" in err


def test_error_midway_leaves_the_previous_bundle_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_bundle(out, demo_comparison(), figures=False)
    before = file_hashes(out)

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("disk full")

    monkeypatch.setattr(report_module, "to_html", broken)  # the very last file
    with pytest.raises(RuntimeError, match="disk full"):
        write_bundle(out, demo_comparison(), bin="week", figures=False)
    assert file_hashes(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_folder_that_is_not_a_bundle_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(ReportError, match="not a queuesim comparison bundle"):
        write_bundle(out, demo_comparison(), figures=False)
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "years of work"


# --- saved runs and the heatmap command ------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_heatmap_command_draws_a_saved_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert run_cli(capsys, "run", KTH_SITE, KTH_SAMPLE, "--out", run, "--quiet")[0] == 0
    saved = read_run_dir(run)
    assert saved.name == "kth-sp2/easy" and saved.queues == ("batch",)
    assert saved.clock.time_zone == "Europe/Stockholm"
    code, out, err = run_cli(capsys, "heatmap", run, "--bin", "week", "--out", tmp_path / "h")
    assert code == 0, err
    assert "kth-sp2/easy" in out and "batch (2,000)" in out and "one column per week" in out
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == [
        "heatmap.csv",
        "heatmap.png",
        "heatmap.svg",
    ]


def test_run_folder_without_the_new_metrics_keys_still_draws(tmp_path: Path) -> None:
    # metrics.json written before `queues` / `unix_start_time` existed: sorted rows, no dates
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps({"run": {"site": "s", "policy": "p"}}))
    pd.DataFrame({"queue": ["b", "a"], "submit": [0.0, 10.0], "wait": [1.0, 2.0]}).to_csv(
        folder / "jobs.csv", index=False
    )
    saved = read_run_dir(folder)
    assert saved.queues == () and not saved.clock.dated


def bad_dirs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.json").write_text("{not json")
    nojobs = tmp_path / "nojobs"
    nojobs.mkdir()
    (nojobs / "metrics.json").write_text(json.dumps({"run": {}}))
    bundle = tmp_path / "bundle"
    write_bundle(bundle, demo_comparison(), figures=False)
    return {
        "missing": (tmp_path / "nowhere", "no such result directory"),
        "file": (afile, "is a file, not a result directory"),
        "empty": (empty, "not a queuesim result directory (no metrics.json)"),
        "broken": (broken, "not a queuesim metrics.json"),
        "no jobs": (nojobs, "no jobs.csv or jobs.parquet"),
        "bundle": (bundle, "is a comparison bundle, not one run"),
    }


@pytest.mark.parametrize("case", ["missing", "file", "empty", "broken", "no jobs", "bundle"])
def test_heatmap_of_something_that_is_not_a_result_dir_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    folder, message = bad_dirs(tmp_path)[case]
    code, out, err = run_cli(capsys, "heatmap", folder)
    assert code == 2 and out == "" and err.startswith("error: ")
    assert "Traceback" not in err
    assert message in " ".join(err.split())


def test_heatmap_bin_of_zero_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "heatmap", tmp_path, "--bin", "0")
    assert code == 2 and out == "" and "a width must be more than 0 seconds" in err


# --- the curated example in reports/ ---------------------------------------------------------


def example_command() -> list[str]:
    """The command reports/README.md documents (its first ``sh`` block)."""
    readme = (REPO / "reports" / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```sh\n(.*?)\n```", readme, flags=re.S | re.M)
    assert block is not None, "reports/README.md has no sh block"
    words = shlex.split(block.group(1).replace("\\\n", " "))
    assert words[:2] == ["queuesim", "compare"]
    return words[1:]


def structure(folder: Path) -> dict[str, object]:
    """What must stay the same between the curated example and a fresh run: files,
    headings and table headers of report.md, CSV headers, comparison.json keys."""
    files = sorted(
        p.relative_to(folder).as_posix().replace("jobs.parquet", "jobs.csv")
        for p in folder.rglob("*")
        if p.is_file()
    )
    md = (folder / "report.md").read_text(encoding="utf-8").splitlines()
    headers = [md[i] for i in range(len(md) - 1) if md[i + 1].startswith("|---")]
    csvs = {
        name: (folder / name).read_text(encoding="utf-8").splitlines()[0]
        for name in ("metrics.csv", "against-baseline.csv", "losers.csv", "heatmap.csv")
    }
    document = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    return {
        "files": files,
        "headings": [line for line in md if line.startswith("#")],
        "table headers": headers,
        "csv headers": csvs,
        "json keys": list(document),
        "setups": [s["name"] for s in document["setups"]],
    }


def test_reports_example_matches_a_fresh_run_of_its_documented_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = example_command()
    out_at = args.index("--out")
    assert Path(args[out_at + 1]) == EXAMPLE.relative_to(REPO)
    args[out_at + 1] = str(tmp_path / "fresh")
    monkeypatch.chdir(REPO)  # the command's paths are relative to the repository
    code, _, err = run_cli(capsys, *args, "--quiet")
    assert code == 0, err
    assert structure(tmp_path / "fresh") == structure(EXAMPLE)


def test_reports_example_bundle_is_the_one_compare_writes() -> None:
    document = json.loads((EXAMPLE / "comparison.json").read_text(encoding="utf-8"))
    assert document["kind"] == "queuesim-compare"
    assert (EXAMPLE / "heatmap.png").read_bytes().startswith(b"\x89PNG")
    assert [p for p in document["files"] if not (EXAMPLE / p).is_file()] == []


def test_compare_api_and_bundle_agree_on_the_kth_sample(tmp_path: Path) -> None:
    comp = run_compare(setups_for([KTH_SITE], ["easy", "conservative"]), KTH_SAMPLE, workers=1)
    write_bundle(tmp_path / "b", comp, bin="week", figures=False)  # the tables are the point
    metrics = pd.read_csv(tmp_path / "b" / "metrics.csv", index_col="setup")
    pd.testing.assert_frame_equal(metrics, comp.table, check_names=False)


def test_cli_refuses_a_non_bundle_out_folder_before_simulating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    code, stdout, err = run_cli(capsys, "compare", KTH_SITE, "--workload", KTH_SAMPLE, "--out", out)
    assert code == 2 and stdout == ""  # not even the "simulating ..." line
    assert err.startswith("error: ") and "not a queuesim comparison bundle" in " ".join(err.split())
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"
