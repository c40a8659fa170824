"""Reading site files as bytes people write: not UTF-8, keys written twice, YAML's unsafe
tags and alias bombs - each a one-line-per-problem error, and `validate` reporting every
problem of a file at once, whatever layer it belongs to (issue 20, defects 2-4)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from queuesim.cli import main
from queuesim.common.errors import ConfigError
from queuesim.common.yaml_files import parse_yaml
from queuesim.site.loading import load_site

GOOD = "name: s\nclusters: [{name: c, nodes: 2, cpus_per_node: 4}]\nqueues: [{name: q}]\n"


def _write(tmp_path: Path, content: str | bytes, name: str = "site.yaml") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def test_latin1_site_file_names_file_line_column_byte_and_fix(tmp_path: Path) -> None:
    """A Latin-1 accent in a comment: the error gives the line, column and byte, and how to
    convert the file, not a UnicodeDecodeError."""
    path = _write(tmp_path, b"# site\nname: s  # caf\xe9\n" + GOOD.split("\n", 1)[1].encode())
    with pytest.raises(ConfigError) as caught:
        load_site(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line 2, column 15: byte 0xe9 is not UTF-8")
    assert "iconv -f latin1 -t utf-8 site.yaml" in message


def test_utf8_site_file_with_a_byte_order_mark_and_accents_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "\ufeff# café, Brno\n" + GOOD)
    assert load_site(path).name == "s"


def test_key_written_twice_is_rejected_naming_both_lines(tmp_path: Path) -> None:
    """Two `queues:` blocks, and the same queue's key twice: every repetition, both lines."""
    path = _write(
        tmp_path,
        "name: s\n"
        "queues: [{name: a}]\n"
        "clusters: [{name: c, nodes: 2, cpus_per_node: 4}]\n"
        "queues:\n"
        "  - name: b\n"
        "    max_walltime: 1h\n"
        "    max_walltime: 2h\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_site(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{path}: 2 problems in the site file:"
    assert lines[1] == (
        f"  {path}: line 4: key 'queues' written again (first at line 2); YAML keeps only "
        "the last, so merge the two or remove one"
    )
    assert lines[2].startswith(
        f"  {path}: line 7: key 'max_walltime' written again (first at line 6)"
    )


def test_keys_a_merge_brings_in_may_be_overridden(tmp_path: Path) -> None:
    """`<<: *defaults` then an explicit key is YAML's override, not a repetition."""
    document = parse_yaml("base: &b {nodes: 1, cpus: 2}\nc: {<<: *b, nodes: 3}\n", tmp_path)
    assert document["c"] == {"nodes": 3, "cpus": 2}


@pytest.mark.parametrize(
    "tag",
    ["!!python/object/apply:os.system ['true']", "!!python/name:os.system", "!!binary AAAA"],
)
def test_yaml_tags_that_build_objects_are_refused(tmp_path: Path, tag: str) -> None:
    """The safe subset only: no Python object is ever built from a site file."""
    if tag.startswith("!!binary"):
        document = parse_yaml(f"x: {tag}\n", tmp_path)  # a safe tag: bytes, no object
        assert document == {"x": b"\x00\x00\x00"}
        return
    with pytest.raises(ConfigError, match="not valid YAML at line 1"):
        parse_yaml(f"x: {tag}\n", tmp_path)


def test_billion_laughs_alias_bomb_is_rejected_quickly(tmp_path: Path) -> None:
    """Nine levels of ten aliases (10^9 leaves once expanded): refused in seconds, by the
    loader sharing aliases and the checks failing on the shape, never expanded in memory."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path = _write(tmp_path, GOOD + "\n".join(lines) + "\n")
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="unknown key"):
        load_site(path)
    assert time.perf_counter() - started < 5.0


def test_validate_reports_problems_of_every_layer_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repeated key, a field error, a cross-reference error and a bad policy parameter:
    one round of `validate` lists all four (it used to stop at the first layer)."""
    path = _write(
        tmp_path,
        "name: s\n"
        "name: t\n"
        "clusters: [{name: c, nodes: 0, cpus_per_node: 4}]\n"
        "queues: [{name: q, clusters: [nope]}]\n"
        "scheduler: {policy: easy, params: {depth: 3}}\n",
    )
    assert main(["validate", str(path)]) == 2
    report = " ".join(capsys.readouterr().out.split())
    assert "4 problems in the site file" in report
    for fragment in (
        "line 2: key 'name' written again (first at line 1)",
        "clusters[0].nodes:",
        "queues[0].clusters: queue 'q' names cluster 'nope'",
        "scheduler: policy 'easy' has no parameter 'depth'",
    ):
        assert fragment in report, fragment


@pytest.mark.parametrize(("text", "line"), [("\x00name: x\n", 1), ("name: x\n\x01queues: []\n", 2)])
def test_a_control_character_is_an_error_naming_file_and_line(
    tmp_path: Path, text: str, line: int
) -> None:
    """YAML refuses NUL and other control characters before parsing; that refusal is a
    ConfigError naming the file and line, not a traceback (found by the fuzzing suite)."""
    path = tmp_path / "damaged.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"damaged.yaml: not valid YAML at line {line}: "):
        load_site(path)
