"""Fairshare accounting and the orderings built on it (paper 004, sections 2.1 and 4.2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from builders import KIB, J, make_site, make_workload, simulate

from queuesim.core.cluster import Allocation
from queuesim.core.fairshare import FairshareLedger
from queuesim.site.loading import site_errors
from queuesim.site.model import Fairshare, Site

GIB = 1024**3


def alloc(cpus: int, mem_per_cpu: int = 0, node: int = 0) -> Allocation:
    return Allocation(
        nodes=np.array([node]),
        cpus=np.array([cpus]),
        mem_per_cpu=mem_per_cpu,
        pools=np.array([node]),
        pool_cpus=np.array([cpus]),
    )


def ledger(config: dict[str, Any], accounts: list[int], memory: bool = False) -> FairshareLedger:
    return FairshareLedger(
        Fairshare.model_validate(config),
        np.array(accounts),
        capacity_cpus=np.array([4]),
        capacity_mem=np.array([16 * GIB]),
        memory_modelled=memory,
    )


def test_half_life_halves_usage_after_one_half_life() -> None:
    # job 0 (account 7) runs 2 CPUs from 0 to 100: it pays 200 CPU-seconds at t=100;
    # one half-life (1000 s) later that is 100, two half-lives later 50
    book = ledger({"half_life": 1000}, [7])
    book.job_started(0, 2, alloc(2), 0.0)
    book.job_finished(0, 100.0)
    assert book.effective_usage(100.0)[0] == pytest.approx(200.0)
    assert book.effective_usage(1100.0)[0] == pytest.approx(100.0)
    assert book.effective_usage(2100.0)[0] == pytest.approx(50.0)


def test_decay_factor_applies_once_per_interval_boundary() -> None:
    # 200 CPU-seconds charged at t=150; factor 0.5 at every multiple of 100 s:
    # still 200 at t=199, 100 at t=200, 25 at t=450 (boundaries 200, 300, 400)
    book = ledger({"decay_factor": 0.5, "decay_interval": 100}, [1])
    book.job_started(0, 4, alloc(4), 100.0)
    book.job_finished(0, 150.0)
    assert book.effective_usage(199.0)[0] == pytest.approx(200.0)
    assert book.effective_usage(200.0)[0] == pytest.approx(100.0)
    assert book.effective_usage(450.0)[0] == pytest.approx(25.0)


def test_running_jobs_are_charged_as_they_run() -> None:
    # 4 CPUs since t=10: at t=60 the account has used 4 * 50 = 200, not yet decayed
    book = ledger({"half_life": 10**9}, [3])
    book.job_started(0, 4, alloc(4), 10.0)
    assert book.effective_usage(60.0)[0] == pytest.approx(200.0, rel=1e-6)


def test_multi_resource_charge_pays_the_larger_of_cpu_and_memory_share() -> None:
    # node: 4 CPUs, 16 GiB, so one CPU "is" 4 GiB. 1 CPU with 8 GiB pays 2 processor
    # equivalents; 2 CPUs with 1 GiB each pay their 2 CPUs.
    book = ledger({"charge": "multi-resource"}, [1, 2], memory=True)
    assert book.rate_of(1, alloc(1, 8 * GIB)) == pytest.approx(2.0)
    assert book.rate_of(2, alloc(2, 1 * GIB)) == pytest.approx(2.0)
    cpu_only = ledger({"charge": "cpu"}, [1], memory=True)
    assert cpu_only.rate_of(1, alloc(1, 8 * GIB)) == pytest.approx(1.0)


def test_shares_divide_usage() -> None:
    book = ledger({"half_life": 10**9, "shares": {5: 2.0}}, [5, 6])
    book.job_started(0, 2, alloc(2), 0.0)
    book.job_finished(0, 100.0)
    book.job_started(1, 2, alloc(2), 0.0)
    book.job_finished(1, 100.0)
    usage = book.effective_usage(100.0)
    assert usage[0] == pytest.approx(100.0, rel=1e-6)  # account 5: 200 / share 2
    assert usage[1] == pytest.approx(200.0, rel=1e-6)


def test_usage_log_records_every_account_at_each_interval() -> None:
    book = ledger({"half_life": 10**9, "usage_log": 50}, [1, 2])
    book.job_started(0, 1, alloc(1), 0.0)
    book.job_finished(0, 120.0)
    table = book.usage_table()
    assert table is not None
    assert table["time"].tolist() == [0.0, 0.0, 50.0, 50.0, 100.0, 100.0]
    assert table.loc[table["account"] == 1, "usage"].tolist() == pytest.approx([0, 50, 100])


def fairshare_site(ordering: str, **extra: Any) -> Site:
    base = make_site(((1, 1),))
    doc = base.model_dump(mode="json")
    doc.update({"ordering": ordering, "fairshare": {"half_life": 10**9}}, **extra)
    return Site.model_validate(doc)


def test_fairshare_puts_the_lighter_user_first_despite_submit_order() -> None:
    # one CPU. User 1 runs job 1 (0..100). At t=10 user 1 submits job 2 and at t=20
    # user 2 submits job 3. At t=100 user 1 has used 100 CPU-seconds, user 2 none, so
    # fairshare starts job 3 (100..110) before job 2 (110..120); FCFS would not.
    jobs = [J(1, 0, 100, 1, user=1), J(2, 10, 10, 1, user=1), J(3, 20, 10, 1, user=2)]
    site = fairshare_site("fairshare")
    fair = simulate(site, make_workload(jobs, site), "easy")
    assert fair.starts == {1: 0.0, 2: 110.0, 3: 100.0}
    fcfs_site = fairshare_site("fcfs")
    plain = simulate(fcfs_site, make_workload(jobs, fcfs_site), "easy")
    assert plain.starts == {1: 0.0, 2: 100.0, 3: 110.0}


def test_queue_priority_comes_before_fairshare() -> None:
    # queues by walltime: "short" (up to 1h, priority 10) and "long" (priority 0).
    # At t=100 user 2 (no usage) waits in "long" (job 3) and user 1 (heavy) in "short"
    # (job 2): the short queue's priority wins; within one queue fairshare would decide.
    jobs = [
        J(1, 0, 100, 1, user=1),
        J(2, 10, 10, 1, requested=600, user=1),
        J(3, 20, 10, 1, requested=7200, user=2),
    ]
    site = fairshare_site(
        "queue-priority",
        queues=[
            {"name": "short", "max_walltime": "1h", "priority": 10},
            {"name": "long", "priority": 0},
        ],
    )
    run = simulate(site, make_workload(jobs, site), "easy")
    assert run.starts == {1: 0.0, 2: 100.0, 3: 110.0}
    # the same jobs with fairshare only: the light user's job goes first
    flat = fairshare_site(
        "fairshare",
        queues=[
            {"name": "short", "max_walltime": "1h", "priority": 10},
            {"name": "long", "priority": 0},
        ],
    )
    run = simulate(flat, make_workload(jobs, flat), "easy")
    assert run.starts == {1: 0.0, 2: 110.0, 3: 100.0}


def test_multi_resource_fairshare_penalises_memory_heavy_use() -> None:
    # two nodes of 4 CPUs and 4 GiB (memory per CPU modelled), so one CPU "is" 1 GiB.
    # User 1's job 1 takes 1 CPU with 4 GiB (a whole node's memory): 4 processor
    # equivalents per second; user 2's job 2 takes 1 CPU with 1 GiB: 1 PE per second.
    # Both then submit a whole-site job, which waits for both to end at t=100: user 2
    # (100 PE-s used) goes before user 1 (400 PE-s). With a CPU-only charge both would
    # have used 100 and submit order would start job 3 first.
    site_doc = make_site(((2, 4, 4 * 1024 * 1024),)).model_dump(mode="json")
    site_doc.update(
        {"ordering": "fairshare", "fairshare": {"half_life": 10**9, "charge": "multi-resource"}}
    )
    site = Site.model_validate(site_doc)
    mem_4g = 4 * 1024 * 1024  # KiB per CPU
    jobs = [
        J(1, 0, 100, 1, user=1, mem=mem_4g),
        J(2, 0, 100, 1, user=2, mem=KIB * 1024),
        J(3, 50, 10, 8, user=1, mem=KIB),
        J(4, 60, 10, 8, user=2, mem=KIB),
    ]
    run = simulate(site, make_workload(jobs, site), "easy")
    assert run.starts[4] == 100.0
    assert run.starts[3] == 110.0


@pytest.mark.parametrize(
    ("fairshare", "message"),
    [
        ({"half_life": "1d", "decay_factor": 0.5, "decay_interval": "1d"}, "not both"),
        ({"decay_factor": 0.5}, "go together"),
        ({"decay_factor": 1.5, "decay_interval": "1d"}, "less than or equal to 1"),
        ({"shares": {1: 0}}, "shares must be positive"),
        ({"charge": "ram"}, "fairshare.charge"),
    ],
)
def test_bad_fairshare_settings_are_reported_with_their_key(
    fairshare: dict[str, Any], message: str
) -> None:
    doc = make_site().model_dump(mode="json")
    doc["fairshare"] = fairshare
    problems = site_errors(doc)
    assert problems, fairshare
    assert any(message in p for p in problems), problems
    assert all(p.startswith("fairshare") for p in problems), problems
