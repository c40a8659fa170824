"""The process settings of the program itself (:mod:`queuesim.common.program`)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

from queuesim.common import program


def test_program_asks_one_blas_thread_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The program sets OPENBLAS_NUM_THREADS to one thread, but a user's own value wins."""
    thresholds = gc.get_threshold()
    callbacks = list(gc.callbacks)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    try:
        program.starting()
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
        assert gc.get_threshold() == program.PROGRAM_GC_THRESHOLDS
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
        program.starting()
        assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks[:] = callbacks
        gc.unfreeze()


_FREEZES_THEN_COLLECTS = """
import gc, weakref
from queuesim.common import program

class Cycle:
    pass

def garbage():
    cycle = Cycle()
    cycle.me = cycle
    return weakref.ref(cycle)

program.starting()
program.starting()  # a second call adds no second callback
for _ in range(program.STARTUP_FREEZES):
    ref = garbage()
    gc.collect()
    assert ref() is not None, "a startup collection freed garbage"
assert gc.get_freeze_count() > 0
ref = garbage()
gc.collect()
assert ref() is None, "a later collection kept garbage"
print("ok")
"""


def test_the_first_collections_freeze_and_the_later_ones_collect() -> None:
    """The program's first :data:`~program.STARTUP_FREEZES` collections freeze what they
    find (a cycle made before one is not freed), and later ones collect garbage again."""
    done = subprocess.run(
        [sys.executable, "-c", _FREEZES_THEN_COLLECTS], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
