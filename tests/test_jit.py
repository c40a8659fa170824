"""queuesim's compile decorator (:mod:`queuesim.common.jit`): a kernel called from compiled
code with constants is compiled once per argument type, not once per constant, and computes
what numba's own decorator computes."""

from __future__ import annotations

import numba
from numba.core import types

from queuesim.common.jit import jit


def _add(a: int, b: int, sign: int = 1) -> int:
    return a + sign * b


typed_once = jit(_add)
typed_per_constant = numba.njit(_add)


@jit
def _calls_typed_once(a: int) -> int:
    return typed_once(a, 1, 1) + typed_once(a, 2, -1) + typed_once(a, 3) + typed_once(a, a)


@numba.njit
def _calls_typed_per_constant(a: int) -> int:
    return (
        typed_per_constant(a, 1, 1)
        + typed_per_constant(a, 2, -1)
        + typed_per_constant(a, 3)
        + typed_per_constant(a, a)
    )


def _typed_calls(kernel: object) -> None:
    """Type the four calls of ``_calls_typed_once`` against ``kernel`` as numba types a
    call from compiled code (what compiling a caller does, whether or not the caller
    itself then comes from numba's disk cache)."""
    i64 = types.int64
    for args in (
        (i64, types.literal(1), types.literal(1)),
        (i64, types.literal(2), types.literal(-1)),
        (i64, types.literal(3)),  # ``sign`` left to its default
        (i64, i64),
    ):
        kernel.get_call_template(args, {})  # type: ignore[attr-defined]


def test_a_kernel_called_with_constants_and_defaults_is_compiled_once_per_type() -> None:
    """The four calls (constants 1/-1, a default left out, variables) make one compile
    under ``jit``; numba's ``njit`` makes one per distinct constant and per omission,
    which is what ``jit`` saves - and both compute the same sums."""
    assert _calls_typed_once(5) == _calls_typed_per_constant(5) == 6 + 3 + 8 + 10
    _typed_calls(typed_once)
    _typed_calls(typed_per_constant)
    assert [[str(t) for t in sig] for sig in typed_once.signatures] == [["int64"] * 3]
    assert len(typed_per_constant.signatures) >= 3  # numba's own behaviour, worked around


def test_jit_inline_always_still_inlines_and_computes_the_same() -> None:
    """``jit(inline="always")`` is numba's inlining: the function is never compiled on its
    own (no signature), only inside its caller."""
    inlined = jit(inline="always")(_add)

    @numba.njit
    def caller(a: int) -> int:
        return inlined(a, 2, -1)

    assert caller(7) == 5
    assert inlined.signatures == []
