"""A site's own logs end to end: sniffing and --format, inspect, its draft site, convert to
SWF and Parquet, and a run whose cleaning report counts what the reader noted."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from queuesim.cli import main
from queuesim.common.errors import WorkloadError
from queuesim.core.workload import CleaningOptions, load_workload
from queuesim.site.loading import load_site
from queuesim.studies.inspection import draft_site, host_group, inspect_trace
from queuesim.traces.registry import detect_format, read_trace
from queuesim.traces.swf import read_swf

REPO = Path(__file__).resolve().parents[1]

LOG = [
    "12/21/2024 10:00:00;Q;1.srv;user=alice group=g queue=short ctime=1000 qtime=1000 etime=1000",
    "12/21/2024 10:00:00;E;1.srv;user=alice group=g queue=short ctime=1000 qtime=1000 etime=1000 "
    "start=1000 end=1600 exec_host=node1/0*2 Resource_List.ncpus=2 Resource_List.nodect=1 "
    "Resource_List.select=1:ncpus=2:ngpus=1:fast=True Resource_List.walltime=00:30:00 "
    "Exit_status=0",
    "12/21/2024 10:00:00;E;2.srv;user=bob group=h queue=long ctime=1100 qtime=1100 etime=1100 "
    "start=1200 end=5000 exec_host=node1/2*2+node2/0*4 Resource_List.ncpus=6 "
    "Resource_List.nodect=2 Resource_List.walltime=02:00:00 Exit_status=1",
    "12/21/2024 10:00:00;E;3.srv;user=bob group=h queue=long ctime=1200 qtime=1200 etime=1200 "
    "end=1300 Resource_List.ncpus=1 Resource_List.walltime=01:00:00 Exit_status=271",
    "12/21/2024 10:00:00;Q;4.srv;user=carol group=h queue=long ctime=1300 qtime=1300 etime=1300",
    "12/21/2024 10:00:00;L;license;floating license hour:0 day:0",
]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "accounting.log"
    path.write_text("\n".join(LOG) + "\n", encoding="utf-8")
    return path


def test_every_format_is_told_from_its_content_or_named(log: Path, tmp_path: Path) -> None:
    assert detect_format(log).name == "pbs"
    assert detect_format(REPO / "workloads" / "kth-sp2-sample.swf").name == "swf"
    sacct = tmp_path / "x"
    sacct.write_text(
        "JobID|Submit|Start|End|State\n1|2024-01-01T00:00:00|Unknown|Unknown|PENDING\n"
    )
    assert detect_format(sacct).name == "sacct"
    assert detect_format(log, format="swf").name == "swf"
    with pytest.raises(WorkloadError, match="unknown trace format 'lsf'; known formats: pbs"):
        detect_format(log, format="lsf")
    with pytest.raises(
        WorkloadError, match=r"accounting.log:1: expected 18 whitespace-separated numeric"
    ):
        read_trace(log, format="swf")


def test_inspection_counts_what_the_log_holds(log: Path) -> None:
    found = inspect_trace(log)
    assert (found.format, found.jobs, found.users, found.groups) == ("pbs", 3, 2, 2)
    queues = found.queues.set_index("queue")
    assert queues.loc["long", "jobs"] == 2 and queues.loc["long", "max_walltime"] == 7200
    assert queues.loc["short", "max_cpus"] == 2
    nodes = found.nodes.set_index("group")
    # node1 held job 1 (2 CPUs) and 1 of job 2's 6 CPUs spread over 2 hosts (3 each):
    # 2 + 3 = 5 at once from t=1200 to 1600
    assert nodes.loc["node", "hosts"] == 2 and nodes.loc["node", "cpus_per_node"] == 5
    assert found.properties.values.tolist() == [["fast", 1]]
    assert found.notes[["reason", "count"]].values.tolist() == [
        ["not_a_job_record", 1],
        ["no_end_record", 1],
    ]
    assert found.cleaning["cancelled"] == 1  # job 3 never started
    requests = found.requests.set_index("what")
    assert requests.loc["GPUs", "jobs"] == 1


def test_host_groups_drop_domain_and_trailing_numbers() -> None:
    assert host_group("zewura12.cerit-sc.cz") == "zewura"
    assert host_group("cpn-f13-03-01") == "cpn-f13-03"
    assert host_group("torque2") == "torque"
    assert host_group("login") == "login"


def test_the_draft_site_loads_and_runs_the_log(log: Path, tmp_path: Path) -> None:
    draft = tmp_path / "draft.yaml"
    draft.write_text(draft_site(inspect_trace(log), "mine"), encoding="utf-8")
    text = draft.read_text()
    assert text.startswith("# DRAFT made by queuesim inspect")
    site = load_site(draft)
    assert {q.name: q.max_walltime for q in site.queues} == {"long": 7200.0, "short": 1800.0}
    assert [(c.name, c.nodes, c.cpus_per_node) for c in site.clusters] == [("node", 2, 5)]
    # job 1 asks for a GPU and a property the draft's nodes do not have: rejected, counted
    workload = load_workload(log, site, CleaningOptions(reject_unrunnable=True))
    counts = {k: v for k, v in workload.cleaning.counts.items() if v}
    assert counts == {
        "not_a_job_record": 1,
        "no_end_record": 1,
        "cancelled": 1,
        "no_node_with_properties": 1,
    }
    assert workload.cleaning.actions["no_end_record"] == "dropped"
    assert workload.cleaning.dropped == 2 and workload.cleaning.rejected == 1


def test_inspect_cli_writes_json_and_a_draft_that_validates(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft, report = tmp_path / "d.yaml", tmp_path / "i.json"
    code, out, err = run_cli(capsys, "inspect", log, "--draft-site", draft, "--json", report)
    assert code == 0, err
    assert "queues (partitions)" in out and "no_end_record" in out
    assert json.loads(report.read_text())["jobs"] == 3
    code, out, _ = run_cli(capsys, "validate", draft)
    assert code == 0 and "✓" in out


def test_convert_to_swf_keeps_the_names_in_the_header(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "log.swf"
    code, _, err = run_cli(capsys, "convert", log, out)
    assert code == 0, err
    swf = read_swf(out)
    original = read_trace(log)
    columns = ["submit", "wait", "runtime", "req_procs", "req_time", "status", "user", "queue"]
    pd.testing.assert_frame_equal(swf.jobs[columns], original.jobs[columns])
    assert swf.header.queues == {1: "short", 2: "long"}
    assert "; User: 2 bob" in swf.header.lines
    assert any(
        "converted by queuesim from accounting.log (pbs)" in line for line in swf.header.lines
    )


def test_convert_to_parquet_keeps_names_and_is_deterministic(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert run_cli(capsys, "convert", log, first)[0] == 0
    assert run_cli(capsys, "convert", log, second)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    frame = pd.read_parquet(first)
    assert frame["user_name"].tolist() == ["alice", "bob", "bob"]
    assert frame["properties"].tolist() == ["fast", "", ""]
    assert b"UnixStartTime: 1000" in pq.read_schema(first).metadata[b"queuesim.header"]


def test_convert_refuses_an_unknown_output_and_a_missing_log(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "convert", log, tmp_path / "out.xlsx")
    assert code == 2 and "expected it to end in .swf, .swf.gz, .parquet" in err
    code, _, err = run_cli(capsys, "convert", tmp_path / "missing.log", tmp_path / "o.swf")
    assert code == 2 and "missing.log" in err


def test_run_takes_a_log_with_format_and_reports_reader_notes(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.yaml"
    text = draft_site(inspect_trace(log), "mine").replace(
        "cpus_per_node: 5  # estimate",
        "cpus_per_node: 8\n    properties: [fast]\n    gpus_per_node: 1",
    )
    draft.write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    code, stdout, err = run_cli(capsys, "run", draft, log, "--format", "pbs", "--out", out)
    assert code == 0, err
    assert "no_end_record" in stdout and "dropped" in stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["cleaning_detail"]["no_end_record"] == {
        "action": "dropped",
        "jobs": 1,
        "first_lines": [5],
    }
    assert metrics["cleaning_detail"]["not_a_job_record"]["action"] == "skipped"
    assert metrics["jobs"] == 2


def test_convert_numbers_alea_queue_names_for_swf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from queuesim.traces.alea_swf import ALEA_FIELDS

    fields = ["1", "0", "0", "10", "1", "-1", "-1", "1", "60", "-1", "1", "3", "1", "1", "-1"]
    rows = [
        " ".join([str(k), *fields[1:], "1", "-1", "-1", "{1}", queue, "1:ppn=1"])
        for k, queue in enumerate(["q_1d", "q_2h", "q_1d"], start=1)
    ]
    assert all(len(r.split()) == ALEA_FIELDS for r in rows)
    source = tmp_path / "alea.swf"
    source.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.swf"
    assert run_cli(capsys, "convert", source, out)[0] == 0
    swf = read_swf(out)
    assert swf.jobs["queue"].tolist() == [1, 2, 1]
    assert swf.header.queues == {1: "q_1d", 2: "q_2h"}
