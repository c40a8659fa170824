"""What importing queuesim and running a command load: heavy packages only when used.

matplotlib draws figures and scipy solves the DFRS linear programs and the stretch bound;
both take a large share of the start-up time, so they are imported inside the functions
that use them. Each check runs in a fresh interpreter, at the repository's root (the
source tree shadows an installed copy, as ARCHITECTURE.md says), and reports which of the
watched packages ended up in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the packages watched, by top-level name or submodule
WATCHED = (
    "matplotlib",
    "scipy",
    "scipy.optimize",
    "scipy.sparse",
    "scipy.special",
    "numba",
    "pandas",
    "numpy",
    "pyarrow",
)


def loaded_after(code: str, *args: str) -> set[str]:
    """The watched packages in ``sys.modules`` after running ``code`` in a fresh
    interpreter (``sys.argv[1:]`` = ``args``)."""
    report = f"import json, sys; print(json.dumps([m for m in {WATCHED!r} if m in sys.modules]))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_command_line_loads_no_plotting_scipy_pandas_or_numba() -> None:
    """Importing the command line (the module of every command) loads none of them: each
    command imports its work inside its handler, and the package's API names are imported
    when first used. (Building the parser still imports the trace readers, for the list
    of --format choices.)"""
    loaded = loaded_after("import queuesim.cli.run, queuesim.cli")
    assert loaded == set()


def test_help_loads_no_numpy_pandas_or_numba() -> None:
    """Building every command's parser (what ``queuesim --help`` and every command do
    first) imports none of the heavy packages: the DFRS study's option defaults come from
    its light config module, not from the study package with pandas (0.5 s of CPU)."""
    assert loaded_after("from queuesim.cli import build_parser; build_parser()") == set()


def test_the_api_names_are_imported_when_first_used() -> None:
    """``import queuesim`` is cheap; ``queuesim.simulate`` and the other names still work
    (and are the objects of their home modules)."""
    assert loaded_after("import queuesim") == set()
    import queuesim
    from queuesim.studies.simulate import simulate

    assert queuesim.simulate is simulate
    assert {"simulate", "compare", "Result", "Setup"} <= set(dir(queuesim))
    for name in queuesim.__all__:
        assert getattr(queuesim, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = queuesim.nothing  # type: ignore[attr-defined]


def test_run_without_figures_does_not_import_matplotlib(tmp_path: Path) -> None:
    """``queuesim run --out`` writes tables and text only: matplotlib stays unloaded."""
    code = "import sys; from queuesim.cli import main; assert main(sys.argv[1:]) == 0"
    args = ("run", "kth-sp2", "kth-sp2-sample.swf", "--quiet", "--out", str(tmp_path))
    loaded = loaded_after(code, *args)
    assert "matplotlib" not in loaded
    assert (tmp_path / "jobs.parquet").is_file()


def test_run_of_a_batch_policy_does_not_import_scipy_solvers(tmp_path: Path) -> None:
    """EASY backfilling solves no linear program: ``queuesim run`` with it should not pay
    for scipy's solvers (about a quarter of a second). The run path's own modules already
    import them only where used: the stretch bound's LP, the Lublin generator's gamma
    function (scipy.special); numba itself imports the bare ``scipy`` package."""
    code = "import sys; from queuesim.cli import main; assert main(sys.argv[1:]) == 0"
    args = ("run", "kth-sp2", "kth-sp2-sample.swf", "--quiet", "--out", str(tmp_path))
    loaded = loaded_after(code, *args)
    assert not loaded & {"scipy.optimize", "scipy.sparse", "scipy.special"}
