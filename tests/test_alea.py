"""Tests of the Alea / MetaCentrum readers (alea_machines, alea_swf) and import-machines."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import yaml

from queuesim.cli import main
from queuesim.common.errors import WorkloadError
from queuesim.site.alea_machines import (
    MachineGroup,
    clusters_yaml,
    format_memory,
    read_machines,
    read_mwf,
)
from queuesim.site.model import Cluster
from queuesim.traces.alea_swf import ALEA_EXTRA_COLUMNS, parse_nodespec, read_alea_swf
from queuesim.traces.registry import read_trace
from queuesim.traces.swf import SWF_FIELDS

REPO = Path(__file__).resolve().parents[1]
CLUSTER_SECTIONS = {
    "metacentrum-2009-clusters.yaml": "metacentrum-org.mwf",
    "cerit-wagap-clusters.yaml": "wagap-2013.swf.machines",
}
GIB = 1024**3


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def clusters_of(text: str) -> list[Cluster]:
    """The clusters of a rendered section; fails unless it is exactly {"clusters": [...]}."""
    data = yaml.safe_load(text)
    assert isinstance(data, dict) and list(data) == ["clusters"], data
    return [Cluster.model_validate(entry) for entry in data["clusters"]]


# --------------------------------------------------------------------------- machine files

ALEA_MACHINES = "0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n"
ALEANG_MACHINES = "15\tadan\t61\t32\t1\t192\t5.9\t2\n34\talfrid\t4\t128\t1\t1536\t3.3\t0\n"


def test_alea_machines_layout_reads_ram_in_kb(tmp_path: Path) -> None:
    groups = read_machines(write(tmp_path / "x.machines", ALEA_MACHINES))
    assert [(g.name, g.nodes, g.cpus_per_node, g.line) for g in groups] == [
        ("zewura", 20, 80, 1),
        ("zegox", 48, 12, 2),
    ]
    assert groups[0].memory_per_node == 529426432 * 1024
    assert groups[1].memory_per_node == 94035968 * 1024
    assert all(g.properties == () and g.layout == "alea" for g in groups)
    assert groups[0].cpus == 1600


def test_aleang_machines_layout_reads_ram_in_gb_and_marks_gpu_nodes(tmp_path: Path) -> None:
    groups = read_machines(write(tmp_path / "NGI.swf.machines", ALEANG_MACHINES))
    adan, alfrid = groups
    assert (adan.name, adan.nodes, adan.cpus_per_node, adan.memory_per_node) == (
        "adan",
        61,
        32,
        192 * GIB,
    )
    assert (adan.properties, adan.gpus_per_node, alfrid.gpus_per_node) == (("gpu",), 2, 0)
    assert any("2 GPUs per node" in note and "speed 5.9" in note for note in adan.notes)
    assert (alfrid.memory_per_node, alfrid.properties) == (1536 * GIB, ())
    assert {g.layout for g in groups} == {"aleang"}


def test_machines_skip_blank_and_comment_lines_and_count_lines_from_the_file(
    tmp_path: Path,
) -> None:
    text = "# site\n\n; note\n" + ALEA_MACHINES
    groups = read_machines(write(tmp_path / "x.machines", text))
    assert [g.line for g in groups] == [4, 5]


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("0 a 1 2 3\n", 1, "expected 6 columns (Alea"),
        ("0 a 1 2 3 4 5 6 7\n", 1, "or 8 columns (AleaNG"),
        (ALEA_MACHINES + "2 c 1 2 1 4 5 6\n", 3, "expected 6 columns like line 1"),
        ("0 a x 2 1 100\n", 1, "column 3 (nodes) must be a whole number, found 'x'"),
        ("0 a 0 2 1 100\n", 1, "column 3 (nodes) must be at least 1"),
        ("0 a 1 2.5 1 100\n", 1, "column 4 (cpus_per_node) must be a whole number"),
        ("0 a 1 2 1 lots\n", 1, "column 6 (ram_per_node_KB) must be a number"),
        ("0 a 1 2 1 -5\n", 1, "column 6 (ram_per_node_KB) cannot be negative"),
        ("0 a 1 2 1 5 1.5 x\n", 1, "column 8 (gpus_per_node) must be a whole number"),
        ("0 a 1 2 1 5\n1 a 1 2 1 5\n", 2, "cluster name 'a' already used on line 1"),
    ],
)
def test_machines_errors_name_file_and_line(
    tmp_path: Path, text: str, line: int, expected: str
) -> None:
    path = write(tmp_path / "bad.machines", text)
    with pytest.raises(WorkloadError) as info:
        read_machines(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert expected in message
    assert "\n" not in message


def test_machines_file_without_machine_lines_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.machines", "# nothing\n\n")
    with pytest.raises(WorkloadError, match="no machine lines"):
        read_machines(path)


def test_machines_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="no such machine file"):
        read_machines(tmp_path / "absent.machines")


# --------------------------------------------------------------------------- mwf

MWF_HOMOGENEOUS = (
    "5\tcluster_5\t2400\t1048576\tXeon\tlinux\tp11,p19,p11\t3\t6\t2,2,2\t1,2,3,4,5,6\n"
)
MWF_SPLIT = "6\tskirit\t2659\t16000000\tXeon\tlinux\tp4\t4\t20\t4,8,4,4\t" + ",".join(
    str(i) for i in range(20)
)
MWF_LONG_LIST = "11\tcluster_11\t3000\t4556800\tXeon\tlinux\tp2\t2\t16\t8,8,8\t" + ",".join(
    str(i) for i in range(16)
)


def test_mwf_homogeneous_cluster_reads_machines_cpus_memory_and_properties(
    tmp_path: Path,
) -> None:
    (group,) = read_mwf(write(tmp_path / "m.mwf", MWF_HOMOGENEOUS))
    assert (group.name, group.nodes, group.cpus_per_node, group.line) == ("cluster_5", 3, 2, 1)
    assert group.memory_per_node == 1048576 * 1024 == GIB
    # arch, os, then the properties, without repeats
    assert group.properties == ("Xeon", "linux", "p11", "p19")
    assert any("cpu_MHz 2400" in note for note in group.notes)


def test_mwf_heterogeneous_cluster_is_split_by_cpu_count_with_a_comment(tmp_path: Path) -> None:
    path = write(tmp_path / "m.mwf", MWF_HOMOGENEOUS + MWF_SPLIT + "\n")
    groups = read_mwf(path)
    assert [(g.name, g.nodes, g.cpus_per_node, g.line) for g in groups] == [
        ("cluster_5", 3, 2, 1),
        ("skirit-4cpu", 3, 4, 2),
        ("skirit-8cpu", 1, 8, 2),
    ]
    assert sum(g.cpus for g in groups if g.line == 2) == 20
    assert {g.memory_per_node for g in groups[1:]} == {16000000 * 1024}
    text = clusters_yaml(groups, path)
    for name in ("skirit-4cpu", "skirit-8cpu"):
        block = text.split(f"  # {name}: line 2\n", 1)[1]
        comment = block.split("  - name:", 1)[0]
        assert "split into 2 clusters by CPU count" in comment
        assert "3 x 4 CPUs + 1 x 8 CPUs" in comment
    assert [c.name for c in clusters_of(text)] == ["cluster_5", "skirit-4cpu", "skirit-8cpu"]


def test_mwf_longer_cpu_list_is_cut_to_n_machines_when_that_adds_up_to_n_cpus(
    tmp_path: Path,
) -> None:
    (group,) = read_mwf(write(tmp_path / "m.mwf", MWF_LONG_LIST + "\n"))
    assert (group.nodes, group.cpus_per_node) == (2, 8)
    assert any("has 3 entries (24 CPUs) for n_machines 2" in note for note in group.notes)


def test_mwf_whitespace_separated_line_is_read_too(tmp_path: Path) -> None:
    text = MWF_HOMOGENEOUS.replace("\t", "  ")
    (group,) = read_mwf(write(tmp_path / "m.mwf", text))
    assert (group.nodes, group.cpus_per_node) == (3, 2)


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("0\ta\t1\t2\n", 1, "expected 11 columns (id name cpu_MHz"),
        (
            MWF_HOMOGENEOUS.replace("\t2,2,2\t", "\t2,2\t"),
            1,
            "cpus_per_machine_list has 2 entries adding up to 4 CPUs; expected n_machines (3)",
        ),
        (MWF_HOMOGENEOUS.replace("\t2,2,2\t", "\t2,x,2\t"), 1, "whole numbers separated by"),
        (MWF_HOMOGENEOUS.replace("\t2,2,2\t", "\t2,0,4\t"), 1, "must all be at least 1"),
        (MWF_HOMOGENEOUS.replace("\t3\t6\t", "\t0\t6\t"), 1, "column 8 (n_machines) must be"),
        (MWF_HOMOGENEOUS.replace("1048576", "1e"), 1, "column 4 (ram_KB) must be a number"),
        (MWF_HOMOGENEOUS + MWF_HOMOGENEOUS, 2, "cluster name 'cluster_5' already used on line 1"),
        (
            # a cluster literally named like the split group of the next line
            MWF_HOMOGENEOUS.replace("cluster_5", "skirit-4cpu") + MWF_SPLIT + "\n",
            2,
            "cluster name 'skirit-4cpu' already used on line 1",
        ),
    ],
)
def test_mwf_errors_name_file_and_line(tmp_path: Path, text: str, line: int, expected: str) -> None:
    path = write(tmp_path / "bad.mwf", text)
    with pytest.raises(WorkloadError) as info:
        read_mwf(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert expected in message


# --------------------------------------------------------------------------- YAML


def test_rendered_yaml_validates_as_clusters_with_exact_memory(tmp_path: Path) -> None:
    machines = read_machines(write(tmp_path / "a.machines", ALEA_MACHINES))
    mwf = read_mwf(write(tmp_path / "m.mwf", MWF_HOMOGENEOUS + MWF_SPLIT + "\n"))
    for groups in (machines, mwf):
        clusters = clusters_of(clusters_yaml(groups, "some/file"))
        assert [c.name for c in clusters] == [g.name for g in groups]
        for cluster, group in zip(clusters, groups, strict=True):
            assert cluster.nodes == group.nodes
            assert cluster.cpus_per_node == group.cpus_per_node
            assert cluster.memory_per_node == group.memory_per_node
            assert cluster.properties == group.properties


def test_rendered_yaml_names_source_command_and_how_numbers_were_read(tmp_path: Path) -> None:
    groups = read_machines(write(tmp_path / "a.machines", ALEA_MACHINES))
    text = clusters_yaml(groups, "data/a.machines", command="queuesim import-machines x")
    header = text.split("clusters:", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines())
    assert "a.machines" in header and "Made with: queuesim import-machines x" in header
    assert "column 6 (KB per node, 1 KB = 1024 bytes)" in header
    assert "2 clusters from 2 lines: 68 nodes, 2176 CPUs" in header
    assert "memory_per_node: 517018MB" in text  # 529426432 KB, not a whole number of GB
    assert clusters_yaml(groups, "data/a.machines") == clusters_yaml(groups, "data/a.machines")


@pytest.mark.parametrize(
    ("size", "text"),
    [(16 * GIB, "16GB"), (517018 * 1024**2, "517018MB"), (1009000 * 1024, "1009000KB"), (5, "5")],
)
def test_memory_is_written_in_the_largest_exact_unit(size: int, text: str) -> None:
    assert format_memory(size) == text


def test_yaml_quotes_names_that_would_not_read_back_as_strings() -> None:
    groups = [
        MachineGroup(name, 1, 1, None, (prop,), line=i + 1)
        for i, (name, prop) in enumerate([("yes", "null"), ("123", "1.5"), ("a:b", "#x")])
    ]
    clusters = clusters_of(clusters_yaml(groups, "x"))
    assert [(c.name, c.properties) for c in clusters] == [
        ("yes", ("null",)),
        ("123", ("1.5",)),
        ("a:b", ("#x",)),
    ]
    assert all(c.memory_per_node is None for c in clusters)


# --------------------------------------------------------------------------- nodespec


@pytest.mark.parametrize(
    ("spec", "nodes", "ppn", "cpus", "properties", "exclusive"),
    [
        ("1:ppn=64:x86_64:cl_zewura#excl", 1, 64, 64, "x86_64:cl_zewura", True),
        ("2:ppn=12", 2, 12, 24, "", False),
        ("8:ppn=8:x86_64:cl_zegox", 8, 8, 64, "x86_64:cl_zegox", False),
        ("1", 1, 0, 1, "", False),
        ("2", 2, 0, 2, "", False),
        ("2:infiniband", 2, 0, 2, "infiniband", False),
        ("1:zegox17.cerit-sc.cz", 1, 0, 1, "zegox17.cerit-sc.cz", False),
        ("zewura19.cerit-sc.cz:ppn=12:brno", 1, 12, 12, "zewura19.cerit-sc.cz:brno", False),
        ("1:zewura15.cerit-sc.cz:ppn=12", 1, 12, 12, "zewura15.cerit-sc.cz", False),
        ("1:ppn=12:^zewura12.cerit-sc.cz", 1, 12, 12, "^zewura12.cerit-sc.cz", False),
        ("1:ppn=5:host=zewura10", 1, 5, 5, "host=zewura10", False),
        ("1:ppn=14:mem=3gb", 1, 14, 14, "mem=3gb", False),
        ("1:ppn=1.5:brno", 1, 1, 1, "brno", False),
        ("1:ppn=1+2:ppn=2", 3, 0, 5, "", False),
        ("1:ppn=2:a+3:ppn=2:b", 4, 2, 8, "a:b", False),
        ("1:ppn=4+2", 3, 0, 6, "", False),
        ("1:ppn=8:cl_zewura:cl_zewura:cl_zewura", 1, 8, 8, "cl_zewura", False),
        ("1:ppn=2#shared", 1, 2, 2, "", False),
    ],
)
def test_nodespec_variants_parse_to_nodes_ppn_cpus_properties_and_exclusive(
    spec: str, nodes: int, ppn: int, cpus: int, properties: str, exclusive: bool
) -> None:
    parsed = parse_nodespec(spec)
    assert (parsed.nodes, parsed.ppn, parsed.cpus, parsed.properties, parsed.exclusive) == (
        nodes,
        ppn,
        cpus,
        properties,
        exclusive,
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("1::ppn=2", "empty part"),
        ("1:ppn=2+", "empty part"),
        ("0:ppn=2", "node count 0"),
        ("1:ppn=x", "ppn must be a number of at least 1"),
        ("1:ppn=0", "ppn must be a number of at least 1"),
        ("1:ppn=2:ppn=3", "two different ppn"),
        ("1:ppn=2#foo", "unknown flag '#foo'"),
    ],
)
def test_malformed_nodespec_says_what_is_wrong(spec: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        parse_nodespec(spec)


# --------------------------------------------------------------------------- extended SWF

START = 1356996147


def alea_line(
    job: int = 1,
    submit: int = START,
    procs: int = 4,
    memory: int = 4 * GIB,
    queue: str = "q_1d",
    nodespec: str = "1:ppn=4",
    node_ids: str | None = None,
) -> str:
    ids = node_ids if node_ids is not None else "{" + ",".join(["7"] * procs) + "}"
    return (
        f"{job} {submit} 5 100 {procs} 1 1024 {procs} 3600 {memory} 1 62 1 1 -1 1 1 1 "
        f"{ids} {queue} {nodespec}"
    )


def test_alea_swf_memory_bytes_per_job_become_kb_per_processor(tmp_path: Path) -> None:
    text = "\n".join(
        [
            alea_line(1, procs=4, memory=4 * GIB),
            alea_line(2, procs=3, memory=400 * 1024**2, nodespec="1:ppn=3"),
            alea_line(3, procs=1, memory=-1, nodespec="1"),
            alea_line(4, procs=2, memory=0, nodespec="2"),
        ]
    )
    jobs = read_alea_swf(write(tmp_path / "w.swf", text + "\n")).jobs
    memory = jobs["req_memory"].to_numpy()
    assert memory[0] == 1024**2  # 4 GiB over 4 CPUs: 1 GiB = 1048576 KB per processor
    assert memory[1] == pytest.approx(400 * 1024 / 3)
    assert list(memory[2:]) == [-1.0, -1.0]


def test_alea_swf_placeholder_fields_become_minus_one_and_others_are_kept(
    tmp_path: Path,
) -> None:
    jobs = read_alea_swf(write(tmp_path / "w.swf", alea_line() + "\n")).jobs
    row = jobs.iloc[0]
    for name in ("avg_cpu_time", "used_memory", "prev_job", "think_time"):
        assert row[name] == -1, name
    assert (row["wait"], row["runtime"], row["alloc_procs"], row["req_procs"]) == (5, 100, 4, 4)
    assert (row["req_time"], row["status"], row["user"], row["queue"]) == (3600, 1, 62, -1)
    assert list(jobs.columns) == [*SWF_FIELDS, "line", *ALEA_EXTRA_COLUMNS]
    assert jobs["user"].dtype == np.int64 and jobs["req_memory"].dtype == np.float64


def test_alea_swf_absolute_submit_times_become_relative_to_unix_start_time(
    tmp_path: Path,
) -> None:
    text = f"{alea_line(1, submit=START + 50)}\n{alea_line(2, submit=START)}\n"
    trace = read_alea_swf(write(tmp_path / "w.swf", text))
    assert trace.header.unix_start_time == START
    assert list(trace.jobs["submit"]) == [50.0, 0.0]
    assert f"; UnixStartTime: {START}" in trace.header.lines


def test_alea_swf_relative_submit_times_are_left_alone(tmp_path: Path) -> None:
    text = f"{alea_line(1, submit=0)}\n{alea_line(2, submit=86400)}\n"
    trace = read_alea_swf(write(tmp_path / "w.swf", text))
    assert trace.header.unix_start_time is None
    assert list(trace.jobs["submit"]) == [0.0, 86400.0]


def test_alea_swf_queue_names_and_nodespec_columns(tmp_path: Path) -> None:
    text = "\n".join(
        [
            alea_line(1, procs=64, queue="q_1d", nodespec="1:ppn=64:x86_64:cl_zewura#excl"),
            alea_line(2, procs=5, queue="backfill", nodespec="1:ppn=1+2:ppn=2"),
            alea_line(3, procs=2, queue="priority_long", nodespec="2"),
            alea_line(4, procs=12, queue="q_2w", nodespec="zewura19.cerit-sc.cz:ppn=12:brno"),
        ]
    )
    jobs = read_alea_swf(write(tmp_path / "w.swf", text + "\n")).jobs
    assert list(jobs["queue_name"]) == ["q_1d", "backfill", "priority_long", "q_2w"]
    assert list(jobs["nodespec"])[1] == "1:ppn=1+2:ppn=2"
    assert list(jobs["nodes"]) == [1, 3, 2, 1]
    assert list(jobs["ppn"]) == [64, 0, 0, 12]
    assert list(jobs["nodespec_cpus"]) == [64, 5, 2, 12]
    assert list(jobs["nodespec_properties"]) == [
        "x86_64:cl_zewura",
        "",
        "",
        "zewura19.cerit-sc.cz:brno",
    ]
    assert list(jobs["exclusive"]) == [True, False, False, False]
    assert jobs["exclusive"].dtype == bool
    assert jobs["nodes"].dtype == np.int64 and jobs["ppn"].dtype == np.int64


def test_alea_swf_reads_gzip_and_skips_blank_and_comment_lines(tmp_path: Path) -> None:
    text = f"; a comment\n\n{alea_line(1)}\n\n{alea_line(2)}\n"
    path = tmp_path / "w.swf.gz"
    path.write_bytes(gzip.compress(text.encode()))
    trace = read_alea_swf(path)
    assert list(trace.jobs["line"]) == [3, 5]
    assert "; a comment" in trace.header.lines


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (alea_line().rsplit(" ", 1)[0], "expected 21 whitespace-separated fields"),
        (alea_line().replace(" 3600 ", " 1h "), "field 9 (req_time) is not a number: '1h'"),
        (alea_line(node_ids="{7,x}"), "field 19 (per-CPU node ids) must be a list in braces"),
        (alea_line(node_ids="7,7"), "field 19 (per-CPU node ids) must be a list in braces"),
        (alea_line().replace(" 62 ", " 6.5 "), "field 12 (user) must be a whole number"),
        (alea_line(nodespec="1:ppn=0"), "field 21 (nodespec) '1:ppn=0': ppn must be"),
        (alea_line(nodespec="1:ppn=4#foo"), "unknown flag '#foo'"),
    ],
)
def test_alea_swf_malformed_line_names_file_line_and_expectation(
    tmp_path: Path, bad: str, expected: str
) -> None:
    path = write(tmp_path / "w.swf", f"{alea_line(1)}\n{bad}\n{alea_line(3)}\n")
    with pytest.raises(WorkloadError) as info:
        read_alea_swf(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: "), message
    assert expected in message


def test_alea_swf_skip_bad_lines_collects_them_like_read_swf(tmp_path: Path) -> None:
    bad_fields = alea_line(2).rsplit(" ", 1)[0]
    bad_spec = alea_line(4, nodespec="0:ppn=1")
    text = f"{alea_line(1)}\n{bad_fields}\n{alea_line(3)}\n{bad_spec}\n"
    trace = read_alea_swf(write(tmp_path / "w.swf", text), skip_bad_lines=True)
    assert list(trace.jobs["job_id"]) == [1, 3]
    assert [(b.line, b.text) for b in trace.bad_lines] == [(2, bad_fields), (4, bad_spec)]
    assert "found 20" in trace.bad_lines[0].reason
    assert "node count 0" in trace.bad_lines[1].reason


def test_read_trace_reads_either_format_by_the_first_job_line(tmp_path: Path) -> None:
    swf = write(tmp_path / "s.swf", "; Version: 2.2\n" + " ".join(["1"] * 18) + "\n")
    alea = write(tmp_path / "a.swf", "; comment\n" + alea_line() + "\n")
    assert "queue_name" not in read_trace(swf).jobs.columns
    assert len(read_trace(swf).jobs) == 1
    jobs = read_trace(alea).jobs
    assert list(jobs["queue_name"]) == ["q_1d"]
    assert read_trace(alea).jobs["req_memory"].iloc[0] == 1024**2


def test_read_trace_unknown_field_count_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "x.swf", "; header\n1 2 3\n")
    with pytest.raises(WorkloadError) as info:
        read_trace(path)
    assert str(info.value).startswith(f"{path}:2: cannot tell the trace format")
    assert "found 3" in str(info.value)


def test_read_trace_with_skip_bad_lines_decides_by_the_first_readable_line(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "x.swf", f"1 2 3\n{alea_line(1)}\n")
    trace = read_trace(path, skip_bad_lines=True)
    assert list(trace.jobs["queue_name"]) == ["q_1d"]
    assert [b.line for b in trace.bad_lines] == [1]


def test_read_trace_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="no such workload file"):
        read_trace(tmp_path / "absent.swf")


# --------------------------------------------------------------------------- CLI


def test_import_machines_cli_prints_valid_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "w.swf.machines", ALEA_MACHINES)
    code, out, err = run_cli(capsys, "import-machines", path)
    assert (code, err) == (0, "")
    assert [(c.name, c.nodes, c.cpus_per_node) for c in clusters_of(out)] == [
        ("zewura", 20, 80),
        ("zegox", 48, 12),
    ]
    assert f"# Made with: queuesim import-machines {path}\n" in out


def test_import_machines_format_option_overrides_the_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "machines.txt", MWF_SPLIT + "\n")
    code, out, _ = run_cli(capsys, "import-machines", path, "--format", "mwf")
    assert code == 0
    assert [c.name for c in clusters_of(out)] == ["skirit-4cpu", "skirit-8cpu"]
    assert "--format mwf" in out


@pytest.mark.parametrize(
    ("name", "text", "args", "expected"),
    [
        ("m.txt", ALEA_MACHINES, (), "cannot tell the machine file format"),
        ("absent.machines", None, (), "no such machine file"),
        ("bad.machines", "0 a 1 2\n", (), "bad.machines:1: expected 6 columns"),
        ("bad.mwf", ALEA_MACHINES, (), "bad.mwf:1: expected 11 columns"),
        ("w.machines", MWF_HOMOGENEOUS, (), "w.machines:1: expected 6 columns"),
    ],
)
def test_import_machines_errors_are_one_line_with_exit_code_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str | None,
    args: tuple[str, ...],
    expected: str,
) -> None:
    path = tmp_path / name
    if text is not None:
        write(path, text)
    code, out, err = run_cli(capsys, "import-machines", path, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert expected in err and "Traceback" not in err


# --------------------------------------------------------------------------- shipped sections


@pytest.mark.parametrize("name", sorted(CLUSTER_SECTIONS))
def test_shipped_cluster_sections_are_clusters_only_and_validate(name: str) -> None:
    text = (REPO / "site-configs" / "clusters" / name).read_text(encoding="utf-8")
    assert text.startswith("# Clusters read from " + CLUSTER_SECTIONS[name])
    assert "# Made with: queuesim import-machines " in text
    clusters = clusters_of(text)
    total = sum(c.cpus for c in clusters)
    assert total == {"metacentrum-2009-clusters.yaml": 806, "cerit-wagap-clusters.yaml": 2176}[name]


@pytest.mark.realtrace
@pytest.mark.parametrize("name", sorted(CLUSTER_SECTIONS))
def test_shipped_cluster_sections_are_what_the_command_prints(
    real_workloads: Path,
    name: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (REPO / "site-configs" / "clusters" / name).read_text(encoding="utf-8")
    command = next(line for line in text.splitlines() if line.startswith("# Made with: "))
    args = command.removeprefix("# Made with: queuesim ").split()
    monkeypatch.chdir(REPO)
    if not Path(args[1]).is_file():
        pytest.skip(f"{args[1]} is not where the command says (from {REPO})")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert out == text


# --------------------------------------------------------------------------- real files


@pytest.mark.realtrace
def test_real_wagap_reads_17900_jobs_with_its_queue_names(real_workloads: Path) -> None:
    trace = read_alea_swf(real_workloads / "metacentrum" / "wagap-2013.swf.gz")
    jobs = trace.jobs
    assert len(jobs) == 17_900 and trace.bad_lines == ()
    assert jobs["queue_name"].value_counts().to_dict() == {
        "q_1d": 5301,
        "q_2h": 4392,
        "q_1w": 3414,
        "q_2d": 1435,
        "q_4h": 1267,
        "q_4d": 1060,
        "q_2w": 844,
        "backfill": 104,
        "q_2w_plus": 68,
        "ops": 11,
        "priority_long": 4,
    }
    assert trace.header.unix_start_time == START
    assert jobs["submit"].min() == 0
    assert (jobs["queue"] == -1).all()
    assert (jobs[["avg_cpu_time", "used_memory", "prev_job", "think_time"]] == -1).all().all()


@pytest.mark.realtrace
def test_real_wagap_nodespecs_agree_with_the_requested_processors(real_workloads: Path) -> None:
    jobs = read_alea_swf(real_workloads / "metacentrum" / "wagap-2013.swf.gz").jobs
    assert (jobs["nodespec_cpus"] == jobs["req_procs"]).all()
    assert int(jobs["exclusive"].sum()) == 231
    assert int((jobs["ppn"] == 0).sum()) == 37  # "1", "2", "2:infiniband", multi-chunk...
    assert int((jobs["nodes"] == 0).sum()) == 0
    first = jobs.iloc[0]
    assert (first["nodespec"], first["nodes"], first["ppn"]) == (
        "1:ppn=64:x86_64:cl_zewura#excl",
        1,
        64,
    )
    # 64 GiB for the whole 64-CPU job: 1 GiB = 1048576 KB per processor
    assert first["req_memory"] == 1024**2
    odd = jobs[jobs["runtime"] < 0]
    assert list(odd["line"]) == [4186, 4200]


@pytest.mark.realtrace
def test_real_machine_files_give_zewura_20x80_and_zegox_48x12(real_workloads: Path) -> None:
    folder = real_workloads / "metacentrum"
    wagap = {g.name: g for g in read_machines(folder / "wagap-2013.swf.machines")}
    assert (wagap["zewura"].nodes, wagap["zewura"].cpus_per_node) == (20, 80)
    assert (wagap["zegox"].nodes, wagap["zegox"].cpus_per_node) == (48, 12)
    assert wagap["zewura"].memory_per_node == 529426432 * 1024
    ngi = read_machines(folder / "NGI_CZ.swf.machines")
    assert len(ngi) == 47 and {g.layout for g in ngi} == {"aleang"}
    named = {g.name: g for g in ngi}
    assert (named["zenon"].nodes, named["zenon"].cpus_per_node) == (58, 32)
    assert named["ursa"].memory_per_node == 9900 * GIB
    assert named["galdor"].properties == ("gpu",)
    assert len(clusters_of(clusters_yaml(ngi, "NGI_CZ.swf.machines"))) == 47


@pytest.mark.realtrace
def test_real_mwf_gives_the_14_clusters_of_metacentrum_2009(real_workloads: Path) -> None:
    groups = read_mwf(real_workloads / "metacentrum" / "metacentrum-org.mwf")
    by_line: dict[int, list[MachineGroup]] = {}
    for group in groups:
        by_line.setdefault(group.line, []).append(group)
    assert sorted(by_line) == list(range(1, 15))
    # total CPUs per cluster, as on the PWA page of the log (806 in all)
    cpus = [sum(g.cpus for g in by_line[line]) for line in range(1, 15)]
    assert cpus == [8, 16, 10, 80, 32, 64, 148, 70, 20, 6, 92, 152, 64, 44]
    split = [(g.name, g.nodes, g.cpus_per_node) for g in by_line[7]]
    assert split == [("cluster_6-4cpu", 35, 4), ("cluster_6-8cpu", 1, 8)]
    (c11,) = by_line[12]
    assert (c11.nodes, c11.cpus_per_node) == (19, 8)
    assert len(clusters_of(clusters_yaml(groups, "metacentrum-org.mwf"))) == 15


@pytest.mark.realtrace
def test_real_metacentrum_2009_reads_through_read_trace(real_workloads: Path) -> None:
    trace = read_trace(real_workloads / "metacentrum" / "METACENTRUM-2009-2.swf.gz")
    assert len(trace.jobs) == 103_656 and trace.bad_lines == ()
    assert "queue_name" not in trace.jobs.columns
    # queues q1..q11 of the PWA page, of which q8 has no job; partitions = the 14 clusters
    assert sorted(trace.jobs["queue"].unique()) == [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]
    assert sorted(trace.jobs["partition"].unique()) == list(range(1, 15))


@pytest.mark.realtrace
@pytest.mark.parametrize(
    ("name", "count"), [("metacentrum-org.mwf", 15), ("wagap-2013.swf.machines", 2)]
)
def test_real_import_machines_cli_prints_valid_yaml(
    real_workloads: Path, capsys: pytest.CaptureFixture[str], name: str, count: int
) -> None:
    code, out, err = run_cli(capsys, "import-machines", real_workloads / "metacentrum" / name)
    assert (code, err) == (0, "")
    assert len(clusters_of(out)) == count
