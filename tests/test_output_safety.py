"""Output places checked before any work, and run folders that survive ``kill -9``: the
completion marker (metrics.json) is written last, a killed run's temporaries are cleared
by the next run, and readers refuse an incomplete folder (issue 20, defects 1 and 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import QUEUESIM_ROOT

from queuesim.cli import main
from queuesim.common.atomic import check_writable_dir, check_writable_file, stale_temporaries
from queuesim.common.errors import OutputError, QueuesimError
from queuesim.reports.run_dir import read_run_dir

REPO = Path(__file__).resolve().parents[1]
KTH_SITE = REPO / "site-configs" / "kth-sp2.yaml"
TINY_SITE = REPO / "site-configs" / "tiny.yaml"
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"


def _writable(folder: Path) -> bool:
    probe = folder / "probe"
    try:
        probe.touch()
    except OSError:
        return False
    probe.unlink()
    return True


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder this process cannot write: mode 555, or immutable for root (who ignores
    mode bits); skipped when neither can be had."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = False
    if _writable(folder) and shutil.which("chattr"):
        immutable = (
            subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        )
    if _writable(folder):
        folder.chmod(0o755)
        pytest.skip("no way to make a folder read-only for this user")
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def _unwritable_places(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    return {
        "a file": (a_file, "exists and is not a directory"),
        "a path through a file": (a_file / "sub", "a-file is a file, not a directory"),
        "/proc": (Path("/proc/queuesim-out"), "cannot write in /proc"),
    }


@pytest.mark.parametrize("place", ["a file", "a path through a file", "/proc"])
def test_unwritable_out_folder_is_refused_with_what_is_wrong(tmp_path: Path, place: str) -> None:
    """check_writable_dir names the option, the folder and what is wrong with it."""
    if place == "/proc" and not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    target, expected = _unwritable_places(tmp_path)[place]
    with pytest.raises(OutputError, match=f"--out {target}: .*{expected}"):
        check_writable_dir(target)


def test_read_only_out_folder_is_refused(read_only_folder: Path) -> None:
    """A folder that cannot be written is found by trying, not by mode bits."""
    with pytest.raises(OutputError, match=f"cannot write in {read_only_folder}"):
        check_writable_dir(read_only_folder / "out")
    with pytest.raises(OutputError, match="cannot write in"):
        check_writable_file(read_only_folder / "x.json", "--json")


def test_writable_out_folder_is_accepted_and_left_as_it_was(tmp_path: Path) -> None:
    """The check creates nothing: a missing folder stays missing, an existing one empty."""
    check_writable_dir(tmp_path / "new" / "deeper")
    check_writable_file(tmp_path / "new" / "file.json", "--json")
    assert list(tmp_path.iterdir()) == []


def test_output_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a directory; give a file name inside it"):
        check_writable_file(tmp_path, "--json")


@pytest.mark.parametrize(
    "command",
    [
        ["run", str(KTH_SITE), str(KTH_SAMPLE), "--quiet", "--out", "{out}"],
        [
            "compare",
            str(KTH_SITE),
            str(TINY_SITE),
            "--workload",
            str(KTH_SAMPLE),
            "--quiet",
            "--out",
            "{out}",
        ],
        ["heatmap", "{missing}", "--out", "{out}"],
        ["convert", str(KTH_SAMPLE), "{out}.swf"],
        ["generate", "lublin", "--nodes", "4", "--jobs", "10", "--seed", "1", "--out", "{out}.swf"],
    ],
    ids=["run", "compare", "heatmap", "convert", "generate"],
)
def test_every_command_refuses_an_unwritable_out_before_working(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command with an output checks it first: a one-line error, exit 2, no
    traceback, and no simulation (the heatmap's missing input is not even read)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    out = str(a_file / "sub")
    words = [w.format(out=out, missing=tmp_path / "missing") for w in command]
    assert main(words) == 2
    err = capsys.readouterr().err
    assert "a-file is a file, not a directory" in err
    assert "Traceback" not in err and "simulating" not in err


# --- kill -9 during the write phase ----------------------------------------------------------

_KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import queuesim.common.atomic as atomic
    from queuesim.results.output import write_run
    from queuesim.studies.simulate import metrics_of, simulate

    site, trace, out, kill_at = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    result = simulate(site, trace, policy="fcfs")
    real_replace, calls = os.replace, []

    def replace_or_die(src, dst):
        calls.append(dst)
        if len(calls) == kill_at:  # the temporary is written, not yet renamed
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)

    atomic.os.replace = replace_or_die
    write_run(out, result, metrics_of(result), jobs_format="csv")
    """
)


def _killed_write(out: Path, kill_at: int) -> int:
    env = {**os.environ, "PYTHONPATH": str(QUEUESIM_ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _KILLED_WRITER,
            str(KTH_SITE),
            str(KTH_SAMPLE),
            str(out),
            str(kill_at),
        ],
        env=env,
        cwd=out.parent,
        capture_output=True,
        timeout=300,
    )
    return done.returncode


@pytest.mark.parametrize("kill_at", [1, 6], ids=["first-file", "metrics-json"])
def test_run_folder_killed_mid_write_is_refused_then_repaired_by_the_next_run(
    tmp_path: Path, kill_at: int
) -> None:
    """kill -9 while a file's temporary is written (the first file, or metrics.json, the
    last): readers refuse the folder as incomplete, and the next run clears the
    temporaries and leaves a complete folder. The folder held a complete earlier run,
    whose marker the killed run had removed first."""
    out = tmp_path / "run"
    assert _killed_write(out, kill_at=0) == 0  # a complete earlier run
    read_run_dir(out)
    assert _killed_write(out, kill_at) == -9
    assert stale_temporaries(out), "the killed writer left its temporary"
    assert not (out / "metrics.json").exists()
    with pytest.raises(QueuesimError, match=r"incomplete run folder.*written last"):
        read_run_dir(out)
    assert main(["heatmap", str(out)]) == 2
    assert _killed_write(out, kill_at=0) == 0
    assert stale_temporaries(out) == []
    assert read_run_dir(out).jobs.shape[0] > 0
