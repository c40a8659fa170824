"""The sweep report, through the document model (:mod:`queuesim.reports.document`): the
cells with their metrics (whole run, then mean wait per queue), the Pareto front of two
metrics as a figure, the effect of each axis (metric against axis value, the other axes
marginalised), the best cells with the command that prints their site file, and the
cells that failed. Written as ``report.md``, ``report.html``, ``cells.csv``,
``pareto.png`` and ``effects.png``, each atomically and byte-for-byte reproducible.

The content is built as blocks here; rendering is the document model's, so that the
report moves with it.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from queuesim.common.atomic import atomic_path, atomic_write_text
from queuesim.reports.document import (
    Block,
    Bullets,
    DocTable,
    Heading,
    Image,
    Para,
    to_html,
    to_markdown,
)
from queuesim.results.sweep_analysis import axis_effects, best_cells, pareto_front

__all__ = ["sweep_blocks", "write_sweep_report"]

#: the whole-run metrics in the cell table, with how each is shown
_METRICS = (
    ("awwt", "AWWT (h)", 3600.0),
    ("awrt", "AWRT (h)", 3600.0),
    ("awsd", "AWSD", 1.0),
    ("anuwt", "ANUWT", 1.0),
    ("nuwt_dev", "NUWT-dev", 1.0),
    ("mean_wait", "mean wait (h)", 3600.0),
    ("mean_bounded_slowdown", "mean BSLD", 1.0),
    ("utilization", "utilization", 1.0),
)
_QUEUE = "queue."
_DPI = 110
_PNG = {"Software": None}


def _fmt(value: Any, scale: float = 1.0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float | int) and not isinstance(value, bool):
        x = float(value) / scale
        return f"{x:.4g}" if abs(x) < 1e4 else f"{x:,.0f}"
    return str(value)


def _shown(metric: str) -> tuple[str, float]:
    """How a metric is labelled and scaled (times in hours)."""
    for name, label, scale in _METRICS:
        if name == metric:
            return label, scale
    return metric, 1.0


def _axes(table: pd.DataFrame) -> list[str]:
    return list(table.columns[1 : table.columns.get_loc("trace_file")])


def _queues(table: pd.DataFrame) -> list[str]:
    names = [
        c[len(_QUEUE) : -len(".mean_wait")]
        for c in table.columns
        if c.startswith(_QUEUE) and c.endswith(".mean_wait")
    ]
    return names


def _cell_tables(table: pd.DataFrame, axes: Sequence[str], front: pd.Series) -> list[Block]:
    head = ["cell", "key", *axes, "status"]
    metric_names = [(m, label, s) for m, label, s in _METRICS if m in table.columns]
    rows = []
    for i, row in table.iterrows():
        mark = " *" if bool(front.get(i, False)) else ""
        rows.append(
            [
                f"{row['cell']}{mark}",
                str(row["key"])[:10],
                *(_fmt(row[a]) for a in axes),
                str(row["status"]),
                *(_fmt(row.get(m), s) for m, _, s in metric_names),
            ]
        )
    whole = DocTable(
        [*head, *(label for _, label, _ in metric_names)],
        rows,
        [False] * len(head) + [True] * len(metric_names),
    )
    queues = _queues(table)
    per_queue = DocTable(
        ["cell", *axes, *queues],
        [
            [
                str(row["cell"]),
                *(_fmt(row[a]) for a in axes),
                *(_fmt(row.get(f"{_QUEUE}{q}.mean_wait"), 3600.0) for q in queues),
            ]
            for _, row in table.iterrows()
        ],
        [False] * (1 + len(axes)) + [True] * len(queues),
    )
    return [
        Heading(2, "Cells"),
        Para("Whole run; `*` marks the cells on the Pareto front. Times in hours."),
        whole,
        Heading(2, "Mean wait per queue (h)"),
        per_queue,
    ]


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata=_PNG, dpi=_DPI)
    return buffer.getvalue()


def pareto_png(table: pd.DataFrame, x: str, y: str, front: pd.Series) -> bytes:
    """Every finished cell at (x, y), the front drawn through its cells, numbered (cells
    at one point share a label); times in hours."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    (xlabel, xs), (ylabel, ys) = _shown(x), _shown(y)
    done = table.loc[front.index]
    fig = Figure(figsize=(6, 4.5))
    ax = fig.add_subplot()
    ax.scatter(done[x] / xs, done[y] / ys, color="#999999", s=18, label="cell")
    on = done[front.to_numpy()].sort_values([x, y])
    ax.plot(on[x] / xs, on[y] / ys, "o-", color="#17692e", label="Pareto front")
    for _, group in on.groupby([x, y], sort=True):
        px, py = float(group[x].iloc[0]), float(group[y].iloc[0])
        label = ", ".join(str(c) for c in group["cell"])
        ax.annotate(
            label, (px / xs, py / ys), textcoords="offset points", xytext=(4, 4), fontsize=8
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    return _png(fig)


def effects_png(effects: pd.DataFrame, metric: str) -> bytes:
    """One panel per axis: mean ``metric`` per value, bars from min to max."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    label, scale = _shown(metric)
    axes = list(dict.fromkeys(effects["axis"]))
    fig = Figure(figsize=(3.2 * max(1, len(axes)), 3.4))
    for k, name in enumerate(axes, start=1):
        part = effects[effects["axis"] == name]
        ax = fig.add_subplot(1, len(axes), k, sharey=fig.axes[0] if k > 1 else None)
        xs = list(range(len(part)))
        mean, low, high = (part[c].to_numpy() / scale for c in ("mean", "min", "max"))
        ax.errorbar(xs, mean, yerr=[mean - low, high - mean], fmt="o-", capsize=3, color="#1f4e8c")
        ax.set_xticks(xs, [str(v) for v in part["value"]])
        ax.set_xlabel(name)
        if k == 1:
            ax.set_ylabel(f"{label}: mean, min-max")
    fig.tight_layout()
    return _png(fig)


def sweep_blocks(
    spec: Any, table: pd.DataFrame, out_hint: str
) -> tuple[list[Block], dict[str, bytes]]:
    """The report's blocks and its figures (file name -> PNG bytes)."""
    axes = _axes(table)
    x, y = spec.report.pareto
    maximise = spec.report.maximise
    done = table[table["status"] == "done"]
    counts = table["status"].value_counts()
    blocks: list[Block] = [
        Heading(1, f"Sweep {spec.name}"),
        Para(spec.description or f"{len(table)} cells over {', '.join(axes) or 'no axis'}."),
        Para(
            f"{len(table)} cells: "
            + ", ".join(f"{n} {s}" for s, n in counts.items())
            + f". Base site `{spec.site}`, traces "
            + ", ".join(f"`{t}`" for t in dict.fromkeys(table["trace_file"]))
            + "."
        ),
    ]
    figures: dict[str, bytes] = {}
    front = pareto_front(table, x, y, maximise=maximise) if len(done) else pd.Series(dtype=bool)
    blocks += _cell_tables(table, axes, front)
    if len(done):
        figures["pareto.png"] = pareto_png(table, x, y, front)
        blocks += [
            Heading(2, f"Pareto front: {x} against {y}"),
            Para(
                f"Cells no other cell beats in both {x} and {y}: "
                + ", ".join(str(c) for c in table.loc[front[front].index, "cell"])
                + "."
            ),
            Image("pareto.png", f"{x} against {y}", figures["pareto.png"]),
        ]
        metric = spec.report.rank_by
        label, scale = _shown(metric)
        effects = axis_effects(table, axes, metric)
        if axes:
            figures["effects.png"] = effects_png(effects, metric)
            blocks += [
                Heading(2, f"Effect of each axis on {label}"),
                Para("Mean over the cells with that value, the other axes marginalised."),
                DocTable(
                    ["axis", "value", "mean", "min", "max", "cells"],
                    [
                        [
                            str(r.axis),
                            str(r.value),
                            _fmt(r.mean, scale),
                            _fmt(r.min, scale),
                            _fmt(r.max, scale),
                            str(r.count),
                        ]
                        for r in effects.itertuples()
                    ],
                    [False, False, True, True, True, True],
                ),
                Image("effects.png", f"{metric} against each axis", figures["effects.png"]),
            ]
        best = best_cells(table, metric, spec.report.best, maximise=maximise)
        blocks += [
            Heading(2, f"Best cells by {label}"),
            Bullets(
                [
                    f"cell {r['cell']} ({', '.join(f'{a}={r[a]}' for a in axes)}): {label} "
                    f"{_fmt(r[metric], scale)}; its site: "
                    f"`queuesim sweep show {str(r['key'])[:12]} --site --out {out_hint}`"
                    for _, r in best.iterrows()
                ]
            ),
        ]
    failed = table[table["status"] == "failed"]
    if len(failed):
        blocks += [
            Heading(2, "Failed cells"),
            Bullets(
                [
                    f"cell {r['cell']}: {str(r['error']).splitlines()[0]}"
                    for _, r in failed.iterrows()
                ]
            ),
        ]
    return blocks, figures


def write_sweep_report(folder: Path, spec: Any, table: pd.DataFrame, out_hint: str = "DIR") -> Path:
    """Write the report into ``folder`` (each file atomically); returns ``report.md``."""
    blocks, figures = sweep_blocks(spec, table, out_hint)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in figures.items():
        with atomic_path(folder / name) as tmp:
            tmp.write_bytes(data)
    # the run's timing differs from run to run; the site is in the rows (sweep show --site)
    kept = table.drop(columns=["site", "error", "wall_seconds"], errors="ignore")
    with atomic_path(folder / "cells.csv") as tmp:
        kept.to_csv(tmp, index=False, float_format="%.10g")
    atomic_write_text(folder / "report.html", to_html(blocks, f"Sweep {spec.name}"))
    atomic_write_text(folder / "report.md", to_markdown(blocks))
    return folder / "report.md"
