"""Tests of the SWF reader and writer (queuesim.traces.swf)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queuesim.common.errors import WorkloadError
from queuesim.traces import swf
from queuesim.traces.swf import INT_FIELDS, SWF_FIELDS, BadLine, read_swf, write_swf

HEADER = """\
; Version: 2.2
; Computer: Linux cluster (Seth)
; UnixStartTime: 1027839845
; TimeZone: 3600
; TimeZoneString: Europe/Stockholm
; MaxNodes: 338 (batch partition; 512 total)
; MaxProcs: 240
; Note: uses MAUI scheduler
; MaxQueues: 3
; Queue:  1  [fque:1]
; Queue:  2  express          (p655 /  2hr /   8nodes)
; Queue:  3
; Partition:  1  DEFAULT
; Partition:  2  ALL
;
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;       The filters used to produce it were
;\tsee: http://example.org/notes
"""

JOB_1 = "    1      0    5   10   32   9.50   -1   32  3600   -1  1  4  1  -1 -1  1 -1 -1"
JOB_2 = "    2     60   -1   20   16.0  -1     -1   16  7200   -1  0  5  2  -1 -1  2 -1 -1"
JOB_3 = "    3    120    0   30    8   0.03  100    8  1800  200  1  4  1   7  2  1  2 60"
JOBS = f"{JOB_1}\n{JOB_2}\n{JOB_3}\n"


def write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_text(tmp_path / "sample.swf", HEADER + JOBS)


def job_line(**overrides: str) -> str:
    """A valid 18-field job line, with some fields replaced by the given tokens."""
    tokens = {name: "1" for name in SWF_FIELDS}
    tokens.update(overrides)
    return " ".join(tokens[name] for name in SWF_FIELDS)


# --------------------------------------------------------------------------- header


def test_header_numeric_fields_parsed(sample: Path) -> None:
    header = read_swf(sample).header
    assert header.max_nodes == 338  # the leading number; the remark after it is ignored
    assert header.max_procs == 240
    assert header.unix_start_time == 1027839845
    assert header.time_zone_string == "Europe/Stockholm"


def test_header_fields_hold_every_key_with_first_value_winning(sample: Path) -> None:
    fields = read_swf(sample).header.fields
    assert fields["Version"] == "2.2"
    assert fields["Computer"] == "Linux cluster (Seth)"
    assert fields["TimeZone"] == "3600"
    assert fields["Note"] == "uses MAUI scheduler"
    assert fields["Queue"] == "1  [fque:1]"
    assert fields["Partition"] == "1  DEFAULT"
    assert "see" not in fields  # a lower-case word before a colon continues a note


def test_header_queues_and_partitions_map_numbers_to_names(sample: Path) -> None:
    header = read_swf(sample).header
    # Queue 3 has no name and is left out; runs of blanks inside a name are collapsed.
    assert header.queues == {1: "[fque:1]", 2: "express (p655 / 2hr / 8nodes)"}
    assert header.partitions == {1: "DEFAULT", 2: "ALL"}


def test_header_notes_hold_note_values_and_free_comments_in_order(sample: Path) -> None:
    assert read_swf(sample).header.notes == (
        "uses MAUI scheduler",
        "THIS IS A CLEANED VERSION OF THE LOG!",
        "The filters used to produce it were",
        "see: http://example.org/notes",
    )


def test_header_lines_are_the_raw_comment_lines(sample: Path) -> None:
    assert read_swf(sample).header.lines == tuple(HEADER.splitlines())


def test_header_key_variants_without_space_or_right_aligned(tmp_path: Path) -> None:
    text = (
        ";MaxNodes: 1524\n"
        ";        MaxProcs: 140\n"
        ";   UnixStartTime: 0\n"
        ";           Queue:      1   test\n"
        "; TimeZoneString:\n"
        f"{JOB_1}\n"
    )
    header = read_swf(write_text(tmp_path / "v.swf", text)).header
    assert header.max_nodes == 1524
    assert header.max_procs == 140
    assert header.unix_start_time == 0
    assert header.queues == {1: "test"}
    assert header.time_zone_string is None


def test_header_values_that_are_not_numbers_give_none(tmp_path: Path) -> None:
    text = "; MaxNodes: N/A\n; MaxProcs: -1\n; UnixStartTime: soon\n" + JOBS
    header = read_swf(write_text(tmp_path / "na.swf", text)).header
    assert header.max_nodes is None
    assert header.max_procs is None
    assert header.unix_start_time is None


def test_file_without_header_has_empty_header(tmp_path: Path) -> None:
    header = read_swf(write_text(tmp_path / "bare.swf", JOBS)).header
    assert header.fields == {}
    assert header.lines == ()
    assert header.notes == ()
    assert header.queues == {} and header.partitions == {}
    assert header.max_nodes is None and header.max_procs is None
    assert header.unix_start_time is None and header.time_zone_string is None


def test_comment_lines_between_jobs_join_the_header(tmp_path: Path) -> None:
    trace = read_swf(write_text(tmp_path / "mid.swf", f"{JOB_1}\n; Note: late\n{JOB_2}\n"))
    assert trace.header.notes == ("late",)
    assert trace.jobs["line"].tolist() == [1, 3]


# --------------------------------------------------------------------------- jobs


def test_jobs_have_swf_columns_plus_line_with_int_and_float_dtypes(sample: Path) -> None:
    jobs = read_swf(sample).jobs
    assert list(jobs.columns) == [*SWF_FIELDS, "line"]
    for name in SWF_FIELDS:
        expected = np.int64 if name in INT_FIELDS else np.float64
        assert jobs[name].dtype == expected, name
    assert jobs["line"].dtype == np.int64


def test_jobs_values_and_line_numbers(sample: Path) -> None:
    jobs = read_swf(sample).jobs
    first_job_line = len(HEADER.splitlines()) + 1
    assert jobs["line"].tolist() == [first_job_line, first_job_line + 1, first_job_line + 2]
    assert jobs["job_id"].tolist() == [1, 2, 3]
    assert jobs["avg_cpu_time"].tolist() == [9.5, -1.0, 0.03]
    assert jobs["think_time"].tolist() == [-1.0, -1.0, 60.0]


def test_integer_valued_float_accepted_in_int_field(sample: Path) -> None:
    jobs = read_swf(sample).jobs
    assert jobs["alloc_procs"].tolist() == [32, 16, 8]  # "16.0" in job 2


def test_minus_one_values_are_kept(sample: Path) -> None:
    jobs = read_swf(sample).jobs
    assert jobs["wait"].tolist()[1] == -1.0
    assert jobs["executable"].tolist() == [-1, -1, 7]


def test_blank_lines_are_ignored_but_counted_in_line_numbers(tmp_path: Path) -> None:
    text = f"\n{JOB_1}\n\n   \n\t\n{JOB_2}\n\n"
    jobs = read_swf(write_text(tmp_path / "blank.swf", text)).jobs
    assert jobs["job_id"].tolist() == [1, 2]
    assert jobs["line"].tolist() == [2, 6]


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "dos.swf"
    path.write_bytes((HEADER + JOBS).replace("\n", "\r\n").encode())
    trace = read_swf(path)
    assert trace.jobs["job_id"].tolist() == [1, 2, 3]
    assert trace.header.lines == tuple(HEADER.splitlines())


@pytest.mark.parametrize("text", ["", "\n\n", "; Version: 2\n; MaxNodes: 4\n;\n"])
def test_file_without_jobs_gives_empty_frame_with_columns(tmp_path: Path, text: str) -> None:
    trace = read_swf(write_text(tmp_path / "empty.swf", text))
    assert len(trace.jobs) == 0
    assert list(trace.jobs.columns) == [*SWF_FIELDS, "line"]
    assert trace.jobs["job_id"].dtype == np.int64
    assert trace.jobs["submit"].dtype == np.float64
    assert trace.bad_lines == ()


def test_gz_file_is_read_transparently(tmp_path: Path, sample: Path) -> None:
    gz = tmp_path / "sample.swf.gz"
    gz.write_bytes(gzip.compress(sample.read_bytes()))
    plain, packed = read_swf(sample), read_swf(gz)
    assert packed.path == gz
    assert packed.header == plain.header
    pd.testing.assert_frame_equal(packed.jobs, plain.jobs)


def test_gzip_content_is_recognised_without_gz_suffix(tmp_path: Path) -> None:
    path = tmp_path / "packed.swf"
    path.write_bytes(gzip.compress(JOBS.encode()))
    assert read_swf(path).jobs["job_id"].tolist() == [1, 2, 3]


def test_accepts_str_path(sample: Path) -> None:
    assert read_swf(str(sample)).path == sample


# --------------------------------------------------------------------------- file errors


def test_missing_file_error_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.swf"
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    assert str(info.value) == f"{path}: no such workload file"


def test_directory_error_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="is a directory") as info:
        read_swf(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: ")
    assert "\n" not in str(info.value)


def test_corrupt_gzip_error_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.swf.gz"
    path.write_bytes(gzip.compress(JOBS.encode())[:-12])
    with pytest.raises(WorkloadError, match="not a valid gzip file") as info:
        read_swf(path)
    assert str(info.value).startswith(f"{path}: ")


def test_plain_text_with_gz_suffix_is_an_error(tmp_path: Path) -> None:
    path = write_text(tmp_path / "liar.swf.gz", JOBS)
    with pytest.raises(WorkloadError, match=r"liar\.swf\.gz: not a valid gzip file"):
        read_swf(path)


# --------------------------------------------------------------------------- malformed lines

MALFORMED = [
    pytest.param(
        " ".join(["1"] * 17),
        "expected 18 whitespace-separated numeric fields, found 17",
        id="too-few-fields",
    ),
    pytest.param(
        " ".join(["1"] * 19),
        "expected 18 whitespace-separated numeric fields, found 19",
        id="too-many-fields",
    ),
    pytest.param(
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 ; remark",
        "expected 18 whitespace-separated numeric fields, found 20",
        id="trailing-remark",
    ),
    pytest.param(
        job_line(alloc_procs="abc"),
        "field 5 (alloc_procs) is not a number: 'abc'",
        id="word",
    ),
    pytest.param(job_line(submit="nan"), "field 2 (submit) is not a number: 'nan'", id="nan"),
    pytest.param(job_line(wait="NA"), "field 3 (wait) is not a number: 'NA'", id="NA"),
    pytest.param(job_line(runtime="inf"), "field 4 (runtime) is not a number: 'inf'", id="inf"),
    pytest.param(
        job_line(runtime="-Infinity"),
        "field 4 (runtime) is not a number: '-Infinity'",
        id="infinity",
    ),
    pytest.param(
        job_line(req_time="1_000"), "field 9 (req_time) is not a number: '1_000'", id="underscore"
    ),
    pytest.param(job_line(user="0x10"), "field 12 (user) is not a number: '0x10'", id="hex"),
    pytest.param(
        job_line(submit="1,5"), "field 2 (submit) is not a number: '1,5'", id="decimal-comma"
    ),
    pytest.param(job_line(submit='"7"'), "field 2 (submit) is not a number: '\"7\"'", id="quoted"),
    pytest.param(
        job_line(alloc_procs="3.5"),
        "field 5 (alloc_procs) must be a whole number, found '3.5'",
        id="fraction-in-int-field",
    ),
    pytest.param(
        job_line(job_id="1e30"),
        "field 1 (job_id) is out of range for an integer: '1e30'",
        id="int-overflow",
    ),
    pytest.param(
        job_line(submit="1e999"), "field 2 (submit) is out of range: '1e999'", id="float-overflow"
    ),
]


@pytest.mark.parametrize(("bad", "reason"), MALFORMED)
def test_malformed_line_error_names_file_line_and_expectation(
    tmp_path: Path, bad: str, reason: str
) -> None:
    path = write_text(tmp_path / "bad.swf", f"; Note: x\n{JOB_1}\n{bad}\n{JOB_2}\n")
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    assert str(info.value) == f"{path}:3: {reason}"


@pytest.mark.parametrize(("bad", "reason"), MALFORMED)
def test_malformed_first_job_line_is_reported(tmp_path: Path, bad: str, reason: str) -> None:
    # The fast parser infers the column count from the first line: check it cannot hide it.
    path = write_text(tmp_path / "first.swf", f"{bad}\n{JOB_1}\n{JOB_2}\n")
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    assert str(info.value) == f"{path}:1: {reason}"


@pytest.mark.parametrize(("bad", "reason"), MALFORMED)
def test_skip_bad_lines_records_the_reason(tmp_path: Path, bad: str, reason: str) -> None:
    path = write_text(tmp_path / "bad.swf", f"{JOB_1}\n{bad}\n{JOB_2}\n")
    trace = read_swf(path, skip_bad_lines=True)
    assert trace.bad_lines == (BadLine(line=2, text=bad, reason=reason),)
    assert trace.jobs["job_id"].tolist() == [1, 2]
    assert trace.jobs["line"].tolist() == [1, 3]


def test_malformed_line_error_names_file_and_line(tmp_path: Path) -> None:
    path = write_text(tmp_path / "t.swf", f"; MaxNodes: 4\n\n{JOB_1}\n1 2 3\n")
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    message = str(info.value)
    assert message == f"{path}:4: expected 18 whitespace-separated numeric fields, found 3"
    assert "\n" not in message


def test_error_reports_the_first_of_several_bad_lines(tmp_path: Path) -> None:
    # A fraction in an integer field (found by the vectorised check) comes before a line
    # that does not even parse (found by the line walk): the earlier one is reported.
    text = f"{JOB_1}\n{job_line(status='0.5')}\n{JOB_2}\n1 2\n"
    path = write_text(tmp_path / "two.swf", text)
    with pytest.raises(WorkloadError, match=r"two\.swf:2: field 11 \(status\) must be a whole"):
        read_swf(path)


def test_skip_bad_lines_collects_and_counts(tmp_path: Path) -> None:
    lines = [JOB_1, "garbage", job_line(queue="2.5"), "", JOB_2, "1 2 3", JOB_3]
    trace = read_swf(write_text(tmp_path / "s.swf", "\n".join(lines) + "\n"), skip_bad_lines=True)
    assert [b.line for b in trace.bad_lines] == [2, 3, 6]
    assert [b.reason for b in trace.bad_lines] == [
        "expected 18 whitespace-separated numeric fields, found 1",
        "field 15 (queue) must be a whole number, found '2.5'",
        "expected 18 whitespace-separated numeric fields, found 3",
    ]
    assert trace.bad_lines[0].text == "garbage"
    assert len(trace.jobs) == 3
    assert trace.jobs["line"].tolist() == [1, 5, 7]


def test_without_skip_bad_lines_the_tuple_is_empty(sample: Path) -> None:
    assert read_swf(sample).bad_lines == ()


def test_bad_lines_in_a_large_file_are_located_exactly(tmp_path: Path) -> None:
    # More lines than one fallback block, bad lines in different blocks: every other
    # value must still be read and the line numbers must stay right.
    n = 3 * swf._BLOCK_LINES + 17
    rows = [f"{i} {i * 10} 0 5 2 1.25 -1 2 60 -1 1 3 1 -1 1 1 -1 -1" for i in range(1, n + 1)]
    bad_at = [5, swf._BLOCK_LINES + 3, 2 * swf._BLOCK_LINES + 100]  # 0-based rows
    rows[bad_at[0]] = "1 2 3"
    rows[bad_at[1]] = rows[bad_at[1]].replace(" 1.25 ", " x ")
    rows[bad_at[2]] = rows[bad_at[2]].replace(" 2 60 ", " 2.5 60 ")  # req_procs
    path = write_text(tmp_path / "big.swf", "; Version: 2\n" + "\n".join(rows) + "\n")

    trace = read_swf(path, skip_bad_lines=True)
    assert [b.line for b in trace.bad_lines] == [row + 2 for row in bad_at]
    assert len(trace.jobs) == n - 3
    expected_ids = [i for i in range(1, n + 1) if i - 1 not in bad_at]
    assert trace.jobs["job_id"].tolist() == expected_ids
    assert (trace.jobs["submit"] == trace.jobs["job_id"] * 10).all()
    assert (trace.jobs["line"] == trace.jobs["job_id"] + 1).all()
    assert (trace.jobs["avg_cpu_time"] == 1.25).all()

    with pytest.raises(WorkloadError, match=rf"big\.swf:{bad_at[0] + 2}: expected 18"):
        read_swf(path)


# --------------------------------------------------------------------------- writer


def frame(**columns: list[float] | list[int]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_write_then_read_round_trips_values(tmp_path: Path, sample: Path) -> None:
    original = read_swf(sample)
    out = tmp_path / "out.swf"
    write_swf(out, original.jobs, original.header.lines)
    again = read_swf(out)
    assert again.header == original.header
    pd.testing.assert_frame_equal(again.jobs, original.jobs)


def test_write_is_byte_deterministic(tmp_path: Path, sample: Path) -> None:
    trace = read_swf(sample)
    write_swf(tmp_path / "a.swf", trace.jobs, trace.header.lines)
    write_swf(tmp_path / "b.swf", trace.jobs.copy(), list(trace.header.lines))
    assert (tmp_path / "a.swf").read_bytes() == (tmp_path / "b.swf").read_bytes()


def test_write_gz_is_deterministic_and_readable(tmp_path: Path, sample: Path) -> None:
    trace = read_swf(sample)
    first, second = tmp_path / "a.swf.gz", tmp_path / "sub" / "b.swf.gz"
    write_swf(first, trace.jobs, trace.header.lines)
    write_swf(second, trace.jobs, trace.header.lines)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert data[4:8] == b"\0\0\0\0"  # no modification time in the gzip header
    write_swf(tmp_path / "plain.swf", trace.jobs, trace.header.lines)
    assert gzip.decompress(data) == (tmp_path / "plain.swf").read_bytes()
    pd.testing.assert_frame_equal(read_swf(first).jobs, trace.jobs)


def test_write_prefixes_header_lines_with_semicolon(tmp_path: Path) -> None:
    out = tmp_path / "h.swf"
    write_swf(out, frame(job_id=[1]), ["MaxNodes: 4", "; Note: kept", "", ";MaxProcs: 8"])
    assert out.read_text().splitlines()[:4] == [
        "; MaxNodes: 4",
        "; Note: kept",
        ";",
        ";MaxProcs: 8",
    ]
    header = read_swf(out).header
    assert header.max_nodes == 4 and header.max_procs == 8


def test_write_header_line_with_newline_stays_a_comment(tmp_path: Path) -> None:
    out = tmp_path / "nl.swf"
    write_swf(out, frame(job_id=[1]), ["Note: one\nNote: two"])
    trace = read_swf(out)
    assert trace.header.notes == ("one", "two")
    assert len(trace.jobs) == 1


def test_write_missing_column_and_nan_written_as_minus_one(tmp_path: Path) -> None:
    out = tmp_path / "m.swf"
    write_swf(out, frame(job_id=[7], submit=[float("nan")], runtime=[12.0]))
    assert out.read_text().split() == ["7", "-1", "-1", "12"] + ["-1"] * 14


def test_write_field_order_follows_swf(tmp_path: Path) -> None:
    values = {name: [index + 1] for index, name in enumerate(SWF_FIELDS)}
    out = tmp_path / "o.swf"
    write_swf(out, pd.DataFrame(dict(reversed(list(values.items())))))
    assert out.read_text().split() == [str(i) for i in range(1, 19)]


def test_write_formats_floats_with_at_most_two_decimals(tmp_path: Path) -> None:
    out = tmp_path / "f.swf"
    runtimes = [3.14159, 2.999, 0.5, 32.0, -0.001, 1e12, 12.25]
    write_swf(out, frame(job_id=list(range(len(runtimes))), runtime=runtimes))
    written = [line.split()[3] for line in out.read_text().splitlines()]
    assert written == ["3.14", "3", "0.5", "32", "0", "1000000000000", "12.25"]


def test_write_int_fields_as_integers_even_from_float_columns(tmp_path: Path) -> None:
    out = tmp_path / "i.swf"
    write_swf(out, frame(job_id=[1.0, 2.0], alloc_procs=[32.0, float("nan")]))
    assert [line.split()[:5] for line in out.read_text().splitlines()] == [
        ["1", "-1", "-1", "-1", "32"],
        ["2", "-1", "-1", "-1", "-1"],
    ]


def test_write_accepts_nullable_integer_columns(tmp_path: Path) -> None:
    out = tmp_path / "n.swf"
    jobs = pd.DataFrame({"job_id": pd.array([1, 2], dtype="Int64"), "queue": [3, None]})
    write_swf(out, jobs)
    assert read_swf(out).jobs["queue"].tolist() == [3, -1]


def test_write_aligns_columns(tmp_path: Path) -> None:
    out = tmp_path / "a.swf"
    write_swf(out, frame(job_id=[1, 1000], submit=[5.0, 123456.0]))
    lines = out.read_text().splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[0].startswith("   1      5 ")


def test_write_fraction_in_int_field_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'alloc_procs' must hold whole numbers"):
        write_swf(tmp_path / "x.swf", frame(job_id=[1, 2], alloc_procs=[1.0, 2.5]))


def test_write_infinite_value_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'runtime' holds an infinite value"):
        write_swf(tmp_path / "x.swf", frame(job_id=[1], runtime=[float("inf")]))


def test_write_failure_leaves_existing_file_untouched(tmp_path: Path) -> None:
    out = tmp_path / "keep.swf"
    out.write_text("old content\n")
    with pytest.raises(ValueError):
        write_swf(out, frame(job_id=[0.5]))
    assert out.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.swf"]


def test_write_empty_frame_writes_only_the_header(tmp_path: Path) -> None:
    out = tmp_path / "e.swf"
    write_swf(out, pd.DataFrame(columns=list(SWF_FIELDS)), ["Note: nothing ran"])
    assert out.read_text() == "; Note: nothing ran\n"
    assert len(read_swf(out).jobs) == 0


def test_write_ignores_extra_columns(tmp_path: Path) -> None:
    out = tmp_path / "x.swf"
    write_swf(out, frame(job_id=[1], line=[99], cluster=[3]))
    assert len(out.read_text().split()) == 18


_int_values = st.integers(min_value=-1, max_value=10**9)
_float_values = st.integers(min_value=-100, max_value=10**11).map(lambda cents: cents / 100)


@st.composite
def _job_frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=1, max_value=20))
    data: dict[str, list[int] | list[float]] = {}
    for name in SWF_FIELDS:
        values = _int_values if name in INT_FIELDS else _float_values
        data[name] = draw(st.lists(values, min_size=n, max_size=n))
    jobs = pd.DataFrame(data)
    return jobs.astype({name: np.int64 for name in INT_FIELDS})


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(jobs=_job_frames())
def test_write_read_round_trip_property(tmp_path: Path, jobs: pd.DataFrame) -> None:
    out = tmp_path / "prop.swf"
    write_swf(out, jobs, ["Note: property"])
    back = read_swf(out).jobs
    pd.testing.assert_frame_equal(back[list(SWF_FIELDS)], jobs[list(SWF_FIELDS)])
    assert back["line"].tolist() == list(range(2, len(jobs) + 2))


def _reference_cell(value: object) -> str:
    """One field as the writer documents it, formatted by hand: NaN is -1, a whole value
    within the int64 range an integer, anything else at most two decimals."""
    number = float(value)  # type: ignore[arg-type]
    if isinstance(value, int | np.integer):
        return str(int(value))
    if math.isnan(number):
        return "-1"
    if number == math.trunc(number) and abs(number) < 2.0**63:
        return str(int(number))
    text = f"{number:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _reference_job_lines(jobs: pd.DataFrame) -> str:
    """The job lines written line by line in plain Python: the oracle of the vectorised
    writer."""
    columns = []
    for name in SWF_FIELDS:
        cells = [_reference_cell(v) for v in jobs[name]] if name in jobs else ["-1"] * len(jobs)
        width = max(len(cell) for cell in cells)
        columns.append([cell.rjust(width) for cell in cells])
    return "".join(" ".join(row) + "\n" for row in zip(*columns, strict=True))


_any_int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_around_groups = st.sampled_from([-10001, -10000, -9999, -1, 0, 9, 10, 9999, 10000, 10**8])
_finite = st.floats(allow_nan=True, allow_infinity=False)
_cents = st.integers(min_value=-(10**14), max_value=10**14).map(lambda cents: cents / 100)


@st.composite
def _any_job_frames(draw: st.DrawFn) -> pd.DataFrame:
    """Frames of any width of values: int64 extremes, values around the writer's groups
    of four digits, negatives, NaN, fractions, huge floats, constant and missing columns."""
    n = draw(st.integers(min_value=1, max_value=25))
    data: dict[str, pd.Series] = {}
    for name in SWF_FIELDS:
        kind = draw(st.sampled_from(["int", "constant", "whole floats", "floats", "missing"]))
        if kind == "missing":
            continue
        if kind == "constant":
            data[name] = pd.Series([draw(st.one_of(_around_groups, _any_int64))] * n, dtype="int64")
        elif kind == "int":
            values = st.one_of(_around_groups, _any_int64, st.integers(-1, 10**6))
            data[name] = pd.Series(draw(st.lists(values, min_size=n, max_size=n)), dtype="int64")
        elif kind == "whole floats" or name in INT_FIELDS:
            whole = st.one_of(st.integers(-(10**15), 10**15).map(float), st.just(float("nan")))
            data[name] = pd.Series(draw(st.lists(whole, min_size=n, max_size=n)), dtype="float64")
        else:
            values = st.one_of(_finite, _cents, _around_groups.map(float))
            data[name] = pd.Series(draw(st.lists(values, min_size=n, max_size=n)), dtype="float64")
    return pd.DataFrame(data, index=range(n))


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(jobs=_any_job_frames())
def test_vectorised_writer_writes_what_line_by_line_formatting_writes(
    tmp_path: Path, jobs: pd.DataFrame
) -> None:
    """The writer lays out all lines at once (groups of four digits, signs, fractions put
    in afterwards); its bytes must be those of formatting each line by hand."""
    out = tmp_path / "oracle.swf"
    write_swf(out, jobs, ["Note: oracle"])
    assert out.read_text(encoding="ascii") == "; Note: oracle\n" + _reference_job_lines(jobs)


def test_writer_handles_the_int64_extremes_and_group_boundaries(tmp_path: Path) -> None:
    """Values at the ends of int64 and at the writer's groups of four digits, in one
    column, are written exactly."""
    edges = [-(2**63), 2**63 - 1, 0, -1, 9999, 10000, -10000, 100_000_000, -99_999_999]
    jobs = frame(job_id=edges, submit=[float(v) for v in edges[2:]] + [0.0, 0.0])
    out = tmp_path / "edges.swf"
    write_swf(out, jobs)
    lines = out.read_text(encoding="ascii")
    assert lines == _reference_job_lines(jobs)
    assert [int(line.split()[0]) for line in lines.splitlines()] == edges


# --------------------------------------------------------------------------- real traces


@pytest.mark.realtrace
def test_real_hpc2n_job_count_and_header(real_workloads: Path) -> None:
    trace = read_swf(real_workloads / "HPC2N-2002-2.2-cln.swf.gz")
    assert len(trace.jobs) == 202_871
    assert trace.bad_lines == ()
    header = trace.header
    assert header.max_procs == 240
    assert header.max_nodes == 240
    assert header.unix_start_time == 1027839845
    assert header.time_zone_string == "Europe/Stockholm"
    assert header.queues == {1: "[fque:1]"}
    assert header.partitions == {1: "DEFAULT", 2: "ALL"}
    assert header.fields["MaxRecords"] == "202871"
    assert (trace.jobs["queue"] == -1).all()  # one queue, never named in the job lines


@pytest.mark.realtrace
def test_real_sdsc_blue_job_count_and_queues(real_workloads: Path) -> None:
    trace = read_swf(real_workloads / "SDSC-BLUE-2000-4.2-cln.swf.gz")
    assert len(trace.jobs) == 243_306
    assert trace.header.max_procs == 1152
    assert trace.header.queues[0] == "interactive"
    assert set(trace.header.queues) == set(range(24))
    assert trace.jobs["line"].is_monotonic_increasing


@pytest.mark.realtrace
def test_real_metacentrum_without_header(real_workloads: Path) -> None:
    trace = read_swf(real_workloads / "metacentrum" / "METACENTRUM-2009-2.swf.gz")
    assert len(trace.jobs) == 103_656
    assert trace.header.lines == ()
    assert trace.header.fields == {}
    assert trace.jobs["line"].iloc[0] == 1


@pytest.mark.realtrace
def test_real_trace_round_trips_through_writer(real_workloads: Path, tmp_path: Path) -> None:
    original = read_swf(real_workloads / "KTH-SP2-1996-2.1-cln.swf.gz")
    out = tmp_path / "kth.swf.gz"
    write_swf(out, original.jobs, original.header.lines)
    again = read_swf(out)
    assert again.header == original.header
    pd.testing.assert_frame_equal(again.jobs, original.jobs)


@pytest.mark.realtrace
def test_real_alea_extended_swf_is_rejected_with_line_number(real_workloads: Path) -> None:
    path = real_workloads / "metacentrum" / "wagap-2013.swf.gz"
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    assert str(info.value).startswith(f"{path}:1: expected 18 whitespace-separated")
