"""The site model: the shipped site files, and the problems a site file can have.

The shipped files must load and must match the traces they model (total CPUs = the trace's
MaxProcs; every trace queue mapped). Problems in a file must be reported with the key path and
what was expected, all at once, so that an admin can fix a file in one go.
"""

from __future__ import annotations

import copy
import functools
import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
import pytest

from queuesim.common.errors import ConfigError
from queuesim.site.enums import EstimateSource, MemoryModel, Routing
from queuesim.site.loading import load_site, site_errors
from queuesim.site.model import Site

REPO = Path(__file__).resolve().parents[1]
SITE_DIR = REPO / "site-configs"
SITE_FILES = sorted(SITE_DIR.glob("*.yaml"))
KTH_SAMPLE = REPO / "workloads" / "kth-sp2-sample.swf"
SAMPLE_FIRST_LINE = (
    "; queuesim: first 2000 jobs of KTH-SP2-1996-2.1-cln.swf (Parallel Workloads Archive), "
    "cut for a quick demo"
)

# site file -> the real trace (in ../shared/workloads) whose machine it models
TRACE_OF = {
    "hpc2n.yaml": "HPC2N-2002-2.2-cln.swf.gz",
    "sdsc-sp2.yaml": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "sdsc-blue.yaml": "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "kth-sp2.yaml": "KTH-SP2-1996-2.1-cln.swf.gz",
    "ctc-sp2.yaml": "CTC-SP2-1996-3.1-cln.swf.gz",
    "llnl-thunder.yaml": "LLNL-Thunder-2007-1.1-cln.swf.gz",
    "llnl-atlas.yaml": "LLNL-Atlas-2006-2.1-cln.swf.gz",
    "sdsc-par96.yaml": "SDSC-Par-1996-3.1-cln.swf.gz",
}
# site files that model no machine but run a workload shipped in the repository
SAMPLE_OF = {"tiny.yaml": KTH_SAMPLE}
# site setups of paper 004 (queues, limits, fairshare: not faithful replays) and their traces
SETUP_OF = {
    "metacentrum-historic.yaml": "metacentrum/METACENTRUM-2009-2.swf.gz",
    "metacentrum-conservative.yaml": "metacentrum/METACENTRUM-2009-2.swf.gz",
    "metacentrum-complex.yaml": "metacentrum/METACENTRUM-2009-2.swf.gz",
    "cerit-wagap.yaml": "metacentrum/wagap-2013.swf.gz",
}
# the DFRS platforms of papers 000/002 and the trace each runs (None: generated traces)
DFRS_OF = {"dfrs-lublin-128.yaml": None, "dfrs-hpc2n.yaml": "HPC2N-2002-2.2-cln.swf.gz"}
# the sites whose traces hold several queues in field 15, routed by it
TRACE_ROUTED = ("sdsc-sp2.yaml", "sdsc-blue.yaml", "ctc-sp2.yaml", "sdsc-par96.yaml")


# --- helpers --------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[str]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="ascii") as f:
            yield from f
    else:
        with path.open(encoding="ascii") as f:
            yield from f


@functools.cache
def trace_header(path: Path) -> tuple[str, ...]:
    """The leading comment lines of an SWF file."""
    header = []
    for line in _lines(path):
        if not line.startswith(";"):
            break
        header.append(line.rstrip("\n"))
    return tuple(header)


def header_int(path: Path, key: str) -> int:
    for line in trace_header(path):
        match = re.match(rf";\s*{key}:\s*(\d+)", line)
        if match:
            return int(match.group(1))
    raise AssertionError(f"{path.name}: no '; {key}:' line in the header")


def header_queues(path: Path) -> dict[str, str]:
    """Queue number -> name, from the header's '; Queue: N name' lines."""
    queues = {}
    for line in trace_header(path):
        match = re.match(r";\s*Queue:\s*(\d+)\s+(\S+)", line)
        if match:
            queues[match.group(1)] = match.group(2)
    return queues


@functools.cache
def job_fields(path: Path) -> tuple[frozenset[str], int]:
    """The distinct values of field 15 (queue) and the most processors any job uses."""
    queues: set[str] = set()
    largest = 0
    for line in _lines(path):
        if line.startswith(";") or not line.strip():
            continue
        fields = line.split()
        queues.add(fields[14])
        largest = max(largest, int(fields[4]), int(fields[7]))
    return frozenset(queues), largest


def mapped_trace_queues(site: Site) -> dict[str, str]:
    return {str(t): q.name for q in site.queues for t in q.trace_queues}


def site_named(name: str) -> Site:
    return load_site(SITE_DIR / name)


VALID: dict[str, Any] = {
    "name": "test",
    "clusters": [
        {"name": "small", "nodes": 8, "cpus_per_node": 4, "memory_per_node": "16GB"},
        {"name": "big", "nodes": 2, "cpus_per_node": 16},
    ],
    "queues": [{"name": "short", "max_walltime": "2h"}, {"name": "long"}],
}


def valid() -> dict[str, Any]:
    return copy.deepcopy(VALID)


def only_problem(doc: dict[str, Any]) -> str:
    problems = site_errors(doc)
    assert len(problems) == 1, problems
    return problems[0]


def write_site(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load_problem(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_site(path)
    return str(info.value)


# --- the shipped site files -----------------------------------------------------------------


def test_site_configs_folder_ships_site_files() -> None:
    assert SITE_FILES, f"no *.yaml in {SITE_DIR}"


@pytest.mark.parametrize("path", SITE_FILES, ids=lambda p: p.name)
def test_every_shipped_site_file_loads(path: Path) -> None:
    site = load_site(path)
    assert site.total_cpus > 0


@pytest.mark.parametrize("path", SITE_FILES, ids=lambda p: p.name)
def test_every_shipped_site_file_says_what_it_models(path: Path) -> None:
    listed = (TRACE_OF, SAMPLE_OF, SETUP_OF, DFRS_OF)
    assert any(path.name in names for names in listed), (
        f"{path.name}: add it to TRACE_OF (the trace it models), SETUP_OF, DFRS_OF or "
        "SAMPLE_OF here"
    )
    assert path.read_text(encoding="utf-8").startswith("#"), "begins with a comment block"


def test_every_listed_site_file_is_shipped() -> None:
    shipped = {p.name for p in SITE_FILES}
    assert set(TRACE_OF) | set(SAMPLE_OF) | set(SETUP_OF) | set(DFRS_OF) <= shipped


@pytest.mark.realtrace
def test_dfrs_hpc2n_annotates_the_real_trace_by_paper_000s_rule(real_workloads: Path) -> None:
    # the site's 'dfrs: annotation: hpc2n' turns every job into tasks as the papers do, and
    # the batch view (tasks x cpu need x 2 cores) is the trace's own processor count
    from queuesim.core.workload import load_workload

    workload = load_workload(
        real_workloads / DFRS_OF["dfrs-hpc2n.yaml"], site_named("dfrs-hpc2n.yaml")
    )
    jobs = workload.jobs
    assert workload.annotated
    np.testing.assert_array_equal(jobs["tasks"] * jobs["cpu_need"] * 2, jobs["cpus"])
    assert jobs["mem_fraction"].between(0.1, 1.0).all()


@pytest.mark.realtrace
@pytest.mark.parametrize("name", sorted(SETUP_OF))
def test_setup_runs_all_but_a_few_jobs_of_its_trace(name: str, real_workloads: Path) -> None:
    # the few rejected: METACENTRUM-2009 jobs that ran a little over 30 days; a wagap job
    # asking for more memory than a node has
    from queuesim.core.workload import CleaningOptions, load_workload

    workload = load_workload(
        real_workloads / SETUP_OF[name],
        site_named(name),
        CleaningOptions(reject_unrunnable=True),
    )
    assert workload.cleaning.rejected <= 60
    assert len(workload.jobs) > 17_000


@pytest.mark.parametrize("name", sorted(TRACE_OF))
def test_real_trace_site_replays_faithfully(name: str) -> None:
    site = site_named(name)
    assert site.estimate is EstimateSource.REQUESTED
    assert site.memory is MemoryModel.IGNORE
    assert site.kill_at_walltime is False
    assert site.scheduler.policy == "easy"


@pytest.mark.parametrize("name", sorted(TRACE_OF))
def test_only_sites_of_multi_queue_traces_route_by_trace_queue(name: str) -> None:
    site = site_named(name)
    if name in TRACE_ROUTED:
        assert site.routing is Routing.TRACE
        assert all(q.trace_queues for q in site.queues)
    else:
        assert site.routing is Routing.WALLTIME
        assert len(site.queues) == 1
        assert not site.queues[0].trace_queues


@pytest.mark.realtrace
@pytest.mark.parametrize("name", sorted(TRACE_OF))
def test_site_cpus_equal_the_max_procs_of_its_trace(name: str, real_workloads: Path) -> None:
    trace = real_workloads / TRACE_OF[name]
    assert site_named(name).total_cpus == header_int(trace, "MaxProcs")


@pytest.mark.realtrace
@pytest.mark.parametrize("name", sorted(TRACE_OF))
def test_every_job_of_the_trace_fits_its_site(name: str, real_workloads: Path) -> None:
    _, largest = job_fields(real_workloads / TRACE_OF[name])
    assert largest <= site_named(name).total_cpus


@pytest.mark.realtrace
@pytest.mark.parametrize("name", TRACE_ROUTED)
def test_every_queue_in_the_trace_is_mapped_by_its_site(name: str, real_workloads: Path) -> None:
    queues_in_trace, _ = job_fields(real_workloads / TRACE_OF[name])
    unmapped = queues_in_trace - set(mapped_trace_queues(site_named(name)))
    assert not unmapped, f"{name}: trace queues {sorted(unmapped)} are not in any trace_queues"


@pytest.mark.realtrace
@pytest.mark.parametrize("name", TRACE_ROUTED)
def test_site_has_one_queue_per_header_queue_named_as_in_the_header(
    name: str, real_workloads: Path
) -> None:
    listed = header_queues(real_workloads / TRACE_OF[name])
    assert listed, "the header lists the trace's queues"
    assert mapped_trace_queues(site_named(name)) == listed


@pytest.mark.realtrace
@pytest.mark.parametrize("name", sorted(set(TRACE_OF) - set(TRACE_ROUTED)))
def test_single_queue_site_models_a_trace_with_one_queue_value(
    name: str, real_workloads: Path
) -> None:
    queues_in_trace, _ = job_fields(real_workloads / TRACE_OF[name])
    assert len(queues_in_trace) == 1, sorted(queues_in_trace)


def test_kth_site_cpus_equal_the_max_procs_of_the_shipped_sample() -> None:
    assert site_named("kth-sp2.yaml").total_cpus == header_int(KTH_SAMPLE, "MaxProcs") == 100


def test_shipped_sample_is_2000_whole_swf_jobs_after_a_note_and_the_header() -> None:
    lines = list(_lines(KTH_SAMPLE))
    assert lines[0].rstrip("\n") == SAMPLE_FIRST_LINE
    jobs = [line for line in lines if not line.startswith(";")]
    assert len(jobs) == 2000
    assert all(len(line.split()) == 18 for line in jobs)
    assert all(line.startswith(";") for line in lines[: len(lines) - len(jobs)])
    assert any(line.startswith("; Acknowledge: Lars Malinowsky") for line in lines)


@pytest.mark.realtrace
def test_shipped_sample_is_the_start_of_the_kth_trace(real_workloads: Path) -> None:
    sample = list(_lines(KTH_SAMPLE))[1:]
    with gzip.open(real_workloads / "KTH-SP2-1996-2.1-cln.swf.gz", "rt", encoding="ascii") as f:
        start = [next(f) for _ in sample]
    assert sample == start


@pytest.mark.parametrize(("name", "sample"), sorted(SAMPLE_OF.items()))
def test_demo_site_runs_every_job_of_its_sample(name: str, sample: Path) -> None:
    site = site_named(name)
    _, largest = job_fields(sample)
    # on one cluster alone, so it does not depend on whether a job may span clusters
    assert largest <= max(c.cpus for c in site.clusters)
    assert site.total_cpus >= header_int(sample, "MaxProcs")


# --- what a valid file means ----------------------------------------------------------------


def test_valid_site_has_no_problems() -> None:
    assert site_errors(valid()) == []


def test_human_units_in_a_site_file_become_seconds_and_bytes(tmp_path: Path) -> None:
    path = write_site(
        tmp_path,
        "name: units\n"
        "clusters: [{name: a, nodes: 2, cpus_per_node: 8, memory_per_node: 4GB}]\n"
        "queues: [{name: q, max_walltime: 1d12h, default_walltime: '1:30:00'}]\n",
    )
    site = load_site(path)
    assert site.clusters[0].memory_per_node == 4 * 2**30
    assert site.queues[0].max_walltime == 36 * 3600
    assert site.queues[0].default_walltime == 90 * 60
    assert site.total_cpus == 16


def test_omitted_keys_take_their_documented_defaults() -> None:
    site = Site.model_validate(
        {"name": "d", "clusters": [{"name": "a", "nodes": 1, "cpus_per_node": 1}]}
    )
    assert [q.name for q in site.queues] == ["default"]
    assert site.queues[0].max_walltime is None
    assert site.routing is Routing.WALLTIME
    assert site.estimate is EstimateSource.REQUESTED
    assert site.kill_at_walltime is True
    assert site.memory is MemoryModel.IGNORE
    assert site.scheduler.policy == "easy"


def test_loaded_site_cannot_be_changed() -> None:
    site = Site.model_validate(valid())
    with pytest.raises(pydantic.ValidationError):
        site.name = "other"


# --- problems, each reported with its key path and what was expected ------------------------


def test_unknown_top_level_key_is_reported_at_its_name() -> None:
    doc = valid()
    doc["schedular"] = {"policy": "easy"}
    assert only_problem(doc).startswith("schedular: unknown key")


def test_unknown_nested_key_is_reported_at_its_path() -> None:
    doc = valid()
    doc["queues"][1]["max_wall"] = "2d"
    assert only_problem(doc).startswith("queues[1].max_wall: unknown key")


def test_misspelt_required_key_is_reported_as_unknown_and_missing() -> None:
    doc = valid()
    doc["clusters"][1]["cpu_per_node"] = doc["clusters"][1].pop("cpus_per_node")
    problems = site_errors(doc)
    assert sorted(problems) == [
        "clusters[1].cpu_per_node: unknown key (check the spelling; see the documented keys "
        "in site-configs/)",
        "clusters[1].cpus_per_node: required key is missing",
    ]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("nodes", "many", "clusters[0].nodes: Input should be a valid integer"),
        ("nodes", 2.5, "clusters[0].nodes: Input should be a valid integer"),
        ("cpus_per_node", [4], "clusters[0].cpus_per_node: Input should be a valid integer"),
        ("name", 7, "clusters[0].name: Input should be a valid string"),
    ],
)
def test_wrong_type_in_a_cluster_is_reported_with_the_expected_type(
    key: str, value: object, expected: str
) -> None:
    doc = valid()
    doc["clusters"][0][key] = value
    problem = only_problem(doc)
    assert problem.startswith(expected)
    if not isinstance(value, list):
        assert problem.endswith(f"(got {value!r})")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("kill_at_walltime", "sometimes", "kill_at_walltime: Input should be a valid boolean"),
        ("routing", "fastest", "routing: Input should be 'trace' or 'walltime'"),
        ("memory", "per-node", "memory: Input should be 'ignore' or 'per-cpu'"),
        ("estimate", "guess", "estimate: Input should be 'requested', 'exact' or 'queue-limit'"),
        ("queues", "short", "queues: Input should be a valid tuple"),
    ],
)
def test_wrong_type_at_the_top_level_is_reported_with_the_accepted_values(
    key: str, value: object, expected: str
) -> None:
    doc = valid()
    doc[key] = value
    problem = only_problem(doc)
    assert problem.startswith(expected)
    assert problem.endswith(f"(got {value!r})")


@pytest.mark.parametrize("nodes", [-1, 0])
def test_non_positive_node_count_is_reported(nodes: int) -> None:
    doc = valid()
    doc["clusters"][1]["nodes"] = nodes
    assert only_problem(doc) == f"clusters[1].nodes: Input should be greater than 0 (got {nodes})"


def test_negative_cpus_per_node_is_reported() -> None:
    doc = valid()
    doc["clusters"][0]["cpus_per_node"] = -4
    assert only_problem(doc) == "clusters[0].cpus_per_node: Input should be greater than 0 (got -4)"


@pytest.mark.parametrize("key", ["max_walltime", "default_walltime"])
@pytest.mark.parametrize("value", ["2 hours", "1h30", "-5m", "soon"])
def test_bad_duration_is_reported_with_the_accepted_forms(key: str, value: str) -> None:
    doc = valid()
    doc["queues"][1][key] = value
    assert only_problem(doc) == (
        f"queues[1].{key}: expected a duration such as '90m', '2h', '1d12h' or '30d', got {value!r}"
    )


def test_negative_number_of_seconds_is_reported() -> None:
    doc = valid()
    doc["queues"][1]["max_walltime"] = -60
    assert only_problem(doc) == "queues[1].max_walltime: a duration cannot be negative, got -60"


@pytest.mark.parametrize("value", ["64 gigs", "lots", "-1GB"])
def test_bad_size_is_reported_with_the_accepted_forms(value: str) -> None:
    doc = valid()
    doc["clusters"][1]["memory_per_node"] = value
    assert only_problem(doc) == (
        f"clusters[1].memory_per_node: expected a size such as '512MB' or '64GB', got {value!r}"
    )


def test_queue_naming_an_unknown_cluster_is_reported_with_the_known_ones() -> None:
    doc = valid()
    doc["queues"][1]["clusters"] = ["big", "gpu"]
    assert only_problem(doc) == (
        "queues[1].clusters: queue 'long' names cluster 'gpu', which does not exist "
        "(known: big, small)"
    )


def test_queue_naming_an_unknown_cluster_is_reported_even_beside_other_problems() -> None:
    doc = valid()
    doc["queues"][1]["clusters"] = ["gpu"]
    doc["queues"][1]["max_walltime"] = "soon"
    problems = site_errors(doc)
    assert len(problems) == 2
    assert problems[0].startswith("queues[1].max_walltime: expected a duration")
    assert problems[1].startswith("queues[1].clusters: queue 'long' names cluster 'gpu'")


def test_duplicate_cluster_name_is_reported() -> None:
    doc = valid()
    doc["clusters"][1]["name"] = "small"
    assert only_problem(doc) == "clusters: cluster name 'small' is used twice"


def test_duplicate_queue_name_is_reported() -> None:
    doc = valid()
    doc["queues"][1]["name"] = "short"
    assert only_problem(doc) == "queues: queue name 'short' is used twice"


def test_trace_queue_mapped_by_two_queues_is_reported_with_both() -> None:
    doc = valid()
    doc["routing"] = "trace"
    doc["queues"][0]["trace_queues"] = [1, 2]
    doc["queues"][1]["trace_queues"] = [3, 2]
    assert only_problem(doc) == (
        "queues[1].trace_queues: trace queue 2 is mapped to both 'short' and 'long'"
    )


def test_trace_queue_mapped_as_number_and_as_text_counts_as_the_same() -> None:
    doc = valid()
    doc["queues"][0]["trace_queues"] = [1]
    doc["queues"][1]["trace_queues"] = ["1"]
    assert only_problem(doc) == (
        "queues[1].trace_queues: trace queue '1' is mapped to both 'short' and 'long'"
    )


def test_queue_mapping_no_trace_queue_under_trace_routing_is_reported() -> None:
    doc = valid()
    doc["routing"] = "trace"
    doc["queues"][0]["trace_queues"] = [1]
    assert only_problem(doc) == (
        "queues[1].trace_queues: routing is 'trace' but no trace queue is mapped to queue "
        "'long' (list some here or in queue_map)"
    )


def test_empty_cluster_list_is_reported() -> None:
    doc = valid()
    doc["clusters"] = []
    problem = only_problem(doc)
    assert problem.startswith("clusters: ")
    assert "at least 1 item" in problem


def test_missing_cluster_list_is_reported() -> None:
    doc = valid()
    del doc["clusters"]
    assert only_problem(doc) == "clusters: required key is missing"


def test_empty_queue_list_is_reported() -> None:
    doc = valid()
    doc["queues"] = []
    problem = only_problem(doc)
    assert problem.startswith("queues: ")
    assert "at least 1 item" in problem


def test_default_walltime_above_max_walltime_is_reported_at_its_queue() -> None:
    doc = valid()
    doc["queues"][0]["default_walltime"] = "3h"
    assert only_problem(doc) == (
        "queues[0]: default_walltime (10800 s) is larger than max_walltime (7200 s)"
    )


def test_default_walltime_equal_to_max_walltime_is_allowed() -> None:
    doc = valid()
    doc["queues"][0]["default_walltime"] = "120m"
    assert site_errors(doc) == []


def test_per_cpu_memory_needs_the_memory_of_every_cluster() -> None:
    doc = valid()
    doc["memory"] = "per-cpu"
    assert only_problem(doc) == (
        "clusters[1].memory_per_node: required when memory is 'per-cpu' (cluster 'big' has none)"
    )


def test_empty_document_says_the_file_is_empty() -> None:
    assert site_errors(None) == [
        "(top level): the file is empty; a site needs at least 'name' and 'clusters'"
    ]


@pytest.mark.parametrize(("doc", "kind"), [([1, 2], "list"), ("x", "str")])
def test_document_that_is_not_a_mapping_is_reported(doc: object, kind: str) -> None:
    assert site_errors(doc) == [f"(top level): expected a mapping of keys, got {kind}"]


# --- problems of a whole file ---------------------------------------------------------------


def test_invalid_yaml_is_reported_with_its_line_and_column(tmp_path: Path) -> None:
    path = write_site(tmp_path, "name: x\nclusters:\n  - name: a\n    nodes: 2: 3\n")
    assert load_problem(path) == (
        f"{path}: not valid YAML at line 4, column 13: mapping values are not allowed here"
    )


def test_tab_indentation_is_reported_with_its_line(tmp_path: Path) -> None:
    path = write_site(tmp_path, "name: x\nclusters:\n\t- name: a\n")
    message = load_problem(path)
    assert message.startswith(f"{path}: not valid YAML at line 3, column 1:")
    assert "'\\t'" in message


def test_missing_site_file_is_reported_by_name(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    assert load_problem(path) == f"{path}: no such site file"


def test_directory_given_as_site_file_is_reported(tmp_path: Path) -> None:
    assert load_problem(tmp_path) == f"{tmp_path}: is a directory, not a site file"


def test_every_problem_of_a_file_is_reported_at_once_with_the_file_name(tmp_path: Path) -> None:
    path = write_site(
        tmp_path,
        "name: broken\n"
        "colour: blue\n"
        "clusters:\n"
        "  - {name: a, nodes: -1, cpus_per_node: 4, memory_per_node: lots}\n"
        "queues:\n"
        "  - {name: q, max_walltime: soon, clusters: [nope]}\n",
    )
    lines = load_problem(path).splitlines()
    assert lines[0] == f"{path}: 5 problems in the site file:"
    problems = sorted(line.removeprefix(f"  {path}: ") for line in lines[1:])
    assert len(problems) == 5
    assert all(line.startswith(f"  {path}: ") for line in lines[1:])
    assert (
        problems[0]
        == "clusters[0].memory_per_node: expected a size such as '512MB' or '64GB', got 'lots'"
    )
    assert problems[1] == "clusters[0].nodes: Input should be greater than 0 (got -1)"
    assert problems[2].startswith("colour: unknown key")
    assert problems[3] == (
        "queues[0].clusters: queue 'q' names cluster 'nope', which does not exist (known: a)"
    )
    assert problems[4] == (
        "queues[0].max_walltime: expected a duration such as '90m', '2h', '1d12h' or '30d', "
        "got 'soon'"
    )


def test_single_problem_of_a_file_is_counted_in_the_singular(tmp_path: Path) -> None:
    path = write_site(tmp_path, "name: x\n")
    assert load_problem(path) == (
        f"{path}: 1 problem in the site file:\n  {path}: clusters: required key is missing"
    )


# --- problems that once slipped through -------------------------------------------------------


def test_cross_checks_are_reported_beside_field_problems() -> None:
    doc = valid()
    doc["memory"] = "per-cpu"
    doc["queues"][1]["max_walltime"] = "soon"
    problems = site_errors(doc)
    assert any(p.startswith("clusters[1].memory_per_node: required") for p in problems)


def test_infinite_node_memory_is_a_reported_problem_not_a_crash() -> None:
    doc = valid()
    doc["clusters"][0]["memory_per_node"] = float("inf")  # YAML: memory_per_node: .inf
    assert only_problem(doc).startswith("clusters[0].memory_per_node:")


def test_nan_walltime_is_reported() -> None:
    doc = valid()
    doc["queues"][1]["max_walltime"] = float("nan")
    assert only_problem(doc).startswith("queues[1].max_walltime:")


def test_trace_queue_of_the_wrong_type_is_reported_once_at_its_path() -> None:
    doc = valid()
    doc["queues"][1]["trace_queues"] = [1.5]
    assert only_problem(doc).startswith("queues[1].trace_queues[0]: ")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("clusters", 0, "name"), ["a"]),
        (("clusters", 0, "name"), {"a": 1}),
        (("queues", 0, "clusters"), [["c"]]),
        (("queues", 0, "clusters"), [{"c": 1}]),
    ],
)
def test_a_list_or_mapping_where_a_name_belongs_is_reported_not_a_crash(
    path: tuple[Any, ...], value: object
) -> None:
    """Cross-key checks used names as dict keys; an unhashable name made validate crash
    with a TypeError instead of listing the problem at its key path."""
    doc: dict[str, Any] = {
        "name": "x",
        "clusters": [{"name": "c", "nodes": 2, "cpus_per_node": 4}],
        "queues": [{"name": "q", "clusters": ["c"], "cpu_pool": 4}],
    }
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    problems = site_errors(doc)
    where = ".".join(str(k) for k in path if isinstance(k, str))
    assert problems and any(where.split(".")[-1] in p for p in problems), problems
