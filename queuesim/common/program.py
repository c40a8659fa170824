"""How a queuesim process that is the program itself (the console script, a benchmark's
child) uses the garbage collector - less often than Python's default, and not at all over
the objects left when its work is done and the process is about to end - and BLAS: with
one thread."""

from __future__ import annotations

import gc
import os

#: the garbage collector's thresholds in the program (Python's default: 700, 10, 10): the
#: imports of numba, pandas and pydantic allocate a million objects, few of them garbage,
#: and a collection every 700 of them took 0.17 s of CPU of a warm run of the README's
#: sample (341 collections; 0.06-0.10 s at these thresholds, 4 collections)
PROGRAM_GC_THRESHOLDS = (50_000, 20, 10)


#: the BLAS threads of the program, unless the environment says otherwise. numpy's
#: OpenBLAS starts a thread per core for a dot product of some thousands of numbers, and
#: after each the threads spin waiting for more: the program's array work is single
#: threaded and its dot products are of a run's jobs (the wait figures of the run, of each
#: queue and user), so they only spun - 0.2 s of CPU of the 0.33 s that the metrics and
#: the per-queue and per-user figures of FCFS on HPC2N took (2026-11-27, this 2-core
#: machine; 0.12 s with one thread, the same bytes written)
BLAS_THREADS = "1"


#: the first collections of the program that freeze the objects found rather than walk
#: them: at :data:`PROGRAM_GC_THRESHOLDS` the imports of numba, pandas, pyarrow and
#: pydantic set off four collections (2026-11-28, FCFS on HPC2N as ``queuesim bench``'s
#: child), which walked their 200,000 objects in 0.08-0.1 s of CPU to free some 1,500;
#: those objects live until the process ends
STARTUP_FREEZES = 4


class _FreezeAtStartup:
    """A garbage collector callback: at the start of each of the program's first
    :data:`STARTUP_FREEZES` collections, every object tracked so far is frozen (moved out
    of the collector's reach, ``gc.freeze``), so that the collection walks nothing; the
    later collections walk as usual. What is frozen is never collected: the garbage of
    the imports, some 1,500 objects, stays until the process ends."""

    def __init__(self) -> None:
        self.left = STARTUP_FREEZES

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and self.left > 0:
            self.left -= 1
            gc.freeze()


def starting() -> None:
    """The program starts: collect garbage less often (:data:`PROGRAM_GC_THRESHOLDS`),
    freezing what the first collections find (:data:`STARTUP_FREEZES`), and BLAS is to
    run in one thread (:data:`BLAS_THREADS`; only numpy imported after this call heeds
    it, as in the console script; a ``queuesim bench`` child inherits it)."""
    gc.set_threshold(*PROGRAM_GC_THRESHOLDS)
    if not any(isinstance(callback, _FreezeAtStartup) for callback in gc.callbacks):
        gc.callbacks.append(_FreezeAtStartup())
    os.environ.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)


def ending() -> None:
    """The process ends next: its objects are frozen out of the garbage collector's reach
    (``gc.freeze``), so that the interpreter's collections at exit do not walk every object
    of numba, pandas and pydantic once more - 0.4 s of CPU after a warm run of the README's
    sample (0.06-0.09 s frozen). Nothing is lost: every file is closed by now, and objects
    are still freed, as at any exit, when the modules are torn down."""
    gc.freeze()
