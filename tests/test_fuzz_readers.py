"""Fuzzing every reader (issue 20): SWF, Alea's SWF, PBS accounting, Slurm sacct and
jobcomp, site YAML, Slurm and PBS configurations for import, the command line. Whatever
the bytes, a reader gives a result or a queuesim error naming the file and a line or key;
never a traceback. Budget: ``QUEUESIM_FUZZ_EXAMPLES`` (see tests/fuzzing.py).

No ``sweep`` command exists yet: when it does, its spec files join ``SITE_LIKE`` below
(a YAML reader) and its arguments ``CLI_WORDS``.
"""

from __future__ import annotations

import gzip
import shutil
from functools import partial
from pathlib import Path

import pytest
from fuzzing import FUZZ, SEEDS, any_bytes, check_reader, mutated, scratch
from hypothesis import given
from hypothesis import strategies as st

from queuesim.cli import main
from queuesim.cli.validate import scheduler_problems
from queuesim.core.workload import CleaningOptions, load_workload
from queuesim.site.loading import load_site, site_problems
from queuesim.site.pbs_import import import_pbs, pbs_files
from queuesim.site.slurm_import import import_slurm
from queuesim.traces.registry import read_trace

REPO = Path(__file__).resolve().parents[1]
TINY = load_site(REPO / "site-configs" / "tiny.yaml")
TRACES = {
    "swf": "trace.swf",
    "alea-swf": "alea.swf",
    "pbs": "pbs.log",
    "sacct": "sacct.txt",
    "slurm-jobcomp": "jobcomp.log",
}


def _read_all_ways(path: Path, format: str) -> None:
    """Sniffed and named, strict and skipping bad lines, then prepared for a site."""
    for fmt in (None, format):
        for skip in (False, True):
            check_reader(partial(read_trace, path, format=fmt, skip_bad_lines=skip), [path])
    options = CleaningOptions(skip_bad_lines=True, trace_format=format)
    check_reader(lambda: load_workload(path, TINY, options), [path])


@pytest.mark.parametrize("format", TRACES)
@FUZZ
@given(data=st.data())
def test_mutated_trace_gives_a_result_or_an_error_naming_file_and_line(
    format: str, data: st.DataObject
) -> None:
    """Each trace format, its seed file mutated: no traceback, every error located."""
    seed = (SEEDS / TRACES[format]).read_bytes()
    content = data.draw(mutated(seed))
    with scratch() as folder:
        path = folder / TRACES[format]
        path.write_bytes(content)
        _read_all_ways(path, format)


@FUZZ
@given(content=any_bytes(), gz=st.booleans())
def test_arbitrary_bytes_as_a_trace_give_a_result_or_a_located_error(
    content: bytes, gz: bool
) -> None:
    with scratch() as folder:
        path = folder / ("t.log.gz" if gz else "t.log")
        path.write_bytes(gzip.compress(content) if gz else content)
        for format in (None, *TRACES):
            check_reader(partial(read_trace, path, format=format), [path])


SITE_LIKE = ["tiny.yaml", "metacentrum-historic.yaml", "cerit-wagap.yaml"]


@pytest.mark.parametrize("name", SITE_LIKE)
@FUZZ
@given(data=st.data())
def test_mutated_site_file_gives_a_site_or_errors_naming_file_and_key(
    name: str, data: st.DataObject
) -> None:
    """Site files, as `run` loads them and as `validate` checks every layer."""
    source = REPO / "site-configs" / name
    content = data.draw(mutated(source.read_bytes()))
    with scratch() as folder:
        shutil.copytree(REPO / "site-configs" / "clusters", folder / "clusters")
        path = folder / name
        path.write_bytes(content)
        check_reader(lambda: load_site(path), [path])

        def every_layer() -> None:
            _, document, problems = site_problems(path)
            assert all(isinstance(p, str) and p for p in problems)
            scheduler_problems(document)

        check_reader(every_layer, [path])


SLURM_FILES = [
    "slurm.conf",
    "partitions.conf",
    "gres.conf",
    "topology.conf",
    "assoc.txt",
    "qos.txt",
]


@pytest.mark.parametrize("name", SLURM_FILES)
@FUZZ
@given(data=st.data())
def test_mutated_slurm_configuration_imports_or_errors_naming_file_and_line(
    name: str, data: st.DataObject
) -> None:
    source = REPO / "tests" / "configs" / "slurm"
    content = data.draw(mutated((source / name).read_bytes()))
    with scratch() as folder:
        conf = folder / "slurm"
        shutil.copytree(source, conf)
        (conf / name).write_bytes(content)
        check_reader(
            lambda: import_slurm(conf, assoc=conf / "assoc.txt", qos=conf / "qos.txt"),
            [conf / name, conf / "slurm.conf"],
        )


PBS_FILES = ["qmgr.txt", "pbsnodes.txt", "sched_priv/sched_config", "sched_priv/resource_group"]


@pytest.mark.parametrize("name", PBS_FILES)
@FUZZ
@given(data=st.data())
def test_mutated_pbs_configuration_imports_or_errors_naming_file_and_line(
    name: str, data: st.DataObject
) -> None:
    source = REPO / "tests" / "configs" / "pbs"
    content = data.draw(mutated((source / name).read_bytes()))
    with scratch() as folder:
        home = folder / "pbs"
        shutil.copytree(source, home)
        (home / name).write_bytes(content)
        files = dict(qmgr=str(home / "qmgr.txt"), nodes=str(home / "pbsnodes.txt"))
        check_reader(lambda: import_pbs(pbs_files(home, **files)), [home / name])


#: words a command line is made of: commands, options, and values good and bad
CLI_WORDS = [
    "run",
    "validate",
    "heatmap",
    "convert",
    "policies",
    "inspect",
    "--policy",
    "--param",
    "--tau",
    "--top",
    "--format",
    "--jobs-format",
    "--clusters",
    "--bin",
    "--out",
    "--quiet",
    "--skip-bad-lines",
    "easy",
    "nope",
    "fcfs",
    "depth=x",
    "k=v",
    "=",
    "-1",
    "nan",
    "1e999",
    "0",
    "3",
    "csv",
    "xlsx",
    "day",
    "0s",
    "-5h",
    "swf",
    "pbs",
    "tiny",
    "kth-sp2-sample.swf",
    "/proc/x",
    "",
    "\x00",
    "é",
    "--",
    "-",
    "--help-me",
]


@FUZZ
@given(words=st.lists(st.sampled_from(CLI_WORDS), min_size=1, max_size=8))
def test_any_command_line_ends_in_a_message_not_a_traceback(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's usage errors exit 2; queuesim's own errors print one message and return
    2; nothing raises. Commands that simulate get the 2,000-job sample at most."""
    try:
        code = main(words)
    except SystemExit as exc:  # argparse: usage error or --help
        assert exc.code in (0, 2)
        return
    finally:
        err = capsys.readouterr().err
        assert "Traceback" not in err
    assert code in (0, 2), err


def test_host_lists_and_job_arrays_too_large_for_any_machine_are_refused_unexpanded() -> None:
    """Found by this fuzzing: `n[1-100000000]` in slurm.conf took 10 GB before failing.
    Host lists over a million names and job arrays over Slurm's 4,000,001 are refused."""
    from queuesim.common.errors import ConfigError
    from queuesim.site.import_report import Where
    from queuesim.site.slurm_conf import expand_hostlist
    from queuesim.traces.slurm_values import _array_indices
    from queuesim.traces.slurm_values import expand_hostlist as trace_hosts

    with pytest.raises(ConfigError, match=r"slurm.conf:3: host list 'n.1-100000000.' names more"):
        expand_hostlist("n[1-100000000]", Where("slurm.conf", 3))
    with pytest.raises(ConfigError, match="more than 1,000,000 nodes"):
        expand_hostlist("a[1-2000]b[1-2000]", Where("slurm.conf", 3))
    for bomb in ("n[1-100000000]", "a[1-2000]b[1-2000]"):
        with pytest.raises(ValueError, match="more than 1,000,000 hosts"):
            trace_hosts(bomb)
    with pytest.raises(ValueError, match="more than 4,000,001"):
        _array_indices("[1-100000000]")
    assert len(expand_hostlist("n[001-999]", "f:1")) == 999  # type: ignore[arg-type]
