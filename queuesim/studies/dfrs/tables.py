"""The DFRS study's tables (Table I of paper ``000``, degradation per load, costs) and its
report, one :class:`~queuesim.reports.document.Report` that the report model's renderers
write as ``study.md`` and ``study.html`` and print on the terminal."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict

import numpy as np
import pandas as pd

from queuesim.reports.document import (
    Block,
    Bullets,
    Figure,
    Note,
    Para,
    Report,
    Section,
    Strong,
    Table,
    markup,
)
from queuesim.studies.dfrs.config import (
    BOUND_SLACK,
    HPC2N_TRACE,
    RTOL,
    TAU,
    Instance,
    RunFigures,
    StudyConfig,
    StudyResult,
    load_text,
)
from queuesim.studies.dfrs.instances import (
    HPC2N,
    HPC2N_SITE,
    SYNTHETIC,
    SYNTHETIC_SITE,
)
from queuesim.studies.provenance import regenerate_para

# --- tables -------------------------------------------------------------------------------

STUDY_COLUMNS = [
    "instance",
    "trace_set",
    "load",
    "seed",
    "week",
    "jobs",
    "algorithm",
    "penalty",
    "max_stretch",
    "bound",
    "degradation",
    "degradation_factor",
    "preemptions",
    "migrations",
    "moved_memory_mb",
]


def study_frame(
    instances: Sequence[Instance],
    runs: Sequence[RunFigures],
    bounds: dict[str, float],
    config: StudyConfig,
) -> pd.DataFrame:
    """One row per instance x algorithm x penalty (a run without a penalty is repeated under
    every penalty), with the degradation from bound (``002``) and the degradation factor
    against the best algorithm of the instance under that penalty (``000``)."""
    from queuesim.results.stretch import degradation_factors, degradation_from_bound

    labels = [a.label for a in config.algorithms]
    rows = []
    for run in runs:
        for penalty in config.penalties if run.penalty is None else (run.penalty,):
            rows.append({**asdict(run), "penalty": penalty})
    table = pd.DataFrame(rows).drop(columns="run_seconds")
    expected = len(instances) * len(labels) * len(config.penalties)
    if len(table) != expected:
        raise RuntimeError(f"{len(table)} results for {expected} runs")
    bound = pd.Series(bounds, dtype=np.float64)
    parts = []
    for value, runs_p in table.groupby("penalty", sort=False):
        wide = runs_p.pivot(index="instance", columns="algorithm", values="max_stretch")
        long = [
            ratios.reset_index().melt(id_vars="instance", var_name="algorithm", value_name=name)
            for name, ratios in (
                ("degradation", degradation_from_bound(wide, bound)),
                ("degradation_factor", degradation_factors(wide)),
            )
        ]
        parts.append(long[0].merge(long[1], on=["instance", "algorithm"]).assign(penalty=value))
    table = table.merge(pd.concat(parts), on=["instance", "algorithm", "penalty"])
    described = pd.DataFrame(
        {
            "instance": [i.name for i in instances],
            "trace_set": [i.trace_set for i in instances],
            "load": pd.array([i.load for i in instances], dtype="Float64"),
            "seed": pd.array([i.seed for i in instances], dtype="Int64"),
            "week": pd.array([i.week for i in instances], dtype="Int64"),
            "jobs": [i.jobs for i in instances],
            "bound": [bounds[i.name] for i in instances],
            "position": range(len(instances)),
        }
    )
    table = described.merge(table, on="instance")
    table["algorithm_order"] = table["algorithm"].map({a: k for k, a in enumerate(labels)})
    table = table.sort_values(["penalty", "position", "algorithm_order"], kind="mergesort")
    return table[STUDY_COLUMNS].reset_index(drop=True)


def _sets(frame: pd.DataFrame) -> list[str]:
    return [s for s in (SYNTHETIC, HPC2N) if (frame["trace_set"] == s).any()]


Stats = dict[tuple[float, str], tuple[float, float, float]]


def summary(frame: pd.DataFrame, column: str, mask: pd.Series | None = None) -> Stats:
    """Average, standard deviation (sample: n/a for one instance) and maximum of ``column``
    over the instances of ``mask``, by (penalty, algorithm)."""
    from queuesim.results.stretch import summarize_degradation

    part = frame if mask is None else frame[mask]
    labels = list(dict.fromkeys(frame["algorithm"]))
    stats: Stats = {}
    penalties: list[float] = list(dict.fromkeys(part["penalty"].astype(float).tolist()))
    for penalty in penalties:
        rows = part[part["penalty"] == penalty]
        wide = rows.pivot(index="instance", columns="algorithm", values=column)[labels]
        table = summarize_degradation(wide).to_dict("index")
        for label in labels:
            cell = table[label]
            stats[(penalty, label)] = (float(cell["mean"]), float(cell["std"]), float(cell["max"]))
    return stats


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    if x < 10:
        return f"{x:.2f}"
    if x < 1000:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    """The first column is text, the others numbers."""
    return Table(header, rows, [k > 0 for k in range(len(header))])


def penalty_title(penalty: float) -> str:
    """``no rescheduling penalty``, ``5-minute rescheduling penalty``, ``45 s ...``."""
    if penalty == 0:
        return "no rescheduling penalty"
    if penalty % 60 == 0:
        return f"{penalty / 60:g}-minute rescheduling penalty"
    return f"{penalty:g} s rescheduling penalty"


def _table_i(frame: pd.DataFrame, column: str, penalty: float) -> Table:
    """000 Table I's layout: one row per algorithm, avg / std / max per trace set."""
    sets = _sets(frame)
    stats = {s: summary(frame, column, frame["trace_set"] == s) for s in sets}
    header = ["algorithm"]
    for s in sets:
        header += [f"{s} avg", "std", "max"]
    rows = []
    for label in dict.fromkeys(frame["algorithm"]):
        row = [label]
        for s in sets:
            row += [_num(x) for x in stats[s][(penalty, label)]]
        rows.append(row)
    return _table(header, rows)


def _per_load(frame: pd.DataFrame, penalty: float) -> Table:
    synthetic = frame[frame["trace_set"] == SYNTHETIC]
    labels = list(dict.fromkeys(frame["algorithm"]))
    rows = []
    for load in sorted(set(synthetic["load"].astype(float))):
        stats = summary(synthetic, "degradation", synthetic["load"] == load)
        cells = [stats[(penalty, a)] for a in labels]
        rows.append(
            [load_text(load)]
            + [f"{_num(mean)} ({_num(std)}; {_num(top)})" for mean, std, top in cells]
        )
    return _table(["load", *labels], rows)


def _costs(frame: pd.DataFrame) -> Table:
    grouped = frame.groupby(["penalty", "algorithm"], sort=False)
    means = grouped[["preemptions", "migrations", "moved_memory_mb"]].mean().reset_index()
    rows = [
        [
            f"{row['algorithm']} / {row['penalty']:g} s",
            f"{row['preemptions']:,.1f}",
            f"{row['migrations']:,.1f}",
            f"{row['moved_memory_mb'] / 1024:,.1f}",
        ]
        for row in means.to_dict("records")
    ]
    return _table(["algorithm / penalty", "preemptions", "migrations", "moved memory (GB)"], rows)


def _scale(result: StudyResult, config: StudyConfig) -> list[str]:
    frame = result.frame
    synthetic = [i for i in result.instances if i.trace_set == SYNTHETIC]
    weeks = [i for i in result.instances if i.trace_set == HPC2N]
    lines = []
    if synthetic:
        loads = ", ".join(load_text(x) for x in config.loads)
        seeds = f"seeds {config.seed} to {config.seed + config.traces_per_load - 1}"
        if config.traces_per_load == 1:
            seeds = f"seed {config.seed}"
        lines.append(
            f"synthetic: {config.traces_per_load} Lublin-Feitelson trace(s) per load level "
            f"x {len(config.loads)} load level(s) ({loads}) = {len(synthetic)} instances of "
            f"{config.jobs:,} jobs on {synthetic[0].hosts} quad-core nodes "
            f"(`site-configs/{SYNTHETIC_SITE}`), {seeds} at every load;"
        )
    if weeks:
        jobs = [i.jobs for i in weeks]
        lines.append(
            f"HPC2N: the first {len(weeks)} week(s) of `{HPC2N_TRACE}` "
            f"(weeks {weeks[0].week} to {weeks[-1].week}, {min(jobs):,} to {max(jobs):,} "
            f"jobs, {sum(jobs):,} in all) on {weeks[0].hosts} dual-core nodes "
            f"(`site-configs/{HPC2N_SITE}`);"
        )
    runs = len(result.instances) * sum(
        len(config.penalties) if a.uses_penalty else 1 for a in config.algorithms
    )
    lines.append(
        f"{len(config.algorithms)} algorithms x {len(config.penalties)} penalties "
        f"({', '.join(f'{p:g} s' for p in config.penalties)}): {runs:,} simulations, "
        f"{len(frame):,} rows in `study.csv`."
    )
    return lines


#: The report's sections, in order (the per-load one only with synthetic instances).
SECTIONS = (
    "Degradation from bound (002 section 5.1)",
    "Degradation factor (000 Table I)",
    "Degradation from bound against the load (002 Fig. 1)",
    "Rescheduling costs",
)
TITLE = "DFRS against batch scheduling: maximum stretch (papers 000 and 002)"
PLOT = "degradation-vs-load.png"


def _per_penalty(penalties: Sequence[float], table: Callable[[float], Table]) -> list[Block]:
    """A table per penalty, each under the penalty's name."""
    blocks: list[Block] = []
    for penalty in penalties:
        blocks += [Para((Strong(penalty_title(penalty)),)), table(penalty)]
    return blocks


def study_report(
    result: StudyResult, config: StudyConfig, *, command: str, elapsed: str, plot: bytes
) -> Report:
    """The study's report: setup, scale, the regenerating command and the study's time, then
    the tables of ``000`` Table I and ``002`` Fig. 1 (``plot``: its PNG) and the
    rescheduling costs."""
    frame = result.frame
    lowest = float(frame["degradation"].min())
    below = int((frame["degradation"] < 1 - BOUND_SLACK).sum())
    lead: list[Block] = [
        Para.of(
            "Stillwell, Vivien and Casanova's experiment at the scale of one machine: every "
            "algorithm replays every instance under every rescheduling penalty, and is judged "
            f"by the maximum bounded stretch of its jobs (tau = {TAU:g} s, against each job's "
            "dedicated runtime). The **degradation from bound** (`002`, section 5.1) divides "
            "it by the instance's offline lower bound (`002`, section 3: a linear program "
            "without memory constraints and with free migration, binary search to "
            f"{RTOL:g} relative, returned from below); the **degradation factor** (`000`, "
            "section V) divides it by the best maximum stretch of the study's algorithms on "
            "the same instance under the same penalty. FCFS and EASY never preempt: they run "
            "once per instance and appear under every penalty."
        ),
        Para.of("Scale:"),
        Bullets([markup(line) for line in _scale(result, config)]),
        regenerate_para(elapsed, command),
        *(Note((n,)) for n in result.notes),
        Para.of(
            f"Check of the bound: the lowest degradation from bound is {lowest:.4f} "
            f"({below} run(s) below 1 - {BOUND_SLACK:g}; the bound is a lower bound, so "
            "there should be none)."
        ),
    ]
    penalties = config.penalties
    sections = [
        Section(
            SECTIONS[0],
            [
                Para.of(
                    "Average, standard deviation and maximum (the worst instance) over each "
                    "set of instances; lower is better, 1 is the bound."
                ),
                *_per_penalty(penalties, lambda p: _table_i(frame, "degradation", p)),
            ],
        ),
        Section(
            SECTIONS[1],
            [
                Para.of(
                    "Maximum stretch over the best of the study's algorithms on the same "
                    "instance and penalty: 1 for the best algorithm of an instance."
                ),
                *_per_penalty(penalties, lambda p: _table_i(frame, "degradation_factor", p)),
            ],
        ),
    ]
    if (frame["trace_set"] == SYNTHETIC).any():
        caption = "Average degradation from bound against the load, one panel per penalty"
        sections.append(
            Section(
                SECTIONS[2],
                [
                    Figure(PLOT, caption, plot),
                    Para.of(
                        "Synthetic instances: average (standard deviation; maximum) per load level."
                    ),
                    *_per_penalty(penalties, lambda p: _per_load(frame, p)),
                ],
            )
        )
    sections.append(
        Section(
            SECTIONS[3],
            [
                Para.of(
                    "Average per instance (all instances): jobs paused, tasks moved to another "
                    "node, and the memory these moves transferred, as the simulator counts "
                    "them."
                ),
                _costs(frame),
                Para.of(
                    "Per-run figures are in `study.csv`; the time of every simulation and "
                    "bound computation in `timings.csv`."
                ),
            ],
        )
    )
    facts = {"command": command, "instances": len(result.instances), "rows": len(frame)}
    return Report(TITLE, lead, sections, facts)
