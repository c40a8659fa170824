"""Large inputs are read a piece of whole lines at a time (issue 20: "stream large
inputs"): the pieces are exactly the file's content, numbered as the file's lines, never
much larger than asked, and a reader fed small pieces reads what it reads in one piece -
the same jobs, the same bad lines and the same errors naming file and line."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from queuesim.common import files
from queuesim.common.errors import WorkloadError
from queuesim.common.files import GZIP_MAGIC, UTF8_BOM, line_chunks, read_bytes
from queuesim.traces.swf import SwfTrace, read_swf

SWF_LINE = b"%d 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def whole_and_in_pieces(
    read: Callable[..., SwfTrace],
    path: Path,
    size: int,
    monkeypatch: pytest.MonkeyPatch,
    **options: bool,
) -> tuple[SwfTrace, SwfTrace]:
    """``read`` of ``path`` in pieces of the default size, then of ``size`` bytes."""
    whole = read(path, **options)
    monkeypatch.setattr(files, "CHUNK_BYTES", size)
    return whole, read(path, **options)


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
    whole, pieces = whole_and_in_pieces(read_swf, path, 100, monkeypatch, skip_bad_lines=True)
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


def _pbs_log() -> list[str]:
    """Every kind of PBS record the reader handles, a job's E record given twice far
    apart (the second wins), a malformed line and a comment."""
    from test_pbs import Q, S, end

    first = end("5.srv", start=1100, stop=1200).replace("Exit_status=0", "Exit_status=x")
    return [
        "; a comment",
        Q.format(id="10[].srv"),
        Q.format(id="10[1].srv"),
        first,  # replaced below: its bad Exit_status is never read
        end("10[1].srv"),
        end("10[].srv"),
        *(end(f"{k}.srv", start=1100 + k, stop=1200 + 2 * k) for k in range(20, 40)),
        S.format(id="11.srv", start=1100),
        "12/21/2024 18:00:00;R;11.srv;user=alice",
        S.format(id="11.srv", start=1200),
        "garbage",
        end("11.srv", start=1200, stop=1300),
        Q.format(id="12.srv"),
        "12/21/2024 18:00:00;D;12.srv;requestor=alice@host",
        "12/21/2024 18:00:00;L;license;floating license hour:0 day:0",
        end("5.srv", start=1150, stop=1250, exit=1),
        S.format(id="14.srv", start=1100),
    ]


@pytest.mark.parametrize("size", [1, 100, 700])
def test_pbs_read_in_small_pieces_is_the_pbs_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A log of a file and a gzip file (the first without a final line break) read in
    pieces of a line, or of 100 or 700 bytes: the same jobs, notes (duplicate E records
    across pieces: the last wins) and bad lines as read whole."""
    from queuesim.traces.pbs import read_pbs

    log = _pbs_log()
    folder = tmp_path / "accounting"
    folder.mkdir()
    (folder / "20241221").write_text("\n".join(log[:20]), encoding="utf-8")
    (folder / "20241222.gz").write_bytes(gzip.compress("\n".join(log[20:]).encode() + b"\n"))
    whole, pieces = whole_and_in_pieces(read_pbs, folder, size, monkeypatch, skip_bad_lines=True)
    assert pieces.jobs.equals(whole.jobs)
    assert pieces.notes.equals(whole.notes)
    assert pieces.bad_lines == whole.bad_lines
    assert [b.line for b in whole.bad_lines] == [30]
    assert len(whole.jobs) == 23
    jobs = whole.jobs.set_index("source_id")
    assert jobs.loc["5.srv", "line"] == 35 and jobs.loc["5.srv", "runtime"] == 100.0
    assert whole.notes.loc[whole.notes["reason"] == "duplicate_end_record", "line"].tolist() == [4]


def test_pbs_errors_name_the_file_and_line_whatever_the_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad number in the E record that wins, in the second of 100-byte pieces, and a
    value that does not parse: each names its file and line, as when read whole; a token
    without '=' is named alone, not with the next line."""
    from test_pbs import end

    from queuesim.traces.pbs import read_pbs

    monkeypatch.setattr(files, "CHUNK_BYTES", 100)
    path = tmp_path / "log"
    path.write_text(f"{end('1.s')}\n{end('1.s').replace('end=1700', 'end=17x0')}\n")
    with pytest.raises(WorkloadError, match=rf"^{path}:2: end: expected a number, found '17x0'$"):
        read_pbs(path)
    path.write_text(f"{end('1.s')}\n{end('2.s').replace('walltime=02', 'walltime=x2')}\n")
    with pytest.raises(WorkloadError, match=rf"^{path}:2: Resource_List.walltime: "):
        read_pbs(path)
    path.write_text(f"{end('1.s')} oops\n{end('2.s')}\n")
    with pytest.raises(WorkloadError, match=rf"^{path}:1: expected key=value, found 'oops'$"):
        read_pbs(path)


def _sacct_rows() -> list[str]:
    """Steps, array ranges, requeued and duplicate ids, two clusters, odd values."""
    from test_slurm import HEADER, row

    return [
        HEADER,
        row(JobID="10"),
        row(JobID="10.batch", NCPUS="1", State="CANCELLED"),
        row(JobID="20_[1-3]", State="PENDING", Start="Unknown", End="Unknown"),
        row(JobID="40", State="REQUEUED", End="2024-01-01T00:30:00"),
        *(row(JobID=str(100 + k), User=f"u{k % 3}", NodeList=f"n[0{k % 4}-09]") for k in range(30)),
        row(JobID="40", Submit="2024-01-01T00:30:00", Start="2024-01-01T00:40:00"),
        row(JobID="43", Cluster="c2", ReqMem="3000Mc", Timelimit="UNLIMITED"),
        row(JobID="44", State="FAILED", Partition="a,b", Constraints="x&y"),
        row(JobID="44", ExitCode="0:9", NCPUS="", ReqCPUS="", Eligible="None"),
        row(JobID="12.batch"),
    ]


@pytest.mark.parametrize("name", ["x.sacct", "x.sacct.gz"])
@pytest.mark.parametrize("size", [1, 300])
def test_sacct_read_in_small_pieces_is_the_sacct_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, size: int
) -> None:
    """A sacct export read a line or 300 bytes at a time: the same jobs, notes and line
    numbers as read whole (a requeued job's records in different pieces)."""
    from queuesim.traces.slurm import read_sacct

    text = ("\n".join(_sacct_rows()) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    whole, pieces = whole_and_in_pieces(read_sacct, path, size, monkeypatch)
    assert pieces.jobs.equals(whole.jobs)
    assert pieces.notes.equals(whole.notes)
    assert len(whole.jobs) == 35
    assert whole.jobs["line"].tolist()[-4:] == [36, 37, 38, 39]


def test_sacct_with_a_blank_or_malformed_line_in_a_later_piece_reads_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A blank line (line 21), then a row with two fields too few (42), in 300-byte pieces:
    the rows are numbered as the file's lines and the bad row named by its line, as whole."""
    from queuesim.traces.slurm import read_sacct

    rows = _sacct_rows()
    path = tmp_path / "x.sacct"
    path.write_text("\n".join([*rows[:20], "", *rows[20:], rows[5].rsplit("|", 2)[0]]) + "\n")
    whole, pieces = whole_and_in_pieces(read_sacct, path, 300, monkeypatch, skip_bad_lines=True)
    assert pieces.jobs.equals(whole.jobs)
    assert pieces.bad_lines == whole.bad_lines
    assert [b.line for b in whole.bad_lines] == [42]
    assert whole.jobs["line"].tolist()[-1] == 40
    with pytest.raises(
        WorkloadError, match=rf"^{path}:42: expected 26 \|-separated fields, found 24$"
    ):
        read_sacct(path)
