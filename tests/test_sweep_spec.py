"""The sweep spec: axes into the site model, product / points / sampling, invalid cells
named before anything runs, and the content hash that names a cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuesim.common.errors import ConfigError
from queuesim.site.document_paths import parse_path, set_path
from queuesim.studies.sweep_spec import load_spec

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"


def _spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(f"name: t\nsite: tiny\ntraces: [{SAMPLE}]\n{body}", encoding="utf-8")
    return path


def test_paths_parse_keys_positions_and_names() -> None:
    """A path reads dotted keys, [N] positions and [NAME] items."""
    assert parse_path("queues[q_long].cpu_pool") == ["queues", ("q_long",), "cpu_pool"]
    assert parse_path("clusters[0].nodes") == ["clusters", 0, "nodes"]
    with pytest.raises(ValueError, match="cannot read"):
        parse_path("queues]x")


def test_set_path_creates_mappings_and_names_missing_items() -> None:
    """Setting a path makes the mappings it needs; a missing named item is an error."""
    doc: dict[str, object] = {"queues": [{"name": "a"}]}
    set_path(doc, "fairshare.half_life", "3d")
    set_path(doc, "queues[a].cpu_pool", "50%")
    assert doc == {"queues": [{"name": "a", "cpu_pool": "50%"}], "fairshare": {"half_life": "3d"}}
    with pytest.raises(ValueError, match="no item named 'b' in queues"):
        set_path(doc, "queues[b].cpu_pool", 1)


def test_product_expands_every_combination_last_axis_fastest(tmp_path: Path) -> None:
    """3 x 2 values and a 3-step range give 18 cells, the last axis varying fastest."""
    cells = load_spec(
        _spec(
            tmp_path,
            "axes:\n"
            "  policy: {path: scheduler.policy, values: [easy, fcfs, conservative]}\n"
            "  hl: {path: fairshare.half_life, values: [1d, 2d]}\n"
            "  load: {path: load_factor, range: {from: 0.8, to: 1.2, step: 0.2}}\n",
        )
    )
    assert len(cells) == 18
    assert [c.values["load"] for c in cells[:3]] == [0.8, 1.0, 1.2]
    assert cells[3].values == {"policy": "easy", "hl": "2d", "load": 0.8}
    assert cells[17].site.scheduler.policy == "conservative"
    assert cells[17].site.fairshare.half_life == 2 * 86400
    assert cells[17].load_factor == 1.2
    assert len({c.key for c in cells}) == 18


def test_points_and_sampling_pick_the_cells(tmp_path: Path) -> None:
    """Listed points are the cells; sampling draws N of them by seed, reproducibly."""
    body = (
        "axes:\n  hl: {path: fairshare.half_life, values: [1d]}\n"
        "  pool: {path: 'queues[batch].cpu_pool', values: [10]}\n"
        "combine: points\npoints:\n  - {hl: 1d, pool: 10}\n  - {hl: 2d, pool: 20}\n"
        "  - {hl: 3d}\n"
    )
    cells = load_spec(_spec(tmp_path, body))
    assert [dict(c.values) for c in cells] == [
        {"hl": "1d", "pool": 10},
        {"hl": "2d", "pool": 20},
        {"hl": "3d"},
    ]
    sampled = load_spec(_spec(tmp_path, body + "sample: {n: 2, seed: 7}\n"))
    again = load_spec(_spec(tmp_path, body + "sample: {n: 2, seed: 7}\n"))
    assert len(sampled) == 2
    assert [c.key for c in sampled] == [c.key for c in again]


def test_invalid_cells_are_named_with_their_key_before_running(tmp_path: Path) -> None:
    """A bad value fails the cells that hold it, naming the cell, its values and the key;
    an unknown policy is named too."""
    path = _spec(
        tmp_path,
        "axes:\n  policy: {path: scheduler.policy, values: [easy, nosuch]}\n"
        "  hl: {path: fairshare.half_life, values: [1d, banana]}\n",
    )
    with pytest.raises(ConfigError) as err:
        load_spec(path)
    text = str(err.value)
    assert "3 problem(s) in the cells, nothing run" in text
    assert "cell 1 (policy=easy, hl=banana, trace=kth-sp2-sample.swf): fairshare.half_life:" in text
    assert "cell 2 (policy=nosuch, hl=1d, trace=kth-sp2-sample.swf): scheduler: unknown" in text


def test_spec_errors_name_the_key(tmp_path: Path) -> None:
    """Unknown keys, an axis without values, a path to nowhere: each names its key."""
    with pytest.raises(ConfigError, match=r"axes\.hl: give either values"):
        load_spec(_spec(tmp_path, "axes:\n  hl: {path: fairshare.half_life}\n"))
    with pytest.raises(ConfigError, match=r"axez: unknown key"):
        load_spec(_spec(tmp_path, "axez: {}\n"))
    with pytest.raises(ConfigError, match=r"axes\.p\.path: .*no item named 'x'"):
        load_spec(_spec(tmp_path, "axes:\n  p: {path: 'queues[x].cpu_pool', values: [1]}\n"))


def test_key_depends_on_content_not_on_how_the_cell_was_reached(tmp_path: Path) -> None:
    """The same resolved site reached through another axis name or a point has the same
    key; another trace checksum or load factor gives another key."""
    a = load_spec(_spec(tmp_path, "axes:\n  x: {path: fairshare.half_life, values: [2d]}\n"))
    b = load_spec(_spec(tmp_path, "axes:\n  y: {path: fairshare.half_life, values: ['48h', 3d]}\n"))
    assert a[0].key == b[0].key != b[1].key
    c = load_spec(_spec(tmp_path, "axes:\n  l: {path: load_factor, values: [1.0, 1.5]}\n"))
    base = load_spec(_spec(tmp_path, ""))
    assert c[0].key == base[0].key != c[1].key
