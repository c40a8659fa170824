"""The seam between the engine and scheduling policies.

A policy is a small object with one method, ``schedule(ctx)``, called once per scheduling
pass. The :class:`~queuesim.core.context.Context` it receives offers the waiting jobs in the
site's order, the running jobs, the cluster state, and the actions; the engine checks every
action. Policies are dataclasses registered by name; their parameters come from the site
file or ``--param KEY=VALUE`` and are converted to the dataclass fields' types, so every
policy is built the same way and an unknown parameter is an error naming the known ones.

Third-party policies plug in through the ``queuesim.policies`` entry-point group: an entry
point ``name = "package.module:PolicyClass"`` makes ``name`` selectable.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from queuesim.common.errors import ConfigError
from queuesim.core.policy import Policy

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "queuesim.policies"


P = TypeVar("P")
_REGISTRY: dict[str, type[Any]] = {}


def register(name: str) -> Callable[[type[P]], type[P]]:
    """Class decorator: make a policy dataclass selectable as ``name``."""

    def decorate(cls: type[P]) -> type[P]:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"policy {name!r} must be a dataclass")
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"policy name {name!r} is registered twice")
        _REGISTRY[name] = cls
        return cls

    return decorate


@functools.cache
def _plugins() -> tuple[EntryPoint, ...]:
    """The entry points of the ``queuesim.policies`` group, read once per process: reading
    them scans the metadata of every installed distribution (a few hundredths of a
    second; importing importlib.metadata too)."""
    from importlib.metadata import entry_points

    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def _load_builtin_and_plugins() -> None:
    # the built-in policies are registered already: importing this module imports the
    # package queuesim.policies first, which imports them
    for ep in _plugins():
        if ep.name not in _REGISTRY:
            _REGISTRY[ep.name] = ep.load()


def known_policies() -> list[str]:
    _load_builtin_and_plugins()
    return sorted(_REGISTRY)


@dataclass(frozen=True)
class NameScheme:
    """A family of policies chosen by a name pattern rather than one registered name: a
    name ``matches`` selects the registered ``policy`` with the name as its ``param``
    (e.g. DFRS algorithms by their paper names, ``GreedyPM*/per`` -> ``dfrs`` with
    ``algorithm="GreedyPM*/per"``). The family registers its scheme itself, so the registry
    knows no family by name."""

    policy: str
    param: str
    matches: Callable[[str], bool]
    what: str  #: the names, for messages: "DFRS algorithms by their paper names"
    example: str
    noun: str  #: one such name, for messages: "DFRS algorithm name"


_SCHEMES: list[NameScheme] = []


def register_name_scheme(scheme: NameScheme) -> None:
    """Make the names ``scheme`` matches selectable (see :class:`NameScheme`)."""
    if scheme not in _SCHEMES:
        _SCHEMES.append(scheme)


def policy_class(name: str) -> type[Any]:
    if name not in _REGISTRY:  # a built-in name needs no plugin (nor the scan for them)
        _load_builtin_and_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        schemes = "".join(f", and {s.what} (e.g. {s.example!r})" for s in _SCHEMES)
        raise ConfigError(
            f"unknown policy {name!r}; known policies: {', '.join(sorted(_REGISTRY))}{schemes}"
        ) from None


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """Build the policy registered as ``name`` from string or typed parameters.

    A name that a registered :class:`NameScheme` matches (e.g. a DFRS algorithm's paper
    name) selects that scheme's policy with the name as its parameter.
    """
    if name not in _REGISTRY:
        _load_builtin_and_plugins()
    scheme = None if name in _REGISTRY else next((s for s in _SCHEMES if s.matches(name)), None)
    if scheme is not None:
        if params and scheme.param in params:
            raise ConfigError(
                f"policy {name!r} is a {scheme.noun}; do not also give --param {scheme.param}"
            )
        params, name = {**(params or {}), scheme.param: name}, scheme.policy
    cls = policy_class(name)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in (params or {}).items():
        if key not in fields:
            known = ", ".join(sorted(fields)) or "none"
            raise ConfigError(f"policy {name!r} has no parameter {key!r}; its parameters: {known}")
        kwargs[key] = _convert(name, key, value, hints[key])
    try:
        policy = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"policy {name!r}: {exc}") from None
    if not isinstance(policy, Policy):
        raise ConfigError(f"policy {name!r} does not implement schedule(ctx)")
    return policy


def _convert(policy: str, key: str, value: Any, kind: Any) -> Any:
    if not isinstance(value, str) or kind is str:
        ok = {
            bool: isinstance(value, bool),
            int: isinstance(value, int) and not isinstance(value, bool),
            float: isinstance(value, int | float) and not isinstance(value, bool),
            str: isinstance(value, str),
        }.get(kind, True)
        if not ok:
            raise ConfigError(
                f"policy {policy!r}: parameter {key!r} expects {kind.__name__}, got {value!r}"
            )
        return float(value) if kind is float else value
    try:
        if kind is bool:
            lowered = value.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind in (int, float):
            return kind(value)
    except ValueError:
        raise ConfigError(
            f"policy {policy!r}: parameter {key!r} expects {kind.__name__}, got {value!r}"
        ) from None
    return value


def parse_params(items: list[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` from the command line to a dict, with clear errors."""
    params: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param expects KEY=VALUE, got {item!r}")
        params[key.strip()] = value.strip()
    return params
