"""Tests of ``queuesim fidelity`` (queuesim.studies.fidelity, queuesim.results.fidelity*):
a schedule worked out by hand, the causes on a crafted Slurm log, the command's files,
and the shared PBS and Slurm logs with sites drafted by ``inspect``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from builders import J, run_jobs
from test_site_policies import site_with
from test_slurm import HEADER, row

from queuesim.cli import main
from queuesim.core.workload import CleaningOptions
from queuesim.site.model import Site
from queuesim.studies.fidelity import fidelity
from queuesim.studies.inspection import draft_site, inspect_trace

FCFS_SITE = Site.model_validate(
    {
        "name": "tiny",
        "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
        "scheduler": {"policy": "fcfs"},
    }
)


def swf_line(job: int, submit: int, wait: int, runtime: int, cpus: int) -> str:
    """An SWF job line: the log's wait, the runtime, CPUs and requested time = runtime."""
    fields = [job, submit, wait, runtime, cpus, -1, -1, cpus, runtime, -1, 1, 1, 1, -1, 1]
    return " ".join(str(v) for v in [*fields, -1, -1, -1])


def write_golden(tmp_path: Path) -> Path:
    # FCFS on 4 CPUs: 1 runs 0-1000; 2 (4 CPUs) 1000-1500; 3 (4 CPUs) 1500-1600; 4 at 5000;
    # 5 at 6000. The log's waits: 30, 1590, 0, 7200, unknown.
    lines = [
        swf_line(1, 0, 30, 1000, 4),  # logged start 30, simulated 0: delta -30
        swf_line(2, 10, 1590, 500, 4),  # logged 1600, simulated 1000: -600
        swf_line(3, 20, 0, 100, 4),  # logged 20, simulated 1500: +1480
        swf_line(4, 5000, 7200, 100, 1),  # logged 12200, simulated 5000: -7200
        swf_line(5, 6000, -1, 10, 1),  # the log does not say: left out
    ]
    path = tmp_path / "golden.swf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_golden_schedule_gives_the_hand_computed_deltas_and_summary(tmp_path: Path) -> None:
    found = fidelity(FCFS_SITE, write_golden(tmp_path))
    jobs = found.jobs.set_index("job_id")
    assert jobs["delta"].to_dict() == {1: -30.0, 2: -600.0, 3: 1480.0, 4: -7200.0}
    assert found.excluded == {"unknown_logged_wait": 1}
    s = found.summary
    assert s["jobs"] == 4
    assert s["median_abs_delta"] == 1040.0  # (600 + 1480) / 2
    assert s["p90_abs_delta"] == pytest.approx(1480 + 0.7 * (7200 - 1480))  # type 7
    assert (s["within_1min"], s["within_10min"], s["within_1h"]) == (0.25, 0.5, 0.75)
    # ranks: logged (30, 1590, 0, 7200) -> 2 3 1 4; simulated (0, 990, 1480, 0) -> 1.5 3 4 1.5
    assert s["spearman_wait"] == pytest.approx(-3 / math.sqrt(22.5))
    assert s["share_simulated_earlier"] == 0.75
    queue = found.queues.iloc[0]
    assert queue["jobs"] == 4
    assert queue["logged_mean_wait"] == pytest.approx((30 + 1590 + 0 + 7200) / 4)
    assert queue["simulated_median_wait"] == pytest.approx((0 + 990) / 2)


def test_top_lists_the_largest_differences_first(tmp_path: Path) -> None:
    found = fidelity(FCFS_SITE, write_golden(tmp_path), top=2)
    assert found.top["job_id"].tolist() == [4, 3]
    assert found.top["delta"].tolist() == [-7200.0, 1480.0]
    assert not found.reservations  # fcfs records none: the column is left out


def test_easy_run_shows_the_first_reservation_of_a_blocked_job(tmp_path: Path) -> None:
    site = FCFS_SITE.with_scheduler("easy", None)
    found = fidelity(site, write_golden(tmp_path))
    assert found.reservations
    top = found.top.set_index("job_id")
    # at 1000 job 2 starts and job 3 (submitted at 20), next in line, is reserved the end
    # of job 2: 1500, 1480 s after its submit
    assert top.loc[3, "first_reservation_wait"] == 1480.0
    assert math.isnan(top.loc[1, "first_reservation_wait"])  # started at once


def test_timeline_counts_busy_cpus_and_waiting_jobs_of_both_schedules(tmp_path: Path) -> None:
    found = fidelity(FCFS_SITE, write_golden(tmp_path))
    grid = found.timeline
    assert len(grid) == 400
    at = grid.iloc[int(np.searchsorted(grid["time"], 1200.0))]  # a bin middle in 1200..1231
    assert at["simulated_busy_cpus"] == 4  # job 2 runs 1000-1500
    assert at["simulated_waiting_jobs"] == 1  # job 3 waits until 1500
    assert at["logged_busy_cpus"] == 0  # logged: job 1 ran 30-1030, job 2 from 1600
    assert at["logged_waiting_jobs"] == 1  # job 2 waits until 1600


def test_held_by_names_the_limit_that_held_each_job() -> None:
    site = site_with([{"name": "q", "max_running_per_user": 1}])
    run = run_jobs([J(1, 0, 10, 1, user=1), J(2, 0, 10, 1, user=1)], site, "easy")
    held = dict(zip(run.table["job_id"], run.table["held_by"], strict=True))
    assert held == {1: "", 2: "max_running_per_user"}


# ----------------------------------------------------------------- causes, crafted log

CAUSES_SITE = """\
name: crafted
clusters:
  - name: n
    nodes: 1
    cpus_per_node: 4
queues:
  - name: batch
scheduler:
  policy: fcfs
"""


def t(clock: str) -> str:
    return f"2024-01-01T{clock}"


def write_crafted(tmp_path: Path) -> tuple[Path, Path]:
    """A 4-CPU site and a sacct log in which each cause happens a known number of times."""
    rows = [
        # A ends first (01:00): the log's first recorded end
        row(JobID="1", Submit=t("00:00:00"), Eligible=t("00:00:00"), Start=t("00:00:00"),
            End=t("01:00:00"), Elapsed="01:00:00"),
        # B held until 03:00: eligible after submit, submitted before the log's first end
        row(JobID="2", Submit=t("00:10:00"), Eligible=t("03:00:00"), Start=t("03:00:00"),
            End=t("03:30:00"), Elapsed="00:30:00", NCPUS="1", ReqCPUS="1"),
        # C waits 05:00-07:00 with nothing running: an outage of 2 h
        row(JobID="3", Submit=t("05:00:00"), Eligible=t("05:00:00"), Start=t("07:00:00"),
            End=t("07:10:00"), Elapsed="00:10:00", NCPUS="1", ReqCPUS="1"),
        # D and E both ran at 08:00 on 4 CPUs each: the simulation starts E 2 h later,
        # when the site model is full at 08:00
        row(JobID="4", Submit=t("08:00:00"), Eligible=t("08:00:00"), Start=t("08:00:00"),
            End=t("10:00:00"), Elapsed="02:00:00"),
        row(JobID="5", Submit=t("08:00:01"), Eligible=t("08:00:01"), Start=t("08:00:01"),
            End=t("09:00:01"), Elapsed="01:00:00"),
        # F asks for 8 CPUs: too large for the site, rejected by cleaning
        row(JobID="6", Submit=t("11:00:00"), Eligible=t("11:00:00"), Start=t("11:00:00"),
            End=t("11:30:00"), Elapsed="00:30:00", NCPUS="8", ReqCPUS="8"),
    ]  # fmt: skip
    log = tmp_path / "crafted.sacct"
    log.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    site = tmp_path / "crafted.yaml"
    site.write_text(CAUSES_SITE, encoding="utf-8")
    return site, log


def test_causes_count_what_the_crafted_log_holds(tmp_path: Path) -> None:
    site, log = write_crafted(tmp_path)
    found = fidelity(site, log, cleaning=CleaningOptions(reject_unrunnable=True))
    counts = {c.key: c.count for c in found.causes}
    assert counts == {
        "eligible_after_submit": 1,  # B
        "submitted_before_log": 2,  # A and B, before 01:00
        "started_before_room": 1,  # E
        "outages": 1,  # 05:00-07:00 (B's hold 01:00-03:00 is not one)
        "cleaning:too_large": 1,  # F
    }
    outage = next(c for c in found.causes if c.key == "outages")
    assert outage.detail is not None and outage.detail["hours"] == 2.0
    assert all(c.meaning for c in found.causes)


# ----------------------------------------------------------------------------- command


def test_command_writes_deterministic_json_and_a_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, log = write_crafted(tmp_path)
    args = ["fidelity", str(site), str(log), "--reject-unrunnable", "--top", "3"]
    assert (
        main([*args, "--json", str(tmp_path / "a.json"), "--figure", str(tmp_path / "f.png")]) == 0
    )
    out = capsys.readouterr().out
    assert "rank correlation of waits" in out and "started_before_room" in out
    assert main([*args, "--json", str(tmp_path / "b.json"), "--quiet"]) == 0
    first = (tmp_path / "a.json").read_bytes()
    assert first == (tmp_path / "b.json").read_bytes()
    data = json.loads(first)
    assert set(data) >= {"summary", "queues", "top", "causes", "timeline", "excluded"}
    assert len(data["top"]) == 3
    assert data["summary"]["jobs"] == 5
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_is_one_document_as_html_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--report writes the report model: a self-contained HTML page with the figure inline,
    Markdown with the figure beside it, JSON with the same sections as the terminal; the
    same run writes the same bytes."""
    site, log = write_crafted(tmp_path)
    args = ["fidelity", str(site), str(log), "--reject-unrunnable", "--top", "3", "--quiet"]
    for name in ("a.html", "b.html", "r.md", "r.json"):
        assert main([*args, "--report", str(tmp_path / name)]) == 0
    page = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert page == (tmp_path / "b.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "http" not in page.split("<body", 1)[1]
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "](r-figure.png)" in markdown
    assert (tmp_path / "r-figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    document = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    titles = [section["title"] for section in document["sections"]]
    assert titles == [
        "Wait per queue, logged and simulated",
        "The 3 jobs with the largest |delta|",
        "What the log holds that the simulation cannot know",
    ]
    assert main([*args[:-1], "--report", str(tmp_path / "r.pdf")]) == 2
    assert ".html, .md or .json" in capsys.readouterr().err


def test_command_refuses_a_figure_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, log = write_crafted(tmp_path)
    code = main(["fidelity", str(site), str(log), "--figure", str(tmp_path / "f.jpg")])
    assert code == 2
    assert ".png or .svg" in capsys.readouterr().err


# ---------------------------------------------------------------- the shared site logs


@pytest.mark.parametrize(
    "log", ["pbs/cesnet-openpbs-2024-12.log", "slurm/xdmod-pozidriv-2016-12.sacct.log.gz"]
)
def test_shared_logs_compare_with_a_drafted_site(site_logs: Path, tmp_path: Path, log: str) -> None:
    path = site_logs / log
    site = tmp_path / "draft.yaml"
    site.write_text(draft_site(inspect_trace(path), "draft"), encoding="utf-8")
    found = fidelity(site, path, cleaning=CleaningOptions(reject_unrunnable=True))
    s = found.summary
    assert s["jobs"] == len(found.jobs) > 100
    assert -1 <= s["spearman_wait"] <= 1
    assert s["within_1min"] <= s["within_10min"] <= s["within_1h"]
    gaps = found.top["delta"].abs().tolist()
    assert len(gaps) == 20 and gaps == sorted(gaps, reverse=True)
    assert gaps[0] == found.jobs["delta"].abs().max()
    assert int(found.queues["jobs"].sum()) == len(found.jobs)
    data = json.dumps(found.as_dict(), allow_nan=False)  # JSON has no NaN
    assert '"causes"' in data


def test_the_fidelity_summary_lists_what_the_site_does_not_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A site imported from a configuration carries ``not_modelled``: the fidelity
    summary prints it and its JSON holds it, so a gap is not blamed on the scheduler."""
    site = tmp_path / "site.yaml"
    site.write_text(
        "name: tiny\nclusters: [{name: c, nodes: 1, cpus_per_node: 4}]\n"
        "scheduler: {policy: fcfs}\nnot_modelled:\n"
        "  - {setting: preemptive_sched, value: 'true', source: 'sched_config:19'}\n",
        encoding="utf-8",
    )
    log, out = write_golden(tmp_path), tmp_path / "f.json"
    assert main(["fidelity", str(site), str(log), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not modelled (1)" in printed and "preemptive_sched" in printed
    assert json.loads(out.read_text())["not_modelled"] == [
        {"setting": "preemptive_sched", "value": "true", "source": "sched_config:19"}
    ]
