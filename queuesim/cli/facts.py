"""Key/value lines under a command's output (``generate``, ``solve``)."""

from __future__ import annotations

from rich.console import Console


def print_facts(console: Console, facts: dict[str, str]) -> None:
    """Print key/value lines, keys in bold, values wrapped on their own column."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in facts.items():
        grid.add_row(key, value)
    console.print(grid, highlight=False)


def count(n: int, noun: str) -> str:
    """``1 job``, ``2 jobs``, ``1,000 jobs``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
