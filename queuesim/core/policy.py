"""The seam between the engine and scheduling policies: what the engine calls."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from queuesim.core.context import Context


@runtime_checkable
class Policy(Protocol):
    """What the engine calls. ``name`` is the registry name, for reports."""

    name: str

    def schedule(self, ctx: Context) -> None: ...
