"""Tests of ``queuesim import slurm``: slurm.conf (with Include, DEFAULT lines, host lists
and Slurm's time formats), gres.conf, topology.conf and sacctmgr dumps into a site file
and an import report. The configuration in ``tests/configs/slurm`` is a small
heterogeneous cluster written by hand from slurm.conf(5): 16 CPU nodes with features,
4 GPU nodes, one big-memory node, five partitions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from import_helpers import by_name, site_of, skipped

from queuesim.cli import main
from queuesim.common.errors import ConfigError
from queuesim.site.import_report import Where
from queuesim.site.loading import load_site
from queuesim.site.site_draft import render_site_yaml
from queuesim.site.slurm_conf import expand_hostlist, slurm_time
from queuesim.site.slurm_import import SlurmImport, import_slurm

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "tests" / "configs" / "slurm"
W = Where("x.conf", 1)


def full_import() -> SlurmImport:
    return import_slurm(CONFIGS, CONFIGS / "assoc.txt", CONFIGS / "qos.txt")


def write_conf(folder: Path, text: str, name: str = "slurm.conf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


MINIMAL = "NodeName=n[1-4] CPUs=8\nPartitionName=all Nodes=ALL\n"


# --------------------------------------------------------------------------- syntax


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800.0),  # minutes
        ("30:15", 1815.0),  # minutes:seconds
        ("2:00:00", 7200.0),  # hours:minutes:seconds
        ("1-12", 129600.0),  # days-hours
        ("1-12:30", 131400.0),  # days-hours:minutes
        ("1-00:00:05", 86405.0),  # days-hours:minutes:seconds
        ("UNLIMITED", None),
        ("infinite", None),
    ],
)
def test_slurm_time_reads_every_format_of_the_manual(text: str, seconds: float | None) -> None:
    assert slurm_time(text, W, "MaxTime") == seconds


def test_slurm_time_error_names_file_line_and_expected_form() -> None:
    with pytest.raises(ConfigError, match=r"x\.conf:1: MaxTime=2 days: expected a time"):
        slurm_time("2 days", W, "MaxTime")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("node[001-003,010]", ["node001", "node002", "node003", "node010"]),
        ("tux[0-2]-ib", ["tux0-ib", "tux1-ib", "tux2-ib"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("gpu[01-02],bigmem01", ["gpu01", "gpu02", "bigmem01"]),
    ],
)
def test_host_lists_expand_with_zero_padding_and_products(text: str, names: list[str]) -> None:
    assert expand_hostlist(text, W) == names


def test_a_backwards_host_range_is_an_error_naming_the_line() -> None:
    with pytest.raises(ConfigError, match=r"x\.conf:1: range 5-1 runs backwards"):
        expand_hostlist("n[5-1]", W)


def test_keys_are_case_insensitive(tmp_path: Path) -> None:
    write_conf(tmp_path, "nodename=n[1-2] cpus=12 REALMEMORY=1024\npartitionname=p nodes=ALL\n")
    site = site_of(import_slurm(tmp_path))
    assert site["clusters"] == [
        {"name": "n", "nodes": 2, "cpus_per_node": 12, "memory_per_node": "1GB"}
    ]


def test_continuation_lines_join_without_a_space_as_slurm_does() -> None:
    mapped = {m.key: m.value for m in full_import().report.mapped}
    # bf_max_job_user=20 starts the continued line of SchedulerParameters
    assert mapped["SchedulerParameters bf_max_job_user"] == "bf_max_job_user=20"
    assert "bf_max_job_user" not in mapped


def test_include_is_read_in_place_relative_to_the_including_file() -> None:
    result = full_import()
    assert str(CONFIGS / "partitions.conf") in result.report.files
    assert {q.name for q in result.draft.queues} == {"debug", "batch", "gpu", "bigmem", "long"}


def test_a_missing_include_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    write_conf(tmp_path, MINIMAL + "Include absent.conf\n")
    with pytest.raises(ConfigError, match=r"slurm\.conf:3: Include names .*absent\.conf"):
        import_slurm(tmp_path)


def test_default_lines_apply_to_the_lines_after_them_only(tmp_path: Path) -> None:
    write_conf(
        tmp_path,
        "NodeName=a[1-2] CPUs=4\nNodeName=DEFAULT CPUs=16 Features=fast\nNodeName=b[1-2]\n"
        "PartitionName=early Nodes=a[1-2]\nPartitionName=DEFAULT MaxTime=1-0\n"
        "PartitionName=late Nodes=b[1-2]\n",
    )
    site = site_of(import_slurm(tmp_path))
    assert [(c["name"], c["cpus_per_node"], c.get("properties")) for c in site["clusters"]] == [
        ("a", 4, None),
        ("b", 16, ["fast"]),
    ]
    queues = by_name(site["queues"])
    assert "max_walltime" not in queues["early"]
    assert queues["late"]["max_walltime"] == "24:00:00"


# --------------------------------------------------------------------------- golden mapping


def test_nodes_alike_in_hardware_features_and_partitions_form_one_cluster_each() -> None:
    clusters = site_of(full_import())["clusters"]
    assert clusters == [
        {
            "name": "node-001",
            "nodes": 2,
            "cpus_per_node": 32,  # Sockets=2 x CoresPerSocket=16 x ThreadsPerCore=1
            "memory_per_node": "191000MB",
            "properties": ["ib", "intel", "skylake"],
        },
        {
            "name": "node-003",
            "nodes": 14,
            "cpus_per_node": 32,
            "memory_per_node": "191000MB",
            "properties": ["ib", "intel", "skylake"],
        },
        {
            "name": "gpu",
            "nodes": 4,
            "cpus_per_node": 48,
            "memory_per_node": "385000MB",
            "properties": ["gpu", "ib", "intel"],
            "gpus_per_node": 4,
        },
        {
            "name": "bigmem",
            "nodes": 1,
            "cpus_per_node": 64,
            "memory_per_node": "3000000MB",
            "properties": ["amd", "bigmem"],
        },
    ]


def test_partitions_become_queues_with_limits_tiers_nodes_and_qos() -> None:
    queues = by_name(site_of(full_import())["queues"])
    assert queues["debug"] == {
        "name": "debug",
        "max_walltime": "0:30:00",
        "default_walltime": "0:10:00",
        "priority": 10,
        "clusters": ["node-001"],
        "trace_queues": ["debug"],
        "max_running_per_user": 20,  # the normal QOS
    }
    # the partition's QOS: MaxWall (below the DEFAULT line's 2 days), MaxJobsPU,
    # MaxTRESPU cpu, GrpTRES cpu
    assert queues["batch"] == {
        "name": "batch",
        "max_walltime": "36:00:00",
        "default_walltime": "1:00:00",
        "priority": 1,
        "clusters": ["node-001", "node-003"],
        "trace_queues": ["batch"],
        "max_running_per_user": 8,
        "max_cpus_per_user": 128,
        "cpu_pool": 384,
    }
    assert queues["gpu"]["max_walltime"] == "24:00:00"
    assert queues["gpu"]["clusters"] == ["gpu"]
    assert queues["bigmem"]["max_walltime"] == "168:00:00"
    assert "max_walltime" not in queues["long"]  # MaxTime=UNLIMITED
    assert queues["long"]["clusters"] == ["node-003"]


def test_site_wide_choices_ordering_fairshare_memory_and_scheduler() -> None:
    site = site_of(full_import())
    assert site["name"] == "hetero"
    assert site["ordering"] == "slurm-multifactor"  # priority/multifactor
    assert site["priority"] == {
        "weight_age": 1000,
        "weight_fairshare": 10000,
        "weight_job_size": 0,
        "max_age": "7d",
        "favor_small": True,
    }
    assert site["fairshare"] == {"half_life": "14d", "shares": {1001: 20.0}}
    assert site["memory"] == "per-cpu"  # CR_Core_Memory, RealMemory everywhere
    assert site["scheduler"] == {  # sched/backfill and its SchedulerParameters
        "policy": "slurm",
        "params": {
            "bf_interval": 30,
            "bf_window": 2880,
            "bf_resolution": 300,
            "bf_max_job_user": 20,
            "default_queue_depth": 200,
            "sched_interval": 60,
        },
    }
    assert site["routing"] == "walltime"


@pytest.mark.parametrize(
    ("extra", "ordering", "priority", "scheduler"),
    [
        # priority/basic and sched/backfill are the defaults
        ("", "fcfs", None, {"policy": "slurm"}),
        (
            "SchedulerType=sched/builtin\n",
            "fcfs",
            None,
            {"policy": "slurm", "params": {"backfill": False}},
        ),
        (
            "PriorityType=priority/multifactor\nPriorityWeightFairshare=100\n",
            "slurm-multifactor",
            {"weight_fairshare": 100},
            {"policy": "slurm"},
        ),
        (
            "PriorityType=priority/multifactor\nPriorityWeightAge=100\nPriorityMaxAge=1-0\n",
            "slurm-multifactor",
            {"weight_age": 100, "max_age": "1d"},
            {"policy": "slurm"},
        ),
        (
            "SchedulerParameters=bf_interval=60,sched_interval=0,bf_max_job_test=50\n",
            "fcfs",
            None,
            {
                "policy": "slurm",
                "params": {"bf_interval": 60, "sched_interval": 0, "bf_max_job_test": 50},
            },
        ),
    ],
)
def test_scheduler_and_priority_plugins_choose_policy_and_ordering(
    tmp_path: Path,
    extra: str,
    ordering: str,
    priority: dict[str, object] | None,
    scheduler: dict[str, object],
) -> None:
    """Each mapped setting lands in its key of the site file, which loads."""
    write_conf(tmp_path, MINIMAL + extra)
    site = site_of(import_slurm(tmp_path))
    assert site["ordering"] == ordering
    assert site.get("priority") == priority
    assert site["scheduler"] == scheduler


def test_a_scheduler_parameter_that_is_not_a_number_is_an_error_naming_the_line(
    tmp_path: Path,
) -> None:
    write_conf(tmp_path, MINIMAL + "SchedulerParameters=bf_window=1-0\n")
    with pytest.raises(ConfigError, match=r"slurm\.conf:3: SchedulerParameters bf_window=1-0: "):
        import_slurm(tmp_path)


def test_fair_tree_is_reported_unless_no_fair_tree_is_set(tmp_path: Path) -> None:
    """Slurm computes fair-share by Fair Tree unless PriorityFlags=NO_FAIR_TREE; queuesim
    models the classic factor, so the report says so (with the flags, or their absence)."""
    base = MINIMAL + "PriorityType=priority/multifactor\nPriorityWeightFairshare=100\n"
    write_conf(tmp_path, base)
    assert "Fair Tree" in skipped(import_slurm(tmp_path).report)["PriorityFlags"][0]
    write_conf(tmp_path, base + "PriorityFlags=NO_FAIR_TREE\n")
    report = import_slurm(tmp_path).report
    assert "PriorityFlags" not in skipped(report)
    assert "PriorityFlags" in {m.key for m in report.mapped}


def test_unmodelled_weights_and_calc_period_stay_in_the_report(tmp_path: Path) -> None:
    write_conf(
        tmp_path,
        MINIMAL + "PriorityType=priority/multifactor\nPriorityWeightQOS=500\n"
        "PriorityWeightTRES=CPU=1000\nPriorityCalcPeriod=5\n",
    )
    report = skipped(import_slurm(tmp_path).report)
    assert report["PriorityWeightQOS"] == ["500"]
    assert report["PriorityWeightTRES"] == ["CPU=1000"]
    assert report["PriorityCalcPeriod"] == ["5"]


def test_partition_job_factor_becomes_the_priority_blocks_factor(tmp_path: Path) -> None:
    write_conf(
        tmp_path,
        "NodeName=n[1-4] CPUs=8\nPriorityType=priority/multifactor\n"
        "PriorityWeightPartition=1000\nPartitionName=lo Nodes=ALL MaxTime=60 "
        "PriorityJobFactor=1\nPartitionName=hi Nodes=ALL MaxTime=120 PriorityJobFactor=5\n",
    )
    site = site_of(import_slurm(tmp_path))
    assert site["ordering"] == "slurm-multifactor"
    assert site["priority"] == {
        "weight_partition": 1000,
        "partition_job_factor": {"lo": 1, "hi": 5},
    }
    assert all("priority" not in q for q in site["queues"])  # one tier


def test_same_walltime_limits_keep_the_default_partition_routable(tmp_path: Path) -> None:
    write_conf(
        tmp_path,
        "NodeName=n[1-4] CPUs=8\nPartitionName=a Nodes=ALL MaxTime=60\n"
        "PartitionName=b Nodes=ALL MaxTime=60 Default=YES\n",
    )
    queues = by_name(site_of(import_slurm(tmp_path))["queues"])
    assert queues["a"]["route_by_walltime"] is False
    assert "route_by_walltime" not in queues["b"]


# --------------------------------------------------------------------------- the report


def test_the_site_file_lists_every_setting_not_modelled() -> None:
    """What the report lists as not modelled is in the site file's ``not_modelled`` too
    (one entry per setting, its values and lines joined), so every run of the site can
    print it."""
    result = full_import()
    entries = site_of(result)["not_modelled"]
    assert [e["setting"] for e in entries] == list(
        dict.fromkeys(n.key for n in result.report.not_modelled)
    )
    host = next(e for e in entries if e["setting"] == "SlurmctldHost")
    assert host["value"] == "ctl01" and host["source"].startswith(str(CONFIGS / "slurm.conf"))


def test_settings_not_modelled_are_reported_with_their_values() -> None:
    report = skipped(full_import().report)
    expected = {
        "TmpDisk": ["100000"],
        "Weight": ["10"],
        "State": ["UNKNOWN"],
        "OverSubscribe": ["EXCLUSIVE"],
        "AllowAccounts": ["physics"],
        "MaxNodes": ["4"],
        "PriorityFlags": ["(not set: Fair Tree, Slurm's default since 19.05)"],
        "SchedulerParameters bf_continue": ["bf_continue"],
        "QOS high Priority": ["100"],
        "QOS batchqos MaxSubmitPU": ["100"],
        "assoc MaxSubmit": ["200"],
        "assoc MaxTRES": ["cpu=64"],
        "assoc Share (users)": ["alice=10, bob=5"],
        "SlurmctldHost": ["ctl01"],
    }
    for key, values in expected.items():
        assert report.get(key) == values, key
    topology = report["topology.conf"]
    assert len(topology) == 3 and "SwitchName=top Switches=s[0-1]" in topology


def test_lines_not_understood_are_reported_with_file_and_line() -> None:
    unknown = {(str(u.where), u.text) for u in full_import().report.not_understood}
    assert unknown == {
        (f"{CONFIGS / 'slurm.conf'}:33", "this line is not a setting"),
        (f"{CONFIGS / 'assoc.txt'}:7", "hetero|chem|broken"),
    }


def test_every_setting_line_of_the_configuration_appears_in_the_report() -> None:
    report = full_import().report
    cited = {str(w) for m in report.mapped for w in m.where}
    cited |= {str(w) for n in report.not_modelled for w in n.where}
    cited |= {str(u.where) for u in report.not_understood}
    for name in ("slurm.conf", "partitions.conf", "gres.conf", "topology.conf"):
        lines = (CONFIGS / name).read_text().splitlines()
        for number, text in enumerate(lines, start=1):
            body = text.split("#")[0].strip()
            if body and not lines[number - 2].rstrip().endswith("\\"):
                assert f"{CONFIGS / name}:{number}" in cited, (name, number, text)


def test_every_key_of_a_node_or_partition_line_is_mapped_or_reported() -> None:
    report = full_import().report
    entries = {(str(w), m.key) for m in report.mapped for w in m.where}
    entries |= {(str(w), n.key) for n in report.not_modelled for w in n.where}
    text = (CONFIGS / "partitions.conf").read_text().splitlines()
    for number, line in enumerate(text, start=1):
        for key in re.findall(r"(\w+)=", line):
            assert (f"{CONFIGS / 'partitions.conf'}:{number}", key) in entries, (number, key)


def test_gres_conf_disagreeing_with_slurm_conf_is_reported(tmp_path: Path) -> None:
    write_conf(tmp_path, "NodeName=g[1-2] CPUs=8 Gres=gpu:2,mps:100\nPartitionName=p Nodes=ALL\n")
    write_conf(tmp_path, "Name=gpu File=/dev/nvidia[0-3]\n", "gres.conf")
    result = import_slurm(tmp_path)
    assert result.draft.clusters[0].gpus_per_node == 2  # slurm.conf's count wins
    reasons = [n.reason for n in result.report.not_modelled if n.key == "gres.conf"]
    assert reasons and "says 4 GPUs per node" in reasons[0]
    assert skipped(result.report)["Gres"] == ["mps:100"]


# --------------------------------------------------------------------------- the site file


def test_the_site_file_names_where_each_block_came_from() -> None:
    result = full_import()
    text = render_site_yaml(result.draft, result.report, "queuesim import slurm x")
    assert f"  # node[003-016]: {CONFIGS / 'slurm.conf'}:29\n" in text
    assert f"  # gpu: {CONFIGS / 'partitions.conf'}:2,5\n" in text
    assert "# Made with: queuesim import slurm x\n" in text
    assert "#   SchedulerParameters bf_continue = bf_continue [" in text


def test_cli_writes_a_site_that_loads_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report, data = tmp_path / "site.yaml", tmp_path / "r.txt", tmp_path / "r.json"
    code = main(
        [
            "import",
            "slurm",
            str(CONFIGS / "slurm.conf"),
            "--assoc",
            str(CONFIGS / "assoc.txt"),
            "--qos",
            str(CONFIGS / "qos.txt"),
            "--out",
            str(out),
            "--report",
            str(report),
            "--json",
            str(data),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "Import report (slurm)" in printed and "not understood" in printed
    site = load_site(out)
    assert site.total_cpus == 16 * 32 + 4 * 48 + 64
    counts = json.loads(data.read_text())["counts"]
    assert report.read_text().startswith(
        f"Import report (slurm): {counts['mapped']} settings mapped, "
        f"{counts['not_modelled']} read but not modelled, {counts['not_understood']}"
    )
    # the sample's first 300 jobs, interpreted: what is tested is the imported site, and
    # compiling the Slurm run for this many-pool site would cost CI minutes
    sample = (REPO / "workloads" / "kth-sp2-sample.swf").read_text(encoding="ascii")
    lines = sample.splitlines(keepends=True)
    header = [line for line in lines if line.startswith(";")]
    trace = tmp_path / "first-300.swf"
    trace.write_text("".join(header + [x for x in lines if not x.startswith(";")][:300]))
    run_out = tmp_path / "run"
    args = ["run", str(out), str(trace), "--out", str(run_out), "--kernels", "interpreted"]
    code = main([*args, "--quiet"])
    assert code == 0 and (run_out).is_dir()
    # the run is Slurm's scheduler with the site's SchedulerParameters, under its
    # multifactor priority
    ran = json.loads((run_out / "metrics.json").read_text())
    assert ran["run"]["policy"] == "slurm"
    assert ran["run"]["params"]["bf_resolution"] == 300
    assert ran["jobs"] == 300 and ran["completed"] + ran["killed"] == 300


def test_cli_without_out_prints_only_the_site_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "slurm", str(CONFIGS)]) == 0
    text = capsys.readouterr().out
    assert yaml.safe_load(text)["name"] == "hetero"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "no slurm.conf in the folder"),
        (
            "NodeName=n1 CPUs=eight\nPartitionName=p Nodes=ALL\n",
            "slurm.conf:1: CPUs=eight: expected a whole number",
        ),
        (
            "NodeName=n1 CPUs=8\nPartitionName=p Nodes=ALL MaxTime=forever\n",
            "slurm.conf:2: MaxTime=forever: expected a time",
        ),
        ("PartitionName=p Nodes=ALL\n", "no NodeName lines"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, expected: str
) -> None:
    if text is not None:
        write_conf(tmp_path, text)
    code = main(["import", "slurm", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("error: ") and expected in captured.err
