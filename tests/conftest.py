"""Shared fixtures.

Real traces live outside the repository, in ``../shared/workloads`` beside the checkout
(or wherever ``QUEUESIM_SHARED_WORKLOADS`` points). Tests that need them use the
``real_workloads`` fixture, which skips the test cleanly when the folder is absent.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

# Property tests guard behaviour, never speed: hypothesis's per-example deadline (200 ms by
# default) is a timing assertion that fails on a loaded machine, so it is off for every test
# (speed targets live in ``queuesim bench``).
settings.register_profile("queuesim", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("queuesim")

REPO = Path(__file__).resolve().parents[1]

# The mutation runner (.ci/mutate.py) wants to know whether a property fails, not its
# smallest failing example: no shrinking there (shrinking a mutant's failure takes minutes)
if os.environ.get("QUEUESIM_MUTATION_RUN"):
    settings.register_profile(
        "mutation",
        parent=settings.get_profile("queuesim"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        print_blob=False,
    )
    settings.load_profile("mutation")


def _one_compiler_per_kernel(compile_: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """numba's ``Dispatcher.compile``, holding an exclusive file lock named after the kernel's
    on-disk cache while it runs. Two xdist workers that need the same uncompiled kernel then
    no longer compile it side by side (minutes of CPU each for a batch run): the second
    waits, then finds the first one's code in numba's cache and loads it, as any later
    process does. Only where the test processes compile; what a kernel computes, and which
    kernels a test runs compiled, do not change."""
    from numba.core.compiler_lock import global_compiler_lock

    held: set[str] = set()  # re-entrant: compiling a kernel compiles the kernels it calls
    folder = Path(tempfile.gettempdir()) / "queuesim-numba-compile-locks"

    def compile_one_at_a_time(dispatcher: Any, sig: Any) -> Any:
        index = getattr(getattr(dispatcher._cache, "_cache_file", None), "_index_path", None)
        if index is None or index in held:  # not cached to disk (nothing to share), or held
            return compile_(dispatcher, sig)
        folder.mkdir(exist_ok=True)
        lock = folder / (hashlib.sha256(index.encode()).hexdigest()[:24] + ".lock")
        # numba's own (re-entrant) lock first: one thread of a process compiles at a time,
        # so file locks are taken caller before callee everywhere and cannot deadlock
        with global_compiler_lock, lock.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            held.add(index)
            try:
                return compile_(dispatcher, sig)
            finally:
                held.discard(index)

    return compile_one_at_a_time


if os.environ.get("PYTEST_XDIST_WORKER"):
    from numba.core.dispatcher import Dispatcher

    Dispatcher.compile = _one_compiler_per_kernel(Dispatcher.compile)  # type: ignore[method-assign]


#: the tests that compile the batch runs' numba kernels first in a fresh clone (minutes of CPU
#: each, see :func:`pytest_xdist_make_scheduler`), by node id prefix
COMPILE_BATCH_KERNELS = (
    "tests/test_batch_run.py::",
    "tests/test_kernels.py::",
    "tests/test_determinism.py::",  # its children compile (no lock there): after the others
    "tests/test_compare.py::test_compare_attaches_a_dfrs_annotation_as_run_does",  # many pools
    "tests/test_bench_table.py::test_a_row_of_several_setups",  # two forked EASY runs
)


def compile_group(nodeid: str) -> str | None:
    """The worker group of a test that compiles batch kernels: conservative backfilling's
    promises (``run_batch_promises``, the longest compile) or the other batch runs."""
    if not nodeid.startswith(COMPILE_BATCH_KERNELS):
        return None
    return "compile-promises" if "conservative" in nodeid else "compile-batch"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``pytest -n auto`` (xdist's ``load``): the tests of each :func:`compile_group` run on
    one worker, one after another and first (the groups are the largest units, handed out
    first): one worker compiles the promises' kernel while another compiles the other batch
    runs, each once; every other test is then dealt one by one, as ``load`` deals them.
    Under plain ``load`` consecutive cases of one test went to alternate workers, which
    compiled the same kernel side by side (or, with the lock above, one waited). xdist's
    ``loadgroup`` would take ``xdist_group`` marks, but it does not group on pytest 9.2
    (pytest-dev/pytest-xdist#1386), hence node id prefixes: the controller sees no marks."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CompilersFirst(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return compile_group(nodeid) or nodeid

    return CompilersFirst(config, log)


def shared_workloads_dir() -> Path:
    override = os.environ.get("QUEUESIM_SHARED_WORKLOADS")
    return Path(override) if override else REPO.parent / "shared" / "workloads"


@pytest.fixture
def real_workloads() -> Path:
    folder = shared_workloads_dir()
    if not folder.is_dir():
        pytest.skip(f"real traces not available ({folder} is absent)")
    return folder


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def site_logs() -> Path:
    """The real PBS and Slurm logs of ``../shared/workloads/site-logs`` (skips if absent)."""
    folder = shared_workloads_dir() / "site-logs"
    if not folder.is_dir():
        pytest.skip(f"site logs not available ({folder} is absent)")
    return folder
