"""Text columns built from Arrow arrays are the columns pandas makes of the same str."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.common.text_arrays import coded_text, pandas_text

# numpy str arrays drop trailing NULs, so the expected column is made without them
NAMES = st.lists(
    st.text(st.characters(blacklist_characters="\x00"), max_size=4), min_size=1, max_size=5
)


@settings(max_examples=40, deadline=None)
@given(names=NAMES, data=st.data())
def test_coded_text_is_the_column_pandas_makes_of_the_names(names: list[str], data) -> None:
    """coded_text(codes, names) is the column pandas makes of the str array names[codes]:
    the same dtype (no rows included), the same values."""
    codes = np.array(
        data.draw(st.lists(st.integers(0, len(names) - 1), max_size=20)), dtype=np.int64
    )
    expected = pd.Series(np.array([names[c] for c in codes], dtype=np.str_))
    got = pd.Series(coded_text(codes, names))
    assert got.dtype == expected.dtype
    pd.testing.assert_series_equal(got, expected)


def test_pandas_text_keeps_the_strings_and_pandas_dtype() -> None:
    """pandas_text of Arrow strings has the dtype pandas infers for str, the same values."""
    got = pd.Series(pandas_text(pa.array(["b", "", "é"])))
    pd.testing.assert_series_equal(got, pd.Series(np.array(["b", "", "é"], dtype=object)))


def test_coded_text_refuses_a_code_outside_the_names() -> None:
    """A code that indexes no name is an IndexError, not a silent wrong string."""
    with pytest.raises(IndexError):
        coded_text(np.array([0, 2]), ["a", "b"])
