"""The parsed-trace cache (issue 16): a cached trace is the parsed one, an entry is never
served for other bytes or another reader, and a cache that cannot be used is no error."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pandas as pd
import pytest

from queuesim.common.errors import WorkloadError
from queuesim.traces import trace_cache
from queuesim.traces.registry import read_trace
from queuesim.traces.swf import SwfTrace, read_swf

HEADER = (
    "; Version: 2.2\n; MaxProcs: 8\n; UnixStartTime: 1000\n; Queue: 1 batch\n"
    "; Partition: 2 big one\n; a free note\n"
)
JOB = "{n} {s} 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 2 -1 -1\n"


def swf_text(jobs: int, extra: str = "") -> str:
    return HEADER + "".join(JOB.format(n=n, s=10 * n) for n in range(1, jobs + 1)) + extra


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own that takes files of any size."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("QUEUESIM_CACHE_DIR", str(folder))
    monkeypatch.setattr(trace_cache, "CACHE_FROM_BYTES", 0)
    return folder / "traces"


def counted(path: Path, skip: bool = False) -> tuple[SwfTrace, int]:
    """The trace through the cache, and how many times it was parsed to get it."""
    parses = []

    def parse() -> SwfTrace:
        parses.append(1)
        return read_swf(path, skip_bad_lines=skip)

    return trace_cache.read_cached(path, skip, parse), len(parses)


def assert_same(a: SwfTrace, b: SwfTrace) -> None:
    pd.testing.assert_frame_equal(a.jobs, b.jobs, check_exact=True)
    assert a.header == b.header
    assert a.bad_lines == b.bad_lines
    assert a.path == b.path


def test_a_trace_read_again_comes_from_the_cache_equal_to_the_parsed_one(
    tmp_path: Path, cache: Path
) -> None:
    """Second read: no parse, one entry, and the same columns, dtypes, header (queues,
    partitions, notes) and path; read_trace goes through the cache for a gzipped SWF."""
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(swf_text(30).encode()))
    first, parses = counted(path)
    assert parses == 1 and len(list(cache.glob("*.npz"))) == 1
    again, parses = counted(path)
    assert parses == 0
    assert_same(again, first)
    assert again.header.queues == {1: "batch"} and again.header.partitions == {2: "big one"}
    assert_same(read_trace(path), first)


def test_changed_bytes_or_a_changed_reader_are_never_served_an_old_entry(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file edited in place (same name, same size) is parsed again; so is the same
    file once the reader's source differs."""
    path = tmp_path / "t.swf"
    path.write_text(swf_text(5))
    counted(path)
    path.write_text(swf_text(5).replace(" 100 4 ", " 900 4 "))
    trace, parses = counted(path)
    assert parses == 1 and (trace.jobs["runtime"] == 900).all()
    monkeypatch.setattr(trace_cache, "reader_digest", lambda: "another reader")
    _, parses = counted(path)
    assert parses == 1


def test_skipped_bad_lines_are_cached_apart_and_a_bad_line_still_stops_a_strict_read(
    tmp_path: Path, cache: Path
) -> None:
    path = tmp_path / "t.swf"
    path.write_text(swf_text(4, extra="1 2 3\n"))
    skipped, _ = counted(path, skip=True)
    again, parses = counted(path, skip=True)
    assert parses == 0 and again.bad_lines == skipped.bad_lines and len(again.bad_lines) == 1
    with pytest.raises(WorkloadError, match=r"t\.swf:11: expected 18"):
        counted(path)


def test_an_unusable_cache_is_no_error(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged entry is parsed again and replaced; a cache folder that cannot be made
    (its place is a file) or that is turned off leaves the read as it was."""
    path = tmp_path / "t.swf"
    path.write_text(swf_text(6))
    expected = read_swf(path)
    counted(path)
    (entry,) = cache.glob("*.npz")
    entry.write_bytes(b"not a zip")
    trace, parses = counted(path)
    assert parses == 1
    assert_same(trace, expected)
    assert counted(path)[1] == 0  # replaced by a good entry
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("QUEUESIM_CACHE_DIR", str(blocked))
    assert_same(counted(path)[0], expected)
    monkeypatch.setenv("QUEUESIM_CACHE_DIR", "off")
    assert trace_cache.cache_dir() is None
    assert counted(path)[1] == 1


def test_small_files_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUEUESIM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "t.swf"
    path.write_text(swf_text(3))
    assert path.stat().st_size < trace_cache.CACHE_FROM_BYTES
    counted(path)
    assert not (tmp_path / "cache").exists()


def test_the_cache_keeps_within_its_size_by_dropping_the_least_recently_used(
    tmp_path: Path,
) -> None:
    """Entries beyond the size limit are removed oldest use first; the entry just written
    stays even when it alone is over the limit."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for age, name in enumerate(["newest", "middle", "oldest"]):
        entry = folder / f"{name}.npz"
        entry.write_bytes(b"x" * 100)
        os.utime(entry, (1_000_000 - age, 1_000_000 - age))
    written = folder / "written.npz"
    written.write_bytes(b"x" * 100)
    os.utime(written, (0, 0))  # the clock may be behind: being just written still counts
    trace_cache.prune(folder, keep=written, limit=250)
    assert sorted(p.name for p in folder.iterdir()) == ["newest.npz", "written.npz"]
    trace_cache.prune(folder, keep=written, limit=50)
    assert sorted(p.name for p in folder.iterdir()) == ["written.npz"]
