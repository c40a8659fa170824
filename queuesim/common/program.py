"""How a queuesim process that is the program itself (the console script, a benchmark's
child) uses the garbage collector: less often than Python's default, and not at all over
the objects left when its work is done and the process is about to end."""

from __future__ import annotations

import gc

#: the garbage collector's thresholds in the program (Python's default: 700, 10, 10): the
#: imports of numba, pandas and pydantic allocate a million objects, few of them garbage,
#: and a collection every 700 of them took 0.17 s of CPU of a warm run of the README's
#: sample (341 collections; 0.06-0.10 s at these thresholds, 4 collections)
PROGRAM_GC_THRESHOLDS = (50_000, 20, 10)


def starting() -> None:
    """The program starts: collect garbage less often (:data:`PROGRAM_GC_THRESHOLDS`)."""
    gc.set_threshold(*PROGRAM_GC_THRESHOLDS)


def ending() -> None:
    """The process ends next: its objects are frozen out of the garbage collector's reach
    (``gc.freeze``), so that the interpreter's collections at exit do not walk every object
    of numba, pandas and pydantic once more - 0.4 s of CPU after a warm run of the README's
    sample (0.06-0.09 s frozen). Nothing is lost: every file is closed by now, and objects
    are still freed, as at any exit, when the modules are torn down."""
    gc.freeze()
