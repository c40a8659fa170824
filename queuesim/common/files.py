"""Reading input files as bytes: gzip recognised by suffix or magic bytes, a UTF-8
byte-order mark dropped, and every failure a one-line :class:`WorkloadError` naming the
file. Trace readers and machine-file readers share this."""

from __future__ import annotations

import gzip
import mmap
import zlib
from pathlib import Path

from queuesim.common.errors import QueuesimError, WorkloadError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def raw_bytes(path: Path, what: str, error: type[QueuesimError] = WorkloadError) -> bytes:
    """The bytes of ``path`` as stored, or a one-line ``error`` naming the file and
    ``what`` it should be (missing, a directory, unreadable)."""
    try:
        return path.read_bytes()
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
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise WorkloadError(f"{path}: not a valid gzip file ({exc})") from None
    return data.removeprefix(UTF8_BOM)


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
            has_bom = bytes(view[: len(UTF8_BOM)]) == UTF8_BOM
            return view[len(UTF8_BOM) :] if has_bom else view
    return read_bytes(path, what)
