"""Reading input files as bytes: gzip recognised by suffix or magic bytes, a UTF-8
byte-order mark dropped, and every failure a one-line :class:`WorkloadError` naming the
file. Trace readers and machine-file readers share this."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from queuesim.common.errors import WorkloadError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def read_bytes(path: Path, what: str = "workload file") -> bytes:
    """The uncompressed content of ``path`` (gzip by suffix, or recognised by its magic
    bytes), without a UTF-8 byte-order mark; or a one-line WorkloadError naming ``what``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise WorkloadError(f"{path}: is a directory, not a {what}") from None
    except PermissionError:
        raise WorkloadError(f"{path}: cannot read the {what} (permission denied)") from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if path.suffix.lower() == ".gz" or data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise WorkloadError(f"{path}: not a valid gzip file ({exc})") from None
    return data.removeprefix(UTF8_BOM)


def decode_line(raw: bytes) -> str:
    """One raw line as text (undecodable bytes replaced), without its line break."""
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")
