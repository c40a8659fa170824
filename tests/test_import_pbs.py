"""Tests of ``queuesim import pbs``: qmgr ``print server`` output, ``pbsnodes -av``, the
scheduler's sched_config and the fairshare resource_group into a site file and an import
report. ``tests/configs/pbs`` is a PBS_HOME-like folder written by hand from the OpenPBS
manual pages: three CPU nodes with InfiniBand, two GPU nodes bound to queue ``gpu``, one
big-memory node; a routing queue ``workq`` over short/normal/long. The real OpenPBS
default scheduler files are read from ``../shared/workloads/site-logs`` when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from import_helpers import by_name, site_of, skipped

from queuesim.cli import main
from queuesim.common.errors import ConfigError
from queuesim.site.import_report import Where
from queuesim.site.loading import load_site
from queuesim.site.model import Site
from queuesim.site.pbs_conf import pbs_size, pbs_walltime
from queuesim.site.pbs_import import PbsFiles, PbsImport, import_pbs, pbs_files

HOME = Path(__file__).resolve().parent / "configs" / "pbs"
W = Where("q.txt", 3)


def full_import() -> PbsImport:
    return import_pbs(pbs_files(HOME))


NODES = "n1\n     resources_available.ncpus = 8\n\nn2\n     resources_available.ncpus = 8\n"


def small(tmp_path: Path, qmgr: str = "", sched: str | None = None) -> PbsImport:
    (tmp_path / "pbsnodes.txt").write_text(NODES)
    (tmp_path / "qmgr.txt").write_text(
        "create queue a\nset queue a queue_type = Execution\n"
        "set queue a resources_max.walltime = 01:00:00\nset queue a priority = 1\n"
        "create queue b\nset queue b queue_type = Execution\nset queue b priority = 2\n" + qmgr
    )
    if sched is not None:
        (tmp_path / "sched_config").write_text(sched)
    return import_pbs(pbs_files(tmp_path))


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("196608000kb", 196608000 * 1024),
        ("64gb", 64 * 1024**3),
        ("3tb", 3 * 1024**4),
        ("1024", 1024),
        ("2mw", 2 * 1024**2 * 8),
    ],
)
def test_pbs_sizes_are_powers_of_1024_with_words_of_8_bytes(text: str, size: int) -> None:
    assert pbs_size(text, W, "mem") == size


@pytest.mark.parametrize(
    ("text", "seconds"), [("336:00:00", 1209600.0), ("30:00", 1800.0), ("45", 45.0)]
)
def test_pbs_walltimes_allow_hours_over_24(text: str, seconds: float) -> None:
    assert pbs_walltime(text, W, "walltime") == seconds


def test_an_unreadable_value_names_file_line_and_what_was_expected() -> None:
    with pytest.raises(ConfigError, match=r"q\.txt:3: mem = lots: expected a size"):
        pbs_size("lots", W, "mem")


# --------------------------------------------------------------------------- golden mapping


def test_nodes_alike_in_cpus_memory_gpus_properties_and_queue_form_one_cluster_each() -> None:
    assert site_of(full_import())["clusters"] == [
        {
            "name": "node",
            "nodes": 3,
            "cpus_per_node": 32,
            "memory_per_node": "192000MB",
            "properties": ["infiniband"],
        },
        {
            "name": "gpu",
            "nodes": 2,
            "cpus_per_node": 48,
            "memory_per_node": "384GB",
            "properties": ["infiniband"],
            "gpus_per_node": 4,
        },
        {
            "name": "bigmem",
            "nodes": 1,
            "cpus_per_node": 64,
            "memory_per_node": "3072GB",
            "properties": ["bigmem"],
        },
    ]


def test_execution_queues_become_queues_with_walltimes_priorities_and_limits() -> None:
    queues = by_name(site_of(full_import())["queues"])
    assert list(queues) == ["short", "normal", "long", "gpu"]  # workq routes, runs nothing
    assert queues["short"] == {
        "name": "short",
        "max_walltime": "2:00:00",
        "default_walltime": "0:30:00",
        "priority": 100,
        "clusters": ["node", "bigmem"],
        "trace_queues": ["short"],
        "max_running_per_user": 50,  # its own max_run, not the server's 100
    }
    assert queues["normal"]["max_running_per_user"] == 100  # the server's max_run
    assert "max_cpus_per_user" not in queues["normal"]  # 256 > its 160 CPUs: dropped
    assert queues["long"]["max_walltime"] == "336:00:00"
    # gpu: nodes bound to it, max_user_run, and not a destination of the routing queue
    assert queues["gpu"]["clusters"] == ["gpu"]
    assert queues["gpu"]["max_running_per_user"] == 4
    assert queues["gpu"]["route_by_walltime"] is False


def test_a_cpu_pool_within_the_queues_cpus_is_kept(tmp_path: Path) -> None:
    result = small(
        tmp_path,
        "set queue a max_run_res.ncpus = [o:PBS_ALL=12]\nset queue b max_user_res.ncpus = 4\n",
    )
    queues = by_name(site_of(result)["queues"])
    assert queues["a"]["cpu_pool"] == 12 and queues["b"]["max_cpus_per_user"] == 4


def test_scheduler_ordering_fairshare_and_memory_from_sched_config() -> None:
    site = site_of(full_import())
    # strict_ordering with the server's backfill_depth = 2
    assert site["scheduler"] == {
        "policy": "scan",
        "params": {"reserved_jobs": 2, "reserve_when_limited": False},
    }
    # by_queue (prime time), fair_share, job_sort_key, help_starving_jobs with max_starve
    assert site["ordering"] == "pbs"
    assert site["pbs_order"] == {
        "sort_keys": ["ncpus HIGH"],
        "max_starve": "1d",
        "by_queue": True,
        "round_robin": False,
        "fair_share": True,
    }
    # decay every 24:00:00 by 0.7; the tree physics 60 (alice 1, bob 3), chem 40 (carol)
    assert site["fairshare"] == {
        "decay_factor": 0.7,
        "decay_interval": "1d",
        "by": "user",
        # and unknown_shares 10: PBS's group of the entities resource_group does not list
        "unknown_group": "unknown",
        "groups": [
            {"name": "physics", "parent": "root", "shares": 60.0},
            {"name": "chem", "parent": "root", "shares": 40.0},
            {"name": "unknown", "parent": "root", "shares": 10.0},
        ],
        "members": {5001: "physics", 5002: "physics", 5003: "chem"},
        "shares": {5001: 1.0, 5002: 3.0, 5003: 1.0},
    }
    assert site["memory"] == "per-cpu"  # resources names mem


@pytest.mark.parametrize(
    ("sched", "qmgr", "policy", "params"),
    [
        ("strict_ordering: true ALL\n", "", "easy", {}),
        ("strict_ordering: true ALL\n", "set server backfill_depth = 0\n", "fcfs", {}),
        (
            "strict_ordering: false ALL\nhelp_starving_jobs: false ALL\n",
            "",
            "scan",
            {"reserved_jobs": 0},
        ),
        (  # only starving jobs reserve, up to backfill_depth
            "strict_ordering: false ALL\n",
            "set server backfill_depth = 3\n",
            "scan",
            {"reserved_jobs": 3, "reserve_when_limited": False, "starving_only": True},
        ),
        (  # backfilling off: nothing reserves, not even starving jobs
            "strict_ordering: false ALL\nbackfill: false ALL\n",
            "",
            "scan",
            {"reserved_jobs": 0},
        ),
    ],
)
def test_strict_ordering_backfill_depth_and_starving_choose_the_policy(
    tmp_path: Path, sched: str, qmgr: str, policy: str, params: dict[str, int]
) -> None:
    scheduler = site_of(small(tmp_path, qmgr, sched))["scheduler"]
    assert scheduler == ({"policy": policy, "params": params} if params else {"policy": policy})


@pytest.mark.parametrize(
    ("sched", "ordering"),
    [
        # where the PBS order is exactly a compiled order, that order is written
        ("fair_share: true ALL\nby_queue: false ALL\n", "fairshare"),
        ("fair_share: true ALL\nby_queue: true ALL\n", "queue-priority"),
        ("fair_share: false ALL\nby_queue: false ALL\n", "fcfs"),
        # queues by priority but submit order within: only the PBS order has it
        ("fair_share: false ALL\nby_queue: true ALL\n", "pbs"),
        ("fair_share: false ALL\nround_robin: true ALL\n", "pbs"),
        ('by_queue: false ALL\njob_sort_key: "walltime LOW" ALL\n', "pbs"),
    ],
)
def test_fair_share_by_queue_round_robin_and_sort_keys_choose_the_ordering(
    tmp_path: Path, sched: str, ordering: str
) -> None:
    """(help_starving_jobs off: a starving job would always need the PBS order.)"""
    sched = "help_starving_jobs: false ALL\n" + sched
    assert site_of(small(tmp_path, "", sched))["ordering"] == ordering


@pytest.mark.parametrize(
    ("sched", "pbs_order"),
    [
        ("", {"max_starve": "1d", "by_queue": True, "round_robin": False, "fair_share": False}),
        (
            "max_starve: 36:00:00\nround_robin: true ALL\n"
            'job_sort_key: "ncpus HIGH" ALL\njob_sort_key: "walltime LOW" ALL\n'
            'job_sort_key: "cput LOW" ALL\n',
            {
                "sort_keys": ["ncpus HIGH", "walltime LOW"],
                "max_starve": "36h",
                "by_queue": True,
                "round_robin": True,
                "fair_share": False,
            },
        ),
    ],
)
def test_starving_round_robin_and_job_sort_keys_map_to_the_pbs_order(
    tmp_path: Path, sched: str, pbs_order: dict[str, Any]
) -> None:
    """help_starving_jobs is on by default with max_starve 24:00:00 (sched_config(5));
    job_sort_key lines are kept in file order, a resource queuesim does not know for every
    job (cput) is reported."""
    result = small(tmp_path, "", sched)
    site = site_of(result)
    assert site["ordering"] == "pbs" and site["pbs_order"] == pbs_order
    if "cput" in sched:
        assert skipped(result.report)["job_sort_key"] == ["cput LOW"]
        assert {"setting": "job_sort_key", "value": "cput LOW"}.items() <= next(
            n for n in site["not_modelled"] if n["setting"] == "job_sort_key"
        ).items()


def test_torque_pbsnodes_np_properties_gpus_and_physmem(tmp_path: Path) -> None:
    (tmp_path / "nodes").write_text(
        "t1\n     state = free\n     np = 16\n     properties = bigmem,ib\n"
        "     ntype = cluster\n     gpus = 2\n"
        "     status = opsys=linux,physmem=65536000kb,ncpus=16\n"
    )
    result = import_pbs(PbsFiles(nodes=tmp_path / "nodes"))
    assert site_of(result)["clusters"] == [
        {
            "name": "t",
            "nodes": 1,
            "cpus_per_node": 16,
            "memory_per_node": "64000MB",
            "properties": ["bigmem", "ib"],
            "gpus_per_node": 2,
        }
    ]


def test_nodes_may_come_from_qmgr_print_node_lines(tmp_path: Path) -> None:
    (tmp_path / "qmgr.txt").write_text(
        "create node c1 Mom=c1.x\nset node c1 resources_available.ncpus = 24\n"
        "set node c1 resources_available.ssd = True\n"
    )
    result = import_pbs(pbs_files(tmp_path))
    assert site_of(result)["clusters"] == [
        {"name": "c", "nodes": 1, "cpus_per_node": 24, "properties": ["ssd"]}
    ]


# --------------------------------------------------------------------------- the report


def test_settings_not_modelled_are_reported_with_their_values() -> None:
    report = skipped(full_import().report)
    expected = {
        "sharing": ["force_excl"],
        "resources_available.cpu_model": ["epyc"],
        "queue normal max_queued": ["[u:PBS_GENERIC=500]"],
        "queue normal resources_min.walltime": ["02:00:01"],
        "queue long resources_max.ncpus": ["128"],
        "queue gpu acl_groups": ["physics"],
        "queue normal max_cpus_per_user": ["256"],
        "queue long cpu_pool": ["320"],
        "server log_events": ["511"],
        "preemptive_sched": ["true"],
        "by_queue": ["False (non_prime)"],
        "state": ["free (4 nodes)", "job-busy", "offline"],
    }
    for key, values in expected.items():
        assert report.get(key) == values, key


def test_lines_not_understood_are_reported_with_file_and_line() -> None:
    unknown = {(str(u.where), u.text) for u in full_import().report.not_understood}
    assert unknown == {
        (f"{HOME / 'qmgr.txt'}:70", "this is not a qmgr line"),
        (f"{HOME / 'pbsnodes.txt'}:89", "garbage = here"),
        (f"{HOME / 'sched_priv' / 'sched_config'}:20", "not a sched_config line"),
        (f"{HOME / 'sched_priv' / 'resource_group'}:7", "broken line"),
    }


@pytest.mark.parametrize(
    "name", ["qmgr.txt", "pbsnodes.txt", "sched_priv/sched_config", "sched_priv/resource_group"]
)
def test_every_line_of_every_file_appears_in_the_report(name: str) -> None:
    report = full_import().report
    cited = {str(w) for m in report.mapped for w in m.where}
    cited |= {str(w) for n in report.not_modelled for w in n.where}
    cited |= {str(u.where) for u in report.not_understood}
    for number, text in enumerate((HOME / name).read_text().splitlines(), start=1):
        body = text.strip()
        is_node_name = name == "pbsnodes.txt" and body and not text[0].isspace()
        if body and not body.startswith("#") and not is_node_name:
            assert f"{HOME / name}:{number}" in cited, (name, number, text)


# --------------------------------------------------------------------------- CLI


def test_cli_writes_a_site_that_loads_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = tmp_path / "site.yaml", tmp_path / "r.json"
    code = main(
        [
            "import",
            "pbs",
            "--qmgr",
            str(HOME / "qmgr.txt"),
            "--nodes",
            str(HOME / "pbsnodes.txt"),
            "--sched-config",
            str(HOME / "sched_priv" / "sched_config"),
            "--resource-group",
            str(HOME / "sched_priv" / "resource_group"),
            "--out",
            str(out),
            "--json",
            str(data),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0 and "Import report (pbs)" in printed
    site = load_site(out)
    assert site.total_cpus == 3 * 32 + 2 * 48 + 64
    assert json.loads(data.read_text())["counts"]["not_understood"] == 4
    assert "# Made with: queuesim import pbs --qmgr " in out.read_text()
    code = main(["run", str(out), "workloads/kth-sp2-sample.swf", "--out", str(tmp_path / "run")])
    assert code == 0
    # the run's summary and metrics.json carry what the configuration uses but the run
    # leaves out, with values and sources
    summary = capsys.readouterr().out
    assert "not modelled (21)" in summary
    for setting in ("preemptive_sched", "node_sort_key", "queue gpu acl_groups"):
        assert setting in summary, setting
    assert "[u:PBS_GENERIC=500]" in summary  # a value is shown as written, not as markup
    document = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {
        "setting": "preemptive_sched",
        "value": "true",
        "source": f"{HOME}/sched_priv/sched_config:19",
        "reason": "preemption is not modelled",
    } in document["not_modelled"]
    assert [n["setting"] for n in document["not_modelled"]] == [
        n.setting for n in site.not_modelled
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--qmgr", "absent.txt"], "absent.txt: no such file (given as --qmgr)"),
        (
            ["--sched-config", "{home}/sched_priv/sched_config"],
            "no qmgr output and no pbsnodes output",
        ),
        (["{home}/absent"], "not a folder"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code = main(["import", "pbs", *(a.format(home=HOME) for a in args)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("error: ") and expected in captured.err


def test_a_node_without_cpus_is_an_error_naming_its_line(tmp_path: Path) -> None:
    (tmp_path / "pbsnodes.txt").write_text("n1\n     state = free\n")
    with pytest.raises(
        ConfigError,
        match=r"pbsnodes\.txt:1: node n1: expected "
        r"resources_available\.ncpus",
    ):
        import_pbs(pbs_files(tmp_path))


# --------------------------------------------------------------------------- real files


def test_real_openpbs_default_scheduler_files_are_read_line_by_line(site_logs: Path) -> None:
    folder = site_logs / "configs" / "pbs"
    sched = folder / "openpbs-default-pbs_sched_config"
    group = folder / "openpbs-default-pbs_resource_group"
    result = import_pbs(
        PbsFiles(
            qmgr=HOME / "qmgr.txt",
            nodes=HOME / "pbsnodes.txt",
            sched_config=sched,
            resource_group=group,
        )
    )
    report = result.report
    assert not [u for u in report.not_understood if u.where.file in (str(sched), str(group))]
    cited = {str(w) for m in report.mapped for w in m.where}
    cited |= {str(w) for n in report.not_modelled for w in n.where}
    settings = [
        n
        for n, t in enumerate(sched.read_text().splitlines(), start=1)
        if t.strip() and not t.strip().startswith("#")
    ]
    assert len(settings) == 19
    assert all(f"{sched}:{n}" in cited for n in settings)
    site = site_of(result)
    # fair_share: false, so the fairshare settings (decay 24:00:00 by 0.5, euser) have
    # no effect and are reported so; the resource_group's entries are all commented out
    assert "fairshare" not in site
    reasons = {n.key: n.reason for n in result.report.not_modelled}
    assert reasons["fairshare_decay_factor"] == "fair_share is off: no effect"
    # strict_ordering false, help_starving_jobs on by default: only starving jobs reserve
    assert site["scheduler"]["policy"] == "scan"
    assert site["scheduler"]["params"]["starving_only"] is True
    assert site["ordering"] == "pbs" and site["pbs_order"]["max_starve"] == "1d"
    assert site["memory"] == "per-cpu"  # resources: "ncpus, mem, ..."


def test_a_nested_resource_group_becomes_the_tree_and_unlisted_entities_are_reported(
    tmp_path: Path,
) -> None:
    """resource_group(5): ``name id parent shares``; groups may nest. Without
    unknown_shares, PBS gives unlisted entities no shares at all, which queuesim cannot
    express: the difference is reported (and listed in the site's not_modelled)."""
    (tmp_path / "resource_group").write_text(
        "science 10 root 80\nphysics 11 science 3\nchem 12 science 1\n"
        "ann 7001 physics 2\nben 7002 chem 1\nops 7003 root 20\n"
    )
    result = small(tmp_path, "", "fair_share: true ALL\n")
    site = site_of(result)
    assert site["ordering"] == "pbs" and site["pbs_order"]["fair_share"] is True
    assert site["fairshare"]["groups"] == [
        {"name": "science", "parent": "root", "shares": 80.0},
        {"name": "physics", "parent": "science", "shares": 3.0},
        {"name": "chem", "parent": "science", "shares": 1.0},
    ]
    assert site["fairshare"]["members"] == {7001: "physics", 7002: "chem"}
    assert site["fairshare"]["shares"] == {7001: 2.0, 7002: 1.0, 7003: 20.0}
    assert "unknown_group" not in site["fairshare"]
    assert skipped(result.report)["unknown_shares"] == ["0"]
    assert any(n["setting"] == "unknown_shares" for n in site["not_modelled"])
    load_site_text = yaml.safe_dump(site)
    assert Site.model_validate(yaml.safe_load(load_site_text)).fairshare.members[7002] == "chem"


def test_a_non_prime_job_sort_key_is_reported_not_used(tmp_path: Path) -> None:
    sched = 'job_sort_key: "ncpus HIGH" prime\njob_sort_key: "walltime LOW" non_prime\n'
    result = small(tmp_path, "", sched)
    assert site_of(result)["pbs_order"]["sort_keys"] == ["ncpus HIGH"]
    assert skipped(result.report)["job_sort_key"] == ["walltime LOW (non_prime)"]
