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
