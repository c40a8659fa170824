"""Whether a run's kernels run compiled (numba) or interpreted (their Python source).

numba compiles a kernel the first time it is called and keeps the machine code in its
on-disk cache; the next process loads it in a fraction of a second. Compiling a batch
run takes one to two minutes of CPU on a 2-core machine (FCFS's 81 s, conservative's
139 s, measured on 2026-11-28), far more than a small run takes interpreted: the
README's sample of 2,000 jobs is simulated in about a second by the plain Python of the
same kernels. So a run chooses (:func:`choose`):

* ``compiled``: always compile (or load) the kernels - what long runs and studies want;
* ``interpreted``: run every kernel's Python source (``py_func``) - same schedule, slower;
* ``auto`` (the default): compiled when the kernels the run needs are already in numba's
  cache; otherwise interpreted if the run is small enough for the interpreter (one
  compiled call, one CPU pool, at most :data:`INTERPRET_UP_TO` jobs), else compiled.

Interpreting is exact, not an approximation: the kernels are ordinary Python functions
that numba compiles, so their source computes the same schedule (checked by a property
test on generated sites for every built-in policy).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Literal, NamedTuple

from numba.core.dispatcher import Dispatcher

__all__ = [
    "INTERPRET_UP_TO",
    "KernelMode",
    "Run",
    "choose",
    "interpreted",
    "loading",
    "object_mode_lean",
    "ready",
    "start_compiler",
]

KernelMode = Literal["auto", "compiled", "interpreted"]
KERNEL_MODES: tuple[KernelMode, ...] = ("auto", "compiled", "interpreted")

#: the largest run ``auto`` interprets when the kernels are not compiled yet: 10,000 jobs
#: take a few seconds interpreted (HPC2N's first 10,000 under EASY: 2.6 s), far less than
#: compiling; 6,000 METACENTRUM-2009 jobs (many pools) took 525 s
INTERPRET_UP_TO = 10_000


class Run(NamedTuple):
    """What :func:`choose` needs to know of a run."""

    jobs: int
    pools: int
    #: the run is one compiled call (a built-in batch policy), not pass by pass
    one_call: bool


def ready(kernels: Iterable[object]) -> bool:
    """Whether numba's on-disk cache holds compiled code of every one of ``kernels`` (their
    dispatchers) for their current source; a kernel given as one kind of its compiles (an
    object with its ``dispatcher`` and a test ``compiled_as(signature)``, as
    :class:`~.batch_run.RunKind`) only if a compile of that kind is cached. Reads numba's
    cache index, not the code, so it costs milliseconds; if numba's cache layout is not the
    one expected, answers true (the run then compiles, as it always could)."""
    for kernel in kernels:
        kind = getattr(kernel, "compiled_as", None)
        dispatcher = getattr(kernel, "dispatcher", kernel) if kind is not None else kernel
        if not isinstance(dispatcher, Dispatcher):
            continue
        try:
            index = dispatcher._cache._cache_file._load_index()  # type: ignore[attr-defined]
            cached = any(kind(key[0]) for key in index) if kind is not None else bool(index)
        except Exception:  # numba internals changed: fall back to compiling
            return True
        if not cached:
            return False
    return True


def choose(mode: KernelMode, run: Run, kernels: Iterable[object]) -> KernelMode:
    """``compiled`` or ``interpreted`` for ``run`` under ``mode`` (see the module doc)."""
    if mode != "auto":
        return mode
    if ready(kernels):
        return "compiled"
    small = run.one_call and run.pools == 1 and run.jobs <= INTERPRET_UP_TO
    return "interpreted" if small else "compiled"


def start_compiler() -> None:
    """Set up numba's CPU target for this process, before the first kernel is compiled,
    without importing ``scipy.linalg``.

    Setting up the target imports the implementation of every numpy function numba can
    compile; one of them (``numba.np.arraymath``) imports ``scipy.linalg`` only to learn
    whether BLAS is there for ``np.correlate``/``np.convolve``, which no kernel of queuesim
    calls: a fifth of a second of a warm run's start (measured: 0.51-0.62 s of CPU to set
    up the target with it, 0.28-0.40 s without). So scipy's BLAS module is hidden while the
    target is set up; those two functions then run numba's own loop in jitted code of this
    process, and every other use of BLAS (``np.dot``, ``np.linalg``) still finds scipy when
    it is compiled. Nothing is hidden when scipy's BLAS module is imported already (setting
    up a target that is set up already costs little)."""
    from numba.core.registry import cpu_target

    with _blas_hidden():
        cpu_target.target_context.refresh()


@contextmanager
def _blas_hidden() -> Iterator[None]:
    """Within the block, ``import`` of scipy's BLAS module raises ImportError (unless it is
    imported already)."""
    if _BLAS_MODULE in sys.modules:
        yield
        return
    sys.modules[_BLAS_MODULE] = None  # type: ignore[assignment]  # "import" raises ImportError
    try:
        yield
    finally:
        del sys.modules[_BLAS_MODULE]


#: the module through which numba looks for BLAS (``numba.np.linalg.ensure_blas``)
_BLAS_MODULE = "scipy.linalg.cython_blas"


@contextmanager
def loading() -> Iterator[None]:
    """Within the block, a kernel loaded from numba's cache is loaded without setting up
    numba's whole CPU target, and nothing imports ``scipy.linalg``.

    numba sets up its target (:func:`start_compiler`: the typing and lowering of every
    function it can compile, 0.25-0.3 s of CPU) before it loads a kernel from its cache,
    although the cached machine code needs only numba's runtime (its memory allocator)
    and the modules whose globals the kernels' code refers to, which the load imports
    itself. So within the block numba's cache loads with the runtime set up alone; a kernel
    that is not in the cache compiles as always, after the whole target is set up
    (:func:`start_compiler`, which the compiler calls itself). If numba's internals are not
    the ones expected, the block sets up the whole target first, as before.

    Nor does a load import the modules of numba's own functions compiled into a kernel
    (``numba.np.arraymath``, ``numba.cpython.unicode``, ... - 22 for the compiled run,
    0.1 s of CPU): numba keeps each compiled function's module globals beside its code
    (its "environment") only for code in object mode, which reads Python globals, and
    the functions of those modules run in nopython mode, which never reads them. So
    within the block such an environment holds the module's name alone
    (:func:`_environment_unimported`); a module already imported (queuesim's own, whose
    kernels may hold object-mode blocks) gives its globals as always."""
    try:
        from numba.core import environment
        from numba.core.caching import Cache
        from numba.core.runtime.nrt import rtsys

        rebuild = _environment_unimported(environment)
        numba_load = Cache.load_overload
    except (ImportError, AttributeError):  # numba changed: set the target up as before
        start_compiler()
        yield
        return
    # one block at a time, since it patches numba's class (re-entrant: a block may nest)
    with _LOADING_LOCK, _blas_hidden():

        def load_overload(self: Cache, sig: Any, target_context: Any) -> Any:
            # numba's load_overload without its refresh of the whole target first, and
            # with the lean rebuilder of environments while it unpickles (only then: a
            # kernel compiled in the block is saved with numba's own, by name)
            rtsys.initialize(target_context)
            target_context.refresh = _no_refresh
            try:
                with _patched(environment, "_rebuild_env", rebuild):
                    return numba_load(self, sig, target_context)  # type: ignore[no-untyped-call]
            finally:
                vars(target_context).pop("refresh", None)

        Cache.load_overload = load_overload  # type: ignore[method-assign]
        try:
            yield
        finally:
            Cache.load_overload = numba_load  # type: ignore[method-assign]


def _environment_unimported(environment: ModuleType) -> Any:
    """numba's ``_rebuild_env`` (which its cache's pickles call to restore a compiled
    function's environment), giving a function of a module not imported yet an environment
    of the module's name alone instead of importing the module (see :func:`loading`).
    Raises AttributeError if numba's internals are not the ones expected."""
    numba_rebuild = environment._rebuild_env
    memo, lookup, made = (
        environment.Environment._memo,
        environment.lookup_environment,
        environment.Environment,
    )

    def rebuild(module: str, consts: list[Any], name: str) -> Any:
        if module in sys.modules or lookup(name) is not None:
            return numba_rebuild(module, consts, name)
        env = made({"__name__": module})
        env.consts[:] = consts
        env.env_name = name
        memo[name] = env
        return env

    return rebuild


@contextmanager
def _patched(owner: ModuleType, name: str, value: object) -> Iterator[None]:
    """Within the block, ``owner.name`` is ``value``; restored on exit."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


#: held while a :func:`loading` block patches numba's cache (re-entrant: a block may nest)
_LOADING_LOCK = threading.RLock()


@contextmanager
def object_mode_lean() -> Iterator[None]:
    """Within the block (in its thread), an object-mode block of a kernel (``with
    numba.objmode():``, as the compiled run's progress reports use) compiles without setting
    up numba's whole target, and without importing ``scipy.linalg``.

    numba does not cache such a block with its kernel: it compiles it in the process, the
    first time the kernel enters it, and its compiler first sets up the whole typing and
    lowering of every function it can compile (:func:`start_compiler`), which most of the
    README sample's first progress report took. Code in object mode calls the Python
    interpreter for everything; its compiler looks up only how to write a constant
    (``numba.cpython.numbers``), so within the block that alone is installed. A block that
    still fails so compiles again as numba always does (whole target first). numba's
    compiler of object-mode blocks is wrapped once, the first time a block is entered; it
    compiles as numba's own outside such a block."""
    if not _wrap_object_mode_compiler():
        yield
        return
    before = getattr(_LEAN_OBJECT_MODE, "on", False)
    _LEAN_OBJECT_MODE.on = True
    try:
        yield
    finally:
        _LEAN_OBJECT_MODE.on = before


#: whether :func:`object_mode_lean` is on in a thread (its attribute ``on``)
_LEAN_OBJECT_MODE = threading.local()
#: whether numba's compiler of object-mode blocks is wrapped (empty until first tried)
_OBJECT_MODE_WRAPPED: list[bool] = []


def _wrap_object_mode_compiler() -> bool:
    """Wrap numba's compiler of object-mode blocks (once) so that it compiles leanly within
    :func:`object_mode_lean`; false if numba's internals are not the ones expected."""
    with _LOADING_LOCK:
        if _OBJECT_MODE_WRAPPED:
            return _OBJECT_MODE_WRAPPED[0]
        try:
            from numba.core.compiler_lock import global_compiler_lock
            from numba.core.dispatcher import ObjModeLiftedWith
            from numba.core.imputils import builtin_registry

            numba_compile = ObjModeLiftedWith.compile
        except (ImportError, AttributeError):  # numba changed: compile as it always does
            _OBJECT_MODE_WRAPPED.append(False)
            return False

        def compile_block(self: Any, sig: Any) -> Any:
            if not getattr(_LEAN_OBJECT_MODE, "on", False):
                return numba_compile(self, sig)
            import numba.cpython.numbers  # noqa: F401  (registers the constants' lowering)

            target, typing = self.targetctx, self.typingctx
            with global_compiler_lock, _blas_hidden():
                target.install_registry(builtin_registry)
                target.refresh = typing.refresh = _no_refresh
                try:
                    return numba_compile(self, sig)
                except Exception:  # something more was needed: numba's whole target
                    _restore_refresh(target, typing)
                    return numba_compile(self, sig)
                finally:
                    _restore_refresh(target, typing)

        ObjModeLiftedWith.compile = compile_block
        _OBJECT_MODE_WRAPPED.append(True)
        return True


def _restore_refresh(*contexts: Any) -> None:
    """numba's own ``refresh`` of each of ``contexts`` again (see :func:`object_mode_lean`)."""
    for context in contexts:
        vars(context).pop("refresh", None)


def _no_refresh() -> None:
    """The target's ``refresh`` while a cached kernel loads (see :func:`loading`)."""


@contextmanager
def interpreted() -> Iterator[None]:
    """Within the block, every numba kernel of queuesim runs as plain Python: each module
    global of ``queuesim.*`` that is a numba dispatcher is rebound to its Python function,
    so that kernels calling kernels (through their module's globals) stay interpreted.
    Restored on exit."""
    rebound: list[tuple[ModuleType, str, Dispatcher]] = []
    try:
        for name, module in list(sys.modules.items()):
            if module is None or not (name == "queuesim" or name.startswith("queuesim.")):
                continue
            for attr, value in list(vars(module).items()):
                if isinstance(value, Dispatcher):
                    rebound.append((module, attr, value))
                    setattr(module, attr, value.py_func)
        yield
    finally:
        for module, attr, value in rebound:
            setattr(module, attr, value)
