"""The ``queuesim`` command line.

Exit codes: 0 success; 1 the simulation itself failed (a policy broke a rule: a bug);
2 bad input (site file, workload, policy name, arguments) with a one-paragraph message;
130 interrupted.

Each command is one module of this package with ``add_parser(sub)``, which adds the
command's parser and sets its handler; the options several commands share are written once
in :mod:`queuesim.cli.options`. Every module imports what its work needs inside its handler,
so that building the parser (and ``queuesim --help``) stays quick.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console

from queuesim.cli import (
    bench,
    check_invariants,
    compare,
    convert,
    fidelity,
    generate,
    heatmap,
    import_machines,
    import_site,
    inspect,
    policies,
    report,
    run,
    solve,
    study,
    sweep,
    validate,
)
from queuesim.cli.options import EXAMPLES
from queuesim.common import program
from queuesim.common.errors import PolicyViolation, QueuesimError, QueuesimWarning
from queuesim.common.version import __version__

#: the commands, in the order ``queuesim --help`` lists them
COMMANDS = (
    run,
    inspect,
    convert,
    validate,
    policies,
    bench,
    check_invariants,
    compare,
    sweep,
    fidelity,
    heatmap,
    report,
    generate,
    solve,
    import_machines,
    import_site,
    study,
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``queuesim``, each command's parser added by its module."""
    parser = argparse.ArgumentParser(
        prog="queuesim",
        description="Replay a job trace against a site model and a scheduling policy, and "
        "report wait times, slowdowns, fairness and utilization.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"queuesim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _printer(errors: Console) -> Callable[..., None]:
    """Print a :class:`QueuesimWarning` (or any warning) as a one-line ``warning:``."""

    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        errors.print(f"[yellow]warning:[/yellow] {message}", highlight=False)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (by default the program's own command line: then the
    garbage collector runs less often, and the process is taken to end when this returns,
    see :mod:`queuesim.common.program`)."""
    if argv is None:
        program.starting()
    try:
        return _main(argv)
    finally:
        if argv is None:
            program.ending()


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    errors = Console(stderr=True, soft_wrap=True)  # never split a path in a message
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", QueuesimWarning)
            warnings.showwarning = _printer(errors)
            code: int = args.handler(args, console)
        return code
    except QueuesimError as exc:
        errors.print(f"[red]error:[/red] {exc}", highlight=False)
        return exc.exit_code
    except PolicyViolation as exc:
        errors.print(f"[red]policy error:[/red] {exc}", highlight=False)
        return 1
    except OSError as exc:
        # a file system failure after the checks (disk full, a folder removed meanwhile):
        # the user's environment, not a bug, so one line naming the file
        where = f"{exc.filename}: " if exc.filename else ""
        errors.print(f"[red]error:[/red] {where}{exc.strerror or exc}", highlight=False)
        return 2
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
