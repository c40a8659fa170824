"""How a study's report says where it came from: the command that regenerates it."""

from __future__ import annotations

from queuesim.reports.document import Code, Para


def regenerate_para(elapsed: str, command: str) -> Para:
    """The paragraph giving ``command`` (run from the repository root) and how long this
    run took (``elapsed``, already written out)."""
    return Para.of(
        f"Regenerate (from the repository root; this run took {elapsed}): ", Code(command)
    )
