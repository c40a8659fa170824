"""DFRS online algorithms by their paper names, e.g. ``GreedyPM*/per/OPT=MIN/MINVT=600``.

The naming scheme is paper ``002``'s (Stillwell, Vivien and Casanova, *Dynamic fractional
resource scheduling versus batch scheduling*, section 4.5): parts separated by ``/``.

* The first part says what happens when a job is submitted: ``Greedy``, ``GreedyP``
  (Greedy that may pause lower-priority jobs), ``GreedyPM`` (GreedyP that moves the jobs it
  would pause when it can) or ``MCB8`` (re-pack everything); a trailing ``*`` also schedules
  opportunistically when a job completes (with MCB8 after MCB8, else with Greedy). A name
  may start with a periodic part instead (nothing done on submission).
* ``per``: MCB8 every period (parameter ``period``, default 600 s); ``stretch-per``: the
  stretch-minimising MCB8 of ``000`` every period.
* ``OPT=AVG`` (maximise the average yield), ``OPT=MIN`` (iterative max-min) or, with
  ``stretch-per`` only, ``OPT=MAX`` (the stretch variant's own improvement step).
* ``MINVT=S`` / ``MINFT=S``: a job whose virtual (flow) time is below ``S`` seconds keeps its
  nodes when MCB8 re-packs, if it keeps running.

The conference version (``000``) names are accepted too: ``DynMCB8`` (MCB8 on every event,
``MCB8*``), ``DynMCB8-per``, ``DynMCB8-asap-per`` (Greedy on submission, MCB8 every period),
``DynMCB8-stretch-per``, and ``Greedy-PMTN`` / ``Greedy-PMTN-MIGR`` (``GreedyP*`` /
``GreedyPM*``). Letter case does not matter; :attr:`Algorithm.name` is the canonical form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from queuesim.common.errors import ConfigError
from queuesim.policies.dfrs.yields import YieldStep


class OnSubmit(StrEnum):
    NOTHING = ""
    GREEDY = "Greedy"
    GREEDY_P = "GreedyP"
    GREEDY_PM = "GreedyPM"
    MCB8 = "MCB8"


class Periodic(StrEnum):
    NONE = ""
    PER = "per"
    STRETCH_PER = "stretch-per"


class Opt(StrEnum):
    AVG = "AVG"
    MIN = "MIN"
    MAX = "MAX"


@dataclass(frozen=True)
class Algorithm:
    """One DFRS online algorithm, as its name describes it."""

    on_submit: OnSubmit
    on_completion: bool
    periodic: Periodic
    opt: Opt
    min_vt: float | None = None
    min_ft: float | None = None

    @property
    def name(self) -> str:
        """The canonical ``002`` name."""
        first = self.on_submit.value + ("*" if self.on_completion else "")
        parts = [first] if first else []
        if self.periodic is not Periodic.NONE:
            parts.append(self.periodic.value)
        parts.append(f"OPT={self.opt.value}")
        if self.min_vt is not None:
            parts.append(f"MINVT={self.min_vt:g}")
        if self.min_ft is not None:
            parts.append(f"MINFT={self.min_ft:g}")
        return "/".join(parts) if first else "/" + "/".join(parts)

    @property
    def uses_mcb8(self) -> bool:
        return self.on_submit is OnSubmit.MCB8 or self.periodic is not Periodic.NONE

    @property
    def yield_step(self) -> YieldStep:
        """The second step of the yield computation (OPT=MAX has its own, in the policy)."""
        return YieldStep.MIN if self.opt is Opt.MIN else YieldStep.AVG


_SUBMIT = {s.value.lower(): s for s in OnSubmit if s.value}
_PERIODIC = {p.value: p for p in Periodic if p.value}
#: paper 000's names: (on submission, on completion, periodic)
_CONFERENCE = {
    "dynmcb8": (OnSubmit.MCB8, True, Periodic.NONE),
    "dynmcb8-per": (OnSubmit.NOTHING, False, Periodic.PER),
    "dynmcb8-asap-per": (OnSubmit.GREEDY, False, Periodic.PER),
    "dynmcb8-stretch-per": (OnSubmit.NOTHING, False, Periodic.STRETCH_PER),
    "greedy-pmtn": (OnSubmit.GREEDY_P, True, Periodic.NONE),
    "greedy-pmtn-migr": (OnSubmit.GREEDY_PM, True, Periodic.NONE),
}
VALID_PARTS = (
    "first part: Greedy, GreedyP, GreedyPM or MCB8, with an optional '*' "
    "(or DynMCB8, DynMCB8-per, DynMCB8-asap-per, DynMCB8-stretch-per, Greedy-PMTN, "
    "Greedy-PMTN-MIGR); then any of: per, stretch-per, OPT=AVG, OPT=MIN, OPT=MAX "
    "(stretch-per only), MINVT=SECONDS, MINFT=SECONDS"
)


def looks_like_dfrs(name: str) -> bool:
    """Whether ``name`` is meant as a DFRS algorithm (so a parse error should be shown)."""
    first = name.split("/", 1)[0].rstrip("*").lower()
    return "/" in name or first.startswith(("greedy", "dynmcb8", "mcb8"))


def _bad(name: str, part: str, why: str) -> ConfigError:
    return ConfigError(
        f"DFRS algorithm {name!r}: {why} in part {part!r}; valid parts: {VALID_PARTS}"
    )


def _seconds(name: str, part: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _bad(name, part, "expected a number of seconds") from None
    if not (math.isfinite(value) and value >= 0):
        raise _bad(name, part, "expected a number of seconds >= 0")
    return value


def parse_algorithm(name: str) -> Algorithm:
    """The algorithm a paper name describes; :class:`ConfigError` naming the wrong part."""
    parts = name.strip().split("/")
    on_submit, on_completion, periodic = OnSubmit.NOTHING, False, Periodic.NONE
    opt: Opt | None = None
    min_vt: float | None = None
    min_ft: float | None = None
    first = parts[0].strip()
    rest = parts[1:]
    key = first.lower()
    if key in _CONFERENCE:
        on_submit, on_completion, periodic = _CONFERENCE[key]
    elif key.rstrip("*") in _SUBMIT and key.count("*") <= 1:
        on_submit = _SUBMIT[key.rstrip("*")]
        on_completion = key.endswith("*")
    elif first == "":
        pass  # "/per/...": nothing on submission
    else:
        rest = parts  # maybe a name that starts with its periodic part
    seen: set[str] = set()
    for raw in rest:
        part = raw.strip()
        lowered = part.lower()
        field, _, value = lowered.partition("=")
        if field in seen:
            raise _bad(name, part, "this setting is given twice")
        if lowered in _PERIODIC:
            if periodic is not Periodic.NONE:
                raise _bad(name, part, "only one periodic part is allowed")
            periodic = _PERIODIC[lowered]
            seen.add("periodic")
            continue
        if field == "opt":
            try:
                opt = Opt(value.upper())
            except ValueError:
                raise _bad(name, part, "OPT must be AVG, MIN or MAX") from None
        elif field == "minvt":
            min_vt = _seconds(name, part, value)
        elif field == "minft":
            min_ft = _seconds(name, part, value)
        else:
            raise _bad(name, part, "unknown part")
        seen.add(field)
    if on_submit is OnSubmit.NOTHING and periodic is Periodic.NONE:
        raise _bad(name, parts[0], "nothing is scheduled (no submission policy, no period)")
    if on_submit is OnSubmit.NOTHING and on_completion:
        raise _bad(name, parts[0], "'*' needs a submission policy")
    if opt is Opt.MAX and periodic is not Periodic.STRETCH_PER:
        raise _bad(name, "OPT=MAX", "OPT=MAX belongs to stretch-per")
    if periodic is Periodic.STRETCH_PER and opt is Opt.AVG:
        raise _bad(name, "OPT=AVG", "stretch-per improves the expected stretch (OPT=MAX)")
    if periodic is Periodic.STRETCH_PER and on_submit is not OnSubmit.NOTHING:
        raise _bad(name, parts[0], "stretch-per runs alone (it is DynMCB8-stretch-per)")
    if min_vt is not None and min_ft is not None:
        raise _bad(name, "MINFT", "MINVT and MINFT exclude each other")
    algorithm = Algorithm(
        on_submit,
        on_completion,
        periodic,
        opt if opt is not None else (Opt.MAX if periodic is Periodic.STRETCH_PER else Opt.AVG),
        min_vt,
        min_ft,
    )
    if (min_vt is not None or min_ft is not None) and not algorithm.uses_mcb8:
        raise _bad(
            name, "MINVT" if min_vt is not None else "MINFT", "it only limits MCB8's re-packing"
        )
    return algorithm
