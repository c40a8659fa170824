"""Kernels compiled or interpreted (:mod:`queuesim.core.kernels`): the same schedule to the
last bit either way, the rebinding that makes a run interpreted, and the rules by which
``auto`` chooses."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numba
import pytest
from builders import J, make_trace, make_workload
from hypothesis import HealthCheck, given, settings
from test_batch_run import POLICIES, assert_same_result, scenarios

from queuesim.cli import main
from queuesim.common.bundled import site_file, workload_file
from queuesim.common.errors import WorkloadError
from queuesim.core import kernels, planning, profile
from queuesim.core.batch_run import RunKind, kernels_for, replay_events
from queuesim.core.engine import Simulation
from queuesim.core.kernels import INTERPRET_UP_TO, Run, choose, interpreted, ready
from queuesim.core.workload import CleaningOptions, prepare
from queuesim.policies.registry import make_policy
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.traces.swf import read_swf


def _run(site: Site, workload: Any, policy: str, params: dict[str, Any], **how: Any) -> Any:
    pol = make_policy(policy, params)
    sim = Simulation(site, workload, pol, params=params, **how)
    return sim.run(), pol


@pytest.mark.parametrize(("policy", "params"), POLICIES, ids=lambda p: str(p))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_interpreted_kernels_give_the_compiled_schedule_on_both_run_paths(
    policy: str, params: dict[str, Any], scenario: tuple[Site, list[J]]
) -> None:
    """Every built-in policy, in one call and pass by pass: the kernels' Python source
    computes exactly what their compiled code computes."""
    site, jobs = scenario
    try:
        workload = prepare(make_trace(jobs), site, CleaningOptions(reject_unrunnable=True))
    except WorkloadError:
        return  # every job rejected: nothing to compare
    for one_call in (True, False):
        fast, fast_policy = _run(
            site, workload, policy, params, compiled=one_call, kernels="compiled"
        )
        slow, slow_policy = _run(
            site, workload, policy, params, compiled=one_call, kernels="interpreted"
        )
        assert (fast.kernels, slow.kernels) == ("compiled", "interpreted")
        assert slow.compile_seconds == 0.0
        assert_same_result(fast, slow, fast_policy, slow_policy, params)


def test_dpsa_with_its_own_kernels_interpreted_gives_the_compiled_schedule() -> None:
    """DPSA's search kernels (policies/) are rebound too: 300 KTH jobs, same schedule."""
    site = load_site(site_file("kth-sp2"))
    trace = read_swf(workload_file("kth-sp2-sample.swf"))
    workload = prepare(replace(trace, jobs=trace.jobs.head(300)), site)
    params = {"variant": "p"}
    fast, fast_policy = _run(site, workload, "dpsa", params, kernels="compiled")
    slow, slow_policy = _run(site, workload, "dpsa", params, kernels="interpreted")
    assert_same_result(fast, slow, fast_policy, slow_policy, params)
    assert slow.counters["dpsa_searches"] > 0


def test_interpreted_rebinds_every_kernel_to_its_python_source_and_restores_it() -> None:
    """Inside the block a kernel is its ``py_func`` in its own module and in modules that
    imported it by name; after it, even when the block raised, the dispatchers are back."""
    earliest = profile._earliest
    assert isinstance(earliest, numba.core.dispatcher.Dispatcher)
    with pytest.raises(RuntimeError), interpreted():
        assert profile._earliest is earliest.py_func
        assert planning.plan_into is not None
        assert not isinstance(planning.plan_into, numba.core.dispatcher.Dispatcher)
        raise RuntimeError("leave the block")
    assert profile._earliest is earliest
    assert isinstance(planning.plan_into, numba.core.dispatcher.Dispatcher)


@pytest.mark.parametrize(
    ("mode", "run", "is_ready", "chosen"),
    [
        ("compiled", Run(100, 1, True), False, "compiled"),
        ("interpreted", Run(10**6, 9, False), True, "interpreted"),
        ("auto", Run(10**6, 9, False), True, "compiled"),
        ("auto", Run(2_000, 1, True), False, "interpreted"),
        ("auto", Run(INTERPRET_UP_TO, 1, True), False, "interpreted"),
        ("auto", Run(INTERPRET_UP_TO + 1, 1, True), False, "compiled"),
        ("auto", Run(2_000, 3, True), False, "compiled"),
        ("auto", Run(2_000, 1, False), False, "compiled"),
    ],
)
def test_auto_interprets_only_a_small_one_call_one_pool_run_whose_kernels_are_not_compiled(
    monkeypatch: pytest.MonkeyPatch, mode: Any, run: Run, is_ready: bool, chosen: str
) -> None:
    """An explicit mode is obeyed; auto compiles what is cached, and compiles a run too
    large or too intricate for the interpreter rather than interpreting it for minutes."""
    monkeypatch.setattr(kernels, "ready", lambda _kernels: is_ready)
    assert choose(mode, run, ()) == chosen


def test_auto_asks_the_cache_about_the_run_kernel_of_the_sites_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PBS-ordered run in one call is a compile of its own (the run with the PBS order's
    keys): ``auto`` asks numba's cache about that one, not the run of the other orders,
    and interprets a small first run whose kernel is not compiled yet - with the schedule
    the compiled kernel gives."""
    site = Site.model_validate(
        {
            "name": "pbs",
            "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
            "ordering": "pbs",
            "pbs_order": {"max_starve": "100s", "fair_share": True, "sort_keys": ["ncpus HIGH"]},
        }
    )
    jobs = [J(id=i + 1, submit=10 * i, runtime=50 + i % 7, cpus=1 + i % 4) for i in range(40)]
    workload = make_workload(jobs, site)
    params = {"reserved_jobs": 1, "reserve_when_limited": False, "starving_only": True}
    compiled, compiled_policy = _run(site, workload, "scan", params, kernels="compiled")
    asked: list[tuple[object, ...]] = []

    def not_compiled(needed: Any) -> bool:
        asked.append(tuple(needed))
        return False

    monkeypatch.setattr(kernels, "ready", not_compiled)
    auto, auto_policy = _run(site, workload, "scan", params)
    assert asked == [(RunKind(promises=False, pbs=True, slurm=False),)]
    assert auto.kernels == "interpreted"
    assert_same_result(compiled, auto, compiled_policy, auto_policy, params)


@pytest.mark.parametrize(
    ("policy", "kernel"),
    [
        ("fcfs", RunKind(promises=False, pbs=False, slurm=False)),
        ("easy", RunKind(promises=False, pbs=False, slurm=False)),
        ("scan", RunKind(promises=False, pbs=False, slurm=False)),
        ("conservative", RunKind(promises=True, pbs=False, slurm=False)),
    ],
)
def test_a_policy_that_promises_enters_a_kernel_of_its_own(policy: str, kernel: object) -> None:
    """Conservative backfilling's promises are a compile of their own: ``auto`` asks the
    cache about it, and a first FCFS or EASY run neither waits for its compile nor counts
    it as cached."""
    from queuesim.core.ordering import FCFSOrder

    assert kernels_for(FCFSOrder(), make_policy(policy).batch_rules) == (kernel,)


def test_ready_reads_numbas_cache_index_of_a_kernels_current_source(tmp_path: Path) -> None:
    """A fresh cached kernel is not ready until compiled once; then it is, also for a new
    dispatcher of the same source (a new process); objects that are not kernels are
    ignored."""
    source = tmp_path / "fresh_kernel.py"
    source.write_text("import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n")

    def load() -> Any:
        spec = importlib.util.spec_from_file_location("fresh_kernel", source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.twice

    twice = load()
    assert not ready([twice])
    assert ready(["not a kernel", len])
    assert twice(21) == 42
    assert ready([twice])
    assert ready([load()])
    sys.modules.pop("fresh_kernel", None)


def test_ready_asks_for_the_kind_of_compile_a_run_needs_not_any_compile(tmp_path: Path) -> None:
    """One kernel compiled for a run without an optional part (None) is not ready for a
    run with it, nor the other way round: each kind of run is a compile of its own, and
    ``auto`` must not take one kind's compile for another's (the run would then compile
    unannounced, as if cached)."""
    source = tmp_path / "kinds_kernel.py"
    source.write_text(
        "import numba\n\n@numba.njit(cache=True)\n"
        "def step(x, part):\n    return x if part is None else x + part\n"
    )
    spec = importlib.util.spec_from_file_location("kinds_kernel", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Kind:
        def __init__(self, part: bool) -> None:
            self.dispatcher, self.part = module.step, part

        def compiled_as(self, signature: tuple[object, ...]) -> bool:
            return (signature[-1] != numba.types.none) == self.part

    without, with_part = Kind(False), Kind(True)
    assert not ready([without]) and not ready([with_part])
    assert module.step(1, None) == 1
    assert ready([without]) and not ready([with_part])
    assert module.step(1, 2) == 3
    assert ready([without, with_part])
    sys.modules.pop("kinds_kernel", None)


def test_a_run_kind_is_told_by_which_optional_parts_are_none() -> None:
    """The kind of a compile of the run is read from its last three argument types (the
    promises, the PBS order's keys, Slurm's rules): None where the kind has no such part."""
    some = numba.types.int64
    none = numba.types.none
    assert RunKind(False, False, False).compiled_as((some, none, none, none))
    assert not RunKind(False, False, False).compiled_as((some, some, none, none))
    assert RunKind(True, False, False).compiled_as((some, some, none, none))
    assert RunKind(False, True, False).compiled_as((some, none, some, none))
    assert RunKind(False, False, True).compiled_as((some, none, none, some))
    assert not RunKind(False, False, True).compiled_as((some, none, some, none))
    assert RunKind(True, True, False).dispatcher is replay_events


def test_starting_the_compiler_leaves_scipy_linalg_unimported_until_blas_is_needed() -> None:
    """In a fresh process, numba's target is set up (and a kernel compiled) without
    importing scipy.linalg; numba's own check for BLAS, which np.dot runs when compiled,
    still finds scipy afterwards."""
    script = (
        "import sys, numba\n"
        "from queuesim.core.kernels import start_compiler\n"
        "start_compiler()\n"
        "assert numba.njit(lambda x: x + 1)(1) == 2\n"
        "assert 'scipy.linalg' not in sys.modules\n"
        "from numba.np.linalg import ensure_blas\n"
        "ensure_blas()\n"
        "assert 'scipy.linalg.cython_blas' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


_LOADING_SCRIPT = """
import importlib.util, sys
from queuesim.core.kernels import loading
spec = importlib.util.spec_from_file_location("sorted_kernel", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with loading():
    assert list(module.smallest_two(__import__("numpy").array([3.0, 1.0, 2.0]))) == [1.0, 2.0]
assert "scipy.linalg" not in sys.modules
print(sum(module.smallest_two.stats.cache_hits.values()), "numba.typed.typeddict" in sys.modules)
print("numba.misc.quicksort" in sys.modules)
"""


def test_loading_a_cached_kernel_sets_up_only_what_its_code_needs(tmp_path: Path) -> None:
    """Within ``kernels.loading()`` a kernel not in numba's cache compiles as always (the
    whole target set up by the compiler, scipy.linalg not imported); in the next process
    the same kernel loads from the cache without numba's whole target (whose setup imports,
    e.g., numba's typed dict) nor the modules of numba's functions compiled into it (its
    sort), and what is compiled afterwards still compiles."""
    source = tmp_path / "sorted_kernel.py"
    source.write_text(
        "import numba, numpy as np\n\n"
        "@numba.njit(cache=True)\ndef smallest_two(a):\n    return np.sort(a)[:2]\n"
    )
    after = "import numba, numpy as np\n"
    after += "assert numba.njit(lambda a: np.argsort(a))(np.ones(2)).size == 2\n"
    # scripts run from files: numba cannot load np.sort's code cached by a `python -c`
    first_script, second_script = tmp_path / "first.py", tmp_path / "second.py"
    first_script.write_text(_LOADING_SCRIPT)
    second_script.write_text(_LOADING_SCRIPT + after)
    first = subprocess.run(
        [sys.executable, str(first_script), str(source)], capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[0] == "0"  # compiled: no cache hit
    second = subprocess.run(
        [sys.executable, str(second_script), str(source)], capture_output=True, text=True
    )
    assert second.returncode == 0, second.stderr
    hits, whole_target = second.stdout.split("\n")[0].rsplit(" ", 1)
    assert hits == "1" and whole_target == "False"
    # np.sort's code came from the cache without its numba module (quicksort) imported
    assert first.stdout.split("\n")[1] == "True"
    assert second.stdout.split("\n")[1] == "False"


_OBJECT_MODE_SCRIPT = """
import importlib.util, sys
from queuesim.core.kernels import loading, object_mode_lean
spec = importlib.util.spec_from_file_location("reporting_kernel", sys.argv[1])
module = sys.modules["reporting_kernel"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with loading():
    module.count_up(0)
with object_mode_lean():
    assert module.count_up(3) == 3
assert module.SEEN == [0, 1, 2], module.SEEN
assert "scipy.linalg" not in sys.modules
print(sum(module.count_up.stats.cache_hits.values()), "numba.typed.typeddict" in sys.modules)
"""


def test_an_object_mode_block_compiles_without_the_whole_target(tmp_path: Path) -> None:
    """A cached kernel's object-mode block (which numba compiles in every process, as the
    compiled run's progress reports) runs within ``kernels.object_mode_lean()`` without
    numba's whole target set up and without scipy.linalg, calling back into Python."""
    source = tmp_path / "reporting_kernel.py"
    source.write_text(
        "import numba\n\nSEEN = []\n\n"
        "def seen(i):\n    SEEN.append(i)\n\n"
        "@numba.njit(cache=True)\ndef count_up(n):\n    total = 0\n"
        "    for i in range(n):\n        total += 1\n"
        "        with numba.objmode():\n            seen(i)\n    return total\n"
    )
    script = tmp_path / "script.py"
    script.write_text(_OBJECT_MODE_SCRIPT)
    for hits in ("0", "1"):  # compiled in the first process, loaded from the cache next
        done = subprocess.run(
            [sys.executable, str(script), str(source)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0] == hits
    assert done.stdout.split()[1] == "False"  # the cached kernel ran on the runtime alone


def test_run_reports_interpreted_kernels_in_its_speed_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--kernels interpreted` runs the sample and says how, pointing at the option."""
    code = main(["run", "kth-sp2", "kth-sp2-sample.swf", "--kernels", "interpreted"])
    # the summary's box wraps the line: compare without whitespace and box edges
    out = "".join(capsys.readouterr().out.replace("│", " ").split())
    assert code == 0
    assert "kernelsinterpreted:notcompiledyet,see--kernels" in out


@pytest.mark.parametrize("in_cache", [True, False])
def test_a_compilation_is_announced_only_when_the_kernels_are_not_in_the_cache(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], in_cache: bool
) -> None:
    """Whether a run compiles its kernels is read from numba's cache before the run, not
    guessed from how long the kernels took to be ready (a loaded machine can take seconds
    to load cached ones): the notice, ``on_compile`` and ``Result.compiled_now`` say it
    exactly when the cache lacks the kernels."""
    monkeypatch.setattr(kernels, "ready", lambda _kernels: in_cache)
    site = load_site(site_file("kth-sp2"))
    workload = make_workload([J(id=1, submit=0, runtime=10, cpus=1)], site)
    calls: list[bool] = []
    pol = make_policy("easy", {})
    result = Simulation(
        site, workload, pol, kernels="compiled", on_compile=lambda: calls.append(True)
    ).run()
    assert result.compiled_now is (not in_cache)
    assert calls == ([] if in_cache else [True])
    code = main(["run", "kth-sp2", "kth-sp2-sample.swf", "--kernels", "compiled"])
    out = "".join(capsys.readouterr().out.replace("│", " ").split())
    assert code == 0
    assert ("compilingsimulationkernels(firstrunonly)" in out) is (not in_cache)
    assert ("compiledonthisfirstrun" in out) is (not in_cache)


def test_a_numba_without_the_internals_patched_loads_and_compiles_as_numba_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``kernels.loading()`` and ``object_mode_lean()`` patch numba's internals; on a numba
    whose internals are not the expected ones (here: its cache's environment rebuilder
    and the registry the lean object-mode compile installs gone) they step aside - the
    whole target is set up, kernels compile and run as numba does - rather than failing
    every run."""
    import numba
    from numba.core import environment, imputils

    from queuesim.core import kernels

    monkeypatch.delattr(environment, "_rebuild_env")
    with kernels.loading():
        assert numba.njit(lambda a: a + 1)(1) == 2
    monkeypatch.setattr(kernels, "_OBJECT_MODE_WRAPPED", [])
    monkeypatch.delattr(imputils, "builtin_registry")
    with kernels.object_mode_lean():  # a plain block, nothing patched
        assert numba.njit(lambda a: a * 2)(3) == 6
    assert kernels._OBJECT_MODE_WRAPPED == [False]


def test_only_a_policy_that_uses_the_kernels_has_them_loaded_or_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A time-shared DFRS policy calls no compiled kernel, so its run asks for none and
    warms none up (an empty cache used to cost it a minute of compiling the planning pass
    it never calls); a pass-by-pass batch policy (DPSA) still asks for the placement and
    planning kernels (run interpreted here, so that the test compiles nothing)."""
    from queuesim.core import engine
    from queuesim.core.cluster import KERNELS as PLACEMENT
    from queuesim.core.planning import KERNELS as PLANNING
    from queuesim.studies.simulate import simulate
    from queuesim.traces.dfrs_annotation import write_synthetic_trace

    asked: list[tuple[object, ...]] = []

    def choose_recording(mode: Any, run: Run, needed: Any) -> Any:
        asked.append(tuple(needed))
        return "compiled" if not needed else "interpreted"

    warmed: list[str] = []
    monkeypatch.setattr(engine.kernel_modes, "choose", choose_recording)
    monkeypatch.setattr(engine, "warm_up_placement", lambda: warmed.append("placement"))
    monkeypatch.setattr(engine, "warm_up_profile", lambda: warmed.append("planning"))
    trace = tmp_path / "annotated.swf"
    write_synthetic_trace(trace, 8, 20, seed=3, load=0.5)
    site = site_file("dfrs-lublin-128")
    result = simulate(site, trace, policy="Greedy*/OPT=MIN", kernels="compiled")
    assert len(result.jobs) == 20 and result.kernels == "compiled"
    assert asked == [()] and warmed == []
    simulate(site, trace, policy="dpsa")
    assert asked[1] == PLANNING + PLACEMENT
