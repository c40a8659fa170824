"""The PBS Pro / OpenPBS / Torque accounting log reader (queuesim.traces.pbs): fields mapped
as documented, the record kinds each handled and counted, malformed records reported, and
agreement with the values Open XDMoD parses from the same records."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from queuesim.common.errors import WorkloadError
from queuesim.traces.pbs import read_pbs
from queuesim.traces.pbs_values import parse_chunks, parse_duration, parse_size
from queuesim.traces.registry import read_trace

Q = "12/21/2024 17:58:09;Q;{id};user=alice group=g queue=workq ctime=1000 qtime=1001 etime=1002"
S = "12/21/2024 17:58:10;S;{id};user=alice group=g queue=workq start={start} exec_host=n1/0"
E = (
    "12/21/2024 18:58:10;E;{id};user=alice group=g project=p1 queue=workq ctime=1000 qtime=1001 "
    "etime=1002 start={start} end={end} exec_host=n1/0*2+n2/0*2 Resource_List.ncpus=4 "
    "Resource_List.nodect=2 Resource_List.select=2:ncpus=2:mem=1gb "
    "Resource_List.walltime=02:00:00 resources_used.cput=00:10:00 resources_used.mem=512mb "
    "Exit_status={exit}"
)


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def end(job: str, start: int = 1100, stop: int = 1700, exit: int = 0) -> str:
    return E.format(id=job, start=start, end=stop, exit=exit)


def test_an_end_record_maps_to_every_documented_field(tmp_path: Path) -> None:
    trace = read_pbs(write(tmp_path / "a", Q.format(id="7.srv"), end("7.srv")))
    job = trace.jobs.iloc[0]
    assert trace.header.unix_start_time == 1000  # ctime, the earliest submit
    assert (job["submit"], job["wait"], job["runtime"]) == (0.0, 100.0, 600.0)
    assert job["eligible"] == 2.0
    assert (job["req_procs"], job["alloc_procs"], job["nodes"], job["ppn"]) == (4, 4, 2, 2)
    assert job["req_time"] == 7200.0
    assert job["req_memory"] == 2 * 1024**2 / 4  # 2 chunks x 1 GB, in KB per CPU
    assert job["used_memory"] == 512 * 1024 / 4
    assert job["avg_cpu_time"] == 600.0 / 4
    assert (job["status"], job["exit_status"], job["state"]) == (1, 0, "completed")
    assert (job["queue_name"], job["user_name"], job["group_name"], job["account"]) == (
        "workq",
        "alice",
        "g",
        "p1",
    )
    assert (job["source_id"], job["hosts"], job["line"]) == ("7.srv", "n1+n2", 2)
    assert trace.header.queues == {1: "workq"}


def test_failed_and_deleted_jobs_get_swf_statuses(tmp_path: Path) -> None:
    deleted = (
        "12/21/2024 18:00:00;E;9.srv;user=bob group=g queue=workq ctime=1000 qtime=1000 "
        "etime=1000 end=1500 Exit_status=-3"
    )
    trace = read_pbs(write(tmp_path / "a", end("8.srv", exit=1), deleted))
    assert trace.jobs["status"].tolist() == [0, 5]  # failed; never started: cancelled
    assert trace.jobs["wait"].tolist()[1] == -1
    assert trace.jobs["state"].tolist() == ["failed", "deleted"]


def test_arrays_reruns_deletions_and_open_jobs_are_counted(tmp_path: Path) -> None:
    lines = [
        Q.format(id="10[].srv"),  # 1 array parent
        Q.format(id="10[1].srv"),  # 2
        end("10[1].srv"),  # 3 subjob: a job
        end("10[].srv"),  # 4 the parent's end: not a job
        S.format(id="11.srv", start=1100),  # 5 first run
        "12/21/2024 18:00:00;R;11.srv;user=alice",  # 6 rerun
        S.format(id="11.srv", start=1200),  # 7 second run
        end("11.srv", start=1200, stop=1300),  # 8
        Q.format(id="12.srv"),  # 9 deleted while queued, no E record
        "12/21/2024 18:00:00;D;12.srv;requestor=alice@host",  # 10
        Q.format(id="13.srv"),  # 11 still queued when the log ends
        S.format(id="14.srv", start=1100),  # 12 still running when the log ends
        "12/21/2024 18:00:00;L;license;floating license hour:0 day:0",  # 13
    ]
    trace = read_pbs(write(tmp_path / "a", *lines))
    assert trace.jobs["source_id"].tolist() == ["10[1].srv", "11.srv"]
    assert trace.jobs["runtime"].tolist() == [600.0, 100.0]  # the rerun's last run
    notes = {reason: group["line"].tolist() for reason, group in trace.notes.groupby("reason")}
    assert notes == {
        "array_parent": [4],
        "rerun": [8],
        "deleted_without_end_record": [10],
        "no_end_record": [11, 12],
        "not_a_job_record": [13],
    }
    actions = dict(zip(trace.notes["reason"], trace.notes["action"], strict=True))
    assert actions["rerun"] == "repaired" and actions["not_a_job_record"] == "skipped"


def test_one_job_under_two_id_forms_is_read_once(tmp_path: Path) -> None:
    trace = read_pbs(write(tmp_path / "a", end("6.server.example.org"), end("6")))
    assert trace.jobs["source_id"].tolist() == ["6"]
    assert trace.notes[["line", "reason"]].values.tolist() == [[1, "duplicate_end_record"]]


def test_a_directory_of_daily_files_and_gzip_read_as_one_log(tmp_path: Path) -> None:
    folder = tmp_path / "accounting"
    folder.mkdir()
    write(folder / "20241221", Q.format(id="1.s"), end("1.s"))
    (folder / "20241222").write_bytes(gzip.compress(f"{end('2.s', exit=2)}\n".encode()))
    trace = read_trace(folder)
    assert trace.jobs["source_id"].tolist() == ["1.s", "2.s"]
    assert trace.jobs["line"].tolist() == [2, 3]  # counted across the files, in name order


def test_select_and_torque_nodes_give_cpus_gpus_properties_and_exclusivity() -> None:
    pro = parse_chunks(
        "2:ncpus=8:ngpus=1:mem=4gb:cl_zewura=True:scratch=10gb+1:ncpus=8", torque=False
    )
    assert (pro.nodes, pro.cpus, pro.ppn, pro.gpus) == (3, 24, 8, 2)
    assert pro.mem_bytes == 8 * 1024**3
    assert pro.properties == ("cl_zewura", "scratch=10gb")
    torque = parse_chunks("2:ppn=12:gpus=2:infiniband#excl", torque=True)
    assert (torque.nodes, torque.cpus, torque.ppn, torque.gpus) == (2, 24, 12, 4)
    assert torque.properties == ("infiniband",) and torque.exclusive
    host = parse_chunks("zewura10:ppn=4", torque=True)
    assert host.properties == ("host=zewura10",) and host.cpus == 4
    assert parse_chunks("1:ncpus=2:cluster=adan:debian=False", torque=False).properties == (
        "adan",
        "^debian",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("02:00:00", 7200), ("144:00:00", 518400), ("1:02:00:00", 93600), ("90", 90), ("5:30", 330)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "size"),
    [("300mb", 300 * 2**20), ("664kb", 664 * 1024), ("2GB", 2 * 2**30), ("1w", 8), ("512", 512)],
)
def test_sizes(text: str, size: float) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("garbage without fields", "four ';'-separated fields"),
        ("2024-12-21 17:58:09;E;1.s;user=a", "date MM/DD/YYYY"),
        ("13/21/2024 17:58:09;E;1.s;user=a", "date MM/DD/YYYY"),  # month 13
        ("12/32/2024 17:58:09;E;1.s;user=a", "date MM/DD/YYYY"),  # day 32
        ("12/00/2024 17:58:09;E;1.s;user=a", "date MM/DD/YYYY"),  # day 0
        ("12/21/2024 24:00:00;E;1.s;user=a", "date MM/DD/YYYY"),  # hour 24
        ("12/21/2024 17:60:09;E;1.s;user=a", "date MM/DD/YYYY"),  # minute 60
        ("12/21/2024 17:58:09;E;1.s;user=a lonelytoken start=5", "key=value, found 'lonelytoken'"),
        ("12/21/2024 17:58:09;E;1.s;user=a start=soon end=9", "start: expected a number"),
        ("12/21/2024 17:58:09;E;1.s;user=a end=9 Resource_List.mem=3parsecs", "Resource_List.mem"),
        # a record cut off mid-line (a log copied while written): not a job deleted unstarted
        ("12/21/2024 17:58:09;E;1.s;user=a queue=q ctime=1000 qtime=17", "without end="),
    ],
)
def test_a_malformed_record_names_file_line_and_what_was_expected(
    tmp_path: Path, line: str, expected: str
) -> None:
    path = write(tmp_path / "log", end("1.s"), line)
    with pytest.raises(WorkloadError) as error:
        read_pbs(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert expected in str(error.value)


def test_skip_bad_lines_keeps_the_good_records_and_lists_the_bad(tmp_path: Path) -> None:
    path = write(tmp_path / "log", end("1.s"), "garbage", end("2.s"))
    trace = read_pbs(path, skip_bad_lines=True)
    assert trace.jobs["source_id"].tolist() == ["1.s", "2.s"]
    assert [b.line for b in trace.bad_lines] == [2]


def test_a_log_cut_off_in_its_last_record_does_not_invent_a_deleted_job(tmp_path: Path) -> None:
    """A log copied while PBS wrote it ends mid-record, without end=: that record is a bad
    line (skipped with skip_bad_lines), not a job deleted before it started."""
    cut = end("2.s").split(" end=")[0]
    path = tmp_path / "log"
    path.write_text(end("1.s") + "\n" + cut)  # no line break after the cut
    trace = read_pbs(path, skip_bad_lines=True)
    assert trace.jobs["source_id"].tolist() == ["1.s"]
    assert [b.line for b in trace.bad_lines] == [2]
    assert "without end=" in trace.bad_lines[0].reason


def test_quoted_values_with_spaces_are_one_value(tmp_path: Path) -> None:
    line = end("3.s").replace("queue=workq", 'jobname="my job" queue=workq', 1)
    assert read_pbs(write(tmp_path / "log", line)).jobs["queue_name"].tolist() == ["workq"]


# --------------------------------------------------------------------------- real logs


def test_the_cesnet_log_reads_its_200_jobs(site_logs: Path) -> None:
    trace = read_trace(site_logs / "pbs" / "cesnet-openpbs-2024-12.log")
    jobs = trace.jobs
    assert len(jobs) == 200
    assert dict(trace.notes["reason"].value_counts()) == {"not_a_job_record": 54}
    assert set(jobs["queue_name"]) == {"workq"}
    assert set(jobs["hosts"].str.split("+").explode()) == {"torque2", "torque3"}
    # the first job (E record on line 106): 2 chunks of 1 CPU, 300 MB each, 2 h requested
    first = jobs.iloc[0]
    assert (first["source_id"], first["line"]) == ("112461.torque1.grid.cesnet.cz", 106)
    assert (first["req_procs"], first["nodes"], first["ppn"], first["req_time"]) == (
        2,
        2,
        1,
        7200.0,
    )
    assert first["req_memory"] == 300 * 1024
    assert (jobs["status"] == 1).all()


def test_values_agree_with_open_xdmod(site_logs: Path, tmp_path: Path) -> None:
    log = (site_logs / "pbs" / "xdmod-unit-pbs-accounting.log").read_text().splitlines()
    expected = json.loads(
        (site_logs / "pbs" / "xdmod-unit-pbs-accounting.expected.json").read_text()
    )
    assert len(log) == len(expected) == 9
    for line, (case, values) in zip(log, expected.items(), strict=True):
        job = read_pbs(write(tmp_path / "one", line)).jobs.iloc[0]
        assert job["source_id"].split(".")[0] == values["job_id"], case
        assert int(job["exit_status"]) == int(values["exit_status"]), case
        if values.get("start"):
            assert job["wait"] == int(values["start"]) - int(values["ctime"]), case
            assert job["runtime"] == int(values["end"]) - int(values["start"]), case
        if values.get("resource_list_walltime") is not None:
            assert job["req_time"] == values["resource_list_walltime"], case
        if values.get("resource_list_mem") is not None:  # bytes in XDMoD, KB per CPU here
            assert job["req_memory"] * 1024 * job["req_procs"] == values["resource_list_mem"], case
        if values.get("resources_used_mem") is not None:
            used = job["used_memory"] * 1024 * job["req_procs"]
            assert used == pytest.approx(values["resources_used_mem"]), case
        if values.get("node_list"):
            assert job["hosts"] == values["node_list"].replace(",", "+"), case
        assert job["gpus"] == int(values["resources_used_gpus"]), case
        if "resources_used_cpus" in values and case != "Job with Resource_List.ngpus":
            assert job["alloc_procs"] == values["resources_used_cpus"], case
    # where queuesim differs from XDMoD, on purpose:
    # - "Job with Resource_List.ngpus": exec_host is "[hostname_2]/0*0" (0 CPUs); XDMoD
    #   counts 2 (its vnodes), queuesim falls back to Resource_List.ncpus, 48
    ngpus = read_pbs(write(tmp_path / "one", log[8])).jobs.iloc[0]
    assert ngpus["alloc_procs"] == 48
    # - "Job with gpu in Resource_List.nodect": resources_used.mem=12.27M, which XDMoD
    #   leaves unparsed, is 12.27 MiB here
    nodect = read_pbs(write(tmp_path / "one", log[6])).jobs.iloc[0]
    used = nodect["used_memory"] * 1024 * nodect["req_procs"]  # KB per requested CPU
    assert used == pytest.approx(12.27 * 2**20)


def test_gpu_counts_of_nodes_specs_agree_with_open_xdmod(site_logs: Path) -> None:
    path = site_logs / "pbs" / "xdmod-unit-pbs-resource-list-nodes-gpu-count.json"
    cases = json.loads(path.read_text())
    assert len(cases) == 19
    for spec, gpus in cases:
        counted = parse_chunks(spec, torque=True).gpus if spec else 0
        assert counted == gpus, spec


def test_jobs_of_a_repeated_log_keep_their_order(tmp_path: Path) -> None:
    lines = [end(f"{k}.s", start=1100 + k, stop=1200 + k) for k in range(50)]
    trace = read_pbs(write(tmp_path / "log", *lines))
    assert np.array_equal(trace.jobs["runtime"].to_numpy(), np.full(50, 100.0))
    assert trace.jobs["job_id"].tolist() == list(range(1, 51))
