"""queuesim works from any directory, in a checkout and installed: the bundled site files and
sample workloads are found by name, and the README's Python examples run wherever they are
started (issue 13, item 5). `.ci/run` repeats the examples after a non-editable install."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from queuesim.cli import main
from queuesim.common import bundled
from queuesim.common.errors import ConfigError, WorkloadError
from queuesim.site.loading import load_site
from queuesim.traces.registry import read_trace

REPO = Path(__file__).resolve().parents[1]


def readme_python(repo: Path) -> str:
    """The README's Python examples, as one script (they build on one another)."""
    blocks = re.findall(r"^```python\n(.*?)\n```", (repo / "README.md").read_text(), re.S | re.M)
    assert blocks, "the README has Python examples"
    return "\n".join(blocks)


def test_the_package_links_are_the_repository_folders() -> None:
    """queuesim/policies, queuesim/bundled/* are links to the top-level folders, so a checkout
    imports and finds data exactly as an installed copy does."""
    assert (REPO / "queuesim" / "policies").resolve() == (REPO / "policies").resolve()
    bundled_dir = REPO / "queuesim" / "bundled"
    assert (bundled_dir / "site-configs").resolve() == (REPO / "site-configs").resolve()
    assert (bundled_dir / "workloads").resolve() == (REPO / "workloads").resolve()


def test_every_shipped_site_file_and_workload_is_bundled() -> None:
    """What the repository ships is what the package finds by name (installed or not)."""
    shipped_sites = sorted(p.name for p in (REPO / "site-configs").glob("*.yaml"))
    assert bundled.bundled_names(bundled.site_configs_folder(), (".yaml",)) == shipped_sites
    shipped_loads = sorted(p.name for p in (REPO / "workloads").iterdir() if p.is_file())
    assert bundled.bundled_names(bundled.workloads_folder(), ("",)) == shipped_loads


@pytest.mark.parametrize("name", ["kth-sp2", "kth-sp2.yaml"])
def test_a_bundled_site_is_found_by_name_from_any_directory(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    site = load_site(name)
    assert site == load_site(REPO / "site-configs" / "kth-sp2.yaml")


def test_a_bundled_site_that_takes_its_clusters_from_another_file_loads_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """clusters_from is relative to the site file, also when the site file is bundled."""
    monkeypatch.chdir(tmp_path)
    site = load_site("metacentrum-historic", clusters="cerit-wagap-clusters")
    by_path = load_site(
        REPO / "site-configs" / "metacentrum-historic.yaml",
        clusters=REPO / "site-configs" / "clusters" / "cerit-wagap-clusters.yaml",
    )
    assert site == by_path


def test_an_existing_file_wins_over_a_bundled_one_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = (REPO / "site-configs" / "tiny.yaml").read_text().replace("name: tiny", "name: mine")
    assert "name: mine" in own
    (tmp_path / "kth-sp2").write_text(own)
    monkeypatch.chdir(tmp_path)
    assert load_site("kth-sp2").name == "mine"


def test_a_path_written_from_the_repositorys_root_is_found_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's commands name site-configs/... and workloads/...: they work anywhere."""
    monkeypatch.chdir(tmp_path)
    assert load_site("site-configs/kth-sp2.yaml") == load_site(
        REPO / "site-configs" / "kth-sp2.yaml"
    )
    by_path = load_site(
        "site-configs/metacentrum-historic.yaml",
        clusters="site-configs/clusters/cerit-wagap-clusters.yaml",
    )
    assert by_path == load_site("metacentrum-historic", clusters="cerit-wagap-clusters")
    assert len(read_trace("workloads/kth-sp2-sample.swf").jobs) == 2000


def test_any_other_missing_path_is_an_error_not_a_guess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^configs/kth-sp2.yaml: no such site file$"):
        load_site("configs/kth-sp2.yaml")
    with pytest.raises(ConfigError, match=r"^site-configs/kth-sp3.yaml: no such site file$"):
        load_site("site-configs/kth-sp3.yaml")
    with pytest.raises(WorkloadError, match="no such workload file"):
        read_trace("traces/kth-sp2-sample.swf")


def test_an_unknown_name_lists_the_bundled_sites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_site("kth-sp3")
    message = str(info.value)
    assert message.startswith("kth-sp3: no such site file (nor a bundled one: ")
    assert "kth-sp2, " in message and "metacentrum-historic" in message


def test_a_bundled_workload_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    by_name = read_trace("kth-sp2-sample.swf")
    assert by_name.jobs.equals(read_trace(REPO / "workloads" / "kth-sp2-sample.swf").jobs)
    assert read_trace("kth-sp2-sample").jobs.equals(by_name.jobs)


def test_the_main_command_runs_by_names_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "kth-sp2", "kth-sp2-sample.swf", "--out", "out"]) == 0
    capsys.readouterr()
    assert main(["run", str(REPO / "site-configs" / "kth-sp2.yaml"),
                 str(REPO / "workloads" / "kth-sp2-sample.swf"), "--out", "ref"]) == 0  # fmt: skip
    for name in ("jobs.parquet", "metrics.json", "schedule.swf"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()


def test_bench_finds_its_site_files_without_site_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From any directory, bench's only missing input is the real traces, and it says so."""
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--trace", "KTH-SP2", "--workloads", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}/KTH-SP2-1996-2.1-cln.swf.gz: trace not found (use --workloads DIR)" in err
    assert "site-configs" not in err


@pytest.mark.parametrize("where", ["repository root", "another directory"])
def test_the_readme_python_examples_run(where: str, tmp_path: Path) -> None:
    """From the root, `python -` puts the source folder first on sys.path: it must import as
    the installed package does (queuesim.policies included)."""
    cwd = REPO if where == "repository root" else tmp_path
    proc = subprocess.run(
        [sys.executable, "-"],
        input=readme_python(REPO),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_studies_default_to_the_bundled_site_files() -> None:
    """The studies' Python API finds its site files wherever it runs, as their commands do."""
    from queuesim.studies.dfrs import StudyConfig
    from queuesim.studies.dpsa import StudyOptions

    assert StudyConfig().site_configs == bundled.site_configs_folder()
    assert StudyOptions().site_configs == bundled.site_configs_folder()
    assert (bundled.site_configs_folder() / "dfrs-lublin-128.yaml").is_file()
