"""Reading input files as bytes: gzip recognised by suffix or magic bytes, a UTF-8
byte-order mark dropped, and every failure a one-line :class:`WorkloadError` naming the
file. Trace readers and machine-file readers share this.

No line may be longer than :data:`MAX_LINE_BYTES`: no format queuesim reads has such
lines, and a file that does (1 GB of one line compresses to 1 MB) is refused as soon as
the limit is passed, naming the line - a gzip file is decompressed a piece at a time and
checked as it goes, so such a file costs a megabyte of memory, not its whole content.

Large inputs are read in pieces of whole lines (:func:`line_chunks`): a reader that parses
each piece as it comes holds a few megabytes of text at a time, not the whole file."""

from __future__ import annotations

import mmap
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from queuesim.common.errors import QueuesimError, WorkloadError

GZIP_MAGIC = b"\x1f\x8b"
#: the longest line any reader accepts (bytes, without the line break)
MAX_LINE_BYTES = 1 << 20
#: how much decompressed data one step of gzip decompression makes at most
_GUNZIP_STEP = 1 << 20
UTF8_BOM = b"\xef\xbb\xbf"
#: about how much text one piece of :func:`line_chunks` holds
CHUNK_BYTES = 8 << 20
#: how much of a stored file one read takes
_READ_STEP = 1 << 20


def raw_bytes(path: Path, what: str, error: type[QueuesimError] = WorkloadError) -> bytes:
    """The bytes of ``path`` as stored, or a one-line ``error`` naming the file and
    ``what`` it should be (missing, a directory, unreadable)."""
    with _reading(path, what, error):
        return path.read_bytes()


@contextmanager
def _reading(path: Path, what: str, error: type[QueuesimError] = WorkloadError) -> Iterator[None]:
    """Turns the OS's failures to read ``path`` into a one-line ``error``."""
    try:
        yield
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a {what}") from None
    except PermissionError:
        raise error(f"{path}: cannot read the {what} (permission denied)") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None


def read_bytes(path: Path, what: str = "workload file") -> bytes:
    """The uncompressed content of ``path`` (gzip by suffix, or recognised by its magic
    bytes), without a UTF-8 byte-order mark; or a one-line WorkloadError naming ``what``."""
    data = raw_bytes(path, what)
    if path.suffix.lower() == ".gz" or data.startswith(GZIP_MAGIC):
        try:
            data = _gunzip(data, LineLimit(path, what))
        except (OSError, EOFError, zlib.error) as exc:
            raise WorkloadError(f"{path}: not a valid gzip file ({exc})") from None
    else:
        LineLimit(path, what).feed(data)
    return data.removeprefix(UTF8_BOM)


def line_too_long(path: Path, number: int, what: str, limit: int = MAX_LINE_BYTES) -> WorkloadError:
    """The error for line ``number`` of ``path`` being longer than ``limit`` bytes."""
    return WorkloadError(
        f"{path}:{number}: line longer than {limit / (1 << 20):g} MB; not a {what} queuesim "
        "reads (no format it reads has such lines: is this the right file?)"
    )


def count_lines(buf: bytes) -> int:
    """The line breaks in ``buf``: numpy compares a byte a lane, about 4x faster than
    ``bytes.count`` (which tests a byte at a time) - every byte of every log is counted
    once, for the line numbers."""
    return int(np.count_nonzero(np.frombuffer(buf, dtype=np.uint8) == _NEWLINE))


_NEWLINE = ord("\n")


class LineLimit:
    """Checks, piece by piece, that no line of a file passes :data:`MAX_LINE_BYTES`, and
    raises a WorkloadError naming the file and the line's number when one does. Looks at
    two bytes per megabyte of ordinary text (the first and last line break of each
    megabyte); only a megabyte without a line break is scanned whole."""

    def __init__(self, path: Path, what: str, limit: int = MAX_LINE_BYTES) -> None:
        self.path, self.what, self.limit = path, what, limit
        self.open_run = 0  #: bytes of the line still open at the end of the pieces fed
        self.lines_before = 0  #: line breaks in the pieces fed before the current one

    def feed(self, buf: bytes | mmap.mmap, *, more: bool = False) -> None:
        """Check the piece ``buf``; ``more``: pieces follow (its line breaks are counted
        for the line numbers of later pieces)."""
        end = len(buf)
        pos = 0
        while pos < end:
            stop = min(pos + self.limit, end)
            first = buf.find(b"\n", pos, stop)
            if first == -1:
                self.open_run += stop - pos
                if self.open_run > self.limit:
                    self._refuse(buf, stop - self.open_run)
            else:
                if self.open_run + first - pos > self.limit:
                    self._refuse(buf, pos - self.open_run)
                self.open_run = stop - buf.rfind(b"\n", first, stop) - 1
            pos = stop
        if more and isinstance(buf, bytes):
            self.lines_before += count_lines(buf)

    def _refuse(self, buf: bytes | mmap.mmap, line_start: int) -> None:
        """``line_start``: where the long line starts in ``buf`` (negative: in an earlier
        piece)."""
        before = self.lines_before
        if line_start > 0:
            before += bytes(buf[:line_start]).count(b"\n")
        raise line_too_long(self.path, before + 1, self.what, self.limit)


def _gunzip(data: bytes, limit: LineLimit) -> bytes:
    """``data`` decompressed (every gzip member, as :func:`gzip.decompress`), a step at a
    time, each step checked by ``limit`` before the next is made."""
    pieces = []
    for piece in _gunzip_pieces(iter((data,))):
        limit.feed(piece, more=True)
        pieces.append(piece)
    return b"".join(pieces)


def _gunzip_pieces(stored: Iterator[bytes]) -> Iterator[bytes]:
    """The decompressed content, at most :data:`_GUNZIP_STEP` bytes a piece, of the gzip
    stream whose stored bytes come block by block from ``stored`` (every member, as
    :func:`gzip.decompress`; zero padding after a member is allowed, as gzip allows)."""
    member = zlib.decompressobj(wbits=31)
    fresh, first = True, True  # the member has had no input yet; it is the file's first
    for block in stored:
        pending = block
        while pending:
            if fresh and not first:
                pending = pending.lstrip(b"\x00")
                if not pending:
                    break
            fresh = first = False
            piece = member.decompress(pending, _GUNZIP_STEP)
            if piece:
                yield piece
            if member.eof:
                pending = member.unused_data
                member, fresh = zlib.decompressobj(wbits=31), True
            else:
                pending = member.unconsumed_tail
    if not fresh:
        piece = member.flush()
        if piece:
            yield piece
        if not member.eof:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def line_chunks(
    path: Path, what: str = "workload file", size: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """The content of ``path`` as :func:`read_bytes` gives it (gzip recognised, a UTF-8
    byte-order mark dropped, no line over :data:`MAX_LINE_BYTES`, the same one-line
    errors), in pieces of whole lines of about ``size`` bytes (default
    :data:`CHUNK_BYTES`), each with the number (from
    1) of its first line. Only one piece is held at a time - the stored file is read, and
    decompressed, a megabyte at a time - so a reader that parses each piece as it comes
    needs memory for its result, not for the whole text."""
    size = CHUNK_BYTES if size is None else size
    limit = LineLimit(path, what)
    with _reading(path, what):
        stream = path.open("rb")
    with stream:
        head = _read(stream, path, what)
        blocks = _stored_blocks(stream, head, path, what)
        packed = path.suffix.lower() == ".gz" or head.startswith(GZIP_MAGIC)
        kept: list[bytes] = []
        held, number, bom = 0, 1, True
        try:
            for piece in _gunzip_pieces(blocks) if packed else blocks:
                limit.feed(piece, more=True)
                kept.append(piece)
                held += len(piece)
                if held >= size and b"\n" in piece:
                    cut = piece.rindex(b"\n") + 1  # the piece is cut, not the whole text
                    kept[-1], rest = piece[:cut], piece[cut:]
                    chunk = b"".join(kept)
                    if bom:
                        chunk, bom = chunk.removeprefix(UTF8_BOM), False
                    yield number, chunk
                    number = limit.lines_before + 1  # the line breaks fed, none in rest
                    kept, held = [rest], len(rest)
        except (OSError, EOFError, zlib.error) as exc:
            raise WorkloadError(f"{path}: not a valid gzip file ({exc})") from None
        text = b"".join(kept)
        text = text.removeprefix(UTF8_BOM) if bom else text
        if text:
            yield number, text


def _read(stream: BinaryIO, path: Path, what: str) -> bytes:
    with _reading(path, what):
        return stream.read(_READ_STEP)


def _stored_blocks(stream: BinaryIO, head: bytes, path: Path, what: str) -> Iterator[bytes]:
    """``head``, then the rest of ``stream`` a block at a time."""
    block = head
    while block:
        yield block
        block = _read(stream, path, what)


def decode_line(raw: bytes) -> str:
    """One raw line as text (undecodable bytes replaced), without its line break."""
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")


def mapped_bytes(path: Path, what: str = "workload file") -> bytes | memoryview:
    """The content of ``path`` as :func:`read_bytes` gives it, but a plain file is
    memory-mapped rather than copied (a log of a million records is hundreds of MB):
    the readers that scan bytes in bulk use this."""
    if path.suffix.lower() != ".gz":
        try:
            with path.open("rb") as stream:
                view = memoryview(mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ))
        except (OSError, ValueError):  # missing, unreadable, empty: read_bytes says which
            view = None
        if view is not None and bytes(view[: len(GZIP_MAGIC)]) != GZIP_MAGIC:
            assert isinstance(view.obj, mmap.mmap)
            LineLimit(path, what).feed(view.obj)
            has_bom = bytes(view[: len(UTF8_BOM)]) == UTF8_BOM
            return view[len(UTF8_BOM) :] if has_bom else view
    return read_bytes(path, what)
