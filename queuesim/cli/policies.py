"""``queuesim policies``: the scheduling policies, their whole description, and their
parameters with types and defaults."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from queuesim.cli.options import subparser

HELP = "list the scheduling policies, what each does, and its parameters with defaults"


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "policies", HELP)
    parser.set_defaults(handler=cmd_policies)


def policy_parameters(cls: type) -> list[tuple[str, str, str]]:
    """``(name, type, default)`` of each parameter a policy takes (``--param NAME=VALUE``):
    its dataclass fields set at construction, defaults shown as Python writes them."""
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = repr(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = repr(f.default_factory())
        else:
            default = "required"
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        out.append((f.name, str(kind), default))
    return out


def description(cls: type) -> str:
    """A policy's whole docstring, paragraphs kept, lines of a paragraph joined."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")]
    return "\n".join(p for p in paragraphs if p)


def cmd_policies(args: argparse.Namespace, console: Console) -> int:
    from queuesim.policies.registry import known_policies, policy_class

    for name in known_policies():
        cls = policy_class(name)
        console.print(f"[bold]{escape(name)}[/bold]", highlight=False)
        for paragraph in description(cls).splitlines():
            console.print(Padding(Text(paragraph.replace("``", "`")), (0, 0, 0, 2), expand=False))
        params = policy_parameters(cls)
        if params:
            console.print("  [dim]parameters (--param NAME=VALUE), default:[/dim]")
            for pname, kind, default in params:
                console.print(
                    f"    {escape(pname)} [dim]({escape(kind)})[/dim] = {escape(default)}",
                    highlight=False,
                )
        else:
            console.print("  [dim]no parameters[/dim]")
        console.print()
    return 0
