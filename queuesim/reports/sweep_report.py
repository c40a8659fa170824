"""The sweep report, through the document model (:mod:`queuesim.reports.document`): the
cells with their metrics (whole run, then mean wait per queue), the Pareto front of two
metrics as a figure, the effect of each axis (metric against axis value, the other axes
marginalised), the best cells with the command that prints their site file, and the
cells that failed. Written as ``report.md``, ``report.html``, ``cells.csv``,
``pareto.png`` and ``effects.png``, each atomically and byte-for-byte reproducible.

The content is built as a :class:`~queuesim.reports.document.Report` here; rendering is
the report model's. Names read from the spec or the rows (axes, values, traces, errors) go
in as values, never as markup, so every renderer escapes them.
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
    Code,
    Figure,
    Para,
    Report,
    Section,
    Table,
    Text,
    Verbatim,
    text_of,
)
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.results.sweep_analysis import axis_effects, best_cells, pareto_front

__all__ = ["sweep_report", "write_sweep_report"]

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


def _cell_sections(table: pd.DataFrame, axes: Sequence[str], front: pd.Series) -> list[Section]:
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
    whole = Table(
        [*head, *(label for _, label, _ in metric_names)],
        rows,
        [False] * len(head) + [True] * len(metric_names),
    )
    queues = _queues(table)
    per_queue = Table(
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
        Section(
            "Cells",
            [Para.of("Whole run; `*` marks the cells on the Pareto front. Times in hours."), whole],
        ),
        Section("Mean wait per queue (h)", [per_queue]),
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


def _best_cell(row: pd.Series, axes: Sequence[str], metric: str, out_hint: str) -> Text:
    """A best cell: its values, its figure and the command that prints its site file."""
    label, scale = _shown(metric)
    values = ", ".join(f"{a}={row[a]}" for a in axes)
    command = f"queuesim sweep show {str(row['key'])[:12]} --site --out {out_hint}"
    return text_of(
        Verbatim(f"cell {row['cell']} ({values}): {label} {_fmt(row[metric], scale)}; its site: "),
        Code(command),
    )


def _traces(table: pd.DataFrame) -> list[Code | str]:
    """The sweep's traces as code spans, comma-separated."""
    parts: list[Code | str] = []
    for k, trace in enumerate(dict.fromkeys(table["trace_file"])):
        parts += [", ", Code(str(trace))] if k else [Code(str(trace))]
    return parts


def sweep_report(spec: Any, table: pd.DataFrame, out_hint: str) -> tuple[Report, dict[str, bytes]]:
    """The report and its figures (file name -> PNG bytes)."""
    axes = _axes(table)
    x, y = spec.report.pareto
    maximise = spec.report.maximise
    done = table[table["status"] == "done"]
    counts = table["status"].value_counts()
    lead: list[Block] = [
        Para.of(Verbatim(spec.description))
        if spec.description
        else Para.of(f"{len(table)} cells over ", Verbatim(", ".join(axes) or "no axis"), "."),
        Para(
            text_of(
                f"{len(table)} cells: " + ", ".join(f"{n} {s}" for s, n in counts.items()),
                ". Base site ",
                Code(str(spec.site)),
                ", traces ",
                *_traces(table),
                ".",
            )
        ),
    ]
    figures: dict[str, bytes] = {}
    front = pareto_front(table, x, y, maximise=maximise) if len(done) else pd.Series(dtype=bool)
    sections = _cell_sections(table, axes, front)
    if len(done):
        figures["pareto.png"] = pareto_png(table, x, y, front)
        sections.append(
            Section(
                f"Pareto front: {x} against {y}",
                [
                    Para.of(
                        f"Cells no other cell beats in both {x} and {y}: ",
                        Verbatim(", ".join(str(c) for c in table.loc[front[front].index, "cell"])),
                        ".",
                    ),
                    Figure("pareto.png", f"{x} against {y}", figures["pareto.png"]),
                ],
            )
        )
        metric = spec.report.rank_by
        label, scale = _shown(metric)
        effects = axis_effects(table, axes, metric)
        if axes:
            figures["effects.png"] = effects_png(effects, metric)
            sections.append(
                Section(
                    f"Effect of each axis on {label}",
                    [
                        Para.of(
                            "Mean over the cells with that value, the other axes marginalised."
                        ),
                        Table(
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
                        Figure(
                            "effects.png", f"{metric} against each axis", figures["effects.png"]
                        ),
                    ],
                )
            )
        best = best_cells(table, metric, spec.report.best, maximise=maximise)
        sections.append(
            Section(
                f"Best cells by {label}",
                [Bullets([_best_cell(r, axes, metric, out_hint) for _, r in best.iterrows()])],
            )
        )
    failed = table[table["status"] == "failed"]
    if len(failed):
        sections.append(
            Section(
                "Failed cells",
                [
                    Bullets(
                        [
                            text_of(
                                Verbatim(f"cell {r['cell']}: {str(r['error']).splitlines()[0]}")
                            )
                            for _, r in failed.iterrows()
                        ]
                    )
                ],
            )
        )
    return Report(f"Sweep {spec.name}", lead, sections), figures


def write_sweep_report(folder: Path, spec: Any, table: pd.DataFrame, out_hint: str = "DIR") -> Path:
    """Write the report into ``folder`` (each file atomically); returns ``report.md``."""
    report, figures = sweep_report(spec, table, out_hint)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in figures.items():
        with atomic_path(folder / name) as tmp:
            tmp.write_bytes(data)
    # the run's timing differs from run to run; the site is in the rows (sweep show --site)
    kept = table.drop(columns=["site", "error", "wall_seconds"], errors="ignore")
    with atomic_path(folder / "cells.csv") as tmp:
        kept.to_csv(tmp, index=False, float_format="%.10g")
    atomic_write_text(folder / "report.html", to_html(report))
    atomic_write_text(folder / "report.md", to_markdown(report))
    return folder / "report.md"
