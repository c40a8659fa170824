"""Reading YAML files people write (site files, clusters files, instances): UTF-8 checked
with the line, column and byte of the first undecodable byte, YAML's safe subset only
(no arbitrary objects: PyYAML's ``SafeLoader``), and a key written twice in one mapping
rejected with both lines - YAML 1.2 requires keys to be unique, but PyYAML keeps the last
silently, so two ``queues:`` blocks would lose the first without a word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from queuesim.common.errors import ConfigError
from queuesim.common.files import raw_bytes

MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that records every key repeated within one mapping (explicit
    keys only: a key that a ``<<`` merge brings in may be overridden, as YAML intends)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        #: (key, first line, repeated line), lines from 1, in document order
        self.repeated: list[tuple[str, int, int]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                seen = first_line.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:
                continue  # an unhashable key: the constructor itself reports it
            if seen != key_node.start_mark.line + 1:
                self.repeated.append((str(key), seen, key_node.start_mark.line + 1))
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, UniqueKeyLoader.construct_mapping
)


def decode_utf8(data: bytes, path: Path, what: str) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped), or a ConfigError naming the
    line, column and value of the first byte that is not UTF-8 and how to convert."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}: line {line}, column {column}: byte 0x{data[exc.start]:02x} is not UTF-8; "
            f"the {what} must be UTF-8 text (it looks like Latin-1 or another legacy "
            f"encoding: convert it with `iconv -f latin1 -t utf-8 {path.name} > "
            f"{path.stem}-utf8{path.suffix}` or re-save it as UTF-8 in your editor)"
        ) from None


def _unprintable(exc: yaml.reader.ReaderError, text: str, path: Path) -> ConfigError:
    """A character YAML does not accept (a NUL, a control character), named with its line."""
    line = text.count("\n", 0, max(0, exc.position)) + 1
    return ConfigError(
        f"{path}: not valid YAML at line {line}: character #x{exc.character:04x} is not allowed "
        "(a control character: the file is damaged or not a text file)"
    )


def parse_yaml_document(text: str, path: Path) -> tuple[Any, list[str]]:
    """The YAML document ``text`` (safe subset) and one problem line per key written twice
    in a mapping (``line 9: key 'queues' written again (first at line 2) ...``; the last
    one is kept, so the rest of the document can still be checked). A syntax error is a
    ConfigError naming ``path``, the line and the column."""
    try:
        # a str is checked for unprintable characters whole, here, before any parsing
        loader = UniqueKeyLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _unprintable(exc, text, path) from None
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML at {where}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()
    repeated = [
        f"line {again}: key {key!r} written again (first at line {first}); YAML keeps only "
        "the last, so merge the two or remove one"
        for key, first, again in loader.repeated
    ]
    return document, repeated


def refuse_problems(path: Path, problems: list[str], noun: str, where: str = "") -> None:
    """Raise one ConfigError listing every problem line of ``path``, if there are any:
    ``PATH: 3 <noun>s<where>:`` then one indented ``PATH: <problem>`` line each."""
    if problems:
        plural = noun if len(problems) == 1 else noun + "s"
        listing = "\n".join(f"  {path}: {line}" for line in problems)
        raise ConfigError(f"{path}: {len(problems)} {plural}{where}:\n{listing}")


def parse_yaml(text: str, path: Path) -> Any:
    """The YAML document ``text``, or a ConfigError for a syntax error or listing every
    key written twice (see :func:`parse_yaml_document`)."""
    document, repeated = parse_yaml_document(text, path)
    refuse_problems(path, repeated, "repeated key")
    return document


def read_yaml_document(path: Path, what: str) -> tuple[Any, list[str]]:
    """Read the YAML file ``path`` (a ``what``: "site file", ...): UTF-8 checked
    (:func:`decode_utf8`), then :func:`parse_yaml_document`; a missing or unreadable file
    is a one-line ConfigError too."""
    data = raw_bytes(path, what, ConfigError)
    return parse_yaml_document(decode_utf8(data, path, what), path)


def read_yaml(path: Path, what: str) -> Any:
    """:func:`read_yaml_document`, a repeated key being an error (:func:`parse_yaml`)."""
    document, repeated = read_yaml_document(path, what)
    refuse_problems(path, repeated, "repeated key")
    return document
