"""Large inputs are read a piece of whole lines at a time (issue 20: "stream large
inputs"): the pieces are exactly the file's content, numbered as the file's lines, never
much larger than asked, and a reader fed small pieces reads what it reads in one piece -
the same jobs, the same bad lines and the same errors naming file and line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from queuesim.common import files
from queuesim.common.errors import WorkloadError
from queuesim.common.files import GZIP_MAGIC, UTF8_BOM, line_chunks, read_bytes
from queuesim.traces.swf import read_swf

SWF_LINE = b"%d 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"

lines = st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    lines=lines,
    end=st.booleans(),
    bom=st.booleans(),
    packing=st.sampled_from(["plain", "gzip", "two gzip members"]),
    size=st.integers(1, 40),
)
def test_pieces_are_the_files_content_in_whole_lines_numbered_as_the_file(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    end: bool,
    bom: bool,
    packing: str,
    size: int,
) -> None:
    """Joined, the pieces are what read_bytes gives (BOM dropped, every gzip member); each
    but the last ends a line; each starts at the line number the text before it gives."""
    text = (UTF8_BOM if bom else b"") + b"\n".join(lines) + (b"\n" if end else b"")
    stored = {
        "plain": text,
        "gzip": gzip.compress(text),
        "two gzip members": gzip.compress(text[: len(text) // 2])
        + gzip.compress(text[len(text) // 2 :]),
    }[packing]
    assume(packing != "plain" or not text.startswith(GZIP_MAGIC))  # that is gzip, not text
    path = tmp_path_factory.mktemp("chunks") / ("t.gz" if packing != "plain" else "t.txt")
    path.write_bytes(stored)
    pieces = list(line_chunks(path, size=size))
    assert b"".join(chunk for _, chunk in pieces) == read_bytes(path)
    seen = 1
    for index, (first, chunk) in enumerate(pieces):
        assert first == seen
        assert chunk
        assert index == len(pieces) - 1 or chunk.endswith(b"\n")
        seen += chunk.count(b"\n")


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz"])
def test_a_piece_holds_about_the_size_asked_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """1,000 lines read in 1 kB pieces, the file read (and gunzipped) 256 bytes a step: no
    piece is longer than 1 kB and one step (the reader holds a piece, not the file)."""
    text = b"".join(SWF_LINE % i for i in range(1000))
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    monkeypatch.setattr(files, "_READ_STEP", 256)
    monkeypatch.setattr(files, "_GUNZIP_STEP", 256)
    pieces = [chunk for _, chunk in line_chunks(path, size=1024)]
    assert b"".join(pieces) == text
    assert len(pieces) > 40
    assert max(len(chunk) for chunk in pieces) <= 1024 + 256


def test_swf_read_in_small_pieces_is_the_swf_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Header, jobs, line numbers and skipped bad lines are the same in 100-byte pieces."""
    text = b"; MaxProcs: 8\n" + b"".join(SWF_LINE % i for i in range(1, 40))
    text += b"; Note: a comment between jobs\n\n1 2 3\n" + SWF_LINE % 40
    path = tmp_path / "t.swf"
    path.write_bytes(text)
    whole = read_swf(path, skip_bad_lines=True)
    monkeypatch.setattr(files, "CHUNK_BYTES", 100)
    pieces = read_swf(path, skip_bad_lines=True)
    assert pieces.jobs.equals(whole.jobs)
    assert pieces.bad_lines == whole.bad_lines
    assert [b.line for b in pieces.bad_lines] == [43]
    assert pieces.header == whole.header
    assert len(whole.jobs) == 40


def test_a_bad_line_in_a_later_piece_is_named_by_its_line_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line 31 of a gzip trace read in 100-byte pieces: the error names file and line 31."""
    text = b"".join(SWF_LINE % i for i in range(1, 31)) + b"31 0 1.5 x\n" + SWF_LINE % 32
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(text))
    monkeypatch.setattr(files, "CHUNK_BYTES", 100)
    with pytest.raises(WorkloadError, match=rf"^{path}:31: expected 18 "):
        read_swf(path)
