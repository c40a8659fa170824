"""The Slurm readers (queuesim.traces.slurm): sacct --parsable2 with or without a header,
steps folded, arrays expanded, states mapped and counted, the time limit and memory forms,
the jobcomp/filetxt log, malformed lines reported, and agreement with Open XDMoD."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from queuesim.common.errors import WorkloadError
from queuesim.traces.registry import read_trace
from queuesim.traces.slurm import (
    _array_elements,
    _limit_seconds,
    expand_hostlist,
    parse_tres,
    read_sacct,
    read_slurm_jobcomp,
)

HEADER = (
    "JobID|User|Group|Account|Partition|Submit|Eligible|Start|End|State|ExitCode|NNodes|NCPUS|"
    "ReqCPUS|ReqMem|ReqTRES|AllocTRES|Timelimit|NodeList|Constraints"
)


def row(job: str, state: str = "COMPLETED", **fields: str) -> str:
    values = {
        "JobID": job,
        "User": "alice",
        "Group": "g",
        "Account": "acct",
        "Partition": "batch",
        "Submit": "2024-01-01T00:00:00",
        "Eligible": "2024-01-01T00:00:10",
        "Start": "2024-01-01T00:01:40",
        "End": "2024-01-01T00:11:40",
        "State": state,
        "ExitCode": "0:0",
        "NNodes": "2",
        "NCPUS": "8",
        "ReqCPUS": "8",
        "ReqMem": "1000Mc",
        "ReqTRES": "",
        "AllocTRES": "billing=8,cpu=8,mem=8000M,node=2",
        "Timelimit": "01:00:00",
        "NodeList": "n[01-02]",
        "Constraints": "",
    }
    values.update(fields)
    return "|".join(values[name] for name in HEADER.split("|"))


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_a_row_maps_to_every_documented_field(tmp_path: Path) -> None:
    trace = read_sacct(write(tmp_path / "s", HEADER, row("77")))
    job = trace.jobs.iloc[0]
    assert (job["submit"], job["eligible"], job["wait"], job["runtime"]) == (
        0.0,
        10.0,
        100.0,
        600.0,
    )
    assert (job["req_procs"], job["alloc_procs"], job["nodes"], job["ppn"]) == (8, 8, 2, 4)
    assert job["req_time"] == 3600.0
    assert job["req_memory"] == 1000 * 1024  # 1000 MB per CPU, in KB
    assert (job["queue_name"], job["user_name"], job["group_name"], job["account"]) == (
        "batch",
        "alice",
        "g",
        "acct",
    )
    assert (job["status"], job["exit_status"], job["source_id"], job["line"]) == (1, 0, "77", 2)
    assert job["hosts"] == "n[01-02]" and expand_hostlist(job["hosts"]) == ["n01", "n02"]


def test_columns_are_taken_by_name_in_any_order(tmp_path: Path) -> None:
    names = HEADER.split("|")
    values = row("5").split("|")
    order = list(reversed(range(len(names))))
    text = "|".join(names[i] for i in order), "|".join(values[i] for i in order)
    assert read_sacct(write(tmp_path / "s", *text)).jobs["source_id"].tolist() == ["5"]


def test_a_header_without_a_required_column_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "s", "JobID|User|Submit|End", "1|a|2024-01-01T00:00:00|Unknown")
    with pytest.raises(WorkloadError, match=rf"{path}:1: the header names no Start, State"):
        read_sacct(path)


def test_steps_fold_arrays_expand_and_states_are_counted(tmp_path: Path) -> None:
    lines = [
        HEADER,
        row("10"),  # 2
        row("10.batch"),  # 3 step
        row("10.extern"),  # 4 step
        row("11_3", state="FAILED", ExitCode="2:0"),  # 5 array element
        row("12_[1-2,5%2]", state="TIMEOUT"),  # 6 three elements
        row("13", state="CANCELLED by 1000", Start="Unknown"),  # 7 cancelled before start
        row("14", state="PENDING", Start="Unknown", End="Unknown"),  # 8 not ended
        row("15", state="WEIRD"),  # 9 unknown state
        row("16+0"),  # 10 het component
        row("17", state="REQUEUED"),  # 11 first run of a requeued job
        row("17", End="2024-01-01T00:21:40"),  # 12 its last run
    ]
    trace = read_sacct(write(tmp_path / "s", *lines))
    assert trace.jobs["source_id"].tolist() == [
        "10",
        "11_3",
        "12_1",
        "12_2",
        "12_5",
        "13",
        "16+0",
        "17",
    ]
    assert trace.jobs["status"].tolist() == [1, 0, 0, 0, 0, 5, 1, 1]
    assert trace.jobs["exit_status"].tolist()[1] == 2
    assert trace.jobs["runtime"].tolist()[-1] == 1200.0
    notes = {reason: g["line"].tolist() for reason, g in trace.notes.groupby("reason")}
    assert notes == {
        "step_folded": [3, 4],
        "not_ended": [8],
        "unknown_state": [9],
        "het_component": [10],
        "requeued": [11],
    }


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3-00:00:00", 259200.0),
        ("14:20:00", 51600.0),
        ("30:00", 1800.0),
        ("90", 5400.0),
        ("2-12", 216000.0),
    ],
)
def test_time_limit_forms(text: str, seconds: float) -> None:
    assert _limit_seconds(text) == seconds


@pytest.mark.parametrize("text", ["UNLIMITED", "Partition_Limit", ""])
def test_no_time_limit_is_not_known(text: str, tmp_path: Path) -> None:
    trace = read_sacct(write(tmp_path / "s", HEADER, row("1", Timelimit=text)))
    assert trace.jobs["req_time"].tolist() == [-1.0]


@pytest.mark.parametrize(
    ("req_mem", "req_tres", "kb_per_cpu", "note"),
    [
        ("48000Mn", "", 48000 * 1024 * 2 / 8, None),  # per node, 2 nodes, 8 CPUs
        ("3000Mc", "", 3000 * 1024, None),
        ("4G", "", 4 * 1024 * 1024 * 2 / 8, None),  # no suffix: per node
        ("2147486448Mn", "cpu=8,mem=16000M,node=2", 16000 * 1024 / 8, None),  # ReqTRES wins
        ("2147486448Mn", "", -1.0, "memory_unset"),
    ],
)
def test_memory_forms(
    tmp_path: Path, req_mem: str, req_tres: str, kb_per_cpu: float, note: str | None
) -> None:
    fields = {"ReqMem": req_mem, "ReqTRES": req_tres, "AllocTRES": "cpu=8,node=2"}
    trace = read_sacct(write(tmp_path / "s", HEADER, row("1", **fields)))
    assert trace.jobs["req_memory"].tolist() == [kb_per_cpu]
    assert trace.notes["reason"].tolist() == ([note] if note else [])


def test_simple_constraints_become_properties_others_are_counted(tmp_path: Path) -> None:
    lines = [HEADER, row("1", Constraints="ib&avx2"), row("2", Constraints="[a&b]*2")]
    trace = read_sacct(write(tmp_path / "s", *lines))
    assert trace.jobs["properties"].tolist() == ["ib:avx2", ""]
    assert trace.notes[["line", "reason"]].values.tolist() == [[3, "constraint_not_modelled"]]


def test_gpus_come_from_tres() -> None:
    assert parse_tres("billing=1,cpu=1,gres/gpu:volta=2,mem=125G,node=1") == {
        "cpu": 1.0,
        "gpu": 2.0,
        "mem": 125 * 1024.0,
        "node": 1.0,
    }


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("1|alice", "expected 20 '|'-separated fields, found 2"),
    ],
)
def test_a_malformed_line_names_file_and_line(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path / "s", HEADER, row("1"), line)
    with pytest.raises(WorkloadError, match=rf"{path}:3: {expected}"):
        read_sacct(path)
    trace = read_sacct(path, skip_bad_lines=True)
    assert [b.line for b in trace.bad_lines] == [3] and len(trace.jobs) == 1


def test_a_bad_time_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "s", HEADER, row("1"), row("2", Submit="yesterday"))
    with pytest.raises(WorkloadError, match=rf"{path}:3: Submit: expected a time"):
        read_sacct(path)


def test_jobcomp_lines(tmp_path: Path) -> None:
    line = (
        "JobId=42 UserId=alice(1000) GroupId=g(100) Name=my job JobState=COMPLETED "
        "Partition=batch TimeLimit=60 StartTime=2024-01-01T00:01:40 EndTime=2024-01-01T00:11:40 "
        "NodeList=n[01-02] NodeCnt=2 ProcCnt=8 WorkDir=/home/alice ReservationName= "
        "Tres=cpu=8,mem=8000M,node=2 Account=acct QOS=normal WcKey= Cluster=c "
        "SubmitTime=2024-01-01T00:00:00 EligibleTime=2024-01-01T00:00:10 "
        "DerivedExitCode=0:0 ExitCode=0:0"
    )
    path = write(tmp_path / "jobcomp.log", line)
    trace = read_trace(path)
    job = trace.jobs.iloc[0]
    assert (job["source_id"], job["user_name"], job["group_name"]) == ("42", "alice", "g")
    assert (job["wait"], job["runtime"], job["req_time"]) == (100.0, 600.0, 3600.0)
    assert (job["alloc_procs"], job["nodes"], job["ppn"], job["req_memory"]) == (8, 2, 4, 1024000.0)
    with pytest.raises(WorkloadError, match=rf"{path}:2: expected Key=value"):
        read_slurm_jobcomp(write(tmp_path / "jobcomp.log", line, "nonsense"))


# --------------------------------------------------------------------------- real logs


def test_the_pozidriv_export_reads_its_11704_jobs(site_logs: Path) -> None:
    trace = read_trace(site_logs / "slurm" / "xdmod-pozidriv-2016-12.sacct.log.gz")
    jobs = trace.jobs
    assert len(jobs) == 11704 and trace.notes.empty
    states = jobs["state"].str.split(" ").str[0].value_counts().to_dict()
    assert states == {
        "COMPLETED": 10134,
        "FAILED": 1007,
        "CANCELLED": 468,
        "PREEMPTED": 86,
        "TIMEOUT": 9,
    }
    assert jobs["queue_name"].nunique() == 7
    # line 1: 12 CPUs on one node, 48000 MB per node, 125 days, 7-20:39:39 elapsed
    first = jobs.iloc[0]
    assert (first["source_id"], first["alloc_procs"], first["nodes"]) == ("977669", 12, 1)
    assert first["req_time"] == 125 * 86400.0
    assert first["runtime"] == 7 * 86400 + 20 * 3600 + 39 * 60 + 39
    assert first["req_memory"] == 48000 * 1024 / 12


def test_values_agree_with_open_xdmod(site_logs: Path) -> None:
    folder = site_logs / "slurm"
    trace = read_sacct(folder / "xdmod-unit-slurm-accounting-logs.log")
    expected = json.loads((folder / "xdmod-unit-slurm-accounting-logs.expected.json").read_text())
    assert len(trace.jobs) == len(expected)
    origin = trace.header.unix_start_time
    assert origin is not None
    for job, values in zip(trace.jobs.to_dict(orient="records"), expected, strict=True):
        assert job["source_id"] == values["job_id"]
        assert origin + job["submit"] == values["submit_time"]
        if values["eligible_time"] is not None:  # "Unknown": not known
            assert origin + job["eligible"] == values["eligible_time"]
        else:
            assert job["eligible"] == -1
        assert origin + job["submit"] + job["wait"] == values["start_time"]
        assert job["runtime"] == values["end_time"] - values["start_time"] == values["elapsed"]
        assert job["req_time"] == (values["timelimit"] or -1)
        assert job["alloc_procs"] == (int(values["ncpus"]) or -1)  # 0: not known, as in SWF
        assert job["req_procs"] == (int(values["req_cpus"]) or -1)
        assert job["nodes"] == int(values["nnodes"])
        assert job["queue_name"] == values["partition_name"]
        assert job["account"] == values["account_name"]
        assert job["user_name"] == values["user_name"]
        assert job["state"] == values["state"] or job["state"].startswith(values["state"])
        assert expand_hostlist(job["hosts"]) == expand_hostlist(values["node_list"])


def test_array_ranges_expand_as_open_xdmod_does(site_logs: Path) -> None:
    folder = site_logs / "slurm"
    lines = (folder / "xdmod-unit-slurm-accounting-logs-with-job-arrays.log").read_text().split()
    expected = json.loads(
        (folder / "xdmod-unit-slurm-accounting-logs-with-job-arrays.expected.json").read_text()
    )
    for line, elements in zip(lines, expected, strict=True):
        job_id = line.split("|")[0]
        got = (
            [int(job_id.split("_")[1])]
            if "[" not in job_id
            else _array_elements(job_id.split("[")[1].rstrip("]"))
        )
        assert got == elements, job_id


@pytest.mark.parametrize(
    ("name", "reason"),
    [("non-ended-job-state", "not_ended"), ("unknown-job-state", "unknown_state")],
)
def test_jobs_open_xdmod_skips_are_dropped_and_counted(
    site_logs: Path, name: str, reason: str
) -> None:
    trace = read_sacct(site_logs / "slurm" / f"xdmod-unit-slurm-{name}.log")
    assert trace.jobs.empty
    assert trace.notes["reason"].tolist() == [reason, reason]


def test_gpu_counts_agree_with_open_xdmod(site_logs: Path) -> None:
    cases = json.loads(
        (site_logs / "slurm" / "xdmod-unit-slurm-alloc-tres-gpu-count.json").read_text()
    )
    for text, gpus in cases:
        assert parse_tres(text).get("gpu", 0) == gpus, text


def test_utf8_names_survive(site_logs: Path, tmp_path: Path) -> None:
    trace = read_sacct(site_logs / "slurm" / "xdmod-unit-slurm-utf8-multibyte-chars.log")
    assert len(trace.jobs) == 1
    packed = tmp_path / "x.sacct.gz"
    packed.write_bytes(
        gzip.compress(
            (site_logs / "slurm" / "xdmod-unit-slurm-utf8-multibyte-chars.log").read_bytes()
        )
    )
    assert len(read_trace(packed).jobs) == 1
