"""The process settings of the program itself (:mod:`queuesim.common.program`)."""

from __future__ import annotations

import gc
import os

import pytest

from queuesim.common import program


def test_program_asks_one_blas_thread_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The program sets OPENBLAS_NUM_THREADS to one thread, but a user's own value wins."""
    thresholds = gc.get_threshold()
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
