"""How a study's report says where it came from: the command that regenerates it."""

from __future__ import annotations


def regenerate_lines(elapsed: str, command: str) -> list[str]:
    """Markdown lines giving ``command`` (run from the repository root) and how long this
    run took (``elapsed``, already written out)."""
    return [
        f"Regenerate (from the repository root; this run took {elapsed}):",
        "",
        "```sh",
        command,
        "```",
        "",
    ]
