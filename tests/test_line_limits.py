"""No line over a megabyte is read: sniffing and every reader stop at the first one, naming
it, and a gzip file is decompressed a step at a time so such a file costs a megabyte, not
its whole content (issue 20, defect 5: 1 GB of one line took 10.6 s and 2.3 GB)."""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.common.errors import WorkloadError
from queuesim.common.files import (
    MAX_LINE_BYTES,
    LineLimit,
    count_lines,
    mapped_bytes,
    read_bytes,
)
from queuesim.traces.registry import FORMATS, read_trace

SWF_LINE = b"1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def _long_line_file(tmp_path: Path, name: str, before: int, length: int) -> Path:
    """``before`` SWF job lines, then one line of ``length`` bytes, then one more."""
    data = SWF_LINE * before + b"7" * length + b"\n" + SWF_LINE
    path = tmp_path / name
    path.write_bytes(gzip.compress(data, compresslevel=1) if name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("name", ["trace.swf", "trace.swf.gz"])
@pytest.mark.parametrize("format", [None, *FORMATS])
def test_line_over_a_megabyte_is_an_error_naming_the_line(
    tmp_path: Path, name: str, format: str | None
) -> None:
    """Sniffed or named, plain or gzip: every reader refuses the line and names it."""
    path = _long_line_file(tmp_path, name, before=3, length=MAX_LINE_BYTES + 1)
    with pytest.raises(WorkloadError, match=rf"^{path}:4: line longer than 1 MB"):
        read_trace(path, format=format)


def test_line_of_exactly_a_megabyte_is_read(tmp_path: Path) -> None:
    path = _long_line_file(tmp_path, "trace.swf.gz", before=2, length=MAX_LINE_BYTES)
    assert read_bytes(path).count(b"\n") == 4
    plain = _long_line_file(tmp_path, "trace.swf", before=2, length=MAX_LINE_BYTES)
    assert bytes(mapped_bytes(plain)).count(b"\n") == 4


def test_huge_compressed_line_is_refused_without_decompressing_it(tmp_path: Path) -> None:
    """64 MB of one line in a 64 KB gzip file: refused with a few MB of memory at most."""
    path = tmp_path / "bomb.swf.gz"
    path.write_bytes(gzip.compress(b"a" * (64 << 20), compresslevel=9))
    tracemalloc.start()
    try:
        with pytest.raises(WorkloadError, match=":1: line longer than 1 MB"):
            read_trace(path, format="swf")
        with pytest.raises(WorkloadError, match=":1: line longer than 1 MB"):
            read_trace(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MB"


def test_gzip_of_several_members_reads_as_gzip_decompress_does(tmp_path: Path) -> None:
    parts = [SWF_LINE * 3, b"; a comment\n", SWF_LINE * 1000]
    path = tmp_path / "members.swf.gz"
    path.write_bytes(b"".join(gzip.compress(p) for p in parts) + b"\0\0")
    assert read_bytes(path) == b"".join(parts)


def test_truncated_gzip_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(gzip.compress(SWF_LINE * 1000)[:-20])
    with pytest.raises(WorkloadError, match="not a valid gzip file"):
        read_bytes(path)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 600), max_size=6),
    limit=st.integers(1, 20),
)
def test_line_limit_finds_the_first_long_line_however_the_file_is_cut(
    lines: list[int], cuts: list[int], limit: int
) -> None:
    """Fed in any pieces, LineLimit refuses exactly when a line is over the limit, and
    names the first such line."""
    data = b"".join(b"x" * n + b"\n" for n in lines[:-1]) + b"x" * lines[-1]
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    checker = LineLimit(Path("f"), "file", limit=limit)
    too_long = [i for i, n in enumerate(lines, start=1) if n > limit]
    try:
        for start, end in itertools.pairwise(bounds):
            checker.feed(data[start:end], more=True)
    except WorkloadError as exc:
        assert too_long and str(exc).startswith(f"f:{too_long[0]}: line longer than")
    else:
        assert not too_long


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_count_lines_counts_every_line_break(data: bytes) -> None:
    """The vectorised line-break count that numbers every piece of a log equals
    ``bytes.count`` on any bytes (line feeds, carriage returns, bytes over 127)."""
    assert count_lines(data) == data.count(b"\n")
    assert count_lines(data + b"\n\r\n") == data.count(b"\n") + 2
