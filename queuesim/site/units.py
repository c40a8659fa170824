"""Human units as site admins write them: durations (``90m``, ``2h``, ``1d12h``, ``30d``)
and sizes (``512MB``, ``64GB``, ``1.5TiB``).

Durations are returned in seconds (float); sizes in bytes (int). Decimal suffixes (KB, MB,
GB, TB) are powers of 1024 as in PBS and Slurm, which is what admins mean when they write
``64GB`` for a node's memory; the explicit binary forms (KiB, MiB, ...) are accepted too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_SIZE_UNITS = {
    "b": 1,
    "k": 1024,
    "m": 1024**2,
    "g": 1024**3,
    "t": 1024**4,
    "p": 1024**5,
}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?$")


def _quantity(
    value: object, what: str, examples: str, from_text: Callable[[str], float | None]
) -> float:
    """A non-negative finite ``what`` (duration, size) given as a number or as text that
    ``from_text`` reads (None: not readable); the errors quote ``examples``."""
    expected = f"expected a {what} such as {examples}, got {value!r}"
    if isinstance(value, bool):
        raise ValueError(expected)
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = from_text(value.strip().lower())
        if text is None:
            raise ValueError(expected)
        number = text
    else:
        raise ValueError(expected)
    if not math.isfinite(number):
        raise ValueError(f"expected a finite {what} such as {examples}, got {value!r}")
    if number < 0:
        raise ValueError(f"a {what} cannot be negative, got {value!r}")
    return number


def _duration_text(text: str) -> float | None:
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if re.fullmatch(r"\d+:\d{1,2}:\d{1,2}", text):
        h, m, s = (int(x) for x in text.split(":"))
        return float(h * 3600 + m * 60 + s)
    compact = text.replace(" ", "")
    parts = _DURATION_PART.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def _size_text(text: str) -> float | None:
    match = _SIZE.match(text)
    if not match:
        return None
    return float(match.group(1)) * _SIZE_UNITS[match.group(2) or "b"]


def parse_duration(value: object) -> float:
    """Parse ``90m``, ``2h``, ``1d12h``, ``1:30:00`` (h:m:s) or a bare number of seconds."""
    return _quantity(value, "duration", "'90m', '2h', '1d12h' or '30d'", _duration_text)


def parse_size(value: object) -> int:
    """Parse ``512MB``, ``64GB``, ``2TiB`` or a bare number of bytes into bytes."""
    return int(_quantity(value, "size", "'512MB' or '64GB'", _size_text))


def format_duration(seconds: float) -> str:
    """Render seconds compactly for people: ``3d 4h``, ``2h 5m``, ``45s``."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    s = round(seconds)
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m {s}s" if s else f"{minutes}m"
    return f"{s}s"
