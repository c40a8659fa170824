"""queuesim's compile decorator (:mod:`queuesim.common.jit`): a kernel called from compiled
code with constants is compiled once per argument type, not once per constant, and computes
what numba's own decorator computes."""

from __future__ import annotations

import sys

import numba
import numpy as np
import pytest
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


@jit
def _ones_sum(n: int) -> float:
    return float(np.ones(n).sum())  # allocates: compiled with reference counts


@jit(borrowing=True)
def _scaled_sum(values: np.ndarray, by: float) -> float:
    total = 0.0
    for v in values:
        total += v * by
    return total + _ones_sum(values.shape[0])  # an allocating callee, first typed here


def test_a_borrowing_kernel_counts_no_references_and_its_allocating_callee_frees_its_own() -> None:
    """A borrowing kernel computes what it says and leaves its arguments' reference
    counts as they were; the kernel it calls, which allocates, is compiled with counts
    although first compiled from it (numba would otherwise compile it without, and
    refuse: it returns nothing it was given) and frees what it allocates."""
    from numba.core.runtime import _nrt_python as nrt

    values = np.arange(5.0)
    refs = sys.getrefcount(values)
    counting = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        before = nrt.memsys_get_stats_mi_alloc() - nrt.memsys_get_stats_mi_free()
        assert _scaled_sum(values, 2.0) == 20.0 + 5.0
        assert _scaled_sum(values, 2.0) == 20.0 + 5.0
        left = nrt.memsys_get_stats_mi_alloc() - nrt.memsys_get_stats_mi_free() - before
    finally:
        if not counting:
            nrt.memsys_disable_stats()
    assert left == 0
    assert sys.getrefcount(values) == refs


def test_a_borrowing_kernel_that_allocates_is_refused() -> None:
    """Without reference counts a kernel cannot own an array: numba refuses to compile
    one that makes one (so ``borrowing`` really turns the counts off)."""

    @jit(borrowing=True)
    def makes_an_array(n: int) -> float:
        return float(np.ones(n).sum())

    with pytest.raises(numba.core.errors.TypingError):
        makes_an_array(3)
