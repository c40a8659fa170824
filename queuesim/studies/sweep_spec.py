"""The sweep spec: a base site and policy, traces, and axes, expanded into cells.

A sweep spec is a YAML file (see ``site-configs/sweeps/README.md``)::

    name: complex-around
    site: ../metacentrum-complex.yaml      # relative to the spec, or a bundled name
    policy: scan                           # optional: the site's own otherwise
    params: {reserved_jobs: 1}             # optional, merged over the site's
    traces: [METACENTRUM-2009-2.swf.gz]    # relative to the spec
    cleaning: {reject_unrunnable: true}
    axes:
      anti_starvation: {path: scheduler.params.anti_starvation, values: [optimized, greedy]}
      half_life: {path: fairshare.half_life, values: [1d, 3d, 7d, 14d]}
      long_pool: {path: "queues[q_2w_plus].cpu_pool", values: [30%, 42%, 60%]}
      load: {path: load_factor, range: {from: 0.8, to: 1.2, step: 0.2}}
    combine: product                       # or: points (then `points:` lists the cells)
    sample: {n: 10, seed: 1}               # optional: N cells drawn from those

An axis ``path`` walks the site document: keys separated by dots, ``[N]`` a list item by
position, ``[NAME]`` a list item by its ``name`` (``queues[q_long]``); the path
``load_factor`` scales the trace's submit times instead (a factor 1.25 packs the same jobs
into 80 % of the time). Every cell's site is validated by the site model itself
(:func:`queuesim.site.loading.site_errors`) and its policy by the policy registry before
anything runs; a problem names the cell, its axis values and the key.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from queuesim.common import bundled
from queuesim.common.errors import ConfigError
from queuesim.common.version import __version__
from queuesim.core.workload import CleaningOptions
from queuesim.policies.registry import make_policy
from queuesim.site.document_paths import LOAD_FACTOR, parse_path, set_path
from queuesim.site.loading import format_location, site_document, site_errors
from queuesim.site.model import Site

__all__ = ["Cell", "SweepSpec", "expand", "load_spec", "read_spec"]

#: how many cell problems are listed before "... and N more"
_SHOWN_PROBLEMS = 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Span(_Strict):
    """Numbers from ``from`` to ``to`` (both included when on a step) by ``step``."""

    start: float = Field(alias="from")
    stop: float = Field(alias="to")
    step: float = Field(gt=0)

    def values(self) -> list[float | int]:
        count = math.floor((self.stop - self.start) / self.step + 1e-9) + 1
        if count < 1:
            raise ValueError(f"from {self.start:g} to {self.stop:g} holds no value")
        whole = all(float(x).is_integer() for x in (self.start, self.step))
        out: list[float | int] = []
        for k in range(count):
            x = round(self.start + k * self.step, 12)
            out.append(int(x) if whole else x)
        return out


class Axis(_Strict):
    """One axis: a path into the site document and the values it takes."""

    path: str = Field(min_length=1)
    values: tuple[Any, ...] | None = Field(default=None, min_length=1)
    range: Span | None = None

    @model_validator(mode="after")
    def _values_or_range(self) -> Axis:
        if (self.values is None) == (self.range is None):
            raise ValueError("give either values (a list) or range (from, to, step)")
        parse_path(self.path)  # a malformed path fails here
        return self

    def points(self) -> list[Any]:
        if self.values is not None:
            return list(self.values)
        assert self.range is not None
        return self.range.values()


class Sample(_Strict):
    """Draw ``n`` of the combined cells at random (without replacement), by ``seed``."""

    n: int = Field(gt=0)
    seed: int = 0


class Cleaning(_Strict):
    skip_bad_lines: bool = False
    drop_cancelled: bool = False
    reject_unrunnable: bool = False
    trace_format: str | None = None


class Report(_Strict):
    """What the sweep report shows: the two metrics of the Pareto front (both minimised
    unless named in ``maximise``) and the metric the axis effects and best cells use."""

    pareto: tuple[str, str] = ("awwt", "nuwt_dev")
    rank_by: str = "awwt"
    maximise: tuple[str, ...] = ("utilization",)
    best: int = Field(default=3, ge=1)


class SweepSpec(_Strict):
    """A sweep spec as written (paths still relative to the spec's folder)."""

    name: str = Field(min_length=1)
    description: str = ""
    site: str = Field(min_length=1)
    clusters: str | None = None
    policy: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    traces: tuple[str, ...] = Field(min_length=1)
    cleaning: Cleaning = Cleaning()
    tau: float = Field(default=10.0, gt=0)
    axes: dict[str, Axis] = Field(default_factory=dict)
    combine: Literal["product", "points"] = "product"
    points: tuple[dict[str, Any], ...] = ()
    sample: Sample | None = None
    report: Report = Report()

    @model_validator(mode="after")
    def _points_match(self) -> SweepSpec:
        if self.combine == "points" and not self.points:
            raise ValueError("combine: points needs a `points:` list of {axis: value} cells")
        if self.combine == "product" and self.points:
            raise ValueError("points are listed, so say `combine: points`")
        for i, point in enumerate(self.points):
            unknown = sorted(set(point) - set(self.axes))
            if unknown:
                raise ValueError(
                    f"points[{i}]: {', '.join(unknown)} is not an axis "
                    f"(axes: {', '.join(self.axes) or 'none'})"
                )
        return self


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: the resolved site (policy included), a trace, a load factor.

    ``key`` is the content hash that names the cell's row: the resolved site, the trace's
    checksum, the load factor, the cleaning options, tau and the queuesim version. Two
    cells with one key are one run, whatever sweep or axis order produced them.
    """

    index: int
    values: Mapping[str, Any]  #: axis name -> value, in the spec's axis order
    site: Site
    trace: Path
    trace_name: str
    checksum: str
    load_factor: float
    cleaning: CleaningOptions
    tau: float
    key: str

    def label(self) -> str:
        """``cell 3 (half_life=3d, long_pool=42%, trace=T.swf)``: how a problem names it."""
        return cell_label(self.index, self.values, self.trace_name)


def cell_label(index: int, values: Mapping[str, Any], trace: str) -> str:
    """How a cell is named in messages (see :meth:`Cell.label`)."""
    parts = [f"{k}={v}" for k, v in values.items()] + [f"trace={trace}"]
    return f"cell {index} ({', '.join(parts)})"


# --- reading ----------------------------------------------------------------------------------


def read_spec(path: str | Path) -> SweepSpec:
    """Parse and validate a sweep spec file; every problem at once, each with its key."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such sweep spec") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "somewhere"
        raise ConfigError(f"{path}: not valid YAML at {where}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys (name, site, traces, axes)")
    try:
        return SweepSpec.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            msg = str(error["msg"]).removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                msg = "unknown key (see site-configs/sweeps/README.md)"
            elif error["type"] == "missing":
                msg = "required key is missing"
            lines.append(f"  {path}: {format_location(tuple(error['loc']))}: {msg}")
        listing = "\n".join(lines)
        noun = "problem" if len(lines) == 1 else "problems"
        raise ConfigError(f"{path}: {len(lines)} {noun} in the sweep spec:\n{listing}") from None


def _relative(base: Path, given: str) -> Path:
    """A path written in the spec: relative to the spec's folder when it exists there."""
    candidate = base / given
    return candidate if candidate.exists() else Path(given)


def trace_checksum(path: Path) -> str:
    """SHA-256 of the trace file's bytes (compressed as stored): the trace's identity."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such trace file (traces: in the sweep spec)") from None
    return digest.hexdigest()


def load_spec(path: str | Path) -> list[Cell]:
    """Read a sweep spec and expand it into its cells, every cell checked (see
    :func:`expand`)."""
    path = Path(path)
    spec = read_spec(path)
    return expand(spec, path.parent, where=str(path))


# --- expansion --------------------------------------------------------------------------------


def combinations(spec: SweepSpec) -> list[dict[str, Any]]:
    """The axis values of every cell before sampling: the full product in the spec's axis
    order (the last axis varying fastest), or the listed points."""
    if spec.combine == "points":
        return [dict(point) for point in spec.points]
    names = list(spec.axes)
    grids = [spec.axes[n].points() for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*grids)]


def sampled(points: list[dict[str, Any]], sample: Sample | None) -> list[dict[str, Any]]:
    """``sample.n`` points drawn without replacement by ``sample.seed``, in their order."""
    if sample is None or sample.n >= len(points):
        return points
    rng = np.random.default_rng(sample.seed)
    chosen = sorted(rng.choice(len(points), size=sample.n, replace=False).tolist())
    return [points[i] for i in chosen]


def cell_key(site: Site, checksum: str, load: float, cleaning: CleaningOptions, tau: float) -> str:
    """The content hash of a cell (see :class:`Cell`)."""
    identity = {
        "site": site.model_dump(mode="json", exclude={"name", "description"}),
        "trace": checksum,
        "load_factor": load,
        "cleaning": dataclasses.asdict(cleaning),
        "tau": tau,
        "version": __version__,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_paths(spec: SweepSpec, base: dict[str, Any], where: str) -> None:
    """An axis whose path leads nowhere in the base site fails once, not once a cell."""
    for name, axis in spec.axes.items():
        if axis.path == LOAD_FACTOR:
            continue
        try:
            set_path(copy.deepcopy(base), axis.path, axis.points()[0])
        except ValueError as exc:
            raise ConfigError(f"{where}: axes.{name}.path: {exc}") from None


def expand(spec: SweepSpec, folder: Path, *, where: str = "sweep spec") -> list[Cell]:
    """Every cell of ``spec`` (axis combinations x traces), each site resolved and checked.

    Raises:
        ConfigError: listing every invalid cell with its axis values and the key at fault,
            before anything runs.
    """
    base_path = _relative(folder, spec.site)
    clusters = _relative(folder, spec.clusters) if spec.clusters else None
    base = site_document(bundled.site_file(base_path), clusters)
    if not isinstance(base, dict):
        raise ConfigError(f"{where}: site: {base_path} is not a site file (no mapping)")
    if spec.policy is not None or spec.params:
        scheduler = base.setdefault("scheduler", {})
        if spec.policy is not None and spec.policy != scheduler.get("policy"):
            scheduler["policy"], scheduler["params"] = spec.policy, {}
        scheduler["params"] = {**scheduler.get("params", {}), **spec.params}
    traces = [_relative(folder, t) for t in spec.traces]
    checksums = [trace_checksum(t) for t in traces]
    cleaning = CleaningOptions(**spec.cleaning.model_dump())
    _check_paths(spec, base, where)
    cells: list[Cell] = []
    problems: list[str] = []
    for values in sampled(combinations(spec), spec.sample):
        document = copy.deepcopy(base)
        load = 1.0
        bad: list[str] = []
        for name, value in values.items():
            path = spec.axes[name].path
            if path == LOAD_FACTOR:
                if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                    bad.append(f"{LOAD_FACTOR}: expected a number > 0, got {value!r}")
                else:
                    load = float(value)
                continue
            try:
                set_path(document, path, value)
            except ValueError as exc:
                bad.append(f"axis {name}: {exc}")
        for trace, checksum in zip(traces, checksums, strict=True):
            index = len(cells) + len(problems)
            label = cell_label(index, values, trace.name)
            errors = bad or site_errors(document)
            if errors:
                problems.extend(f"{label}: {e}" for e in errors)
                continue
            site = Site.model_validate(document)
            try:
                make_policy(site.scheduler.policy, site.scheduler.params)
            except Exception as exc:  # the registry's own message names the parameter
                problems.append(f"{label}: scheduler: {exc}")
                continue
            key = cell_key(site, checksum, load, cleaning, spec.tau)
            if any(c.key == key for c in cells):
                continue  # the same run reached twice (e.g. a point listed twice)
            cells.append(
                Cell(
                    index, values, site, trace, trace.name, checksum, load, cleaning, spec.tau, key
                )
            )
    if problems:
        shown = problems[:_SHOWN_PROBLEMS]
        more = len(problems) - len(shown)
        listing = "\n".join(f"  {p}" for p in shown) + (f"\n  ... and {more} more" if more else "")
        raise ConfigError(
            f"{where}: {len(problems)} problem(s) in the cells, nothing run:\n{listing}"
        )
    if not cells:
        raise ConfigError(f"{where}: the sweep has no cells")
    return cells
