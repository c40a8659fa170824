"""The one way queuesim compiles a kernel: numba's ``njit`` with its on-disk cache, each
kernel compiled once per argument *type*, not once per constant it is called with.

numba types a call from compiled code to another compiled function with the types of the
arguments at the call site, and a constant there is typed as its value (``Literal[int](0)``,
``Literal[bool](False)``), and an argument left to its default as that default
(``omitted(default=...)``). Each such value makes a specialisation of its own, compiled
whole: ``count_job(..., 1)`` and ``count_job(..., -1)`` were two compiles, and one batch run
compiled 16 functions two or three times over, about 20 s of the 150 s of CPU that
compiling conservative backfilling's run took (measured on 2026-11-28). queuesim's kernels
never dispatch on a value, so :func:`jit` types such a call by the value's type: one
specialisation per argument type, the code the same (a literal is cast to its type where
it is passed, a default is passed as a constant of its type).

A kernel that only reads and writes the arrays it is given - it allocates none and no
callee hands it one - is made by ``jit(borrowing=True)``: compiled without numba's
reference counting. numba counts a reference to every array a function is passed when
the call begins and releases it when the call ends, an atomic add each, and a structure
of arrays counts each of its arrays: a call passing the profile and what it is built
from (about 40 arrays) cost about 80 atomic adds before any work. In conservative
backfilling over HPC2N-2002 these counts took about a third of the simulation's samples
(perf, 2026-11-28). A borrowing kernel's callers keep its arguments alive for it, so it
needs no count of its own. numba refuses to compile one that allocates an array; that
no callee returns one to it (it would never be freed) is for its author to keep, and
the compiled-run tests check it (every array the kernels allocate is freed). A kernel
that allocates is always compiled with the counts, also when first called from a
borrowing one (numba would otherwise compile it the way its caller is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

import numba
from numba.core import types
from numba.core.typing.typeof import Purpose, typeof

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

__all__ = ["jit"]

F = TypeVar("F", bound=Callable[..., object])
Inline = Literal["always", "never"]


def _by_type(arg: types.Type) -> types.Type:
    """The type a call passes for ``arg``: an omitted argument as its default's type, a
    literal as its value's type."""
    if isinstance(arg, types.Omitted):
        return cast(types.Type, typeof(arg.value, Purpose.argument))  # type: ignore[no-untyped-call]
    return cast(types.Type, types.unliteral(arg))  # type: ignore[no-untyped-call]


def _typed_by_type(dispatcher: Dispatcher[F]) -> Dispatcher[F]:
    """``dispatcher``, whose calls from compiled code are typed by :func:`_by_type`; as
    numba makes it if numba's internals are not the ones expected (then only more is
    compiled: the same code, once per constant)."""
    fold = getattr(getattr(dispatcher, "_compiler", None), "fold_argument_types", None)
    typed_as_given = getattr(dispatcher, "get_call_template", None)
    if fold is None or typed_as_given is None:
        return dispatcher

    def get_call_template(args: tuple[types.Type, ...], kws: dict[str, types.Type]) -> Any:
        _, folded = fold(args, kws)
        return typed_as_given(tuple(_by_type(a) for a in folded), {})

    dispatcher.get_call_template = get_call_template  # type: ignore[method-assign,assignment]
    return dispatcher


@overload
def jit(fn: F, /) -> Dispatcher[F]: ...


@overload
def jit(*, inline: Inline = "never", borrowing: bool = False) -> Callable[[F], Dispatcher[F]]: ...


def jit(
    fn: F | None = None, /, *, inline: Inline = "never", borrowing: bool = False
) -> Dispatcher[F] | Callable[[F], Dispatcher[F]]:
    """Compile ``fn`` with numba (nopython, cached on disk; ``inline="always"`` inlines it
    into its callers before typing; ``borrowing``: without reference counting, for a
    kernel that allocates no array and is handed none), typed once per argument type (see
    the module). ``@jit`` and ``@jit(inline="always")`` both work."""

    def compile_(f: F) -> Dispatcher[F]:
        # ``_nrt`` always given: a kernel first compiled from a borrowing one would else
        # inherit its caller's setting (numba's typing stubs do not name the option)
        counts: dict[str, Any] = {"_nrt": not borrowing}
        return _typed_by_type(numba.njit(cache=True, inline=inline, **counts)(f))

    return compile_ if fn is None else compile_(fn)
