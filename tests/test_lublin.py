"""Tests of the Lublin-Feitelson generator (queuesim.traces.lublin) and the DFRS annotations
(queuesim.traces.dfrs_annotation).

Statistical tests use 10,000 seeded jobs and compare with what the model's parameters
predict, with a tolerance of about four standard errors (each value is fixed by its seed,
so the tests are deterministic; the tolerance says how far a correct generator could be).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queuesim.common.errors import WorkloadError
from queuesim.traces import dfrs_annotation as annotate
from queuesim.traces import lublin
from queuesim.traces.swf import SWF_FIELDS, read_swf, write_swf

N_JOBS = 10_000


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    """10,000 typeless jobs on 128 nodes, the machine size the parameters were fitted for."""
    return lublin.generate(128, N_JOBS, seed=2024)


def standard_error(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


# --------------------------------------------------------------------------- generator


def test_same_seed_gives_identical_frame_and_identical_file_bytes(tmp_path: Path) -> None:
    first = lublin.generate(128, 500, seed=7)
    second = lublin.generate(128, 500, seed=7)
    pd.testing.assert_frame_equal(first, second)
    write_swf(tmp_path / "a.swf", first, lublin.header_lines(first, nodes=128, seed=7))
    write_swf(tmp_path / "b.swf", second, lublin.header_lines(second, nodes=128, seed=7))
    assert (tmp_path / "a.swf").read_bytes() == (tmp_path / "b.swf").read_bytes()


def test_integer_seed_equals_a_generator_seeded_with_it() -> None:
    by_int = lublin.generate(64, 200, seed=3, job_classes=True)
    by_rng = lublin.generate(64, 200, seed=np.random.default_rng(3), job_classes=True)
    pd.testing.assert_frame_equal(by_int, by_rng)


def test_different_seeds_give_different_traces() -> None:
    a = lublin.generate(128, 500, seed=1)
    b = lublin.generate(128, 500, seed=2)
    for column in ("submit", "runtime", "alloc_procs"):
        assert not np.array_equal(a[column].to_numpy(), b[column].to_numpy())


def test_frame_has_the_swf_columns_and_reads_back_unchanged(tmp_path: Path) -> None:
    jobs = lublin.generate(32, 300, seed=5)
    assert list(jobs.columns) == list(SWF_FIELDS)
    path = tmp_path / "lublin.swf.gz"
    write_swf(path, jobs, lublin.header_lines(jobs, nodes=32, seed=5))
    back = read_swf(path)
    pd.testing.assert_frame_equal(back.jobs.drop(columns="line"), jobs)
    assert back.header.max_nodes == 32


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(1, 4096),
    jobs=st.integers(0, 60),
    seed=st.integers(0, 2**32),
    job_classes=st.booleans(),
)
def test_every_job_is_valid_for_any_machine_size(
    nodes: int, jobs: int, seed: int, job_classes: bool
) -> None:
    """Sizes within [1, nodes], runtimes within [1, e^12] s, whole-second nondecreasing
    submit times, ids 1..n, queues 0 (typeless, interactive) or 1 (batch)."""
    frame = lublin.generate(nodes, jobs, seed, job_classes=job_classes)
    assert len(frame) == jobs
    size = frame["alloc_procs"].to_numpy()
    runtime = frame["runtime"].to_numpy()
    submit = frame["submit"].to_numpy()
    assert ((size >= 1) & (size <= nodes)).all()
    assert (frame["req_procs"].to_numpy() == size).all()
    assert ((runtime >= 1) & (runtime <= round(math.exp(lublin.MAX_LOG_RUNTIME)))).all()
    assert (runtime == np.round(runtime)).all() and (submit == np.round(submit)).all()
    assert (np.diff(submit) >= 0).all() and (submit >= 0).all()
    assert (frame["job_id"].to_numpy() == np.arange(1, jobs + 1)).all()
    assert set(frame["queue"].tolist()) <= ({0, 1} if job_classes else {0})


def test_size_range_is_shifted_to_the_machine_size() -> None:
    # 128 nodes: the published values; 256: one up (the typeless u_med stays u_hi - 2.5)
    assert lublin.size_range(lublin.TYPELESS, 128) == (0.8, 4.5, 7.0)
    assert lublin.size_range(lublin.TYPELESS, 256) == (0.8, 5.5, 8.0)
    assert lublin.size_range(lublin.BATCH, 512) == (1.2, 7.0, 9.0)
    assert lublin.size_range(lublin.TYPELESS, 1) == (0.0, 0.0, 0.0)


def test_power_of_two_sizes_never_exceed_a_machine_that_is_not_a_power_of_two() -> None:
    size = lublin.generate(120, 5000, seed=11)["alloc_procs"].to_numpy()
    assert size.max() <= 120
    assert (size == 64).sum() > (size == 120).sum()  # pow2 rounding goes down to 64


def test_fraction_of_serial_jobs_matches_serial_prob(trace: pd.DataFrame) -> None:
    serial = float((trace["alloc_procs"] == 1).mean())
    expected = lublin.TYPELESS.serial_prob
    assert abs(serial - expected) < 4 * standard_error(expected, N_JOBS)


def _chance_power_of_two(low: float, high: float) -> float:
    """P(round(2**x) is a power of two >= 2) for x uniform on [low, high]."""
    if high <= low:
        return 0.0
    total = 0.0
    for k in range(1, 64):
        a = max(low, math.log2(2**k - 0.5))
        b = min(high, math.log2(2**k + 0.5))
        total += max(0.0, b - a)
    return total / (high - low)


def test_fraction_of_power_of_two_sizes_matches_pow2_prob(trace: pd.DataFrame) -> None:
    """Among parallel jobs: the pow2_prob share, plus the others whose 2**x happens to
    round to a power of two."""
    p = lublin.TYPELESS
    low, med, high = lublin.size_range(p, 128)
    chance = p.u_prob * _chance_power_of_two(low, med) + (1 - p.u_prob) * _chance_power_of_two(
        med, high
    )
    parallel_share = 1 - p.serial_prob
    expected = (p.pow2_prob + (parallel_share - p.pow2_prob) * chance) / parallel_share
    size = trace["alloc_procs"].to_numpy()
    parallel = size[size > 1]
    observed = float(((parallel & (parallel - 1)) == 0).mean())
    assert abs(observed - expected) < 4 * standard_error(expected, parallel.size)


def test_mean_log_runtime_matches_the_hyper_gamma(trace: pd.DataFrame) -> None:
    """E[log runtime | size] = p*a1*b1 + (1-p)*a2*b2 with p = pa*size + pb (the cap at
    log 12 and rounding to whole seconds shift this by far less than the tolerance)."""
    p = lublin.TYPELESS
    size = trace["alloc_procs"].to_numpy(dtype=np.float64)
    p_first = np.clip(p.pa * size + p.pb, 0, 1)
    expected = float(np.mean(p_first * p.a1 * p.b1 + (1 - p_first) * p.a2 * p.b2))
    log_runtime = np.log(trace["runtime"].to_numpy())
    tolerance = 4 * float(log_runtime.std()) / math.sqrt(N_JOBS)  # about 0.1
    assert abs(float(log_runtime.mean()) - expected) < tolerance


def test_daily_cycle_weights_have_mean_one_and_an_afternoon_peak() -> None:
    for params in (lublin.TYPELESS, lublin.BATCH, lublin.INTERACTIVE):
        weights = lublin.daily_cycle_weights(params)
        assert weights.shape == (48,) and (weights > 0).all()
        assert weights.mean() == pytest.approx(1.0)
        peak_hour = int(np.argmax(weights)) / 2
        assert 11 <= peak_hour <= 17, params.name


def test_arrivals_follow_the_daily_cycle(trace: pd.DataFrame) -> None:
    """Arrival density is proportional to the half-hour weights: the busy half hours
    (weight > 1, 23 of 48) get about 73% of the jobs, not 48%."""
    weights = lublin.daily_cycle_weights(lublin.TYPELESS)
    busy = weights > 1
    expected = float(weights[busy].sum() / 48)
    bucket = ((trace["submit"].to_numpy() % 86400) // 1800).astype(np.int64)
    observed = float(busy[bucket].mean())
    # arrivals come in bursts, so the tolerance is wider than for independent draws
    assert abs(observed - expected) < 0.04
    assert observed > busy.mean() + 0.15


def test_two_class_model_mixes_interactive_and_batch_streams() -> None:
    jobs = lublin.generate(128, N_JOBS, seed=9, job_classes=True)
    queue = jobs["queue"].to_numpy()
    # batch inter-arrivals are far more heavy-tailed, so batch jobs are the minority
    assert 0.05 < (queue == 1).mean() < 0.5
    for params in (lublin.INTERACTIVE, lublin.BATCH):
        size = jobs["alloc_procs"].to_numpy()[queue == params.queue]
        expected = params.serial_prob
        assert abs((size == 1).mean() - expected) < 4 * standard_error(expected, size.size)
    assert (np.diff(jobs["submit"].to_numpy()) >= 0).all()


@pytest.mark.realtrace
def test_marginals_agree_with_the_reference_generator_sample(real_workloads: Path) -> None:
    """The shared lublin_256.swf (10,000 jobs from the authors' generator, typeless, 256
    nodes) and our trace for the same setting: same serial and power-of-two shares and
    mean log runtime, within four standard errors of the difference."""
    reference = read_swf(real_workloads / "lublin_256.swf.gz").jobs
    ours = lublin.generate(256, len(reference), seed=256)

    def shares(frame: pd.DataFrame) -> tuple[float, float]:
        size = frame["alloc_procs"].to_numpy()
        parallel = size[size > 1]
        return float((size == 1).mean()), float(((parallel & (parallel - 1)) == 0).mean())

    n = len(reference)
    for ref_share, our_share in zip(shares(reference), shares(ours), strict=True):
        assert abs(ref_share - our_share) < 4 * math.sqrt(2) * standard_error(ref_share, n)
    ref_log = np.log(reference["runtime"].to_numpy())
    our_log = np.log(ours["runtime"].to_numpy())
    assert abs(ref_log.mean() - our_log.mean()) < 4 * math.sqrt(2) * ref_log.std() / math.sqrt(n)


# --------------------------------------------------------------------------- load


def test_offered_load_is_work_over_capacity_of_the_submit_span() -> None:
    jobs = pd.DataFrame(
        {"submit": [100.0, 200.0, 1100.0], "runtime": [50.0, 10.0, 100.0], "alloc_procs": [4, 1, 2]}
    )
    # (200 + 10 + 200) / (10 nodes * 1000 s)
    assert lublin.offered_load(jobs, 10) == pytest.approx(0.041)
    with pytest.raises(ValueError, match="two distinct submit times"):
        lublin.offered_load(jobs.iloc[:1], 10)


@pytest.mark.parametrize("load", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
def test_scaling_reaches_the_target_load_within_one_percent(
    trace: pd.DataFrame, load: float
) -> None:
    scaled = lublin.scale_to_load(trace, 128, load)
    submit = scaled["submit"].to_numpy()
    work = float((scaled["runtime"] * scaled["alloc_procs"]).sum())
    measured = work / (128 * (submit.max() - submit.min()))  # computed here, not by the module
    assert abs(measured - load) / load < 0.01
    # only the submit times change: same jobs, same order, same first arrival
    pd.testing.assert_frame_equal(scaled.drop(columns="submit"), trace.drop(columns="submit"))
    assert submit[0] == trace["submit"].iloc[0] and (np.diff(submit) >= 0).all()
    assert (submit == np.round(submit)).all()


def test_scaling_rejects_a_load_that_is_not_positive(trace: pd.DataFrame) -> None:
    for bad in (0.0, -0.5, math.inf, math.nan):
        with pytest.raises(ValueError, match="load must be a positive number"):
            lublin.scale_to_load(trace, 128, bad)


# --------------------------------------------------------------------------- annotation


def test_synthetic_annotation_follows_the_paper_and_stays_in_range(trace: pd.DataFrame) -> None:
    """One task per node; CPU need 1/4 for one-task jobs, else 1; memory 10% for 55% of the
    jobs, else 20% ... 100% in steps of 10%, equally likely; every other SWF field but the
    processors unchanged."""
    jobs = annotate.annotate_synthetic(trace, seed=1)
    tasks = jobs["tasks"].to_numpy()
    cpu = jobs["cpu_need"].to_numpy()
    mem = jobs["mem_fraction"].to_numpy()
    assert (tasks == trace["alloc_procs"].to_numpy()).all()
    assert ((cpu > 0) & (cpu <= 1)).all() and ((mem >= 0) & (mem <= 1)).all()
    assert (cpu == np.where(tasks == 1, 0.25, 1.0)).all()
    tenths = np.round(mem * 10).astype(np.int64)
    assert (mem == tenths / 10).all() and set(tenths.tolist()) == set(range(1, 11))
    assert abs((tenths == 1).mean() - 0.55) < 4 * standard_error(0.55, N_JOBS)
    each = 0.45 / 9
    for x in range(2, 11):
        assert abs((tenths == x).mean() - each) < 4 * standard_error(each, N_JOBS)
    procs = ["alloc_procs", "req_procs"]
    pd.testing.assert_frame_equal(
        jobs[list(SWF_FIELDS)].drop(columns=procs), trace.drop(columns=procs)
    )


def test_synthetic_processors_are_the_cores_a_batch_scheduler_gives(trace: pd.DataFrame) -> None:
    """alloc_procs = req_procs = tasks x cpu_need x node_cpus: one core for a sequential job,
    a whole node per task otherwise, so the trace replays under FCFS/EASY on nodes x cores."""
    for node_cpus in (4, 2, 3):
        jobs = annotate.annotate_synthetic(trace, seed=1, node_cpus=node_cpus)
        tasks = jobs["tasks"].to_numpy()
        expected = tasks * jobs["cpu_need"].to_numpy() * node_cpus
        for field in ("alloc_procs", "req_procs"):
            procs = jobs[field].to_numpy()
            assert procs.dtype == np.int64
            assert procs == pytest.approx(expected, abs=1e-9)
            assert (procs == np.where(tasks == 1, 1, tasks * node_cpus)).all()
        assert jobs["alloc_procs"].max() <= 128 * node_cpus
    with pytest.raises(ValueError, match="already has the annotation column 'tasks'"):
        annotate.annotate_synthetic(jobs, seed=1)


def test_synthetic_annotation_is_reproducible_and_depends_on_the_seed(
    trace: pd.DataFrame,
) -> None:
    a = annotate.annotate_synthetic(trace.iloc[:1000], seed=4)
    b = annotate.annotate_synthetic(trace.iloc[:1000], seed=4)
    c = annotate.annotate_synthetic(trace.iloc[:1000], seed=5)
    pd.testing.assert_frame_equal(a, b)
    assert not np.array_equal(a["mem_fraction"].to_numpy(), c["mem_fraction"].to_numpy())


def test_synthetic_trace_has_the_same_jobs_and_annotation_at_every_load() -> None:
    """Like the papers' scaled traces: one job mix, nine load levels."""
    low = annotate.synthetic_trace(128, 1000, seed=3, load=0.2)
    high = annotate.synthetic_trace(128, 1000, seed=3, load=0.9)
    unscaled = annotate.synthetic_trace(128, 1000, seed=3)
    pd.testing.assert_frame_equal(low.drop(columns="submit"), high.drop(columns="submit"))
    pd.testing.assert_frame_equal(low.drop(columns="submit"), unscaled.drop(columns="submit"))
    assert annotate.offered_node_load(high, 128) == pytest.approx(0.9, rel=0.01)
    # in cores, sequential jobs count one core of four instead of a node: less load
    assert lublin.offered_load(high, 128 * 4) < annotate.offered_node_load(high, 128)
    assert not annotate.synthetic_trace(128, 1000, seed=4).equals(unscaled)


def hpc2n_jobs(rows: list[tuple[int, int, float, float]]) -> pd.DataFrame:
    """SWF-like frame from (req_procs, alloc_procs, req_memory KB, used_memory KB)."""
    frame = pd.DataFrame(rows, columns=["req_procs", "alloc_procs", "req_memory", "used_memory"])
    frame.insert(0, "job_id", np.arange(1, len(rows) + 1))
    return frame


def test_hpc2n_rules_pair_processors_into_two_threaded_tasks() -> None:
    gb = 1024 * 1024  # KB
    jobs = hpc2n_jobs(
        [
            (4, 4, 0.4 * gb, 0.2 * gb),  # even, 20% per processor: 2 tasks, need 1, 40%
            (3, 3, 0.4 * gb, -1),  # odd: 3 tasks, need 0.5, 20%
            (4, 4, 1.0 * gb, 0.5 * gb),  # even but 50% per processor: 4 tasks of 50%
            (2, 2, -1, -1),  # no memory given: 10% per processor -> 1 task of 20%
            (2, 2, 1024, -1),  # 1 MB: raised to the 10% minimum -> 1 task of 20%
            (-1, 6, 0.2 * gb, -1),  # no request: allocated processors, 3 tasks
            (1, 1, 3.0 * gb, -1),  # more than a node: capped at 100%
        ]
    )
    out = annotate.annotate_hpc2n(jobs)
    assert out["tasks"].tolist() == [2, 3, 4, 1, 1, 3, 1]
    assert out["cpu_need"].tolist() == [1.0, 0.5, 0.5, 1.0, 1.0, 1.0, 0.5]
    assert out["mem_fraction"].to_numpy() == pytest.approx([0.4, 0.2, 0.5, 0.2, 0.2, 0.2, 1.0])


def test_hpc2n_annotation_rejects_jobs_without_processors() -> None:
    with pytest.raises(ValueError, match="job 1 gives neither"):
        annotate.annotate_hpc2n(hpc2n_jobs([(-1, -1, 100.0, 100.0)]))


@pytest.mark.realtrace
def test_hpc2n_annotation_of_the_real_trace(real_workloads: Path) -> None:
    """Every job of the 2.2 cleaned log gets valid values that fit the 120-node machine,
    the jobs without memory get 10%, and the weeks are the papers' 182."""
    jobs = read_swf(real_workloads / "HPC2N-2002-2.2-cln.swf.gz").jobs
    out = annotate.annotate_hpc2n(jobs)
    tasks = out["tasks"].to_numpy()
    cpu = out["cpu_need"].to_numpy()
    mem = out["mem_fraction"].to_numpy()
    assert len(out) == 202_871
    assert ((tasks >= 1) & (tasks <= annotate.HPC2N_NODES)).all()
    assert set(np.unique(cpu).tolist()) == {0.5, 1.0}
    assert ((mem >= 0.1) & (mem <= 1)).all()
    no_memory = (jobs["req_memory"] <= 0) & (jobs["used_memory"] <= 0)
    assert int(no_memory.sum()) == 2_137
    assert (mem[no_memory.to_numpy() & (cpu == 0.5)] == 0.1).all()
    assert (mem[no_memory.to_numpy() & (cpu == 1.0)] == 0.2).all()
    # the CPU work of every job is kept: tasks * need * 2 cores = processors
    procs = jobs["req_procs"].to_numpy()
    assert (tasks * cpu * annotate.HPC2N_NODE_CPUS == procs).all()
    weeks = annotate.split_weeks(out)
    assert len(weeks) == 182
    assert sum(len(w.jobs) for w in weeks) == len(out)


# --------------------------------------------------------------------------- weeks


def test_split_weeks_puts_every_job_in_exactly_one_week(trace: pd.DataFrame) -> None:
    week = annotate.WEEK_SECONDS
    weeks = annotate.split_weeks(trace)
    assert [w.index for w in weeks] == sorted({w.index for w in weeks})
    joined = pd.concat([w.jobs for w in weeks], ignore_index=True)
    assert sorted(joined["job_id"].tolist()) == trace["job_id"].tolist()
    for w in weeks:
        submit = w.jobs["submit"].to_numpy()
        assert ((submit >= 0) & (submit < week)).all()
        assert w.start == w.index * week
        original = trace.set_index("job_id").loc[w.jobs["job_id"], "submit"].to_numpy()
        assert (submit + w.start == original).all()


def test_split_weeks_keeps_a_job_running_past_the_boundary_whole_in_its_submit_week() -> None:
    week = annotate.WEEK_SECONDS
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4],
            "submit": [10.0, week - 1, week, 3 * week + 5],
            "runtime": [5.0, 86400.0, 5.0, 5.0],
        }
    )
    weeks = annotate.split_weeks(jobs)
    assert [w.index for w in weeks] == [0, 1, 3]  # the empty week 2 is left out
    assert weeks[0].jobs["job_id"].tolist() == [1, 2]
    assert weeks[0].jobs["runtime"].tolist() == [5.0, 86400.0]  # not cut at the boundary
    assert weeks[1].jobs["submit"].tolist() == [0.0]
    assert weeks[2].jobs["submit"].tolist() == [5.0] and weeks[2].start == 3 * week
    shifted = annotate.split_weeks(jobs, origin=5.0)
    assert shifted[0].jobs["submit"].tolist() == [5.0, week - 6, week - 5]
    with pytest.raises(ValueError, match="before the origin"):
        annotate.split_weeks(jobs, origin=20.0)


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("name", ["trace.swf", "trace.swf.gz"])
def test_annotated_trace_round_trips_exactly_through_swf_and_sidecar(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    jobs = annotate.write_synthetic_trace(path, 64, 2000, seed=8, load=0.6)
    sidecar = annotate.annotation_path(path)
    assert sidecar.name == "trace.swf.dfrs.csv" and sidecar.is_file()
    back = annotate.read_annotated(path)
    assert back.node_cpus == 4 and back.node_memory_kb is None
    assert back.header.max_procs == 64 * 4
    pd.testing.assert_frame_equal(back.jobs.drop(columns="line"), jobs)
    # the SWF file alone is a plain trace any SWF reader accepts
    assert len(read_swf(path).jobs) == 2000


def test_writing_the_same_trace_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    annotate.write_synthetic_trace(tmp_path / "a.swf", 64, 500, seed=1, load=0.5)
    annotate.write_synthetic_trace(tmp_path / "b.swf", 64, 500, seed=1, load=0.5)
    a_swf, b_swf = (tmp_path / "a.swf").read_text(), (tmp_path / "b.swf").read_text()
    assert a_swf.replace("a.swf.dfrs.csv", "b.swf.dfrs.csv") == b_swf
    assert (tmp_path / "a.swf.dfrs.csv").read_bytes() == (tmp_path / "b.swf.dfrs.csv").read_bytes()


def test_hpc2n_annotation_round_trips_with_its_node_memory(tmp_path: Path) -> None:
    jobs = hpc2n_jobs([(4, 4, 300_000.0, 200_000.0), (3, 3, 123_457.0, -1.0)])
    for name in SWF_FIELDS:
        if name not in jobs.columns:
            jobs[name] = 1
    out = annotate.annotate_hpc2n(jobs[list(SWF_FIELDS)])
    annotate.write_annotated(
        tmp_path / "h.swf", out, node_cpus=2, node_memory_kb=annotate.HPC2N_NODE_MEMORY_KB
    )
    back = annotate.read_annotated(tmp_path / "h.swf")
    assert back.node_cpus == 2 and back.node_memory_kb == annotate.HPC2N_NODE_MEMORY_KB
    for column in annotate.ANNOTATION_COLUMNS:
        assert back.jobs[column].tolist() == out[column].tolist()  # exact, not approximate


def test_read_annotated_names_the_problem(tmp_path: Path) -> None:
    plain = tmp_path / "plain.swf"
    write_swf(plain, lublin.generate(8, 5, seed=1))
    with pytest.raises(WorkloadError, match="no '; QueuesimDfrs:' header line"):
        annotate.read_annotated(plain)

    path = tmp_path / "t.swf"
    annotate.write_synthetic_trace(path, 8, 5, seed=1)
    sidecar = annotate.annotation_path(path)
    good = sidecar.read_text()
    sidecar.write_text(good.replace("\n3,", "\n33,", 1))
    with pytest.raises(WorkloadError, match=r"t\.swf\.dfrs\.csv:4: job 33 where"):
        annotate.read_annotated(path)
    lines = good.splitlines()
    job, tasks, _, mem = lines[2].split(",")
    sidecar.write_text("\n".join([*lines[:2], f"{job},{tasks},1.5,{mem}", *lines[3:]]) + "\n")
    with pytest.raises(WorkloadError, match=r":3: cpu_need must be in \(0, 1\], found 1.5"):
        annotate.read_annotated(path)
    sidecar.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(WorkloadError, match="4 annotation rows for the 5 jobs"):
        annotate.read_annotated(path)
    sidecar.unlink()
    with pytest.raises(WorkloadError, match="no such DFRS annotation file"):
        annotate.read_annotated(path)


def test_write_annotated_refuses_values_out_of_range(tmp_path: Path) -> None:
    jobs = annotate.annotate_synthetic(lublin.generate(8, 5, seed=1), seed=1)
    jobs.loc[2, "mem_fraction"] = 1.2
    with pytest.raises(ValueError, match=r"job 3: mem_fraction must be in \[0, 1\]"):
        annotate.write_annotated(tmp_path / "x.swf", jobs, node_cpus=4)
    with pytest.raises(ValueError, match="annotate it first"):
        annotate.write_annotated(tmp_path / "x.swf", lublin.generate(8, 5, seed=1), node_cpus=4)
    assert not (tmp_path / "x.swf").exists()
