"""The DFRS study's plot (Fig. 1 of paper ``002``) and its files."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.reports.document import Report
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.studies.dfrs.config import _PNG_METADATA, _RC, StudyResult
from queuesim.studies.dfrs.instances import SYNTHETIC
from queuesim.studies.dfrs.tables import PLOT, penalty_title

if TYPE_CHECKING:
    pass


# --- plot ---------------------------------------------------------------------------------


def render_plot(frame: pd.DataFrame, penalties: Sequence[float]) -> bytes:
    """``002`` Fig. 1: the average degradation from bound of every algorithm against the
    load (synthetic instances), log scale, one panel per penalty; PNG bytes, deterministic."""
    import matplotlib
    from matplotlib.figure import Figure

    synthetic = frame[frame["trace_set"] == SYNTHETIC]
    labels = list(dict.fromkeys(frame["algorithm"]))
    markers = "osD^v<>pPX*h"
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(4.2 * len(penalties) + 0.5, 4.6), layout="constrained")
        axes = fig.subplots(1, len(penalties), sharey=True, squeeze=False)[0]
        for ax, penalty in zip(axes, penalties, strict=True):
            rows = synthetic[synthetic["penalty"] == penalty]
            means = rows.groupby(["algorithm", "load"], sort=False)["degradation"].mean()
            for k, label in enumerate(labels):
                if label not in means.index.get_level_values(0):
                    continue
                line = means.loc[label].sort_index()
                ax.plot(
                    line.index.to_numpy(dtype=float),
                    line.to_numpy(dtype=float),
                    marker=markers[k % len(markers)],
                    markersize=4,
                    linewidth=1.2,
                    label=label,
                )
            if rows.empty:
                ax.text(0.5, 0.5, "no synthetic instance", ha="center", transform=ax.transAxes)
            ax.set_yscale("log")
            _plain_log_labels(ax)
            ax.set_xlabel("load")
            ax.set_title(penalty_title(penalty))
            ax.grid(True, which="major", linewidth=0.4, alpha=0.6)
        axes[0].set_ylabel("average degradation from bound (max stretch / bound)")
        handles, names = axes[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, names, loc="outside lower center", ncol=min(4, len(names)))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, metadata=_PNG_METADATA)
    return buffer.getvalue()


def _plain_log_labels(ax: Any) -> None:
    """Label a log axis 1, 10, 100 (and 2, 3, ... within a single decade), not 10^k."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    low, high = ax.get_ylim()
    ax.yaxis.set_minor_formatter(plain if high < 10 * low else NullFormatter())


# --- files --------------------------------------------------------------------------------


def write_study(out: Path, result: StudyResult, report: Report, plot: bytes) -> list[Path]:
    """``study.md``, ``study.html``, ``study.csv``, ``degradation-vs-load.png`` (``plot``)
    and ``timings.csv`` in ``out``, each written atomically."""
    csv = out / "study.csv"
    with atomic_path(csv) as tmp:
        result.frame.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n")
    md, page = out / "study.md", out / "study.html"
    atomic_write_text(md, to_markdown(report))
    atomic_write_text(page, to_html(report))
    png = out / PLOT
    with atomic_path(png) as tmp:
        tmp.write_bytes(plot)
    timings = out / "timings.csv"
    with atomic_path(timings) as tmp:
        result.timings.to_csv(tmp, index=False, float_format="%.3f", lineterminator="\n")
    return [md, page, csv, png, timings]
