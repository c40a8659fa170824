"""Human units as site admins write them: durations (``90m``, ``2h``, ``1d12h``, ``30d``)
and sizes (``512MB``, ``64GB``, ``1.5TiB``).

Durations are returned in seconds (float); sizes in bytes (int). Decimal suffixes (KB, MB,
GB, TB) are powers of 1024 as in PBS and Slurm, which is what admins mean when they write
``64GB`` for a node's memory; the explicit binary forms (KiB, MiB, ...) are accepted too.
"""

from __future__ import annotations

import math
import re

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


def parse_duration(value: object) -> float:
    """Parse ``90m``, ``2h``, ``1d12h``, ``1:30:00`` (h:m:s) or a bare number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as '90m', '2h' or '30d', got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        elif re.fullmatch(r"\d+:\d{1,2}:\d{1,2}", text):
            h, m, s = (int(x) for x in text.split(":"))
            seconds = float(h * 3600 + m * 60 + s)
        else:
            compact = text.replace(" ", "")
            parts = _DURATION_PART.findall(compact)
            if not parts or "".join(n + u for n, u in parts) != compact:
                raise ValueError(
                    f"expected a duration such as '90m', '2h', '1d12h' or '30d', got {value!r}"
                )
            seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    else:
        raise ValueError(f"expected a duration such as '90m', '2h' or '30d', got {value!r}")
    if not math.isfinite(seconds):
        raise ValueError(f"expected a finite duration such as '90m' or '2h', got {value!r}")
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    return seconds


def parse_size(value: object) -> int:
    """Parse ``512MB``, ``64GB``, ``2TiB`` or a bare number of bytes into bytes."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as '512MB' or '64GB', got {value!r}")
    if isinstance(value, int | float):
        size = float(value)
    elif isinstance(value, str):
        match = _SIZE.match(value.strip().lower())
        if not match:
            raise ValueError(f"expected a size such as '512MB' or '64GB', got {value!r}")
        size = float(match.group(1)) * _SIZE_UNITS[match.group(2) or "b"]
    else:
        raise ValueError(f"expected a size such as '512MB' or '64GB', got {value!r}")
    if not math.isfinite(size):
        raise ValueError(f"expected a finite size such as '512MB' or '64GB', got {value!r}")
    if size < 0:
        raise ValueError(f"a size cannot be negative, got {value!r}")
    return int(size)


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
