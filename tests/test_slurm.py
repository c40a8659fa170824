"""Tests of the Slurm readers (queuesim.traces.slurm): sacct --parsable2 and jobcomp/filetxt.

The real files (Open XDMoD's unit inputs with the values XDMoD parses from them, and an
anonymised production sacct export) live in ../shared/workloads/site-logs/slurm; tests that
need them skip when that folder is absent (``real_workloads`` fixture).
"""

from __future__ import annotations

import gc
import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from queuesim.common.errors import WorkloadError
from queuesim.common.files import UTF8_BOM
from queuesim.traces.log_frame import LOG_COLUMNS
from queuesim.traces.slurm import (
    SACCT_FIELDS,
    XDMOD_FIELDS,
    expand_hostlist,
    gpus_of_tres,
    looks_like_jobcomp,
    looks_like_sacct,
    read_sacct,
    read_slurm_jobcomp,
)
from queuesim.traces.slurm_table import _Table, read_rows
from queuesim.traces.swf import SWF_FIELDS, SwfTrace

HEADER = "|".join(SACCT_FIELDS)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def epoch(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp())


def row(**values: str) -> str:
    """A sacct row in SACCT_FIELDS order: a plain completed 1-node job unless told."""
    base = {
        "JobID": "100",
        "JobIDRaw": "100",
        "Cluster": "c1",
        "Partition": "batch",
        "QOS": "normal",
        "Account": "acct",
        "Group": "grp",
        "GID": "500",
        "User": "alice",
        "UID": "1000",
        "Submit": "2024-01-01T00:00:00",
        "Eligible": "2024-01-01T00:00:10",
        "Start": "2024-01-01T00:01:00",
        "End": "2024-01-01T01:01:00",
        "Elapsed": "01:00:00",
        "ExitCode": "0:0",
        "State": "COMPLETED",
        "NNodes": "1",
        "NCPUS": "4",
        "ReqCPUS": "4",
        "ReqMem": "4000Mn",
        "ReqTRES": "billing=4,cpu=4,mem=4000M,node=1",
        "AllocTRES": "billing=4,cpu=4,mem=4000M,node=1",
        "Timelimit": "02:00:00",
        "NodeList": "n01",
        "Constraints": "",
    }
    unknown = set(values) - set(base)
    assert not unknown, unknown
    base.update(values)
    if "JobIDRaw" not in values:
        base["JobIDRaw"] = base["JobID"].split(".")[0].split("_")[0].split("+")[0]
    return "|".join(base[name] for name in SACCT_FIELDS)


def sacct(tmp_path: Path, *rows: str, header: bool = True, name: str = "x.sacct") -> SwfTrace:
    text = "\n".join(([HEADER] if header else []) + list(rows)) + "\n"
    return read_sacct(write(tmp_path / name, text))


def notes_of(trace: SwfTrace) -> dict[tuple[str, str], int]:
    counts = trace.notes.groupby(["reason", "action"]).size()
    return {
        (str(reason), str(action)): int(n)
        for reason, action, n in zip(
            counts.index.get_level_values(0), counts.index.get_level_values(1), counts, strict=True
        )
    }


def absolute(trace: SwfTrace) -> pd.DataFrame:
    """Epoch times of the jobs (NaN where unknown)."""
    jobs = trace.jobs
    origin = trace.header.unix_start_time or 0
    submit = jobs["submit"] + origin
    start = np.where(jobs["wait"] >= 0, submit + jobs["wait"], np.nan)
    end = np.where(jobs["runtime"] >= 0, start + jobs["runtime"], np.nan)
    eligible = np.where(jobs["eligible"] >= 0, jobs["eligible"] + origin, np.nan)
    return pd.DataFrame({"submit": submit, "start": start, "end": end, "eligible": eligible})


def slurm_dir(real_workloads: Path) -> Path:
    folder = real_workloads / "site-logs" / "slurm"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


# --------------------------------------------------------------------------- XDMoD unit files


def xdmod_pair(folder: Path, name: str) -> tuple[SwfTrace, Any]:
    trace = read_sacct(folder / f"xdmod-unit-slurm-{name}.log")
    expected = json.loads((folder / f"xdmod-unit-slurm-{name}.expected.json").read_text("utf-8"))
    return trace, expected


@pytest.mark.realtrace
def test_xdmod_accounting_logs_field_by_field(real_workloads: Path) -> None:
    trace, expected = xdmod_pair(slurm_dir(real_workloads), "accounting-logs")
    jobs = trace.jobs
    times = absolute(trace)
    assert len(jobs) == len(expected) == 4 and trace.bad_lines == ()
    for index, want in enumerate(expected):
        job = jobs.iloc[index]
        when = times.iloc[index]
        # job_id_raw equals job_id here; no array index (-1 in XDMoD)
        assert job["source_id"] == want["job_id"] == want["job_id_raw"]
        assert want["job_array_index"] == -1
        # cluster_name: XDMoD's test config renames the cluster ("testresource"); not kept
        assert job["queue_name"] == want["partition_name"]
        assert job["account"] == want["account_name"]
        assert job["group_name"] == want["group_name"]
        assert job["user_name"] == want["user_name"]
        # gid_number, uid_number, qos_name, job_name: not kept (names are present)
        assert when["submit"] == want["submit_time"]
        if want["eligible_time"] is None:
            assert np.isnan(when["eligible"])
        else:
            assert when["eligible"] == want["eligible_time"]
        assert when["start"] == want["start_time"]
        assert when["end"] == want["end_time"]
        assert job["runtime"] == want["elapsed"]  # End - Start equals Elapsed
        code, _, signal = want["exit_code"].partition(":")
        assert signal == "0" and job["exit_status"] == int(code)
        assert job["state"] == want["state"]
        assert job["status"] == {"TIMEOUT": 0, "COMPLETED": 1}.get(want["state"], 5)
        # counts: XDMoD keeps the strings; 0 is "unknown" here (-1 in SWF, 0 in nodes)
        assert job["nodes"] == int(want["nnodes"])
        assert job["alloc_procs"] == (int(want["ncpus"]) or -1)
        assert job["req_procs"] == (int(want["req_cpus"]) or -1)
        # timelimit in seconds (null: empty) -> requested time, -1 when unknown
        assert job["req_time"] == (want["timelimit"] if want["timelimit"] else -1)
        # node_list kept compressed by XDMoD; here expanded, '+'-joined
        assert job["hosts"] == "+".join(expand_hostlist(want["node_list"]))
        assert job["gpus"] == want["ngpus"]
    # req_mem: XDMoD keeps the string; here KB per requested CPU
    assert [m for m in (e["req_mem"] for e in expected)] == ["3000Mc", "48000Mn", "3000Mc", "0n"]
    assert jobs["req_memory"].tolist() == [
        3000 * 1024,  # per CPU as it is
        48000 * 3 * 1024 / 36,  # per node x 3 nodes over 36 CPUs
        3000 * 1024,
        -1,  # 0n: --mem=0, unknown
    ]
    assert len(expand_hostlist(expected[0]["node_list"])) == 32 == jobs["nodes"].iloc[0]


@pytest.mark.realtrace
def test_xdmod_job_arrays_expand_as_xdmod_does(real_workloads: Path) -> None:
    trace, expected = xdmod_pair(slurm_dir(real_workloads), "accounting-logs-with-job-arrays")
    jobs = trace.jobs
    by_line = jobs.groupby("line")["source_id"].apply(list)
    assert list(by_line.index) == [1, 2, 3, 4, 5, 6]
    indices = [[int(s.split("_")[1]) for s in ids] for ids in by_line]
    assert indices == expected
    assert all(s.startswith("4103947_") for s in jobs["source_id"])
    # ranges that overlap give the same element twice: both kept, the earlier flagged
    repeated = sum(len(i) for i in expected) - len({i for e in expected for i in e})
    assert notes_of(trace) == {("duplicate_id", "warning"): repeated}


@pytest.mark.realtrace
def test_xdmod_non_ended_jobs_are_dropped(real_workloads: Path) -> None:
    trace, expected = xdmod_pair(slurm_dir(real_workloads), "non-ended-job-state")
    # XDMoD: "Skipping job with non-ended state" for both
    assert len(expected) == 2 and len(trace.jobs) == 0
    assert trace.notes["reason"].tolist() == ["not_ended", "not_ended"]
    assert trace.notes["job"].tolist() == ["3451067", "3483276"]
    assert trace.notes["line"].tolist() == [1, 2]


@pytest.mark.realtrace
def test_xdmod_unknown_states_are_kept_as_failed_with_a_warning(real_workloads: Path) -> None:
    trace, expected = xdmod_pair(slurm_dir(real_workloads), "unknown-job-state")
    # XDMoD warns "Found job with unknown state" and skips the job; here the job is kept
    # as failed (status 0), with the warning as a note
    assert all("warning" in e for e in expected)
    assert trace.jobs["state"].tolist() == ["FOO", "BAR"]
    assert trace.jobs["status"].tolist() == [0, 0]
    assert notes_of(trace) == {("unknown_state", "warning"): 2}


@pytest.mark.realtrace
def test_xdmod_utf8_names(real_workloads: Path) -> None:
    folder = slurm_dir(real_workloads)
    trace, expected = xdmod_pair(folder, "utf8-multibyte-chars")
    assert len(trace.jobs) == 1
    # the job name is not a trace column: check it as the table holds it
    path = folder / "xdmod-unit-slurm-utf8-multibyte-chars.log"
    table, _ = read_rows(path, skip_bad_lines=False)
    assert "JobName" not in table.columns  # not converted at all
    names = [line.split("|")[-1] for line in path.read_text("utf-8").splitlines()]
    assert names == [e["job_name"] for e in expected] == ["aàb"]


@pytest.mark.realtrace
def test_xdmod_alloc_tres_gpu_counts(real_workloads: Path, tmp_path: Path) -> None:
    folder = slurm_dir(real_workloads)
    cases = json.loads((folder / "xdmod-unit-slurm-alloc-tres-gpu-count.json").read_text())
    assert len(cases) == 9
    for tres, gpus in cases:
        assert gpus_of_tres(tres) == gpus, tres
    rows = [
        row(JobID=str(100 + i), AllocTRES=tres, ReqTRES="cpu=1")
        for i, (tres, _) in enumerate(cases)
    ]
    trace = sacct(tmp_path, *rows)
    assert trace.jobs["gpus"].tolist() == [g for _, g in cases]


# --------------------------------------------------------------------------- the pozidriv log


POZIDRIV = "xdmod-pozidriv-2016-12.sacct.log.gz"


@pytest.fixture(scope="module")
def pozidriv() -> tuple[SwfTrace, list[list[str]]]:
    from conftest import shared_workloads_dir

    path = shared_workloads_dir() / "site-logs" / "slurm" / POZIDRIV
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    raw = [line.split("|") for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    return read_sacct(path), raw


@pytest.mark.realtrace
def test_pozidriv_reads_every_job(pozidriv: tuple[SwfTrace, list[list[str]]]) -> None:
    trace, raw = pozidriv
    jobs = trace.jobs
    assert len(jobs) == len(raw) == 11_704 and trace.bad_lines == ()
    assert list(jobs.columns) == [*SWF_FIELDS, "line", *LOG_COLUMNS]
    assert jobs["line"].tolist() == list(range(1, 11_705))
    words = jobs["state"].str.split(" ").str[0].value_counts().to_dict()
    assert words == {
        "COMPLETED": 10_134,
        "FAILED": 1_007,
        "CANCELLED": 468,
        "PREEMPTED": 86,
        "TIMEOUT": 9,
    }
    assert jobs["status"].value_counts().to_dict() == {1: 10_134, 0: 1_007 + 86 + 9, 5: 468}
    assert jobs["queue_name"].nunique() == 7
    # the only notes: 58 Timelimit=Partition_Limit
    assert notes_of(trace) == {("walltime_unlimited", "warning"): 58}
    assert (jobs["req_time"] == -1).sum() == 58


@pytest.mark.realtrace
def test_pozidriv_values_against_the_raw_fields(
    pozidriv: tuple[SwfTrace, list[list[str]]],
) -> None:
    trace, raw = pozidriv
    jobs = trace.jobs
    times = absolute(trace)
    col = {name: i for i, name in enumerate(XDMOD_FIELDS)}

    def seconds(text: str) -> int:
        days, _, clock = text.rpartition("-")
        h, m, s = (int(x) for x in clock.split(":"))
        return int(days or 0) * 86400 + h * 3600 + m * 60 + s

    assert times["submit"].tolist() == [epoch(r[col["Submit"]]) for r in raw]
    assert jobs["runtime"].tolist() == [seconds(r[col["Elapsed"]]) for r in raw]
    assert jobs["alloc_procs"].tolist() == [int(r[col["NCPUS"]]) for r in raw]
    assert jobs["user_name"].tolist() == [r[col["User"]] for r in raw]
    hosts = ["+".join(expand_hostlist(r[col["NodeList"]])) for r in raw]
    assert jobs["hosts"].tolist() == hosts
    assert sum(h == "" for h in hosts) == sum(r[col["NodeList"]] == "None assigned" for r in raw)
    # ReqMem: 10,626 values from 2^31 MB (Slurm < 17.02 flagged per-CPU memory with bit 31);
    # decoded, every job's memory equals the mem of its ReqTRES
    flagged = sum(int(r[col["ReqMem"]].rstrip("Mn")) >= 2**31 for r in raw if "G" not in r[20])
    assert flagged == 10_626

    def tres_mb(text: str) -> float:
        mem = dict(item.split("=") for item in text.split(","))["mem"]
        return float(mem[:-1]) * (1024 if mem.endswith("G") else 1)

    total_mb = jobs["req_memory"] * jobs["req_procs"] / 1024
    assert np.allclose(total_mb, [tres_mb(r[col["ReqTRES"]]) for r in raw])


@pytest.mark.realtrace
def test_pozidriv_rows_checked_by_hand(pozidriv: tuple[SwfTrace, list[list[str]]]) -> None:
    trace, _ = pozidriv
    jobs = trace.jobs.set_index("source_id")
    times = absolute(trace).set_index(trace.jobs["source_id"])
    # 977669|...|croutons|apple|calla|calla|104475|turdo|503801|2016-12-21T21:43:34|
    # 2016-12-21T21:43:34|2016-12-22T07:03:30|2016-12-30T03:43:09|7-20:39:39|0:0|COMPLETED|
    # 1|12|12|48000Mn|cpu=12,mem=48000M,node=1|...|125-00:00:00|cpn-f15-27|<hash>
    job = jobs.loc["977669"]
    assert times.loc["977669", "submit"] == 1482356614
    assert times.loc["977669", "start"] == 1482390210
    assert job["runtime"] == 7 * 86400 + 20 * 3600 + 39 * 60 + 39
    assert (job["queue_name"], job["user_name"], job["group_name"]) == (
        "croutons",
        "turdo",
        "calla",
    )
    assert (job["req_procs"], job["nodes"], job["ppn"], job["status"]) == (12, 1, 12, 1)
    assert job["req_time"] == 125 * 86400
    assert job["req_memory"] == 48000 * 1024 / 12
    assert job["hosts"] == "cpn-f15-27"
    # 982221: CANCELLED by 423120 after running 4-12:24:26
    job = jobs.loc["982221"]
    assert (job["state"], job["status"]) == ("CANCELLED by 423120", 5)
    assert job["runtime"] == 4 * 86400 + 12 * 3600 + 24 * 60 + 26


# --------------------------------------------------------------------------- header, columns


def test_header_columns_in_any_order_with_extra_ones(tmp_path: Path) -> None:
    names = ["State", "JobID", "Extra", "End", "Start", "Submit", "NCPUS", "Partition"]
    text = "|".join(names) + "\nCOMPLETED|7|zzz|2024-01-01T02:00:00|2024-01-01T01:00:00|"
    text += "2024-01-01T00:00:00|8|p\n"
    trace = read_sacct(write(tmp_path / "a.sacct", text))
    job = trace.jobs.iloc[0]
    assert (job["source_id"], job["alloc_procs"], job["queue_name"]) == ("7", 8, "p")
    assert (job["wait"], job["runtime"], job["line"]) == (3600, 3600, 2)
    assert (job["req_procs"], job["req_time"], job["user_name"], job["hosts"]) == (-1, -1, "", "")


def test_header_is_case_insensitive_and_same_as_headerless(tmp_path: Path) -> None:
    lines = [row(JobID="1"), row(JobID="2", State="FAILED", ExitCode="3:0")]
    with_header = sacct(tmp_path, *lines, name="h.sacct")
    xdmod = [line.rsplit("|", 1)[0] + "|somename" for line in lines]  # JobName, not Constraints
    without = sacct(tmp_path, *xdmod, header=False, name="n.sacct")
    pd.testing.assert_frame_equal(
        with_header.jobs.drop(columns="line"), without.jobs.drop(columns="line")
    )
    lower = write(tmp_path / "l.sacct", HEADER.lower() + "\n" + lines[0] + "\n")
    assert read_sacct(lower).jobs["source_id"].tolist() == ["1"]


def test_missing_required_columns_are_named(tmp_path: Path) -> None:
    path = write(tmp_path / "m.sacct", "JobID|Submit|Start|Partition\n1|x|y|p\n")
    with pytest.raises(WorkloadError) as error:
        read_sacct(path)
    message = str(error.value)
    assert str(path) in message and ":1:" in message
    assert "End" in message and "State" in message and "NCPUS or ReqCPUS" in message


def test_headerless_file_must_have_the_26_xdmod_fields(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.sacct", "\n" + "|".join(["1"] * 25) + "\n")
    with pytest.raises(WorkloadError, match=r"bad\.sacct:2: no sacct header.*25 .*26 fields"):
        read_sacct(path)


def test_empty_file_and_header_only_give_no_jobs(tmp_path: Path) -> None:
    assert len(read_sacct(write(tmp_path / "e.sacct", "")).jobs) == 0
    assert len(read_sacct(write(tmp_path / "h.sacct", HEADER + "\n")).jobs) == 0


def test_gzip_and_crlf(tmp_path: Path) -> None:
    text = HEADER + "\r\n" + row(JobID="5") + "\r\n"
    path = tmp_path / "x.sacct.gz"
    path.write_bytes(gzip.compress(text.encode()))
    trace = read_sacct(path)
    assert trace.jobs["source_id"].tolist() == ["5"]
    assert trace.jobs["properties"].tolist() == [""]


# --------------------------------------------------------------------------- malformed lines


def test_wrong_field_count_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "b.sacct",
        "\n".join([HEADER, row(JobID="1"), "", "1|2|3", row(JobID="2")]) + "\n",
    )
    with pytest.raises(
        WorkloadError, match=r"b\.sacct:4: expected 26 \|-separated fields, found 3"
    ):
        read_sacct(path)
    trace = read_sacct(path, skip_bad_lines=True)
    assert trace.jobs["source_id"].tolist() == ["1", "2"]
    assert trace.jobs["line"].tolist() == [2, 5]  # the blank line 3 is skipped, counted
    assert [(b.line, b.text) for b in trace.bad_lines] == [(4, "1|2|3")]


def test_pipe_in_the_last_free_text_column_is_given_back(tmp_path: Path) -> None:
    # Constraints is last in SACCT_FIELDS: an OR constraint adds a field
    trace = sacct(tmp_path, row(JobID="1", Constraints="ib|eth"), row(JobID="2", Constraints="a&b"))
    assert trace.bad_lines == ()
    assert trace.jobs["properties"].tolist() == ["", "a:b"]
    assert notes_of(trace) == {("constraint_not_modelled", "warning"): 1}
    # headerless XDMoD order: JobName last
    xdmod = row(JobID="3").rsplit("|", 1)[0] + "|name|with|pipes"
    assert len(sacct(tmp_path, xdmod, header=False, name="n.sacct").jobs) == 1


def test_extra_fields_elsewhere_are_malformed(tmp_path: Path) -> None:
    names = [n for n in SACCT_FIELDS if n != "Constraints"]  # Timelimit|NodeList last
    line = row(JobID="1").rsplit("|", 1)[0] + "|extra"
    path = write(tmp_path / "c.sacct", "|".join(names) + "\n" + line + "\n")
    with pytest.raises(WorkloadError, match=r"c\.sacct:2: expected 25 .*found 26"):
        read_sacct(path)


def test_bad_job_id_is_malformed(tmp_path: Path) -> None:
    path = write(tmp_path / "j.sacct", "\n".join([HEADER, row(JobID="abc"), row(JobID="9")]))
    with pytest.raises(WorkloadError, match=r"j\.sacct:2: JobID 'abc' is not a Slurm job id"):
        read_sacct(path)
    trace = read_sacct(path, skip_bad_lines=True)
    assert trace.jobs["source_id"].tolist() == ["9"]
    assert [b.line for b in trace.bad_lines] == [2]
    assert trace.bad_lines[0].text.startswith("abc|")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("Submit", "2024-13-45T00:00:00"),  # a month and day that do not exist
        ("End", "soon"),
        ("NCPUS", "-4"),
        ("NNodes", "two"),
    ],
)
def test_a_time_or_count_that_is_not_one_is_an_error_naming_line_and_column(
    tmp_path: Path, field: str, value: str
) -> None:
    """A Submit/Start/End/Eligible that is not a time, or an NCPUS/ReqCPUS/NNodes that is
    not a whole number >= 0, is not read as unknown in silence: an error naming the file,
    line, column and value; with skip_bad_lines the job is kept, the value unknown and
    noted ``bad_<column>``."""
    path = write(
        tmp_path / "v.sacct", "\n".join([HEADER, row(JobID="1"), row(JobID="2", **{field: value})])
    )
    with pytest.raises(WorkloadError, match=rf"v\.sacct:3: {field}: expected .*found '{value}'"):
        read_sacct(path)
    trace = read_sacct(path, skip_bad_lines=True)
    assert trace.jobs["source_id"].tolist() == ["1", "2"]
    assert notes_of(trace) == {(f"bad_{field.lower()}", "warning"): 1}


def test_not_utf8_is_read_with_replacement(tmp_path: Path) -> None:
    data = (HEADER + "\n" + row(JobID="1", User="x")).encode().replace(b"|x|", b"|\xff|")
    path = tmp_path / "u.sacct"
    path.write_bytes(data)
    assert read_sacct(path).jobs["user_name"].tolist() == ["\ufffd"]


# --------------------------------------------------------------------------- job ids


def test_steps_are_folded_into_their_job(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="10"),
        row(JobID="10.batch", NCPUS="1", State="CANCELLED"),
        row(JobID="10.extern"),
        row(JobID="10.0", Start="2030-01-01T00:00:00"),
        row(JobID="11_3"),
        row(JobID="11_3.batch"),
        row(JobID="12.batch"),  # its job is not in the file
    )
    jobs = trace.jobs
    assert jobs["source_id"].tolist() == ["10", "11_3"]
    assert jobs["alloc_procs"].tolist() == [4, 4] and jobs["status"].tolist() == [1, 1]
    assert notes_of(trace) == {("step_folded", "dropped"): 4, ("orphan_step", "dropped"): 1}
    orphan = trace.notes[trace.notes["reason"] == "orphan_step"]
    assert orphan[["line", "job"]].values.tolist() == [[8, "12.batch"]]


def test_array_elements_and_pending_ranges(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="20_4"),
        row(JobID="20_[1-3,7-11:2%2]", State="PENDING", Start="Unknown", End="Unknown"),
        row(JobID="21_[5]", State="COMPLETED"),
    )
    assert trace.jobs["source_id"].tolist() == ["20_4", "21_5"]
    pending = trace.notes[trace.notes["reason"] == "not_ended"]
    assert pending["job"].tolist() == ["20_1", "20_2", "20_3", "20_7", "20_9", "20_11"]
    assert set(pending["line"]) == {3} and set(pending["action"]) == {"dropped"}


def test_heterogeneous_components_are_jobs(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="30+0", JobIDRaw="30", NCPUS="1", ReqCPUS="1"),
        row(JobID="30+1", JobIDRaw="31", NCPUS="16", ReqCPUS="16", NNodes="2"),
        row(JobID="30+1.0", JobIDRaw="31.0"),
    )
    assert trace.jobs["source_id"].tolist() == ["30+0", "30+1"]
    assert trace.jobs["ppn"].tolist() == [1, 8]
    assert notes_of(trace) == {("het_component", "warning"): 2, ("step_folded", "dropped"): 1}


def test_requeued_runs_keep_the_last_record(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="40", State="REQUEUED", End="2024-01-01T00:30:00"),
        row(JobID="41"),
        row(JobID="40", Submit="2024-01-01T00:30:00", Start="2024-01-01T00:40:00"),
        row(JobID="42", State="REQUEUED"),  # requeued at the end of the log
        row(JobID="43", Cluster="c1"),
        row(JobID="43", Cluster="c2"),  # another cluster's job
        row(JobID="44", State="FAILED"),
        row(JobID="44"),  # the same id again, not requeued: both kept
    )
    jobs = trace.jobs
    assert jobs["source_id"].tolist() == ["41", "40", "43", "43", "44", "44"]
    assert jobs["line"].tolist() == [3, 4, 6, 7, 8, 9]
    assert notes_of(trace) == {
        ("requeued", "repaired"): 1,
        ("not_ended", "dropped"): 1,
        ("duplicate_id", "warning"): 1,
    }


def test_sacct_read_frees_its_columns_without_the_garbage_collector(tmp_path: Path) -> None:
    """No reference cycle keeps the table of read columns alive once read_sacct returns:
    on a million-row log those columns are ~140 MB that would otherwise still be held while
    the frame is built (a recursive closure over the table once did this)."""
    path = write(tmp_path / "x.sacct", "\n".join([HEADER, row(JobID="1"), row(JobID="2")]))
    gc.collect()
    gc.disable()
    try:
        trace = read_sacct(path)
        held = [o for o in gc.get_objects() if type(o) is _Table]  # type(): a dead proxy raises
    finally:
        gc.enable()
    assert len(trace.jobs) == 2
    assert held == []


# --------------------------------------------------------------------------- states


def test_states_map_to_swf_status(tmp_path: Path) -> None:
    states = {
        "COMPLETED": 1,
        "FAILED": 0,
        "TIMEOUT": 0,
        "NODE_FAIL": 0,
        "OUT_OF_MEMORY": 0,
        "PREEMPTED": 0,
        "BOOT_FAIL": 0,
        "DEADLINE": 0,
        "CANCELLED": 5,
        "CANCELLED by 1000": 5,
        "CANCELLED+": 5,
        "WEIRD": 0,
    }
    rows = [row(JobID=str(i), State=s) for i, s in enumerate(states)]
    dropped = ["PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "REVOKED"]
    rows += [row(JobID=str(100 + i), State=s) for i, s in enumerate(dropped)]
    trace = sacct(tmp_path, *rows)
    assert trace.jobs["state"].tolist() == list(states)
    assert trace.jobs["status"].tolist() == list(states.values())
    assert notes_of(trace) == {
        ("unknown_state", "warning"): 1,
        ("not_ended", "dropped"): 4,
        ("revoked", "dropped"): 1,
    }


def test_exit_codes(tmp_path: Path) -> None:
    codes = {"0:0": 0, "2:0": 2, "0:9": 137, "0:15": 143, "": -1}
    trace = sacct(tmp_path, *[row(JobID=str(i), ExitCode=c) for i, c in enumerate(codes)])
    assert trace.jobs["exit_status"].tolist() == list(codes.values())


def test_unknown_times_are_nan(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="1", State="CANCELLED", Start="None", End="2024-01-01T00:05:00"),
        row(JobID="2", Eligible="Unknown"),
        row(JobID="3", Submit="", Start="2024-01-01T00:02:00"),
    )
    jobs = trace.jobs
    assert (jobs["wait"].iloc[0], jobs["runtime"].iloc[0], jobs["status"].iloc[0]) == (-1, -1, 5)
    assert jobs["eligible"].iloc[1] == -1
    assert jobs["submit"].iloc[2] == -1 and trace.header.unix_start_time == epoch(
        "2024-01-01T00:00:00"
    )


def test_a_time_that_is_not_one_is_nan_when_bad_lines_are_skipped(tmp_path: Path) -> None:
    """With skip_bad_lines a malformed time is unknown (no runtime), the rest of the job
    read (without it: an error, test_a_time_or_count_that_is_not_one_is_an_error...)."""
    text = "\n".join([HEADER, row(JobID="1", End="soon"), row(JobID="2")]) + "\n"
    trace = read_sacct(write(tmp_path / "x.sacct", text), skip_bad_lines=True)
    assert trace.jobs["runtime"].tolist() == [-1, 3600]
    assert (trace.jobs["wait"] == 60).all()


def test_byte_order_mark_and_leading_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "bom.sacct"
    path.write_bytes(UTF8_BOM + b"\n\n" + (HEADER + "\n" + row(JobID="8")).encode())
    trace = read_sacct(path)
    assert trace.jobs[["source_id", "line"]].values.tolist() == [["8", 4]]


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("limit", "seconds", "unlimited"),
    [
        ("3-00:00:00", 259_200, False),
        ("1-06:00:00", 108_000, False),
        ("1-02", 93_600, False),
        ("1-02:30", 95_400, False),
        ("125-00:00:00", 10_800_000, False),
        ("02:00:00", 7200, False),
        ("30:00", 1800, False),
        ("05:30.250", 330, False),
        ("45", 2700, False),
        ("0", -1, False),
        ("UNLIMITED", -1, True),
        ("Partition_Limit", -1, True),
        ("", -1, False),
        ("garbage", -1, False),
    ],
)
def test_timelimit_forms(tmp_path: Path, limit: str, seconds: int, unlimited: bool) -> None:
    trace = sacct(tmp_path, row(Timelimit=limit))
    assert trace.jobs["req_time"].tolist() == [seconds]
    expected = {("walltime_unlimited", "warning"): 1} if unlimited else {}
    assert notes_of(trace) == expected


@pytest.mark.parametrize(
    ("req_mem", "req_tres", "kb_per_cpu", "note"),
    [
        # 2 nodes, 8 CPUs requested
        ("48000Mn", "", 48000 * 2 / 8 * 1024, None),
        ("3000Mc", "", 3000 * 1024, None),
        ("1.50Gn", "", 1.5 * 1024 * 2 / 8 * 1024, None),
        ("512Kc", "", 512, None),
        ("2Tn", "", 2 * 1024**3 * 2 / 8, None),
        ("48000M", "", 48000 / 8 * 1024, None),  # newer Slurm: the job's total
        ("64G", "", 64 * 1024 / 8 * 1024, None),
        ("2147486648Mn", "cpu=8,mem=24000M,node=2", 3000 * 1024, None),  # flag, confirmed
        ("2147486648Mn", "", 3000 * 1024, ("memory_per_cpu_flag", "repaired")),
        ("9223372036854775807Mn", "", -1, ("memory_unset", "warning")),
        ("2147483648Mn", "", -1, ("memory_unset", "warning")),
        ("0n", "", -1, None),
        ("0c", "cpu=8,mem=16000M,node=2", -1, None),
        ("", "cpu=8,mem=16000M,node=2", 16000 / 8 * 1024, None),
        ("", "cpu=8,mem=16G,node=2", 16 * 1024 / 8 * 1024, None),
        ("", "", -1, None),
        ("lots", "", -1, ("memory_unset", "warning")),
    ],
)
def test_req_mem_forms(
    tmp_path: Path, req_mem: str, req_tres: str, kb_per_cpu: float, note: tuple[str, str] | None
) -> None:
    line = row(ReqMem=req_mem, ReqTRES=req_tres, ReqCPUS="8", NCPUS="8", NNodes="2")
    trace = sacct(tmp_path, line)
    assert trace.jobs["req_memory"].tolist() == pytest.approx([kb_per_cpu])
    assert notes_of(trace) == ({note: 1} if note else {})


def test_cpus_nodes_gpus_from_tres_when_counts_are_missing(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(
            JobID="1",
            NCPUS="",
            ReqCPUS="",
            NNodes="",
            ReqTRES="cpu=6,gres/gpu=1,node=2",
            AllocTRES="cpu=12,gres/gpu:a100=2,gres/gpu:v100=1,node=3",
        ),
        row(JobID="2", ReqTRES="billing=4,cpu=4,gres/gpu=2", AllocTRES=""),
    )
    jobs = trace.jobs
    assert jobs["req_procs"].tolist() == [6, 4]
    assert jobs["alloc_procs"].tolist() == [12, 4]
    assert jobs["nodes"].tolist() == [3, 1]
    assert jobs["gpus"].tolist() == [3, 2]


def test_ppn_when_cpus_divide_over_nodes(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="1", NNodes="2", NCPUS="24"),
        row(JobID="2", NNodes="2", NCPUS="25", ReqCPUS="25"),
        row(JobID="3", NNodes="1", NCPUS="7"),
        row(JobID="4", NNodes="0", NCPUS="0", ReqCPUS="0", ReqTRES="", AllocTRES=""),
    )
    assert trace.jobs["ppn"].tolist() == [12, 0, 7, 0]
    assert trace.jobs["nodes"].tolist() == [2, 2, 1, 0]
    assert notes_of(trace) == {("ppn_uneven", "warning"): 1}
    assert trace.jobs["exclusive"].tolist() == [False] * 4


def test_counts_that_are_not_numbers_are_unknown(tmp_path: Path) -> None:
    trace = sacct(tmp_path, row(JobID="1", NNodes="1-2", NCPUS="8"), row(JobID="2", NNodes="2"))
    assert trace.jobs["nodes"].tolist() == [1, 2]  # the first from its AllocTRES node=1
    assert trace.jobs["alloc_procs"].tolist() == [8, 4]


def test_names_partitions_and_constraints(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="1", User="", UID="1001", Group="", GID="77", Partition="a,b"),
        row(JobID="2", Constraints="intel&ib&intel"),
        row(JobID="3", Constraints="[rack1|rack2]"),
        row(JobID="4", Constraints="gpu*2"),
    )
    jobs = trace.jobs
    assert jobs["user_name"].tolist() == ["1001", "alice", "alice", "alice"]
    assert jobs["group_name"].tolist() == ["77", "grp", "grp", "grp"]
    assert jobs["queue_name"].tolist() == ["a", "batch", "batch", "batch"]
    assert jobs["properties"].tolist() == ["", "intel:ib", "", ""]
    assert notes_of(trace) == {
        ("partition_list", "warning"): 1,
        ("constraint_not_modelled", "warning"): 2,
    }


@pytest.mark.parametrize(
    ("hostlist", "hosts"),
    [
        ("n01", ["n01"]),
        ("cpn-f13-03-[01-02,05]", ["cpn-f13-03-01", "cpn-f13-03-02", "cpn-f13-03-05"]),
        ("d09n04s[01-02],k10n26s01", ["d09n04s01", "d09n04s02", "k10n26s01"]),
        ("d[1-2]n[3,5]", ["d1n3", "d1n5", "d2n3", "d2n5"]),
        ("a[8-10]", ["a8", "a9", "a10"]),
        ("rack[1]-x", ["rack1-x"]),
        ("None assigned", []),
        ("", []),
    ],
)
def test_expand_hostlist(hostlist: str, hosts: list[str]) -> None:
    assert expand_hostlist(hostlist) == hosts


def test_hosts_column(tmp_path: Path) -> None:
    trace = sacct(
        tmp_path,
        row(JobID="1", NodeList="n[01-03]", NNodes="3", NCPUS="3"),
        row(JobID="2", NodeList="None assigned", State="CANCELLED"),
        row(JobID="3", NodeList="n[5-3]"),  # not a range: kept as written
    )
    assert trace.jobs["hosts"].tolist() == ["n01+n02+n03", "", "n[5-3]"]


def test_total_cpu_gives_cpu_time(tmp_path: Path) -> None:
    text = "JobID|Submit|Start|End|State|NCPUS|TotalCPU\n"
    text += "1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|4|"
    text += "02:00:00\n2|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|"
    text += "COMPLETED|2|01:30.500\n"
    trace = read_sacct(write(tmp_path / "t.sacct", text))
    assert trace.jobs["avg_cpu_time"].tolist() == [1800, 45]


# --------------------------------------------------------------------------- sniffers


def test_sniffers(tmp_path: Path) -> None:
    assert looks_like_sacct([HEADER.encode()])
    assert looks_like_sacct([b"\xef\xbb\xbf", b"jobid|state"])
    assert looks_like_sacct([row(JobID="1_[2-3]").rsplit("|", 1)[0].encode() + b"|name"])
    assert not looks_like_sacct([b"1 2 3 4"])
    assert not looks_like_sacct([b"a|b|c"])
    assert not looks_like_sacct([])
    assert looks_like_jobcomp([b"", JOBCOMP_LINES[0].encode()])
    assert not looks_like_jobcomp([HEADER.encode()])
    assert not looks_like_sacct([JOBCOMP_LINES[0].encode()])


@pytest.mark.realtrace
def test_sniffers_on_the_real_files(real_workloads: Path) -> None:
    folder = slurm_dir(real_workloads)
    for path in sorted(folder.glob("*.log")):
        first = path.read_bytes().splitlines()[:5]
        assert looks_like_sacct(first) and not looks_like_jobcomp(first), path
    first = gzip.decompress((folder / POZIDRIV).read_bytes()).splitlines()[:5]
    assert looks_like_sacct(first)


# --------------------------------------------------------------------------- jobcomp/filetxt


JOBCOMP_LINES = [
    "JobId=123 UserId=alice(1000) GroupId=staff(100) Name=my job JobState=COMPLETED "
    "Partition=batch TimeLimit=60 StartTime=2016-12-21T10:00:00 EndTime=2016-12-21T10:30:00 "
    "NodeList=n[1-2] NodeCnt=2 ProcCnt=24 WorkDir=/home/alice/my dir ReservationName= "
    "Tres=cpu=24,mem=48000M,node=2,billing=24,gres/gpu=2 Account=proj QOS=normal WcKey= "
    "Cluster=c1 SubmitTime=2016-12-21T09:00:00 EligibleTime=2016-12-21T09:00:05 "
    "DerivedExitCode=0:0 ExitCode=0:0",
    "JobId=124 UserId=bob(1001) GroupId=staff(100) Name=x JobState=CANCELLED Partition=long "
    "TimeLimit=UNLIMITED StartTime=2016-12-21T11:00:00 EndTime=2016-12-21T11:00:30 "
    "NodeList=n3 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1,node=1 "
    "Account= QOS= WcKey= Cluster=c1 SubmitTime=2016-12-21T10:59:00 EligibleTime=Unknown "
    "DerivedExitCode=0:0 ExitCode=0:15",
    "JobId=125 UserId=(1002) GroupId=(100) Name=y JobState=TIMEOUT Partition=batch "
    "TimeLimit=1 StartTime=2016-12-21T12:00:00 EndTime=2016-12-21T12:01:00 NodeList=n4 "
    "NodeCnt=1 ProcCnt=4 WorkDir=/w Tres=cpu=4,node=1 SubmitTime=2016-12-21T11:00:00 "
    "ExitCode=1:0",
    "JobId=126 UserId=carol(1003) GroupId=staff(100) Name=z JobState=RUNNING Partition=batch "
    "TimeLimit=5 StartTime=2016-12-21T12:00:00 EndTime=Unknown NodeList=n4 NodeCnt=1 "
    "ProcCnt=4 SubmitTime=2016-12-21T11:00:00",
]


def test_jobcomp_reads_values(tmp_path: Path) -> None:
    trace = read_slurm_jobcomp(write(tmp_path / "jobcomp.log", "\n".join(JOBCOMP_LINES) + "\n"))
    jobs = trace.jobs
    times = absolute(trace)
    assert jobs["source_id"].tolist() == ["123", "124", "125"]
    assert jobs["user_name"].tolist() == ["alice", "bob", "1002"]
    assert jobs["group_name"].tolist() == ["staff", "staff", "100"]
    assert jobs["queue_name"].tolist() == ["batch", "long", "batch"]
    assert jobs["account"].tolist() == ["proj", "", ""]
    assert jobs["req_time"].tolist() == [3600, -1, 60]
    assert jobs["alloc_procs"].tolist() == [24, 1, 4]
    assert jobs["req_procs"].tolist() == [-1, -1, -1]  # jobcomp gives only what was allocated
    assert jobs["nodes"].tolist() == [2, 1, 1]
    assert jobs["ppn"].tolist() == [12, 1, 4]
    assert jobs["gpus"].tolist() == [2, 0, 0]
    assert jobs["hosts"].tolist() == ["n1+n2", "n3", "n4"]
    assert jobs["status"].tolist() == [1, 5, 0]
    assert jobs["exit_status"].tolist() == [0, 143, 1]
    assert times["submit"].tolist() == [epoch("2016-12-21T09:00:00"), 1482317940, 1482318000]
    assert times["eligible"].iloc[0] == epoch("2016-12-21T09:00:05")
    assert np.isnan(times["eligible"].iloc[1])
    assert jobs["runtime"].tolist() == [1800, 30, 60]
    # memory from the allocated TRES is not a request: unknown
    assert jobs["req_memory"].tolist() == [-1, -1, -1]
    assert notes_of(trace) == {("walltime_unlimited", "warning"): 1, ("not_ended", "dropped"): 1}
    assert trace.header.notes[0].startswith("read by queuesim from the Slurm jobcomp log")


def test_jobcomp_bad_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "j.log", JOBCOMP_LINES[0] + "\n\ngarbage here\n" + JOBCOMP_LINES[1])
    with pytest.raises(WorkloadError, match=r"j\.log:3: not a jobcomp/filetxt line"):
        read_slurm_jobcomp(path)
    trace = read_slurm_jobcomp(path, skip_bad_lines=True)
    assert trace.jobs["line"].tolist() == [1, 4]
    assert [b.line for b in trace.bad_lines] == [3]


def test_jobcomp_gzip(tmp_path: Path) -> None:
    path = tmp_path / "j.log.gz"
    path.write_bytes(gzip.compress(JOBCOMP_LINES[1].encode()))
    assert read_slurm_jobcomp(path).jobs["source_id"].tolist() == ["124"]


def test_one_cell_reads_as_the_whole_column_does(tmp_path: Path) -> None:
    """A bad line's note quotes its row cell by cell (one value read alone, so that many
    bad lines do not convert the whole table once each): each cell equals that row of the
    whole column, for every column kind the table holds (dictionary-encoded, plain text,
    integers, absent)."""
    path = write(
        tmp_path / "c.sacct",
        "\n".join([HEADER, row(JobID="1"), row(JobID="x2", User="bob"), row(JobID="3")]) + "\n",
    )
    table, _ = read_rows(path, skip_bad_lines=False)
    assert table.n == 3
    for name in table.columns:
        whole = [str(v) for v in table.text(name)]
        assert [table.cell(name, r) for r in range(table.n)] == whole, name
    assert table.cell("NoSuchColumn", 0) == ""
    trace = read_sacct(path, skip_bad_lines=True)
    # as quoted before cells were read alone: that row of every whole column
    quoted = "|".join(str(table.text(name)[1]) for name in table.columns)
    assert [(b.line, b.text) for b in trace.bad_lines] == [(3, quoted)]


def test_a_job_too_large_for_one_node_says_its_shape_and_what_fits(tmp_path: Path) -> None:
    """A sacct job of 4 CPUs on one node (NNodes 1) on a site of 2-CPU nodes is too large
    although the site has 8 CPUs: the error names its shape (4 on one node) and what its
    queue could ever give it (0), not only the site's total."""
    from queuesim.core.workload import prepare_trace
    from queuesim.site.model import Site

    trace = sacct(tmp_path, row(JobID="1"))
    site = Site.model_validate(
        {"name": "t", "clusters": [{"name": "c", "nodes": 4, "cpus_per_node": 2}]}
    )
    with pytest.raises(WorkloadError) as info:
        prepare_trace(trace, site)
    message = str(info.value)
    assert "line 2 (4 CPUs, 4 on one node, queue" in message
    assert "at most 0 can ever be placed" in message
    assert "has 8 CPUs in all" in message
