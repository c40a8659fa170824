"""The column-at-a-time text layout (queuesim.traces.text_columns): CSV bytes must be
pandas' own ``to_csv`` bytes for every frame it accepts, and it must decline the rest."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.traces.text_columns import csv_bytes


def pandas_csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


_ints = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=-20_000, max_value=20_000),
    st.sampled_from([0, -1, 9999, 10_000, -10_000, 2**53 + 1]),
)
_floats = st.one_of(
    st.floats(width=64),  # NaN, infinities, subnormals, huge, -0.0
    st.integers(min_value=-(10**17), max_value=10**17).map(float),  # whole, around 1e16
    st.integers(min_value=-(10**6), max_value=10**6).map(lambda cents: cents / 100),
    st.sampled_from([0.0, -0.0, 1e16, 9999999999999998.0, 1e-4, 1e-5, 0.1]),
)
_texts = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=["Cs"])),
    st.sampled_from(["", "a,b", 'say "hi"', "two\nlines", "cr\rhere", " pad ", "é", "x"]),
    st.none(),
)


@st.composite
def _frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=0, max_value=25))
    columns: dict[str, pd.Series] = {}
    for index in range(draw(st.integers(min_value=2, max_value=6))):
        kind = draw(st.sampled_from(["int64", "float64", "str", "object"]))
        name = draw(st.sampled_from([f"c{index}", f"c,{index}", f'c"{index}']))
        if kind == "int64":
            values: list[object] = draw(st.lists(_ints, min_size=n, max_size=n))
        elif kind == "float64":
            values = draw(st.lists(_floats, min_size=n, max_size=n))
        else:
            values = draw(st.lists(_texts, min_size=n, max_size=n))
        columns[name] = pd.Series(values, dtype=kind, index=range(n))
    return pd.DataFrame(columns, index=range(n))


@settings(max_examples=120, deadline=None)
@given(frame=_frames())
def test_csv_bytes_are_pandas_to_csv_bytes(frame: pd.DataFrame) -> None:
    """Integers, floats (whole, fractional, NaN, infinite, -0.0, beyond 1e16) and text
    (quotes, commas, line breaks, missing values, any Unicode) come out as pandas writes
    them. Only an object column pandas does not take for text (say, nothing but missing
    values) may be declined, and then pandas writes the file."""
    data = csv_bytes(frame)
    if data is None:
        assert any(dtype == np.dtype(object) for dtype in frame.dtypes)
    else:
        assert data == pandas_csv(frame)


def test_csv_bytes_of_a_job_table_shaped_frame() -> None:
    """The job table's own types: int64 ids and counts, float seconds, text queue and
    status, over many rows."""
    rng = np.random.default_rng(7)
    n = 5_000
    frame = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1, dtype=np.int64),
            "queue": pd.Series(rng.choice(["fque", "long,q", 'q"x'], n), dtype="str"),
            "submit": rng.integers(0, 10**9, n).astype(np.float64),
            "wait": np.where(rng.random(n) < 0.1, np.nan, rng.random(n) * 1e5),
            "cpus": rng.integers(1, 1024, n),
            "status": pd.Series(rng.choice(["completed", "killed"], n), dtype="str"),
        }
    )
    assert csv_bytes(frame) == pandas_csv(frame)


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"only": [1, 2]}),  # one field per line: pandas quotes an empty one
        pd.DataFrame({"a": [1, 2], "flag": [True, False]}),
        pd.DataFrame({"a": [1, 2], "n": pd.array([1, None], dtype="Int64")}),
        pd.DataFrame({"a": [1, 2], "c": pd.Categorical(["x", "y"])}),
        pd.DataFrame({"a": [1, 2], "mixed": pd.Series(["x", 3], dtype=object)}),
        pd.DataFrame({"a": [1, 2], "nul": ["x\0y", "z"]}),
    ],
    ids=["one column", "bool", "nullable int", "categorical", "mixed object", "NUL byte"],
)
def test_csv_bytes_declines_what_it_does_not_lay_out(frame: pd.DataFrame) -> None:
    """Other column types (and a NUL byte, its padding) are left to pandas: None."""
    assert csv_bytes(frame) is None
