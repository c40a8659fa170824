"""Tables written as text a whole column at a time, for the SWF and CSV writers.

Formatting a number per cell in Python costs about a microsecond; a 200,000-job table
has millions of cells. Here the text of a table is one byte matrix, a row per line and a
byte per character: each column is written into its slice of every row at once, integers
four digits at a time through a lookup table, and the rare cells that need Python's
formatting (fractions, NaN, huge values) are put in afterwards.

* :func:`fill_integers` writes an integer column right-aligned, padded with spaces (SWF's
  aligned columns) or with NUL bytes, which :func:`csv_bytes` then drops to leave CSV's
  variable-width fields.
* :func:`csv_bytes` is the CSV text pandas writes with ``to_csv(index=False,
  lineterminator="\\n")``, for frames of int64, float64 and text columns.
"""

from __future__ import annotations

import abc
import csv
import functools
import io

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["SPILL", "csv_bytes", "fill_integers", "put_text"]

_GROUP = 10_000
_GROUP_DIGITS = 4
SPILL = _GROUP_DIGITS - 1
"""Bytes :func:`fill_integers` may write left of a column (padding only): a matrix keeps
this many bytes before its first column, and columns are filled right to left."""
# Magnitudes below this are exact in float64 and so are their quotients by 10**4, whose
# floor is then exact too: float division is vectorised where int64 division is not.
_FLOAT_EXACT = 2.0**48


@functools.cache
def _group_tables(pad: int) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bytes_]]:
    """Four decimal digits at a time: entry r < 10**4 is r zero-padded ("0042"), entry
    10**4 + r the same padded with ``pad`` ("  42"; all padding for 0), for the leading
    group of a value; the second table is for a value's last group, where 0 is "   0"."""
    fill = chr(pad)
    padded = [f"{r:{fill}>4d}" for r in range(1, _GROUP)]
    leading = np.array([f"{r:04d}" for r in range(_GROUP)] + [fill * 4, *padded], dtype="S4")
    last = leading.copy()
    last[_GROUP] = (fill * 3 + "0").encode("latin-1")
    return leading, last


def fill_integers(
    matrix: npt.NDArray[np.uint8],
    end: int,
    width: int,
    values: npt.NDArray[np.int64],
    pad: int = ord(" "),
) -> None:
    """Write ``values`` in decimal, right-aligned to end before byte ``end`` of each row of
    ``matrix``, where the ``width`` bytes before hold ``pad``. Leading groups of four
    digits may write ``pad`` up to :data:`SPILL` bytes further left."""
    if not len(values):
        return
    low, high = int(values.min()), int(values.max())
    if low == high:  # a constant column (SWF's -1 on every line): one row, repeated
        text = str(low).rjust(width, chr(pad)).encode("latin-1")
        matrix[:, end - width : end] = np.frombuffer(text, np.uint8)
        return
    negative = values < 0
    magnitude = np.abs(values).astype(np.uint64)  # abs of the most negative int64 wraps
    magnitude[values == np.iinfo(np.int64).min] = np.uint64(2**63)
    largest = max(abs(low), abs(high))
    rest: npt.NDArray[np.float64] | npt.NDArray[np.uint64]
    rest = magnitude.astype(np.float64) if largest < _FLOAT_EXACT else magnitude
    leading, last = _group_tables(pad)
    for group in range((len(str(largest)) + _GROUP_DIGITS - 1) // _GROUP_DIGITS):
        if rest.dtype == np.float64:
            above = np.floor(rest / float(_GROUP))
        else:
            above = rest // np.uint64(_GROUP)
        index = (rest - above * _GROUP).astype(np.intp) + (above == 0) * _GROUP
        cells = (last if group == 0 else leading).take(index)
        right = end - group * _GROUP_DIGITS
        matrix[:, right - _GROUP_DIGITS : right] = cells.view(np.uint8).reshape(-1, 4)
        rest = above
    signed = np.flatnonzero(negative)
    if len(signed):  # the minus sign just before each negative value's first digit
        powers = 10 ** np.arange(1, 20, dtype=np.uint64)
        digit_counts = np.searchsorted(powers, magnitude[signed], side="right") + 1
        matrix[signed, end - 1 - digit_counts] = ord("-")


def put_text(
    matrix: npt.NDArray[np.uint8],
    rows: npt.NDArray[np.intp],
    end: int,
    width: int,
    text: list[str],
    pad: int = 0,
) -> None:
    """Write ``text[i]`` (UTF-8) into row ``rows[i]``, right-aligned to end before byte
    ``end``, over the ``width`` bytes there, padded on the left with ``pad``."""
    if not len(rows):
        return
    fill = bytes([pad])
    cells = np.array([t.encode("utf-8").rjust(width, fill) for t in text], dtype=f"S{width}")
    matrix[rows, end - width : end] = cells.view(np.uint8).reshape(len(rows), width)


# --------------------------------------------------------------------------- CSV

# pandas writes a float by its shortest round-trip text, positional from 1e-4 to 1e16:
# a whole value there is its integer and ".0"; the others are formatted one by one.
_POSITIONAL_LIMIT = 1e16


def _csv_field(text: str) -> str:
    """``text`` as one CSV field the way pandas' writer (Python's csv, minimal quoting)
    writes it in a row of several fields."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([text, "-"])
    return out.getvalue()[: -len(",-\n")]


def _text_column(
    series: pd.Series,
) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.intp]] | None:
    """A text column's distinct fields (quoted as needed, UTF-8) and each row's code into
    them (missing values are the empty field); None when a field would hold a NUL byte."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    fields = [_csv_field(str(u)).encode("utf-8") for u in uniques]
    if any(b"\0" in field for field in fields):
        return None
    table = np.array([*fields, b""], dtype=bytes)  # code -1: the last entry, empty
    return table, np.asarray(codes, dtype=np.intp)


def csv_bytes(frame: pd.DataFrame) -> bytes | None:
    """``frame.to_csv(index=False, lineterminator="\\n")`` as UTF-8 bytes, laid out a
    column at a time; None when the frame has a column of another type than int64,
    float64 or text, or fewer than two columns (the caller then asks pandas)."""
    if frame.shape[1] < 2:
        return None
    header = frame.iloc[:0].to_csv(index=False, lineterminator="\n").encode("utf-8")
    n_rows = len(frame)
    layouts: list[_Layout] = []
    for position in range(frame.shape[1]):
        layout = _layout(frame.iloc[:, position])
        if layout is None:
            return None
        layouts.append(layout)
    if not n_rows:
        return header
    ends = np.cumsum([layout.width + 1 for layout in layouts]) - 1 + SPILL
    matrix = np.zeros((n_rows, int(ends[-1]) + 1), dtype=np.uint8)
    for index in reversed(range(len(layouts))):  # right to left: see SPILL
        end = int(ends[index])
        layouts[index].fill(matrix, end)
        matrix[:, end] = ord("\n") if index == len(layouts) - 1 else ord(",")
    flat = matrix[:, SPILL:].ravel()
    rows: bytes = flat[flat != 0].tobytes()  # the padding dropped: variable-width fields
    return header + rows


class _Layout(abc.ABC):
    """How one column is written: its width, and how to fill its slice of the matrix."""

    def __init__(self, width: int) -> None:
        self.width = width

    @abc.abstractmethod
    def fill(self, matrix: npt.NDArray[np.uint8], end: int) -> None:
        """Write the column into every row, ending before byte ``end``; NUL pads."""


class _Integers(_Layout):
    def __init__(self, values: npt.NDArray[np.int64]) -> None:
        low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
        super().__init__(max(len(str(low)), len(str(high))))
        self.values = values

    def fill(self, matrix: npt.NDArray[np.uint8], end: int) -> None:
        fill_integers(matrix, end, self.width, self.values, pad=0)


class _Floats(_Layout):
    """Whole values below 1e16 as their integer and ".0"; the others (fractions, huge,
    infinite, -0.0) by numpy's shortest round-trip text, as pandas does; NaN empty."""

    def __init__(self, values: npt.NDArray[np.float64]) -> None:
        whole = (values == np.trunc(values)) & (np.abs(values) < _POSITIONAL_LIMIT)
        whole &= ~((values == 0) & np.signbit(values))  # -0.0 is written "-0.0"
        self.others = np.flatnonzero(~whole)
        others = values[self.others]
        texts = others.astype(str)
        self.text = ["" if np.isnan(v) else t for v, t in zip(others, texts, strict=True)]
        self.integers = _Integers(np.where(whole, values, 0.0).astype(np.int64))
        longest = max((len(t) for t in self.text), default=0)
        super().__init__(max(self.integers.width + 2, longest))

    def fill(self, matrix: npt.NDArray[np.uint8], end: int) -> None:
        self.integers.fill(matrix, end - 2)
        matrix[:, end - 2 : end] = np.frombuffer(b".0", np.uint8)
        put_text(matrix, self.others, end, self.width, self.text)


class _Text(_Layout):
    def __init__(self, fields: npt.NDArray[np.bytes_], codes: npt.NDArray[np.intp]) -> None:
        super().__init__(fields.dtype.itemsize)
        self.cells = fields.take(codes)

    def fill(self, matrix: npt.NDArray[np.uint8], end: int) -> None:
        block = self.cells.view(np.uint8).reshape(len(self.cells), self.width)
        matrix[:, end - self.width : end] = block


def _layout(series: pd.Series) -> _Layout | None:
    dtype = series.dtype
    if dtype == np.int64:
        return _Integers(series.to_numpy())
    if dtype == np.float64:
        return _Floats(series.to_numpy())
    # pandas' own text type, or an object column that holds only text (and missing values)
    if pd.api.types.is_string_dtype(series) and not isinstance(dtype, pd.CategoricalDtype):
        text = _text_column(series)
        return _Text(*text) if text is not None else None
    return None
