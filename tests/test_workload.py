"""Workload cleaning: every rule of :mod:`queuesim.core.workload`, counted and recorded.

Each test writes a small SWF file, prepares it for a small site and checks both the count
under the rule's reason key and the record (job id, trace line, reason, action) that
cleaning.csv will show, so that nothing is dropped or repaired silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from queuesim.common.errors import WorkloadError
from queuesim.core.workload import (
    CLEANING_REASONS,
    CleaningOptions,
    Workload,
    load_workload,
)
from queuesim.site.model import Site

HEADER = "; Version: 2.2"  # one comment line: the job lines start at line 2


def job(
    job_id: int,
    submit: float = 0,
    runtime: float = 10,
    procs: int = 1,
    *,
    req_time: float = 20,
    status: int = 1,
    user: int = 1,
    queue: int = -1,
    alloc: int | None = None,
    req_mem: float = -1,
) -> str:
    """One SWF job line (18 fields); allocated processors default to the requested ones."""
    fields: list[float] = [
        job_id,
        submit,
        -1,  # wait
        runtime,
        procs if alloc is None else alloc,
        -1,  # average CPU time
        -1,  # used memory
        procs,
        req_time,
        req_mem,
        status,
        user,
        1,  # group
        -1,  # executable
        queue,
        -1,  # partition
        -1,  # preceding job
        -1,  # think time
    ]
    return " ".join(str(f) for f in fields)


def make_site(**overrides: Any) -> Site:
    data: dict[str, Any] = {
        "name": "t",
        "clusters": [{"name": "c", "nodes": 4, "cpus_per_node": 2}],
    }
    data.update(overrides)
    return Site.model_validate(data)


def write_trace(tmp_path: Path, lines: list[str], header: bool = True) -> Path:
    path = tmp_path / "trace.swf"
    text = "\n".join(([HEADER] if header else []) + lines)
    path.write_text(text + "\n" if text else "", encoding="ascii")
    return path


def load(tmp_path: Path, lines: list[str], site: Site | None = None, **options: bool) -> Workload:
    return load_workload(
        write_trace(tmp_path, lines), site or make_site(), CleaningOptions(**options)
    )


def records(workload: Workload, reason: str) -> list[tuple[int, int, str, str]]:
    frame = workload.cleaning.records
    rows = frame[frame["reason"] == reason]
    return [
        (int(r.job_id), int(r.line), str(r.reason), str(r.action))
        for r in rows.itertuples(index=False)
    ]


def job_ids(workload: Workload) -> list[int]:
    return workload.jobs["job_id"].tolist()


def only_nonzero(workload: Workload) -> dict[str, int]:
    return {k: v for k, v in workload.cleaning.counts.items() if v}


# --- dropped ---------------------------------------------------------------------------------


def test_cancelled_before_running_is_dropped_and_counted(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [
            job(1, runtime=0, status=5),
            job(2, runtime=-1, status=5),
            job(3),
        ],
    )
    assert w.cleaning.counts["cancelled"] == 2
    assert records(w, "cancelled") == [
        (1, 2, "cancelled", "dropped"),
        (2, 3, "cancelled", "dropped"),
    ]
    # counted once, under "cancelled", not also as a zero runtime
    assert w.cleaning.counts["zero_runtime"] == 0
    assert job_ids(w) == [3]


def test_cancelled_job_that_ran_is_kept_by_default(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, runtime=30, status=5), job(2)])
    assert w.cleaning.counts["cancelled"] == 0
    assert records(w, "cancelled") == []
    assert job_ids(w) == [1, 2]
    assert w.jobs.loc[w.jobs["job_id"] == 1, "runtime"].item() == 30


def test_cancelled_job_that_ran_is_dropped_with_drop_cancelled(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [job(1, runtime=30, status=5), job(2, runtime=0, status=5), job(3)],
        drop_cancelled=True,
    )
    assert w.cleaning.counts["cancelled"] == 2
    assert records(w, "cancelled") == [
        (1, 2, "cancelled", "dropped"),
        (2, 3, "cancelled", "dropped"),
    ]
    assert job_ids(w) == [3]


def test_zero_runtime_is_dropped_and_counted(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, runtime=0), job(2), job(3, runtime=-1)])
    assert w.cleaning.counts["zero_runtime"] == 2
    assert records(w, "zero_runtime") == [
        (1, 2, "zero_runtime", "dropped"),
        (3, 4, "zero_runtime", "dropped"),
    ]
    assert job_ids(w) == [2]


def test_missing_submit_time_is_dropped_and_counted(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1), job(2, submit=-1)])
    assert w.cleaning.counts["no_submit_time"] == 1
    assert records(w, "no_submit_time") == [(2, 3, "no_submit_time", "dropped")]
    assert job_ids(w) == [1]


def test_job_without_requested_or_allocated_processors_is_dropped(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, procs=-1, alloc=-1), job(2), job(3, procs=0, alloc=0)])
    assert w.cleaning.counts["no_cpus"] == 2
    assert records(w, "no_cpus") == [
        (1, 2, "no_cpus", "dropped"),
        (3, 4, "no_cpus", "dropped"),
    ]
    assert job_ids(w) == [2]


# --- repaired --------------------------------------------------------------------------------


def test_missing_requested_cpus_are_taken_from_allocated(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, procs=-1, alloc=3), job(2, procs=2, alloc=5)])
    assert w.cleaning.counts["cpus_from_allocated"] == 1
    assert records(w, "cpus_from_allocated") == [(1, 2, "cpus_from_allocated", "repaired")]
    cpus = dict(zip(w.jobs["job_id"], w.jobs["cpus"], strict=True))
    assert cpus == {1: 3, 2: 2}  # the request wins when there is one


def test_missing_walltime_takes_the_queue_default(tmp_path: Path) -> None:
    site = make_site(queues=[{"name": "q", "default_walltime": "1h", "max_walltime": "2h"}])
    w = load(tmp_path, [job(1, req_time=-1), job(2, req_time=50)], site)
    assert w.cleaning.counts["walltime_from_queue"] == 1
    assert w.cleaning.counts["walltime_from_runtime"] == 0
    assert records(w, "walltime_from_queue") == [(1, 2, "walltime_from_queue", "repaired")]
    walltime = dict(zip(w.jobs["job_id"], w.jobs["walltime"], strict=True))
    assert walltime == {1: 3600.0, 2: 50.0}


def test_missing_walltime_takes_the_queue_limit_when_no_default(tmp_path: Path) -> None:
    site = make_site(queues=[{"name": "q", "max_walltime": "2h"}])
    w = load(tmp_path, [job(1, req_time=-1)], site)
    assert records(w, "walltime_from_queue") == [(1, 2, "walltime_from_queue", "repaired")]
    assert w.jobs["walltime"].tolist() == [7200.0]


def test_a_job_without_requested_walltime_routed_by_its_runtime_is_counted(
    tmp_path: Path,
) -> None:
    """Routing by walltime needs the requested time; without one the job goes where its
    actual runtime fits, which the run must say (issue 14), job by job."""
    site = make_site(
        queues=[
            {"name": "short", "max_walltime": "1m", "default_walltime": "1m"},
            {"name": "long", "max_walltime": "1d"},
        ]
    )
    w = load(tmp_path, [job(1, runtime=30, req_time=-1), job(2, runtime=30, req_time=3600)], site)
    assert w.cleaning.counts["routed_by_runtime"] == 1
    assert records(w, "routed_by_runtime") == [(1, 2, "routed_by_runtime", "repaired")]
    queues = dict(zip(w.jobs["job_id"], w.jobs["queue"].astype(str), strict=True))
    assert queues == {1: "short", 2: "long"}  # the request wins when there is one


def test_routing_by_the_traces_queue_needs_no_walltime_and_counts_nothing(
    tmp_path: Path,
) -> None:
    site = make_site(queues=[{"name": "q", "trace_queues": [1]}], routing="trace")
    w = load(tmp_path, [job(1, req_time=-1, queue=1)], site)
    assert w.cleaning.counts["routed_by_runtime"] == 0


def test_missing_walltime_takes_the_runtime_when_the_queue_has_no_limit(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, runtime=42, req_time=-1), job(2, req_time=50)])
    assert w.cleaning.counts["walltime_from_runtime"] == 1
    assert w.cleaning.counts["walltime_from_queue"] == 0
    assert records(w, "walltime_from_runtime") == [(1, 2, "walltime_from_runtime", "repaired")]
    walltime = dict(zip(w.jobs["job_id"], w.jobs["walltime"], strict=True))
    assert walltime == {1: 42.0, 2: 50.0}


def memory_site(**overrides: Any) -> Site:
    return make_site(
        memory="per-cpu",
        clusters=[{"name": "c", "nodes": 2, "cpus_per_node": 2, "memory_per_node": "4GB"}],
        **overrides,
    )


def test_missing_memory_under_per_cpu_model_is_repaired_as_zero(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1), job(2, req_mem=1024)], memory_site())
    assert w.cleaning.counts["memory_missing"] == 1
    assert records(w, "memory_missing") == [(1, 2, "memory_missing", "repaired")]
    mem = dict(zip(w.jobs["job_id"], w.jobs["mem_per_cpu"], strict=True))
    assert mem == {1: 0, 2: 1024 * 1024}  # SWF memory is KB per processor; mem_per_cpu bytes


def test_missing_memory_is_not_counted_when_memory_is_ignored(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1), job(2, req_mem=1024)])
    assert w.cleaning.counts["memory_missing"] == 0
    assert w.jobs["mem_per_cpu"].tolist() == [0, 0]


# --- rejected --------------------------------------------------------------------------------


def test_too_large_job_is_an_error_naming_line_cpus_and_reject_unrunnable(
    tmp_path: Path,
) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, [job(1), job(2, procs=9)])
    message = str(info.value)
    assert str(tmp_path / "trace.swf") in message
    assert "line 3" in message
    assert "9 CPUs" in message
    assert "8 CPUs" in message  # what the site has
    assert "at most 8 can ever be placed" in message  # what its queue could give it
    assert "--reject-unrunnable" in message


def test_too_large_job_is_rejected_and_counted_with_reject_unrunnable(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1), job(2, procs=9), job(3, procs=8)], reject_unrunnable=True)
    assert w.cleaning.counts["too_large"] == 1
    assert w.cleaning.rejected == 1
    assert records(w, "too_large") == [(2, 3, "too_large", "rejected")]
    assert job_ids(w) == [1, 3]  # 8 CPUs is exactly the site: it fits


def test_too_large_counts_only_the_clusters_the_queue_may_use(tmp_path: Path) -> None:
    site = make_site(
        clusters=[
            {"name": "small", "nodes": 2, "cpus_per_node": 2},
            {"name": "big", "nodes": 2, "cpus_per_node": 8},
        ],
        queues=[{"name": "q", "clusters": ["small"]}],
    )
    w = load(tmp_path, [job(1, procs=4), job(2, procs=5)], site, reject_unrunnable=True)
    assert records(w, "too_large") == [(2, 3, "too_large", "rejected")]
    assert job_ids(w) == [1]


def test_job_too_large_by_memory_is_rejected_as_too_large(tmp_path: Path) -> None:
    # 5 GB per CPU on nodes of 4 GB: no node can ever hold even one of its CPUs
    w = load(
        tmp_path,
        [job(1, req_mem=1024), job(2, req_mem=5 * 1024 * 1024)],
        memory_site(),
        reject_unrunnable=True,
    )
    assert records(w, "too_large") == [(2, 3, "too_large", "rejected")]
    assert job_ids(w) == [1]


def test_too_large_by_memory_error_says_memory_is_the_problem(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, [job(1, req_mem=1024), job(2, req_mem=5 * 1024 * 1024)], memory_site())
    message = str(info.value).replace(str(tmp_path), "")  # the folder name says "memory"
    assert "line 3" in message
    assert "memory" in message.lower()
    assert "at most 0 can ever be placed" in message  # not one of its CPUs fits a node


def walltime_queues() -> Site:
    return make_site(
        queues=[
            {"name": "long", "max_walltime": "10h"},
            {"name": "short", "max_walltime": "1h"},
        ]
    )


def test_walltime_routing_picks_the_smallest_queue_that_fits(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [job(1, req_time=20), job(2, req_time=3600), job(3, req_time=3601), job(4, req_time=36000)],
        walltime_queues(),
    )
    queues = dict(zip(w.jobs["job_id"], w.jobs["queue"].astype(str), strict=True))
    assert queues == {1: "short", 2: "short", 3: "long", 4: "long"}


def test_job_no_queue_accepts_is_an_error_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, [job(1), job(2, req_time=36001)], walltime_queues())
    message = str(info.value)
    assert "line 3" in message
    assert "walltime" in message
    assert "--reject-unrunnable" in message


def test_job_no_queue_accepts_is_rejected_and_counted_as_no_queue(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [job(1), job(2, req_time=36001), job(3, req_time=5000)],
        walltime_queues(),
        reject_unrunnable=True,
    )
    assert w.cleaning.counts["no_queue"] == 1
    assert w.cleaning.counts["too_large"] == 0
    assert records(w, "no_queue") == [(2, 3, "no_queue", "rejected")]
    assert job_ids(w) == [1, 3]


def trace_routed() -> Site:
    return make_site(
        routing="trace",
        queues=[
            {"name": "express", "trace_queues": [1]},
            {"name": "batch", "trace_queues": [2, 7]},
        ],
    )


def test_trace_routing_maps_trace_queue_numbers(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [job(1, queue=2), job(2, queue=1), job(3, queue=7), job(4, queue=1)],
        trace_routed(),
    )
    queues = dict(zip(w.jobs["job_id"], w.jobs["queue"].astype(str), strict=True))
    assert queues == {1: "batch", 2: "express", 3: "batch", 4: "express"}
    assert w.queue_names == ["express", "batch"]
    assert not only_nonzero(w)


def test_unmapped_trace_queue_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, [job(1, queue=2), job(2, queue=3), job(3, queue=3)], trace_routed())
    message = str(info.value)
    assert f"{tmp_path / 'trace.swf'}:3:" in message
    assert "trace_queues" in message


def test_unmapped_trace_queue_message_shows_the_plain_queue_number(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, [job(1, queue=2), job(2, queue=3)], trace_routed())
    assert "np." not in str(info.value)
    assert "trace queue 3 " in str(info.value)


# --- malformed lines -------------------------------------------------------------------------


BAD_LINES = [job(1), "1 2 3", job(2), " ".join(["x"] * 18)]


def test_malformed_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as info:
        load(tmp_path, BAD_LINES)
    assert str(info.value).startswith(f"{tmp_path / 'trace.swf'}:3: ")


def test_skip_bad_lines_counts_malformed_lines(tmp_path: Path) -> None:
    w = load(tmp_path, BAD_LINES, skip_bad_lines=True)
    assert w.cleaning.counts["malformed_line"] == 2
    assert records(w, "malformed_line") == [
        (-1, 3, "malformed_line", "dropped"),
        (-1, 5, "malformed_line", "dropped"),
    ]
    assert w.cleaning.dropped == 2
    assert job_ids(w) == [1, 2]


# --- estimates, order, totals ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("requested", {1: 20.0, 2: 5000.0, 3: 3600.0}),
        ("exact", {1: 10.0, 2: 10.0, 3: 10.0}),
        ("queue-limit", {1: 3600.0, 2: 36000.0, 3: 3600.0}),
    ],
)
def test_estimate_column_follows_the_site_estimate_source(
    tmp_path: Path, source: str, expected: dict[int, float]
) -> None:
    site = make_site(
        estimate=source,
        queues=[
            {"name": "short", "max_walltime": "1h", "default_walltime": "1h"},
            {"name": "long", "max_walltime": "10h"},
        ],
    )
    w = load(tmp_path, [job(1, req_time=20), job(2, req_time=5000), job(3, req_time=-1)], site)
    assert dict(zip(w.jobs["job_id"], w.jobs["estimate"], strict=True)) == expected


def test_queue_limit_estimate_falls_back_to_walltime_without_a_limit(tmp_path: Path) -> None:
    w = load(tmp_path, [job(1, req_time=20)], make_site(estimate="queue-limit"))
    assert w.jobs["estimate"].tolist() == [20.0]


def test_jobs_are_sorted_by_submit_then_trace_line(tmp_path: Path) -> None:
    w = load(
        tmp_path,
        [job(10, submit=50), job(20, submit=10), job(30, submit=50), job(40, submit=10), job(50)],
    )
    assert job_ids(w) == [50, 20, 40, 10, 30]
    assert w.jobs["line"].tolist() == [6, 3, 5, 2, 4]
    assert np.all(np.diff(w.jobs["submit"].to_numpy()) >= 0)


@pytest.mark.parametrize("lines", [[], ["; only a header"]], ids=["empty-file", "header-only"])
def test_empty_workload_is_an_error(tmp_path: Path, lines: list[str]) -> None:
    path = write_trace(tmp_path, lines, header=False)
    with pytest.raises(WorkloadError, match="no jobs"):
        load_workload(path, make_site())


def test_workload_where_every_job_is_dropped_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="no job is left after cleaning") as info:
        load(tmp_path, [job(1, runtime=0), job(2, submit=-1), job(3, runtime=0, status=5)])
    message = str(info.value)
    assert "'zero_runtime': 1" in message
    assert "'no_submit_time': 1" in message
    assert "'cancelled': 1" in message


@pytest.mark.parametrize(
    ("line", "reason"), [(job(1, procs=9), "too_large"), (job(1, req_time=36001), "no_queue")]
)
def test_workload_where_every_job_is_rejected_is_an_error(
    tmp_path: Path, line: str, reason: str
) -> None:
    with pytest.raises(WorkloadError, match="no job is left after cleaning") as info:
        load(tmp_path, [line], walltime_queues(), reject_unrunnable=True)
    assert f"'{reason}': 1" in str(info.value)


def test_counts_hold_every_reason_and_match_the_records(tmp_path: Path) -> None:
    site = make_site(queues=[{"name": "q", "max_walltime": "1h"}])
    w = load(
        tmp_path,
        [
            job(1),
            job(2, runtime=0, status=5),  # cancelled
            job(3, runtime=0),  # zero_runtime
            job(4, submit=-1),  # no_submit_time
            job(5, procs=-1, alloc=-1),  # no_cpus
            # cpus_from_allocated + walltime_from_queue + routed_by_runtime
            job(6, procs=-1, alloc=2, req_time=-1),
            job(7, procs=9),  # too_large
            job(8, req_time=7200),  # no_queue
            "garbage",  # malformed_line
        ],
        site,
        skip_bad_lines=True,
        reject_unrunnable=True,
    )
    counts = w.cleaning.counts
    assert list(counts) == list(CLEANING_REASONS)
    assert only_nonzero(w) == {
        "malformed_line": 1,
        "cancelled": 1,
        "zero_runtime": 1,
        "no_submit_time": 1,
        "no_cpus": 1,
        "cpus_from_allocated": 1,
        "walltime_from_queue": 1,
        "routed_by_runtime": 1,
        "too_large": 1,
        "no_queue": 1,
    }
    assert len(w.cleaning.records) == sum(counts.values())
    assert (w.cleaning.dropped, w.cleaning.repaired, w.cleaning.rejected) == (5, 3, 2)
    assert job_ids(w) == [1, 6]


def test_exact_estimate_of_a_job_killed_at_its_walltime_is_the_walltime() -> None:
    """'exact' means what the job will really run: with kill_at_walltime, a job asking
    60 s that would run 100 s is killed at 60, so the scheduler's exact estimate is 60."""
    from builders import J, make_site, make_workload

    jobs = [J(1, 0, 100, 1, requested=60), J(2, 0, 30, 1, requested=60)]
    killing = make_workload(jobs, make_site(estimate="exact", kill_at_walltime=True))
    assert killing.jobs["estimate"].tolist() == [60.0, 30.0]
    keeping = make_workload(jobs, make_site(estimate="exact", kill_at_walltime=False))
    assert keeping.jobs["estimate"].tolist() == [100.0, 30.0]
