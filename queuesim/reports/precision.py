"""Numbers shown with the precision that separates them, and "best" only when strictly best.

A column of figures compared side by side (one per setup) is printed with the first format
of a ladder, from the most readable to the most precise, under which no two *different*
values (relative difference over 1e-9) print the same text. So ``3d`` stays ``3d`` when it
is enough, and three AWRTs of 3 days and a few hours become ``74.2 h``, ``74.9 h`` and
``75.3 h`` rather than three ``3d``.

Which setup is best is decided on the values themselves, not on their texts
(:func:`queuesim.results.comparison.best_marks`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from queuesim.reports.summary import sig3
from queuesim.results.comparison import same_figure
from queuesim.site.units import format_duration

__all__ = [
    "METRIC_LADDERS",
    "distinct_texts",
    "duration_ladder",
    "format_metric",
    "marked",
    "metric_texts",
    "percent_ladder",
    "ratio_ladder",
]

Format = Callable[[float], str]


def _finite(fmt: Format) -> Format:
    return lambda x: fmt(x) if math.isfinite(x) else "-"


def _fixed(decimals: int, scale: float, unit: str) -> Format:
    def fmt(x: float) -> str:
        return f"{x * scale:,.{decimals}f}{unit}"

    return fmt


def _significant(digits: int) -> Format:
    def fmt(x: float) -> str:
        return f"{x:,.{digits}g}"

    return fmt


def duration_ladder() -> list[Format]:
    """``3d 4h`` first, then hours with one to four decimals, then seconds with up to three."""
    ladder: list[Format] = [format_duration]
    ladder += [_fixed(d, 1 / 3600, " h") for d in range(1, 5)]
    ladder += [_fixed(d, 1.0, " s") for d in range(0, 4)]
    return [_finite(f) for f in ladder]


def ratio_ladder(first: Format) -> list[Format]:
    """``first`` (e.g. two decimals or three significant digits), then 4 to 12 significant
    digits."""
    return [_finite(first)] + [_finite(_significant(d)) for d in range(4, 13)]


def percent_ladder(scale: float = 100.0) -> list[Format]:
    """``x * scale`` in percent with one to eight decimals."""
    return [_finite(_fixed(d, scale, " %")) for d in range(1, 9)]


def _same(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return same_figure(a, b)


def distinct_texts(values: Sequence[float], ladder: Sequence[Format]) -> list[str]:
    """``values`` printed with the first format of ``ladder`` under which different values
    print differently (and equal values, by construction, the same); ``repr`` if none does.
    """
    for fmt in ladder:
        texts = [fmt(float(v)) for v in values]
        clash = any(
            texts[i] == texts[j] and not _same(float(values[i]), float(values[j]))
            for i in range(len(values))
            for j in range(i + 1, len(values))
        )
        if not clash:
            return texts
    return [repr(float(v)) for v in values]


def _decimal2(x: float) -> str:
    return f"{x:,.2f}"


#: For each compared metric, its ladder of formats: durations as ``9h 23m``, slowdowns with
#: two decimals, fairness ratios with three significant digits, utilization in percent.
METRIC_LADDERS: dict[str, list[Format]] = {
    "awwt": duration_ladder(),
    "awrt": duration_ladder(),
    "awsd": ratio_ladder(_decimal2),
    "anuwt": ratio_ladder(sig3),
    "nuwt_dev": ratio_ladder(sig3),
    "mean_wait": duration_ladder(),
    "mean_bounded_slowdown": ratio_ladder(_decimal2),
    "utilization": percent_ladder(),
}


def format_metric(column: str, value: float) -> str:
    """One compared metric as shown to people, alone (the ladder's first format)."""
    return METRIC_LADDERS[column][0](value)


def metric_texts(column: str, values: Sequence[float]) -> list[str]:
    """A compared metric's values, one per setup, printed so that different values differ."""
    return distinct_texts(values, METRIC_LADDERS[column])


def marked(text: str, mark: str) -> str:
    """A cell's text with ``(tie)`` appended when it shares the best value."""
    return f"{text} (tie)" if mark == "tie" else text
