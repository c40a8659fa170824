"""What the fuzzing tests share: byte-level mutations of a seed file, and the property
every reader must keep - any input gives a result or a queuesim error (never another
exception) whose message names the file and a line or key.

Budget: ``QUEUESIM_FUZZ_EXAMPLES`` examples per test (default 10, CI); the maintainers'
long run (``.ci/maintain fuzz``) sets it to thousands.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from queuesim.common.errors import QueuesimError

SEEDS = Path(__file__).parent / "data" / "fuzz-seeds"

#: one budget for every fuzzing test; CI keeps it small
EXAMPLES = int(os.environ.get("QUEUESIM_FUZZ_EXAMPLES", "10"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # capsys: read and cleared in each example
    ],
    database=None,
    derandomize=EXAMPLES <= 100,  # CI: the same examples every run; long runs explore
)

#: values that readers' field parsers find hard
TOKENS = [
    b"",
    b"-",
    b"-1",
    b"0",
    b"00",
    b"1",
    b"2147483648",
    b"99999999999999999999999",
    b"1e309",
    b"-1e309",
    b"nan",
    b"inf",
    b"-0",
    b"0x1f",
    b"1.5",
    b"1,5",
    b"\xff\xfe",
    b"\x00",
    b"\xc3",
    b"Unknown",
    b"UNLIMITED",
    b"None",
    b"infinite",
    b"1-00:00:00",
    b"99:99:99",
    b"-1:00",
    b"2024-13-45T25:61:61",
    b"2024-01-01T00:00:00",
    b"12/31/1969 23:59:59",
    b"1:ppn=0",
    b"n[1-]",
    b"n[3-1]",
    b"n[1-100000000]",
    b"{}",
    b"[]",
    b"()",
    b"=",
    b"==",
    b"|",
    b";",
    b":",
    b"#",
    b"\\",
    b"'",
    b'"',
    b"  ",
    b"\t",
    b"\r",
    b"\n",
    b"\n\n",
    b"\xe2\x80\x8b",
    b"1gb",
    b"1zb",
    b"-5mb",
    b"3:ncpus=0",
    b"select=",
    b"cpu=-4",
    b"gres/gpu=x",
    b"*",
    b"&a",
    b"*a",
    b"!!python/object:os.system",
    b"<<: *a",
    b"- ",
    b": ",
    b"{a: 1, a: 2}",
]
_DELIMS = re.compile(rb"[ \t|;=,:\n]+")


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with 1 to 6 edits: a token replaced by a hard value, bytes inserted or
    deleted, a line repeated or dropped, the file cut short."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["token", "token", "insert", "delete", "line", "cut"]))
        pos = draw(st.integers(0, len(data)))
        if kind == "token":
            bounds = [m.end() for m in _DELIMS.finditer(data, 0, pos)]
            start = bounds[-1] if bounds else 0
            found = _DELIMS.search(data, pos)
            end = found.start() if found else len(data)
            data[start:end] = draw(st.sampled_from(TOKENS))
        elif kind == "insert":
            data[pos:pos] = draw(st.one_of(st.binary(max_size=6), st.sampled_from(TOKENS)))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 40))]
        elif kind == "line":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i]) if draw(st.booleans()) else lines.pop(i)
            data = bytearray(b"\n".join(lines))
        else:
            del data[pos:]
    return bytes(data)


def any_bytes() -> st.SearchStrategy[bytes]:
    """Lines made of the readers' delimiters and hard values."""
    return st.lists(st.sampled_from([*TOKENS, b"a", b"x=1", b"7"]), max_size=60).map(b" ".join)


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh folder per example (pytest's tmp_path is one per test, not per example)."""
    folder = Path(tempfile.mkdtemp(prefix="queuesim-fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: where a message points: ``FILE:LINE``, ``line N``, or a key path ``a.b[2].c: ...``
_LOCATED = re.compile(
    r":\d+(:|\b)|\bline \d+|\blines? \d|(^|\s)[A-Za-z_][\w\-]*(\[\d*\])?(\.[\w\-]+(\[\d*\])?)*: |"
    r"\bkey '|--[a-z-]+|\(top level\): "
)


#: errors about a whole file, where no line or key is to blame
WHOLE_FILE = ("has no jobs", "is empty", ": empty;", "no job is left after cleaning")


def located(message: str) -> bool:
    return bool(_LOCATED.search(message)) or any(w in message for w in WHOLE_FILE)


def check_reader(read: Callable[[], Any], files: list[Path]) -> Any:
    """Run ``read``: a result, or a QueuesimError naming one of ``files`` and a line or key.
    Any other exception fails the test (as a traceback would fail the user)."""
    try:
        return read()
    except QueuesimError as exc:
        message = str(exc)
        assert any(str(f) in message or f.name in message for f in files), message
        assert located(message), f"no line or key in: {message}"
        assert "Traceback" not in message
        return None
