"""The engine refuses a policy's illegal actions, and its clock obeys the policy's requests.

Every test registers a throwaway policy (a dataclass with a ``name`` and ``schedule(ctx)``)
that breaks one rule, runs it on a tiny workload and checks that :class:`PolicyViolation`
names the job (by its trace job id, never its row number) and the rule.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import queuesim.policies.registry as policy_module
from queuesim.common.errors import ConfigError, PolicyViolation
from queuesim.core.context import Context
from queuesim.core.engine import Simulation
from queuesim.core.result import Result
from queuesim.core.workload import Workload, load_workload
from queuesim.policies.registry import Policy, make_policy, register
from queuesim.site.model import Site

Schedule = Callable[[Any, Context], None]


@pytest.fixture(autouse=True)
def private_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Throwaway policies are registered in a copy of the registry, dropped afterwards."""
    policy_module._load_builtin_and_plugins()
    monkeypatch.setattr(policy_module, "_REGISTRY", dict(policy_module._REGISTRY))
    yield


def job(job_id: int, submit: float, runtime: float, cpus: int, *, req_mem: float = -1) -> str:
    fields = [job_id, submit, -1, runtime, cpus, -1, -1, cpus, runtime, req_mem, 1, 1, 1]
    return " ".join(str(f) for f in fields + [-1] * 5)


def make_site(**overrides: Any) -> Site:
    data: dict[str, Any] = {
        "name": "t",
        "clusters": [{"name": "c", "nodes": 4, "cpus_per_node": 1}],
    }
    data.update(overrides)
    return Site.model_validate(data)


def make_workload(tmp_path: Path, site: Site, lines: list[str]) -> Workload:
    path = tmp_path / "trace.swf"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return load_workload(path, site)


def throwaway_policy(name: str, schedule: Schedule, **fields: Any) -> Policy:
    """Register a dataclass policy ``name`` whose pass is ``schedule(self, ctx)``; build it
    through the registry as the CLI would."""
    spec: list[Any] = [("name", str, dataclasses.field(default=name, init=False))]
    spec += [
        (k, Any, dataclasses.field(default_factory=lambda v=v: copy.copy(v)))
        for k, v in fields.items()
    ]
    class_name = "Throwaway_" + re.sub(r"\W", "_", name)
    cls = dataclasses.make_dataclass(class_name, spec, namespace={"schedule": schedule})
    register(name)(cls)
    return make_policy(name)


def unique_name(request: pytest.FixtureRequest) -> str:
    return f"test-{request.node.name}"


def run(tmp_path: Path, lines: list[str], policy: Policy, site: Site | None = None) -> Result:
    site = site or make_site()
    return Simulation(site, make_workload(tmp_path, site, lines), policy).run()


def start_all_waiting(self: Any, ctx: Context) -> None:
    for j in ctx.waiting():
        ctx.start(int(j))


# --- illegal actions -------------------------------------------------------------------------


def test_starting_a_running_job_again_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        ctx.start(0)
        ctx.start(0)

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match=r"job 101 .*already running.*starts once"):
        run(tmp_path, [job(101, 0, 10, 1)], policy)


def test_starting_a_finished_job_again_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        start_all_waiting(self, ctx)
        if ctx.now == 20:
            ctx.start(0)  # job 101 ended at 10

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match=r"job 101 .*already run.*starts once"):
        run(tmp_path, [job(101, 0, 10, 1), job(102, 20, 10, 1)], policy)


def test_starting_a_job_before_its_submit_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        ctx.start(1)  # job 102 arrives at 5

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match=r"job 102 .*not been submitted.*before submit"):
        run(tmp_path, [job(101, 0, 10, 1), job(102, 5, 10, 1)], policy)


def test_starting_a_job_that_overcommits_cpus_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    policy = throwaway_policy(unique_name(request), start_all_waiting)
    with pytest.raises(PolicyViolation, match=r"job 102: .*exceed the CPU capacity") as info:
        run(tmp_path, [job(101, 0, 10, 3), job(102, 0, 10, 3)], policy)
    assert "needs 3 CPUs, only 1 can be placed" in str(info.value)


def test_starting_a_job_that_overcommits_memory_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # one node of 4 CPUs and 4 MB; each job asks 2 CPUs x 1500 KB: CPUs fit, memory does not
    site = make_site(
        memory="per-cpu",
        clusters=[{"name": "c", "nodes": 1, "cpus_per_node": 4, "memory_per_node": "4MB"}],
    )
    policy = throwaway_policy(unique_name(request), start_all_waiting)
    with pytest.raises(PolicyViolation, match=r"job 102: .*exceed the CPU and memory capacity"):
        run(
            tmp_path,
            [job(101, 0, 10, 2, req_mem=1500), job(102, 0, 10, 2, req_mem=1500)],
            policy,
            site,
        )


@pytest.mark.parametrize("rate", [1.5, -0.1, float("nan")])
def test_a_rate_outside_zero_one_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest, rate: float
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        start_all_waiting(self, ctx)
        self.sim.set_rate(0, self.rate)

    policy = throwaway_policy(unique_name(request), schedule, rate=rate, sim=None)
    site = make_site()
    sim = Simulation(site, make_workload(tmp_path, site, [job(101, 0, 10, 1)]), policy)
    policy.sim = sim  # type: ignore[attr-defined]
    with pytest.raises(PolicyViolation, match=r"job 101: rate .* outside \[0, 1\]"):
        sim.run()


def test_a_policy_that_never_starts_some_job_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        if ctx.now == 0:
            ctx.start(int(ctx.waiting()[0]))

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match=r"left 2 jobs never run \(first: job 102\)"):
        run(tmp_path, [job(101, 0, 10, 1), job(102, 0, 10, 1), job(103, 0, 10, 1)], policy)


def test_a_wake_up_in_the_past_is_refused(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        ctx.wake_at(ctx.now - 1)

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match="in the past"):
        run(tmp_path, [job(101, 5, 10, 1)], policy)


def test_a_wake_up_at_the_current_instant_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        self.passes += 1
        if self.passes > 100:  # guard: without it the engine spins at t=5 for ever
            raise RuntimeError("the engine gave 100 passes at one instant")
        ctx.wake_at(ctx.now)

    policy = throwaway_policy(unique_name(request), schedule, passes=0)
    with pytest.raises(PolicyViolation):
        run(tmp_path, [job(101, 5, 10, 1)], policy)


class Accepted(Exception):
    """Raised by a test policy right after the engine accepted an action it should refuse,
    to stop the run before the accepted action does harm (such as a hang)."""


def test_a_wake_up_at_nan_is_refused(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        ctx.wake_at(math.nan)
        raise Accepted

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation):
        run(tmp_path, [job(101, 0, 10, 1)], policy)


@pytest.mark.parametrize("number", [-1, 2])
def test_starting_a_job_number_that_does_not_exist_is_refused(
    tmp_path: Path, request: pytest.FixtureRequest, number: int
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        ctx.start(number)
        raise Accepted

    policy = throwaway_policy(unique_name(request), schedule)
    with pytest.raises(PolicyViolation, match=str(number)):
        run(tmp_path, [job(101, 0, 10, 1), job(102, 0, 10, 1)], policy)


# --- clock and rates -------------------------------------------------------------------------


def test_wake_at_produces_a_pass_at_that_time(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        self.passes.append(ctx.now)
        if ctx.now == 0:
            ctx.start(0)
            ctx.wake_at(7.5)
        elif ctx.now == 7.5:
            ctx.start(1)

    policy = throwaway_policy(unique_name(request), schedule, passes=[])
    result = run(tmp_path, [job(101, 0, 100, 1), job(102, 0, 10, 1)], policy)
    assert policy.passes == [0.0, 7.5]  # type: ignore[attr-defined]
    assert result.jobs["start"].tolist() == [0.0, 7.5]
    assert result.jobs["end"].tolist() == [100.0, 17.5]


def test_wake_at_produces_a_pass_even_when_no_job_waits(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        self.passes.append(ctx.now)
        if ctx.now == 0:
            ctx.start(0)
            ctx.wake_at(5)

    policy = throwaway_policy(unique_name(request), schedule, passes=[])
    run(tmp_path, [job(101, 0, 100, 1)], policy)
    assert policy.passes == [0.0, 5.0]  # type: ignore[attr-defined]


def test_half_rate_doubles_the_remaining_duration(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def schedule(self: Any, ctx: Context) -> None:
        if ctx.now == 50:
            self.sim.set_rate(0, 0.5)  # job 101 has 50 s of work left: 100 s at half speed
        start_all_waiting(self, ctx)

    policy = throwaway_policy(unique_name(request), schedule, sim=None)
    site = make_site()
    # job 102 arrives at 50, which gives the policy its pass at t=50
    workload = make_workload(tmp_path, site, [job(101, 0, 100, 1), job(102, 50, 10, 1)])
    sim = Simulation(site, workload, policy)
    policy.sim = sim  # type: ignore[attr-defined]
    result = sim.run()
    ends = dict(zip(result.jobs["job_id"], result.jobs["end"], strict=True))
    assert ends == {101: 150.0, 102: 60.0}


# --- building policies -----------------------------------------------------------------------


def test_unknown_policy_error_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        make_policy("no-such-policy")
    message = str(info.value)
    assert "'no-such-policy'" in message
    for known in ("fcfs", "easy", "conservative"):
        assert known in message


def test_unknown_parameter_error_lists_the_policy_parameters() -> None:
    with pytest.raises(ConfigError) as info:
        make_policy("easy", {"depth": "3"})
    message = str(info.value)
    assert "'depth'" in message
    assert "record_reservations" in message


def test_unknown_parameter_of_a_policy_without_parameters_says_none() -> None:
    with pytest.raises(ConfigError, match=r"policy 'fcfs' has no parameter 'x'.*: none"):
        make_policy("fcfs", {"x": "1"})


def test_badly_typed_parameter_is_a_clear_error() -> None:
    with pytest.raises(ConfigError) as info:
        make_policy("easy", {"record_reservations": "maybe"})
    assert str(info.value) == (
        "policy 'easy': parameter 'record_reservations' expects bool, got 'maybe'"
    )


@pytest.mark.parametrize(("text", "value"), [("yes", True), ("0", False), ("True", True)])
def test_typed_parameter_is_converted_from_text(text: str, value: bool) -> None:
    policy = make_policy("easy", {"record_reservations": text})
    assert policy.record_reservations is value  # type: ignore[attr-defined]


def test_badly_typed_non_string_parameter_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="record_reservations"):
        make_policy("easy", {"record_reservations": 7})


@pytest.mark.parametrize("pool", [4, "100%"])
def test_a_cpu_pool_as_large_as_the_queues_clusters_limits_nothing(pool: int | str) -> None:
    """Job 2 (4 CPUs) waits for room behind job 1 (3 of 4 CPUs). With a pool of the whole
    machine it must still wait for room, not be "held by the pool" and passed over: FCFS
    starts job 3 after job 2, EASY backfills it, exactly as with no pool."""
    from builders import J
    from builders import make_workload as workload_of

    jobs = [
        J(id=1, submit=0, runtime=100, cpus=3, requested=100),
        J(id=2, submit=1, runtime=100, cpus=4, requested=100),
        J(id=3, submit=2, runtime=10, cpus=1, requested=10),
    ]
    starts = {}
    for name in ("fcfs", "easy"):
        site = Site.model_validate(
            {
                "name": "t",
                "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 4}],
                "queues": [{"name": "batch", "cpu_pool": pool}],
            }
        )
        assert site.pool_cpus(site.queues[0]) is None
        result = Simulation(site, workload_of(jobs, site), make_policy(name, {})).run()
        starts[name] = result.jobs["start"].tolist()
    assert starts == {"fcfs": [0.0, 100.0, 200.0], "easy": [0.0, 100.0, 2.0]}
