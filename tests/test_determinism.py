"""The same run gives the same bytes whatever Python's hash seed (issue 20): set and dict
orders that depend on string hashes must never reach an output. Each run is a separate
interpreter, as a user's two runs would be."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import QUEUESIM_ROOT

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
MAIN = "import sys; from queuesim.cli import main; sys.exit(main(sys.argv[1:]))"


def _run(out: Path, seed: str, site: str, policy: list[str]) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(QUEUESIM_ROOT)}
    site_file = str(REPO / "site-configs" / site)
    command = [sys.executable, "-c", MAIN, "run", site_file, str(SAMPLE), *policy, "--quiet",
               "--jobs-format", "csv", "--out", str(out)]  # fmt: skip
    done = subprocess.run(
        command, env=env, cwd=out.parent, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("site", "policy"),
    [("kth-sp2.yaml", ["--policy", "conservative"]), ("metacentrum-historic.yaml", [])],
    ids=["kth-conservative", "metacentrum-historic-fairshare"],
)
def test_outputs_are_byte_identical_under_different_hash_seeds(
    tmp_path: Path, site: str, policy: list[str]
) -> None:
    """Seeds 0 and 4242; the MetaCentrum setup adds fairshare over named users and queues,
    where a hash-ordered set would show first."""
    for seed in ("0", "4242"):
        _run(tmp_path / seed, seed, site, policy)
    names = sorted(p.name for p in (tmp_path / "0").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "4242").iterdir())
    assert "metrics.json" in names and "jobs.csv" in names
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "0", tmp_path / "4242", names, shallow=False)
    assert (mismatch, errors) == ([], [])
