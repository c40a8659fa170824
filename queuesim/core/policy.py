"""The seam between the engine and scheduling policies: what the engine calls."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from queuesim.core.context import Context


@runtime_checkable
class Policy(Protocol):
    """What the engine calls. ``name`` is the registry name, for reports.

    The engine also reads three attributes a policy may have:

    * ``batch_rules`` (a :class:`~queuesim.core.batch_run.BatchRules`): the policy is a
      built-in batch policy that can run in one compiled call;
    * ``every_event`` (default false): the policy wants a pass at every finish, even when
      no job waits;
    * ``uses_kernels`` (default true): a pass-by-pass policy's passes call the compiled
      placement and planning kernels (:mod:`.cluster`, :mod:`.planning`), so the engine
      loads them, or compiles them when they are not in numba's cache, before the run;
      false for a policy that calls neither (the time-shared DFRS family, whose own packing
      kernel numba compiles or loads when it is first called), which is then spared that
      compile (over a minute of CPU)."""

    name: str

    def schedule(self, ctx: Context) -> None: ...
