"""A small mutation runner for the core's compiled rules (the maintainers' mutation check;
``.ci/maintain mutation``).

Why not mutmut: mutmut 3 never mutates a decorated function (its trampolines would copy
the decorator's effects), and every rule that matters here - the backfill fit test, the
reservation book-keeping, the limits, the fairshare decay - is a ``@numba.njit`` kernel.
So: each mutant changes one operator or constant inside one named function (comparison
<->its neighbour, + <-> -, and <-> or, an integer +1, a `not` dropped), is written into a
scratch copy of the repository, and the targeted tests run against it with numba's JIT
disabled (the kernels run as Python: no compile per mutant, same semantics). A mutant is
killed when a test fails (or the run times out); it survives when all pass.

    python .ci/mutate.py [--list] [--only NAME] [--timeout S]

prints one line per mutant and the score; surviving mutants are shown as a diff line.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: file -> the functions mutated in it
TARGETS = {
    "queuesim/core/planning.py": [
        "_block_suitable",  # greedy anti-starvation blocking
        "_limits_allow_from",  # limits in the profile
        "_book_promises",  # reservation rules: promises kept
        "_book_as_promised",
        "_compress",  # reservation rules: compression
        "_place_others",  # the backfill loop: start now, reserve, pass over
        "_held_by",  # limits: which queue limit a start would pass
        "count_job",  # limits: the running counts a start or end changes
    ],
    "queuesim/core/profile.py": [  # the backfill fit test
        "fitting_cpus",
        "_shaped",
        "_pool_room",
        "_window_end",
        "_window_room",
        "_fits_plan",
        "_step_room",
        "_earliest",
        "_fits_now",
        "_split",
        "_take",
        "_first_fit",
    ],
    "queuesim/core/fairshare.py": ["decay_to"],  # fairshare decay
    "queuesim/core/limits.py": ["check", "add"],
}
_KERNEL_TESTS = [  # fastest first: a killed mutant stops at its first failing test (-x)
    "tests/test_planning_guards.py",
    "tests/test_reservation_guards.py",
    "tests/test_profile.py",
    "tests/test_golden_schedules.py",
]
#: the tests run against a mutant of each file: those that exercise it, not the suite
TESTS = {
    # the limits rule (_held_by, count_job) is guarded by test_mutation_guards.py
    "queuesim/core/planning.py": ["tests/test_mutation_guards.py", *_KERNEL_TESTS],
    "queuesim/core/profile.py": _KERNEL_TESTS,
    "queuesim/core/fairshare.py": ["tests/test_mutation_guards.py", "tests/test_fairshare.py"],
    "queuesim/core/limits.py": ["tests/test_mutation_guards.py", "tests/test_site_policies.py"],
}

_COMPARE_SWAP = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}  # fmt: skip
_BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    file: str
    function: str
    line: int
    what: str
    index: int  #: the n-th mutation point of the file's target functions


class _Mutator(ast.NodeTransformer):
    """Visits the mutation points of the target functions in order; with ``apply`` set,
    changes the point of that index only."""

    def __init__(self, functions: list[str], apply: int | None = None) -> None:
        self.functions, self.apply = set(functions), apply
        self.points: list[tuple[str, int, str]] = []
        self.current: str | None = None

    def _point(self, node: ast.AST, what: str) -> bool:
        assert self.current is not None
        self.points.append((self.current, getattr(node, "lineno", 0), what))
        return len(self.points) - 1 == self.apply

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name not in self.functions:
            return self.generic_visit(node) if self.current else node
        outer, self.current = self.current, node.name
        node.body = [self.visit(n) for n in node.body]
        self.current = outer
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if self.current:
            for i, op in enumerate(node.ops):
                swap = _COMPARE_SWAP.get(type(op))
                if swap and self._point(node, f"{type(op).__name__} -> {swap.__name__}"):
                    node.ops[i] = swap()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        swap = _BIN_SWAP.get(type(node.op))
        if (
            self.current
            and swap
            and self._point(node, f"{type(node.op).__name__} -> {swap.__name__}")
        ):
            node.op = swap()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if self.current:
            swap = ast.Or if isinstance(node.op, ast.And) else ast.And
            if self._point(node, f"{type(node.op).__name__} -> {swap.__name__}"):
                node.op = swap()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if self.current and isinstance(node.op, ast.Not) and self._point(node, "not dropped"):
            return node.operand
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if self.current and type(value) is int and self._point(node, f"{value} -> {value + 1}"):
            return ast.copy_location(ast.Constant(value + 1), node)
        return node


def mutants() -> list[Mutant]:
    found = []
    for file, functions in TARGETS.items():
        tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
        visitor = _Mutator(functions)
        visitor.visit(tree)
        found += [
            Mutant(file, f, line, what, i) for i, (f, line, what) in enumerate(visitor.points)
        ]
    return found


def mutated_source(mutant: Mutant) -> str:
    tree = ast.parse((REPO / mutant.file).read_text(encoding="utf-8"))
    tree = _Mutator(TARGETS[mutant.file], apply=mutant.index).visit(copy.deepcopy(tree))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def run_tests(root: Path, timeout: float, tests: list[str]) -> str:
    """``survived`` when every test passes against the scratch copy at ``root``; the
    property tests run with a small example budget (a mutant that breaks a rule breaks
    it on most examples)."""
    env = {
        **os.environ,
        "NUMBA_DISABLE_JIT": "1",
        "QUEUESIM_MUTATION_RUN": "1",  # no shrinking of a failing property (tests/conftest.py)
        "PYTHONPATH": str(root),
        "QUEUESIM_PROPERTY_EXAMPLES": os.environ.get("QUEUESIM_PROPERTY_EXAMPLES", "30"),
    }
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "killed (timeout)"
    return "survived" if done.returncode == 0 else "killed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the mutants only")
    parser.add_argument("--only", action="append", default=[], help="only these functions")
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="most seconds per mutant (else 4 x its tests' time without a mutant)",
    )
    parser.add_argument(
        "--survivors",
        metavar="OUTPUT",
        help="only the mutants an earlier run's output (this script's) says survived",
    )
    parser.add_argument(
        "--tests", action="append", default=[], help="run these test files instead of TESTS"
    )
    args = parser.parse_args()
    chosen = [m for m in mutants() if not args.only or m.function in args.only]
    if args.only:  # in the order asked: the most wanted first
        chosen.sort(key=lambda m: args.only.index(m.function))
    if args.survivors:
        text = Path(args.survivors).read_text(encoding="utf-8")
        left = {line.split("] ", 1)[1].rsplit(": ", 1)[0] for line in text.splitlines()
                if line.startswith("[") and ": survived" in line}  # fmt: skip
        chosen = [m for m in chosen if f"{m.file}:{m.line} {m.function}: {m.what}" in left]
    if args.list:
        for m in chosen:
            print(f"{m.file}:{m.line} {m.function}: {m.what}")
        print(f"{len(chosen)} mutants")
        return 0
    with tempfile.TemporaryDirectory(prefix="queuesim-mutants-") as scratch:
        root = Path(scratch) / "repo"
        shutil.copytree(
            REPO, root, symlinks=True,
            ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.nbi", "*.nbc"),
        )  # fmt: skip
        # each file's tests once without a mutant: they must pass, and a mutant's run may
        # take four times as long (a mutant that loops forever is killed by the timeout)
        limits: dict[str, float] = {}
        for file in sorted({m.file for m in chosen}):
            tests = args.tests or TESTS[file]
            started = time.perf_counter()
            if run_tests(root, args.timeout, tests) != "survived":
                print(f"the tests of {file} fail without any mutant: fix them first")
                return 2
            took = time.perf_counter() - started
            limits[file] = min(args.timeout, max(60.0, 4 * took))
            print(f"{file}: {' '.join(tests)} pass in {took:.0f} s", flush=True)
        killed = 0
        for n, m in enumerate(chosen, start=1):
            original = (root / m.file).read_text(encoding="utf-8")
            (root / m.file).write_text(mutated_source(m), encoding="utf-8")
            started = time.perf_counter()
            outcome = run_tests(root, limits[m.file], args.tests or TESTS[m.file])
            (root / m.file).write_text(original, encoding="utf-8")
            killed += outcome != "survived"
            print(
                f"[{n}/{len(chosen)}] {m.file}:{m.line} {m.function}: {m.what}: {outcome} "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    share = 100 * killed / max(1, len(chosen))
    print(f"mutation score: {killed}/{len(chosen)} killed ({share:.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
