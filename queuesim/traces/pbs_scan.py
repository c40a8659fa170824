"""The compiled scan of a PBS accounting log: where every record's fields and every wanted
``key=value`` of its message lie in the file's bytes (:mod:`queuesim.traces.pbs` turns them
into values).

A log of a million records is 300 MB; splitting it with Python string methods or even
Arrow's kernels makes tens of millions of small strings. The scan instead walks the bytes
once in numba-compiled code and records offsets: per line its fields
(``DATE;TYPE;ID;MESSAGE``), per ``E`` record where each wanted key's value starts and ends.
Values become strings only when asked for (:func:`strings`), as one Arrow array per key
cut straight from the file's buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from queuesim.common.jit import jit

#: line status codes of :func:`scan_lines`
RECORD, SKIP, BAD_FIELDS, BAD_DATE, BAD_TYPE = 0, 1, 2, 3, 4
#: byte values
_NL, _CR, _SPACE, _SEMI, _DOT, _EQ, _QUOTE, _APOS = 10, 13, 32, 59, 46, 61, 34, 39
#: the shape of a record's date, MM/DD/YYYY HH:MM:SS: 0 a digit, else that byte
_DATE = np.frombuffer(b"00/00/0000 00:00:00", dtype=np.uint8).copy()
_DATE[ord("0") == _DATE] = 0


@dataclass(frozen=True)
class Lines:
    """Per line of the log: its status, record type and the offsets of its fields."""

    status: npt.NDArray[np.int8]
    rtype: npt.NDArray[np.uint8]
    id_start: npt.NDArray[np.int64]
    id_end: npt.NDArray[np.int64]
    key_end: npt.NDArray[np.int64]  #: the job's key: its id up to the server name
    message_start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]  #: without trailing blanks


def scan_lines(buf: npt.NDArray[np.uint8]) -> Lines:
    """Split the log's bytes into lines and each record line into its fields."""
    return Lines(*_scan_lines(buf, _DATE))


@jit
def _find(buf: np.ndarray, byte: int, start: int, end: int) -> int:
    for p in range(start, end):
        if buf[p] == byte:
            return p
    return -1


@jit
def _scan_lines(buf, date):  # type: ignore[no-untyped-def]
    n = 0
    for p in range(buf.shape[0]):
        if buf[p] == _NL:
            n += 1
    if buf.shape[0] and buf[buf.shape[0] - 1] != _NL:
        n += 1
    status = np.full(n, SKIP, dtype=np.int8)
    rtype = np.zeros(n, dtype=np.uint8)
    id_start = np.zeros(n, dtype=np.int64)
    id_end = np.zeros(n, dtype=np.int64)
    key_end = np.zeros(n, dtype=np.int64)
    message_start = np.zeros(n, dtype=np.int64)
    ends = np.zeros(n, dtype=np.int64)
    start = 0
    for i in range(n):
        stop = _find(buf, _NL, start, buf.shape[0])
        if stop < 0:
            stop = buf.shape[0]
        e = stop
        while e > start and (buf[e - 1] == _CR or buf[e - 1] == _SPACE):
            e -= 1
        ends[i] = e
        line_start = start
        start = stop + 1
        if e == line_start or buf[line_start] == _SEMI:
            continue
        p1 = _find(buf, _SEMI, line_start, e)
        p2 = _find(buf, _SEMI, p1 + 1, e) if p1 >= 0 else -1
        p3 = _find(buf, _SEMI, p2 + 1, e) if p2 >= 0 else -1
        if p3 < 0:
            status[i] = BAD_FIELDS
            continue
        ok = p1 - line_start == date.shape[0]
        if ok:
            for k in range(date.shape[0]):
                b = buf[line_start + k]
                if date[k] == 0:
                    if b < 48 or b > 57:
                        ok = False
                elif b != date[k]:
                    ok = False
        if ok:  # the shape holds: month, day, hour, minute and second in range
            ok = _date_in_range(buf, line_start)
        if not ok:
            status[i] = BAD_DATE
            continue
        if p2 != p1 + 2:
            status[i] = BAD_TYPE
            continue
        status[i] = RECORD
        rtype[i] = buf[p1 + 1]
        id_start[i] = p2 + 1
        id_end[i] = p3
        dot = _find(buf, _DOT, p2 + 1, p3)
        key_end[i] = dot if dot >= 0 else p3
        message_start[i] = p3 + 1
    return status, rtype, id_start, id_end, key_end, message_start, ends


@jit
def _two_digits(buf, p):  # type: ignore[no-untyped-def]
    return (np.int64(buf[p]) - 48) * 10 + (np.int64(buf[p + 1]) - 48)


@jit
def _date_in_range(buf, s):  # type: ignore[no-untyped-def]
    """Whether the digits of ``MM/DD/YYYY HH:MM:SS`` at ``s`` are a month 01-12, a day
    01-31, an hour 00-23, a minute 00-59 and a second 00-60 (a leap second)."""
    month, day = _two_digits(buf, s), _two_digits(buf, s + 3)
    hour, minute = _two_digits(buf, s + 11), _two_digits(buf, s + 14)
    second = _two_digits(buf, s + 17)
    return 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60


def key_table(keys: tuple[str, ...]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The wanted keys as one byte array and their offsets, for :func:`scan_values`."""
    encoded = [k.encode("ascii") for k in keys]
    offsets = np.cumsum([0, *(len(k) for k in encoded)]).astype(np.int64)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def scan_values(
    buf: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    keys: tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For every message (``buf[starts[r]:ends[r]]``) and wanted key, where the key's value
    starts and ends (-1: absent; quotes stripped, a quoted value may hold spaces), and where
    the first token without ``=`` starts (-1: none)."""
    result: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]] = (
        _scan_values(buf, starts, ends, keys[0], keys[1])
    )
    return result


@jit
def _scan_values(buf, starts, ends, key_bytes, key_offsets):  # type: ignore[no-untyped-def]
    m = starts.shape[0]
    n_keys = key_offsets.shape[0] - 1
    value_start = np.full((m, n_keys), -1, dtype=np.int64)
    value_end = np.full((m, n_keys), -1, dtype=np.int64)
    bad = np.full(m, -1, dtype=np.int64)
    for r in range(m):
        p, e = starts[r], ends[r]
        while p < e:
            while p < e and buf[p] == _SPACE:
                p += 1
            if p >= e:
                break
            token = p
            while p < e and buf[p] != _EQ and buf[p] != _SPACE:
                p += 1
            if p >= e or buf[p] == _SPACE:
                bad[r] = token
                break
            key_stop = p
            p += 1
            if p < e and (buf[p] == _QUOTE or buf[p] == _APOS):
                quote = buf[p]
                p += 1
                v0 = p
                while p < e and buf[p] != quote:
                    p += 1
                v1 = p
                if p < e:
                    p += 1
            else:
                v0 = p
                while p < e and buf[p] != _SPACE:
                    p += 1
                v1 = p
            length = key_stop - token
            for k in range(n_keys):
                k0 = key_offsets[k]
                if key_offsets[k + 1] - k0 != length:
                    continue
                same = True
                for j in range(length):
                    if buf[token + j] != key_bytes[k0 + j]:
                        same = False
                        break
                if same:
                    value_start[r, k] = v0
                    value_end[r, k] = v1
                    break
    return value_start, value_end, bad


def strings(
    data: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> pa.Array:
    """The byte ranges ``[starts[i], ends[i])`` of ``data`` as a binary array (null where
    ``starts[i]`` is -1), copied into one new buffer."""
    present = starts >= 0
    lengths = np.where(present, ends - starts, 0)
    offsets = np.zeros(starts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = _gather(data, starts, lengths, offsets)
    validity = None if present.all() else pa.array(present).buffers()[1]
    return pa.Array.from_buffers(
        pa.large_binary(),
        starts.shape[0],
        [validity, pa.py_buffer(offsets), pa.py_buffer(values)],
    )


@jit
def _gather(data, starts, lengths, offsets):  # type: ignore[no-untyped-def]
    out = np.empty(offsets[-1], dtype=np.uint8)
    for i in range(starts.shape[0]):
        o = offsets[i]
        s = starts[i]
        for j in range(lengths[i]):
            out[o + j] = data[s + j]
    return out


def numbers(
    data: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The byte ranges as numbers (an optional sign, digits, an optional fraction; NaN where
    ``starts[i]`` is -1 or the range is not one), and which ranges are not one."""
    result: tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]] = _numbers(data, starts, ends)
    return result


@jit
def _numbers(data, starts, ends):  # type: ignore[no-untyped-def]
    out = np.full(starts.shape[0], np.nan)
    wrong = np.zeros(starts.shape[0], dtype=np.bool_)
    for i in range(starts.shape[0]):
        s, e = starts[i], ends[i]
        if s < 0:
            continue
        sign = 1.0
        if s < e and (data[s] == 45 or data[s] == 43):
            sign = -1.0 if data[s] == 45 else 1.0
            s += 1
        if s >= e:
            wrong[i] = True
            continue
        value = 0.0
        scale = 0.0
        for p in range(s, e):
            b = data[p]
            if 48 <= b <= 57:
                if scale > 0:
                    value += (b - 48) / scale
                    scale *= 10.0
                else:
                    value = value * 10.0 + (b - 48)
            elif b == 46 and scale == 0:
                scale = 10.0
            else:
                wrong[i] = True
                break
        if not wrong[i]:
            out[i] = sign * value
    return out, wrong
