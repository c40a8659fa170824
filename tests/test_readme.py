"""The README's two opening commands are the project's contract with a new user and CI."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path


def bash_blocks(readme: Path) -> list[str]:
    return re.findall(r"^```bash\n(.*?)\n```", readme.read_text(), flags=re.S | re.M)


def test_readme_opens_with_an_install_and_run_command_whose_files_are_shipped(repo: Path) -> None:
    first = bash_blocks(repo / "README.md")[0]
    assert "pip install ." in first
    run = shlex.split(first.split("&&")[-1])
    assert run[:2] == ["queuesim", "run"]
    site, workload = run[2], run[3]
    assert (repo / site).is_file() and site.startswith("site-configs/")
    assert (repo / workload).is_file() and workload.startswith("workloads/")


def test_ci_runs_exactly_the_readme_test_command(repo: Path) -> None:
    second = bash_blocks(repo / "README.md")[1]
    # the whole suite, a worker per core: CI must stay within ten minutes on two cores
    assert "pip install '.[test]'" in second and second.endswith("pytest -n auto")
    script = (repo / ".ci" / "run").read_text()
    extract = re.search(r'cmd="\$\((awk .*?)\)"', script)
    assert extract is not None
    awk = extract.group(1).replace('"$repo/README.md"', str(repo / "README.md"))
    found = subprocess.run(["bash", "-c", awk], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == second


CONFLICT_MARKER = re.compile(r"^(<{7}|>{7}) |^={7}$", flags=re.M)


def test_no_tracked_text_file_keeps_a_merge_conflict_marker(repo: Path) -> None:
    # A resolved merge once left README's Speed section with both sides and the markers.
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=False)
    if listed.returncode == 0:
        names = [n for n in listed.stdout.decode().split("\0") if n]
    else:  # not a git checkout (an unpacked sdist): the project's own folders
        names = [
            str(p.relative_to(repo))
            for top in ("queuesim", "tests", "site-configs", ".ci")
            for p in (repo / top).rglob("*")
            if p.is_file()
        ] + ["README.md", "ARCHITECTURE.md", "pyproject.toml"]
    marked = []
    for name in names:
        path = repo / name
        if path.suffix not in {".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt", ""}:
            continue
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if CONFLICT_MARKER.search(text):
            marked.append(name)
    assert marked == []
