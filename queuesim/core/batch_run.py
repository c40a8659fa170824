"""A whole run of a built-in batch policy in one compiled call.

FCFS, EASY, conservative backfilling and the MetaCentrum scan differ only in the rules of
their pass (:class:`BatchRules`): how many jobs reserve, whether later jobs may start
first, whether reservations block whole nodes (paper 004, 3.1), whether a job a queue
limit holds back may reserve, whether only the jobs the order calls starving may (PBS
without strict_ordering), and whether reservations are promises kept from pass to pass
with compression (Mu'alem and Feitelson, conservative backfilling). For those, the event
loop, the waiting list, the site's ordering (FCFS, fairshare, queue priority then
fairshare; paper 004, 2.1; Slurm's multifactor priority; the PBS order, whose run is a
compile of its own: :class:`RunKind`), the queue limits, the fairshare ledger, the
placement and the pass itself all run here, in compiled code, without entering Python
per event: what the Python engine (:mod:`.engine`) does through the
:class:`~.context.Context` and a policy's ``schedule``, step for step, with the same
kernels (:mod:`.planning`, :mod:`.cluster`, :mod:`.fairshare`), so both give the same
schedule to the last bit (a test runs both).

A pass costs what it can place, not the queue's length: the waiting list is kept in
submit order as jobs arrive and start, the smallest request among the waiting jobs is
kept as they come and go, and the backfill loop stops once no reservation is left to give
and fewer CPUs are free than any waiting job asks (see
:func:`~.planning.plan_into`). Orderings that sort (fairshare) and queue limits checked
before the pass still cost the queue's length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numba
import numpy as np
from numba.core.types import NoneType

from queuesim.common.errors import PolicyViolation
from queuesim.common.jit import jit
from queuesim.core.backfill_index import BackfillIndex, index_set, make_index, start_fitting
from queuesim.core.cluster import ClusterState, NodeState, Placement, Request, _place, _release
from queuesim.core.fairshare import (
    LedgerState,
    UsageLog,
    advance,
    charge_end,
    charge_rate,
    charge_start,
    current_usage,
    empty_log,
)
from queuesim.core.kept_profile import bring_up_to_date, left_out
from queuesim.core.multifactor import multifactor_order
from queuesim.core.ordering import (
    FairshareOrder,
    FCFSOrder,
    QueuePriorityOrder,
    SlurmMultifactorOrder,
    WaitingOrder,
)
from queuesim.core.pbs_order import (
    PbsJobOrder,
    PbsKeys,
    pbs_order_of,
    starving_count,
    tiny_pbs_keys,
)
from queuesim.core.planning import (
    PassPlan,
    copy_counts,
    count_job,
    first_per_user,
    new_pass_counts,
    new_pass_plan,
    plan_with,
    record_held,
    set_aside_held,
)
from queuesim.core.profile import (
    NEVER,
    JobArrays,
    LimitState,
    PassRules,
    ProfileState,
    Promises,
    fill_in_order,
    new_profile,
    no_limits,
)
from queuesim.core.state import JobState, RunState
from queuesim.core.usage_order import bucket_order, priority_ranks
from queuesim.site.model import Site

#: how far past now a running job that outlived its estimate is expected to end (as the
#: Context's :data:`~.context.OVERDUE_GRACE`)
_GRACE = 1.0

ORDER_FCFS = 0  #: by submit order
ORDER_FAIRSHARE = 1  #: by fairshare usage, then submit order
ORDER_PRIORITY = 2  #: by queue priority, then fairshare usage, then submit order
#: by queue priority, then Slurm's multifactor priority, then submit order
ORDER_MULTIFACTOR = 3
#: the PBS scheduler's order (:mod:`.pbs_order`; its keys are the run's last argument)
ORDER_PBS = 4

_WAITING, _RUNNING, _DONE = 1, 2, 3
#: every place in the order may reserve (:attr:`~.profile.PassRules.reserve_before`)
_ALL = PassRules._field_defaults["reserve_before"]

#: what :func:`replay_events` returns besides a normal end: a start the checks refuse
FAILED_PLACEMENT = 1


class SlurmRules(NamedTuple):
    """Slurm's two schedulers, for a run in one compiled call (the ``slurm`` policy's
    SchedulerParameters, slurm.conf(5); see :mod:`queuesim.policies.slurm`): the main
    scheduler at every submit and end and every ``sched_interval`` seconds, the backfill
    scheduler every ``bf_interval`` seconds while jobs wait."""

    #: sched/backfill (false: sched/builtin, the main scheduler only)
    backfill: bool
    #: default_queue_depth: the jobs the main scheduler tries per pass
    queue_depth: int
    #: seconds between periodic main passes (0: only at submits and ends)
    sched_interval: int
    bf_interval: int
    #: bf_window, in seconds
    bf_window: float
    bf_resolution: int
    #: jobs a backfill cycle tests in all and per user (0: no limit)
    bf_max_job_test: int
    bf_max_job_user: int


class BatchRules(NamedTuple):
    """What a built-in batch policy's pass does (the policy's ``batch_rules``)."""

    #: how many jobs may hold reservations
    depth: int
    #: whether later jobs may start before a job that cannot start now
    backfill: bool
    #: whether a reservation blocks every pool that could hold part of its job
    greedy: bool = False
    #: whether a job a queue limit holds back may reserve (else it is passed over)
    reserve_limited: bool = False
    #: whether reservations are promises kept from pass to pass, compressed when a job ends
    promises: bool = False
    #: only the jobs the order calls starving may reserve (the PBS order's max_starve;
    #: none under another order), as :func:`~queuesim.policies.backfill.backfill_pass`
    starving_only: bool = False
    #: Slurm's main and backfill schedulers on their timer instead of one pass per event
    #: (their phases set the depth, the queue stop and the window; the other fields are a
    #: plain backfilling pass's): a run of its own kind (:class:`RunKind`)
    slurm: SlurmRules | None = None


class PromiseBook(NamedTuple):
    """What a run whose reservations are promises (conservative backfilling) keeps of
    them, by job number: the start promised (``inf``: none), and the planning pass that
    made the promise and the job's row in that pass's plans (-1: none)."""

    promise: np.ndarray
    row: np.ndarray
    made_in: np.ndarray


def promise_book(n: int) -> PromiseBook:
    """A book of ``n`` jobs, nothing promised yet."""
    n = max(n, 1)
    return PromiseBook(
        np.full(n, np.inf), np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    )


class RunJobs(NamedTuple):
    """Every job's facts, by job number (submit order)."""

    submit: np.ndarray
    #: the time it runs (its runtime, or its walltime when killed there)
    work: np.ndarray
    priority: np.ndarray
    #: Slurm's multifactor priority (:mod:`.multifactor`): every job's static part and
    #: the dynamic weights (empty unless the order is :data:`ORDER_MULTIFACTOR`)
    static: np.ndarray
    weights: np.ndarray


class RunOut(NamedTuple):
    """What a run fills in, by job number (and limit)."""

    start: np.ndarray
    end: np.ndarray
    #: the first reservation each job was given (``inf``: none)
    first_reservation: np.ndarray
    held_times: np.ndarray
    held_jobs: np.ndarray


class Heads(NamedTuple):
    """Slurm's run, recording: the head of the waiting jobs at each backfill cycle that
    reserved for it and its reserved start, in cycle order (``size[0]`` of them; the
    ``slurm`` policy's ``head_reservations``)."""

    jobs: np.ndarray
    times: np.ndarray
    size: np.ndarray


def no_heads() -> Heads:
    """Room for a few heads, none recorded (the arrays grow as needed)."""
    return Heads(np.zeros(16, dtype=np.int64), np.zeros(16), np.zeros(1, dtype=np.int64))


class Scratch(NamedTuple):
    """Growing buffers: where started jobs run (pools and nodes, flat)."""

    alloc_pool: np.ndarray
    alloc_cpus: np.ndarray
    nodes: np.ndarray
    counts: np.ndarray


_PROGRESS: list[Callable[[int, int], None] | None] = [None]


def _report_progress(done: int, total: int) -> None:
    callback = _PROGRESS[0]
    if callback is not None:
        callback(done, total)


# --- small kernels -----------------------------------------------------------------------


@jit
def _progress(done: int, total: int) -> None:
    """Tell the run's progress callback, in Python, that ``done`` of ``total`` jobs have
    come. A kernel of its own: numba keeps an object-mode block with the function that
    holds it, which pickles the function's whole typed code into its cache entry (the
    run's was 3.3 MB with the block, 1.7 MB without, and took 15 ms longer to load)."""
    with numba.objmode():
        _report_progress(done, total)


@jit
def _heap_less(times: np.ndarray, seqs: np.ndarray, a: int, b: int) -> bool:
    return bool(times[a] < times[b] or (times[a] == times[b] and seqs[a] < seqs[b]))


@jit
def _heap_swap(times: np.ndarray, seqs: np.ndarray, jobs: np.ndarray, a: int, b: int) -> None:
    times[a], times[b] = times[b], times[a]
    seqs[a], seqs[b] = seqs[b], seqs[a]
    jobs[a], jobs[b] = jobs[b], jobs[a]


@jit
def _heap_push(
    times: np.ndarray, seqs: np.ndarray, jobs: np.ndarray, size: int, t: float, seq: int, job: int
) -> int:
    """Push a finish (ordered by time, then push order, as the engine's heap); returns the
    new size."""
    k = size
    times[k], seqs[k], jobs[k] = t, seq, job
    while k > 0:
        parent = (k - 1) // 2
        if not _heap_less(times, seqs, k, parent):
            break
        _heap_swap(times, seqs, jobs, k, parent)
        k = parent
    return size + 1


@jit
def _heap_pop(times: np.ndarray, seqs: np.ndarray, jobs: np.ndarray, size: int) -> int:
    """Remove the first finish (read it at index 0 before); returns the new size."""
    size -= 1
    times[0], seqs[0], jobs[0] = times[size], seqs[size], jobs[size]
    k = 0
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and _heap_less(times, seqs, left + 1, left):
            child = left + 1
        if not _heap_less(times, seqs, child, k):
            break
        _heap_swap(times, seqs, jobs, k, child)
        k = child
    return size


@jit
def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with room for at least ``need`` entries (doubled when short)."""
    if a.shape[0] >= need:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    for k in range(a.shape[0]):
        b[k] = a[k]
    return b


@jit
def _add_head(heads: Heads, job: int, when: float) -> Heads:
    """``heads`` with (``job``, ``when``) recorded (a larger copy when full)."""
    n = heads.size[0]
    jobs, times = _grown(heads.jobs, n + 1), _grown(heads.times, n + 1)
    jobs[n], times[n] = job, when
    heads.size[0] = n + 1
    return Heads(jobs, times, heads.size)


@jit
def _run_insert(run_ids: np.ndarray, nrun: int, est_end: np.ndarray, job: int) -> None:
    """Put ``job`` among the ``nrun`` running jobs ``run_ids``, kept in order of their
    expected ends (``est_end``), after those that end at the same time: the profile
    then takes them in order without sorting them at every pass."""
    t = est_end[job]
    lo, hi = 0, nrun
    while lo < hi:
        mid = (lo + hi) // 2
        if est_end[run_ids[mid]] <= t:
            lo = mid + 1
        else:
            hi = mid
    for r in range(nrun, lo, -1):
        run_ids[r] = run_ids[r - 1]
    run_ids[lo] = job


@jit
def _run_remove(run_ids: np.ndarray, nrun: int, est_end: np.ndarray, job: int) -> None:
    """Take ``job`` out of the ``nrun`` running jobs ``run_ids`` (in order of their
    expected ends, :func:`_run_insert`), keeping the others in order."""
    t = est_end[job]
    lo, hi = 0, nrun
    while lo < hi:
        mid = (lo + hi) // 2
        if est_end[run_ids[mid]] < t:
            lo = mid + 1
        else:
            hi = mid
    while run_ids[lo] != job:
        lo += 1
    for r in range(lo, nrun - 1):
        run_ids[r] = run_ids[r + 1]


@jit
def _slurm_due(slurm: SlurmRules, phase: int, now: float, event: bool, left: int) -> bool:
    """Whether Slurm's main scheduler (``phase`` 0: at a submit or end - ``event`` - and
    every ``sched_interval`` seconds) or its backfill (1: every ``bf_interval`` seconds,
    unless ``left``, the jobs the main pass left waiting, is 0) runs at ``now``."""
    if phase == 0:
        return event or (slurm.sched_interval > 0 and now % slurm.sched_interval == 0)
    return slurm.backfill and now % slurm.bf_interval == 0 and left != 0


@jit
def _slurm_wake(slurm: SlurmRules, now: float) -> float:
    """The next backfill cycle or periodic main pass after ``now`` (``inf``: none)."""
    when = np.inf
    if slurm.backfill:
        when = min(when, (np.floor(now / slurm.bf_interval) + 1) * slurm.bf_interval)
    if slurm.sched_interval > 0:
        when = min(when, (np.floor(now / slurm.sched_interval) + 1) * slurm.sched_interval)
    return when


# --- the run -----------------------------------------------------------------------------


@jit
def replay_events(  # type: ignore[no-untyped-def]
    run: RunJobs,
    jobs: JobArrays,
    job_mem: np.ndarray,
    job_gpn: np.ndarray,
    nodes: NodeState,
    caps: tuple[np.ndarray, np.ndarray, np.ndarray],
    gpus_modelled: bool,
    limits: LimitState,
    limits_any: bool,
    ledger: LedgerState,
    log: UsageLog,
    order_kind: int,
    rules: BatchRules,
    record: bool,
    out: RunOut,
    heads: Heads,
    scratch: Scratch,
    report_every: int,
    index: BackfillIndex,
    fast: bool,
    book: PromiseBook | None,
    pbs: PbsKeys | None,
    slurm: SlurmRules | None,
):
    """Replay every job under ``rules``: the engine's loop (finishes, then submits, then a
    pass when something waits and something changed). Fills ``out`` and changes
    ``nodes``, ``limits`` and ``ledger`` as the jobs run. With ``fast`` (one pool, FCFS
    order, no limits, no shapes: see :mod:`.backfill_index`), once the pass's reservations
    are given ``index`` finds the jobs that start now. ``pbs``: the PBS order's keys
    (``order_kind`` :data:`ORDER_PBS`), or None. ``book``: the promises of a run whose
    ``rules`` promise (else None: the code of promises is then not compiled).

    ``slurm``: Slurm's two schedulers (else None), as the ``slurm`` policy's ``schedule``
    runs them: the loop also wakes at the one pending timer time (the next backfill cycle
    or periodic main pass while jobs wait), and an instant's pass is up to two phases -
    the main scheduler (the first ``queue_depth`` jobs, no reservation, a job that cannot
    start stops its queue) and the backfill cycle (running jobs' ends and estimates
    rounded up to ``bf_resolution``, reservations within ``bf_window``, at most
    ``bf_max_job_test`` jobs and ``bf_max_job_user`` per user); the heads of the waiting
    jobs the cycles reserve for go to ``heads`` when recording.

    Returns (status, passes, jobs the passes decided for one by one, scratch, usage log,
    heads); status 0 is a normal end."""
    n = run.submit.shape[0]
    capacity_cpus, capacity_mem, capacity_gpus = caps
    pools = nodes.pool_free_cpus.shape[0]
    total_nodes = nodes.free_cpus.shape[0]
    no_gpus = np.zeros(0, dtype=np.int64)
    free_gpus = nodes.pool_free_gpus if gpus_modelled else no_gpus
    gpu_caps = capacity_gpus if gpus_modelled else no_gpus
    state = np.zeros(n, dtype=np.int8)
    est_end = np.full(n, np.inf)
    # the heap of finishes
    h_time = np.empty(max(n, 1))
    h_seq = np.empty(max(n, 1), dtype=np.int64)
    h_job = np.empty(max(n, 1), dtype=np.int64)
    nheap, seq = 0, 0
    # running jobs, in order of their expected ends (so the profile needs no sort), and
    # where each runs
    run_ids = np.zeros(max(n, 1), dtype=np.int64)
    nrun = 0
    alloc_start = np.zeros(max(n, 1), dtype=np.int64)
    alloc_len = np.zeros(max(n, 1), dtype=np.int64)
    node_start = np.zeros(max(n, 1), dtype=np.int64)
    node_len = np.zeros(max(n, 1), dtype=np.int64)
    alloc_used, node_used = 0, 0
    placement = Placement(
        np.empty(total_nodes, dtype=np.int64),
        np.empty(total_nodes, dtype=np.int64),
        np.empty(pools, dtype=np.int64),
        np.empty(pools, dtype=np.int64),
    )
    total_free = 0
    for p in range(pools):
        total_free += nodes.pool_free_cpus[p]
    # the waiting list in submit order (live in wl[lo:hi]) and its smallest request
    wl = np.empty(max(n, 1), dtype=np.int64)
    lo, hi, nwaiting = 0, 0, 0
    top = 1
    for j in range(n):
        top = max(top, jobs.cpus[j])
    per_size = np.zeros(top + 2, dtype=np.int64)
    smallest = top + 1
    # promises (conservative): start per job, and the plan of the last planning pass
    if book is not None:
        promise, promised_row, promised_in = book.promise, book.row, book.made_in
    last_plans = np.zeros((0, pools), dtype=np.int64)
    plannings = 0
    ended_since_planning = False
    # the profile a pass left, kept for the next (:mod:`.kept_profile`): the jobs ended
    # since, and where it holds each running job until; the last planning's order and
    # how many it promised, for the promised jobs a queue limit sets aside later
    keep = book is not None and not rules.greedy
    kept = False
    ended = np.empty(max(n, 1) if keep else 0, dtype=np.int64)
    n_ended = 0
    booked_end = np.full(max(n, 1) if keep else 0, np.inf)
    last_order = np.zeros(0, dtype=np.int64)
    promised_last = 0
    mark = np.zeros(max(n, 1) if keep else 0, dtype=np.int64)
    gone = np.zeros(0, dtype=np.int64)
    gone_promises = Promises(np.zeros(0), np.zeros((0, pools), dtype=np.int64))
    # scratch of a pass
    # no memory columns when no job asks memory: a split then moves half the bytes
    mem_pools = pools if np.any(job_mem) else 0
    prof = new_profile(16, pools, free_gpus.shape[0], mem_pools)
    no_order = np.empty(0, dtype=np.int64)  # the running jobs are kept in order of their ends
    # what a pass counts against the limits (the running jobs', then its own starts)
    pass_counts = new_pass_counts(limits)
    stopped = np.zeros(limits.user_jobs_cap.shape[0], dtype=np.bool_)
    # made once, not at every pass (each allocation costs the runtime's reference counts)
    end_room = np.empty(max(n, 1))
    big = np.iinfo(np.int64).max
    fast_started = np.empty(max(n, 1), dtype=np.int64)
    # what a pass decides, reused: its first rows are cleared after each pass
    decided = new_pass_plan(16, pools)
    usage_now = np.zeros(ledger.usage.shape[0])
    # Slurm's timer: the pending wake-up and the last one asked for (as the policy's)
    phases, wake_at, next_wake = 1, np.inf, -np.inf
    bf_estimate = jobs.estimate
    per_user = np.zeros(0, dtype=np.int64)
    if slurm is not None:
        phases = 2
        res = float(slurm.bf_resolution)
        bf_estimate = np.ceil(jobs.estimate / res) * res
        per_user = np.zeros(limits.user_jobs.shape[0], dtype=np.int64)
    bf_jobs = JobArrays(jobs.cpus, jobs.queue, bf_estimate, jobs.ppn, jobs.masks, jobs.mask_of)
    # the fairshare order's buckets (:mod:`.usage_order`): every job's priority rank
    ranks, levels = np.zeros(0, dtype=np.int64), 1
    if order_kind == ORDER_PRIORITY:
        ranks, levels = priority_ranks(run.priority)
    elif order_kind == ORDER_FAIRSHARE:
        ranks = np.zeros(n, dtype=np.int64)
    count = np.empty(levels * usage_now.shape[0] + 1, dtype=np.int64)
    passes = 0
    scanned = 0  # jobs the passes decided for one by one
    next_job = 0
    reported = 0
    while True:
        t_submit = run.submit[next_job] if next_job < n else np.inf
        t_event = h_time[0] if nheap else np.inf
        now = t_submit if t_submit < t_event else t_event
        now = min(now, wake_at)
        if now == np.inf:
            break
        woke = wake_at == now
        if woke:
            wake_at = np.inf
        finished = False
        while nheap and h_time[0] == now:
            job = h_job[0]
            nheap = _heap_pop(h_time, h_seq, h_job, nheap)
            state[job] = _DONE
            out.end[job] = now
            s0, s1 = node_start[job], node_start[job] + node_len[job]
            a0, a1 = alloc_start[job], alloc_start[job] + alloc_len[job]
            held = Placement(
                scratch.nodes[s0:s1],
                scratch.counts[s0:s1],
                scratch.alloc_pool[a0:a1],
                scratch.alloc_cpus[a0:a1],
            )
            total_free += _release(nodes, held, job_mem[job], job_gpn[job])
            if limits_any:
                count_job(job, jobs, limits, -1)
            if order_kind != ORDER_FCFS:
                log = advance(ledger, now, log, usage_now)
                charge_end(ledger, job, now)
            _run_remove(run_ids, nrun, est_end, job)
            nrun -= 1
            finished = True
            if book is not None and keep:
                ended[n_ended] = job
                n_ended += 1
        arrived = False
        while next_job < n and run.submit[next_job] == now:
            state[next_job] = _WAITING
            wl[hi] = next_job
            hi += 1
            c = jobs.cpus[next_job]
            per_size[c] += 1
            smallest = min(smallest, c)
            nwaiting += 1
            if fast:
                index_set(index, next_job, jobs.estimate[next_job])
            next_job += 1
            arrived = True
        if woke or (nwaiting and (finished or arrived)):
            passes += 1
            ended_since_planning |= finished
            left = -1  # Slurm: the jobs still waiting after a phase (-1: none ran)
            for phase in range(phases):
                backfill_cycle = phase == 1
                if slurm is not None:
                    if not _slurm_due(slurm, phase, now, finished or arrived, left):
                        continue
                    left = nwaiting
                # --- the site's order of the waiting jobs -------------------------------
                if pbs is not None:
                    live = wl[lo:hi]
                    if pbs.fair_share and live.shape[0] > 1:  # as PbsJobOrder reads its ledger
                        log = advance(ledger, now, log, usage_now)
                        current_usage(ledger, now, usage_now)
                    order = pbs_order_of(
                        pbs, now, live, usage_now, ledger.share, ledger.job_account
                    )
                elif order_kind == ORDER_FCFS:
                    order = wl[lo:hi]
                else:
                    log = advance(ledger, now, log, usage_now)
                    current_usage(ledger, now, usage_now)
                    live = wl[lo:hi]
                    if order_kind == ORDER_MULTIFACTOR:
                        order = multifactor_order(
                            now,
                            live,
                            run.submit,
                            run.static,
                            run.priority,
                            run.weights,
                            ledger.job_account,
                            ledger.share,
                            usage_now,
                        )
                    else:
                        order = bucket_order(
                            live, usage_now, ledger.job_account, ranks, levels, run.priority, count
                        )
                if slurm is not None and not backfill_cycle:
                    order = order[: slurm.queue_depth]  # the main scheduler's depth
                # --- jobs at a limit already are set aside (the Context's within_limits)
                min_cpus = smallest
                filtered = False
                if limits_any and not rules.reserve_limited:
                    order = set_aside_held(
                        order, jobs, limits, nodes.pool_free_cpus, out.held_times, out.held_jobs
                    )
                    filtered = True
                if slurm is not None:
                    if backfill_cycle and slurm.bf_max_job_user > 0:
                        order = first_per_user(order, limits.user, slurm.bf_max_job_user, per_user)
                    if backfill_cycle and slurm.bf_max_job_test > 0:
                        order = order[: slurm.bf_max_job_test]
                    filtered = True
                if filtered:
                    min_cpus = top + 1
                    for k in range(order.shape[0]):
                        min_cpus = min(min_cpus, jobs.cpus[order[k]])
                if order.shape[0] == 0:
                    continue
                reserve_before = _ALL
                if rules.starving_only:
                    reserve_before = 0
                    if pbs is not None:
                        reserve_before = starving_count(pbs, now, order)
                if not rules.backfill and total_free < jobs.cpus[order[0]]:
                    continue
                # Slurm's backfill plans even then when its reservations are recorded
                if book is None and total_free < min_cpus and not (backfill_cycle and record):
                    continue
                # --- the pass -------------------------------------------------------------
                m = order.shape[0]
                # a pass that gives no reservation (FCFS's, depth 0) asks only what fits
                # now, which the free room now answers alone: a profile's room never
                # shrinks with time (running jobs only end, and a job started now takes
                # the same from every step of its window), so over a window from now its
                # least room is now's (:func:`~.profile._fits_now`) - the running jobs
                # need not be sorted into it
                profiled = 0 if slurm is None and rules.depth == 0 and book is None else nrun
                run_now = run_ids[:profiled]
                run_ends = end_room[:profiled]
                for r in range(profiled):
                    run_ends[r] = max(est_end[run_now[r]], now + _GRACE)
                pass_jobs = jobs
                depth, stop_queue, horizon = rules.depth, False, np.inf
                if slurm is not None:
                    depth, stop_queue = (big, False) if backfill_cycle else (0, True)
                    if backfill_cycle:  # planned at bf_resolution
                        pass_jobs = bf_jobs
                        horizon = slurm.bf_window
                        res = float(slurm.bf_resolution)
                        for r in range(profiled):
                            run_ends[r] = np.ceil(run_ends[r] / res) * res
                pstate = ProfileState(
                    now,
                    nodes.pool_free_cpus,
                    nodes.pool_free_mem,
                    run_ends,
                    run_now,
                    alloc_start,
                    alloc_len,
                    scratch.alloc_pool,
                    scratch.alloc_cpus,
                    job_mem,
                    job_gpn,
                    capacity_cpus,
                    capacity_mem,
                    free_gpus,
                    gpu_caps,
                )
                promises = None
                if book is not None:
                    known = np.zeros((m, pools), dtype=np.int64)
                    starts_before = np.empty(m)
                    still_promised = 0
                    for k in range(m):
                        job = order[k]
                        starts_before[k] = promise[job]
                        if promised_in[job] == plannings and plannings > 0:
                            still_promised += 1
                            for p in range(pools):
                                known[k, p] = last_plans[promised_row[job], p]
                        elif promise[job] < NEVER:
                            kept = False  # a promise whose pools are not known is not kept
                    promises = Promises(starts_before, known)
                    # a limit set aside jobs promised last time: the kept profile gives
                    # their promises back (only limits leave a waiting job out)
                    gone = gone[:0]
                    if kept and still_promised < promised_last:
                        gone, gone_promises = left_out(
                            last_order,
                            order,
                            promised_in,
                            plannings,
                            promise,
                            promised_row,
                            last_plans,
                            mark,
                        )
                need_steps = 2 + nrun + 4 * m
                # a kept profile needs room for what brings it up to date and what the pass
                # adds; when short of it (its steps grow), it is rebuilt
                kept = (
                    kept
                    and prof.size[0] + 2 * (n_ended + nrun + m + gone.shape[0]) + 4 * m + 2
                    <= (prof.times.shape[0])
                )
                if book is not None and kept:
                    kept = bring_up_to_date(
                        prof,
                        pstate,
                        _GRACE,
                        ended[:n_ended],
                        booked_end,
                        order,
                        promises,  # type: ignore[arg-type]  # set: book is not None
                        jobs.estimate,
                        gone,
                        gone_promises,
                    )
                if not kept:
                    room = prof.times.shape[0]
                    if room < need_steps or (keep and room < 2 * need_steps):
                        prof = new_profile(
                            max(2 * need_steps, 2 * prof.times.shape[0]),
                            pools,
                            free_gpus.shape[0],
                            mem_pools,
                        )
                    fill_in_order(prof, pstate, no_order)
                    if book is not None and keep:
                        for r in range(nrun):
                            booked_end[run_now[r]] = run_ends[r]
                n_ended = 0
                if decided.starts.shape[0] < m:
                    decided = new_pass_plan(max(m, 2 * decided.starts.shape[0]), pools)
                plan = PassPlan(
                    decided.starts[:m],
                    decided.plans[:m],
                    decided.held[:m],
                    decided.booked[:m],
                    decided.room,
                )
                compress = ended_since_planning or book is None
                pass_rules = PassRules(
                    depth,
                    rules.backfill,
                    rules.greedy,
                    compress,
                    rules.reserve_limited,
                    reserve_before,
                    stop_queue,
                    horizon,
                    backfill_cycle and not record,
                )
                # with the index, the job-by-job loop stops once the reservations are given
                copy_counts(limits, pass_counts)
                seen = plan_with(
                    prof,
                    pstate,
                    pass_jobs,
                    pass_counts,
                    order,
                    pass_rules,
                    promises,
                    plan,
                    big if fast else min_cpus,
                    # bool(): numba typed ``kept`` int64 in one version of this loop, and
                    # so compiled the pass twice
                    bool(kept),
                    stopped,
                )
                scanned += seen
                if fast and seen < m:
                    after = order[seen - 1] if seen > 0 else -1
                    found = start_fitting(
                        index, prof, jobs.cpus, jobs.estimate, after, fast_started
                    )
                    scanned += found
                    for f in range(found):
                        job = fast_started[f]
                        k = np.searchsorted(order, job)
                        plan.starts[k] = now
                        plan.plans[k, 0] = jobs.cpus[job]
                        seen = max(seen, k + 1)
                ended_since_planning = False
                plannings += 1
                kept = keep
                if limits_any:
                    record_held(out.held_times, out.held_jobs, order[:seen], plan.held[:seen])
                if book is not None:
                    last_plans = plan.plans.copy()
                    promised_last = 0
                    for k in range(m):
                        job = order[k]
                        promise[job] = plan.starts[k]
                        if now < plan.starts[k] < NEVER:
                            promised_in[job] = plannings
                            promised_row[job] = k
                            promised_last += 1
                    if keep:
                        last_order = order.copy()
                if record:
                    for k in range(seen):
                        when = plan.starts[k]
                        job = order[k]
                        if now < when < NEVER and out.first_reservation[job] == np.inf:
                            out.first_reservation[job] = when
                    if backfill_cycle and seen and now < plan.starts[0] < NEVER:
                        heads = _add_head(heads, order[0], plan.starts[0])
                # --- start the jobs planned to start now, in order ---------------------------
                started = 0
                deepest = 0
                for k in range(seen):
                    if plan.starts[k] != now:
                        continue
                    job = order[k]
                    request = Request(
                        jobs.cpus[job],
                        job_mem[job],
                        jobs.ppn[job],
                        job_gpn[job],
                        jobs.masks[jobs.mask_of[job]],
                        True,
                        plan.plans[k],
                    )
                    outcome = _place(nodes, request, placement)
                    if outcome < 0:
                        return FAILED_PLACEMENT, passes, scanned, scratch, log, heads
                    used_nodes, used_pools = outcome // (pools + 1), outcome % (pools + 1)
                    total_free -= jobs.cpus[job]
                    # where it runs, for its release and the profile
                    alloc_pool = _grown(scratch.alloc_pool, alloc_used + used_pools)
                    alloc_cpus = _grown(scratch.alloc_cpus, alloc_used + used_pools)
                    node_list = _grown(scratch.nodes, node_used + used_nodes)
                    node_counts = _grown(scratch.counts, node_used + used_nodes)
                    scratch = Scratch(alloc_pool, alloc_cpus, node_list, node_counts)
                    alloc_start[job], alloc_len[job] = alloc_used, used_pools
                    for e in range(used_pools):
                        alloc_pool[alloc_used + e] = placement.pools[e]
                        alloc_cpus[alloc_used + e] = placement.pool_cpus[e]
                    alloc_used += used_pools
                    node_start[job], node_len[job] = node_used, used_nodes
                    for e in range(used_nodes):
                        node_list[node_used + e] = placement.nodes[e]
                        node_counts[node_used + e] = placement.counts[e]
                    node_used += used_nodes
                    if limits_any:
                        count_job(job, jobs, limits, 1)
                    if order_kind != ORDER_FCFS:
                        log = advance(ledger, now, log, usage_now)
                        rate = charge_rate(
                            ledger,
                            jobs.cpus[job],
                            node_list[node_start[job] : node_used],
                            node_counts[node_start[job] : node_used],
                            job_mem[job],
                            job_gpn[job],
                        )
                        charge_start(ledger, job, rate, now)
                    state[job] = _RUNNING
                    if book is not None and keep:
                        booked_end[job] = now + jobs.estimate[job]
                    if fast:
                        index_set(index, job, np.inf)
                    out.start[job] = now
                    est_end[job] = now + jobs.estimate[job]
                    nwaiting -= 1
                    _run_insert(run_ids, nrun, est_end, job)
                    nrun += 1
                    seq += 1
                    nheap = _heap_push(h_time, h_seq, h_job, nheap, now + run.work[job], seq, job)
                    c = jobs.cpus[job]
                    per_size[c] -= 1
                    started += 1
                    deepest = k
                for k in range(seen):
                    plan.starts[k] = NEVER
                    plan.held[k] = 0
                    plan.booked[k] = False
                    for p in range(pools):
                        plan.plans[k, p] = 0
                if started:
                    # drop the started jobs from the waiting list, keeping submit order: in
                    # FCFS order they all lie within the first deepest + 1 places
                    upto = lo + deepest + 1 if order_kind == ORDER_FCFS and not filtered else hi
                    write = upto - 1
                    for r in range(upto - 1, lo - 1, -1):
                        if state[wl[r]] == _WAITING:
                            wl[write] = wl[r]
                            write -= 1
                    lo = write + 1
                    while smallest <= top and per_size[smallest] == 0:
                        smallest += 1
                left = nwaiting
            if slurm is not None and left != 0:
                when = _slurm_wake(slurm, now)
                if when < np.inf and not (now < next_wake <= when):
                    wake_at, next_wake = when, when

        if report_every and next_job - reported >= report_every:
            reported = next_job
            _progress(next_job, n)
    return 0, passes, scanned, scratch, log, heads


def empty_scratch(n: int) -> Scratch:
    """Buffers for a run of ``n`` jobs (they grow as needed)."""
    size = max(n, 16)
    return Scratch(*(np.zeros(size, dtype=np.int64) for _ in Scratch._fields))


def _ledger_of(ordering: WaitingOrder, n: int) -> tuple[LedgerState, UsageLog, int, np.ndarray]:
    """The ordering's fairshare ledger and its usage log, which order it is, and every
    job's queue priority (an empty ledger and log and zeros for FCFS)."""
    if isinstance(ordering, PbsJobOrder):
        ledger = ordering.ledger
        return ledger.state, ledger.log, ORDER_PBS, np.zeros(n)
    if isinstance(ordering, FairshareOrder):
        kind = ORDER_PRIORITY if isinstance(ordering, QueuePriorityOrder) else ORDER_FAIRSHARE
        if isinstance(ordering, SlurmMultifactorOrder):
            kind = ORDER_MULTIFACTOR
        priority = getattr(ordering, "job_priority", np.zeros(n))
        ledger = ordering.ledger
        return ledger.state, ledger.log, kind, np.array(priority, dtype=np.float64)
    one, per_job = np.zeros(1), np.zeros(max(n, 1))
    empty = LedgerState(
        one,
        np.ones(1),
        one.copy(),
        one.copy(),
        np.zeros(max(n, 1), dtype=np.int64),
        per_job,
        per_job.copy(),
        one.copy(),
        one.copy(),
        one.copy(),
        np.array([0.0, np.inf]),
        np.array([1.0, 1.0, 0.0, np.inf, 0.0, 0.0]),
    )
    return empty, empty_log(1), ORDER_FCFS, np.zeros(n)


def compiles(ordering: WaitingOrder, rules: BatchRules | None = None) -> bool:
    """Whether the compiled run knows ``ordering`` (every built-in order: FCFS, fairshare,
    queue priority then fairshare, Slurm's multifactor, the PBS order - but Slurm's
    timed passes under the PBS order) and ``rules``; any other runs pass by pass."""
    if rules is not None and rules.slurm is not None:
        return isinstance(ordering, FCFSOrder | FairshareOrder)
    return isinstance(ordering, FCFSOrder | FairshareOrder | PbsJobOrder)


class RunKind(NamedTuple):
    """Which of :func:`replay_events`'s optional parts a run holds (its promises, the PBS
    order's keys, Slurm's timer): each kind is a compile of its own, since numba leaves
    out the code of a part that is None before it types it, so that a FCFS, EASY or
    MetaCentrum run compiles and loads none of the others' code.

    The kinds are one kernel's specialisations, not kernels of their own: a wrapper
    kernel per kind calling :func:`replay_events` had numba compile the whole run twice
    over (once as the callee's own machine code, once linked into the wrapper's): a
    first compile of EASY's run took 39 s with the wrappers, 31 s without (2026-11-28).
    :mod:`.kernels` asks numba's cache whether the kind is compiled (:meth:`compiled_as`)."""

    promises: bool
    pbs: bool
    slurm: bool

    @property
    def dispatcher(self) -> Callable[..., tuple]:  # type: ignore[type-arg]
        """The kernel: :func:`replay_events` (looked up when asked, as the interpreted
        kernels stand in for the compiled ones by name)."""
        return replay_events

    def compiled_as(self, signature: tuple[object, ...]) -> bool:
        """Whether a compile of :func:`replay_events` for argument types ``signature`` is
        this kind: its last three arguments None just where this kind lacks the part."""
        parts = tuple(not isinstance(t, NoneType) for t in signature[-3:])
        return parts == (self.promises, self.pbs, self.slurm)


def kernels_for(ordering: WaitingOrder, rules: BatchRules | None = None) -> tuple[object, ...]:
    """What a run in one call under ``ordering`` and ``rules`` enters from Python (see
    :mod:`.kernels`): its :class:`RunKind`."""
    return (_kind(isinstance(ordering, PbsJobOrder), rules),)


def _kind(pbs: bool, rules: BatchRules | None) -> RunKind:
    if rules is not None and rules.slurm is not None:  # no promises, no PBS order
        return RunKind(False, False, True)
    return RunKind(rules is not None and rules.promises, pbs, False)


def _entry(
    n: int, pbs: PbsKeys | None, rules: BatchRules | None
) -> tuple[Callable[..., tuple], tuple[object, ...]]:  # type: ignore[type-arg]
    """The kernel a run of ``n`` jobs enters and the arguments it takes after ``fast``:
    the :class:`PromiseBook` when ``rules`` promise, the PBS order's keys, Slurm's rules,
    each None where the run has none (see :class:`RunKind`)."""
    kind = _kind(pbs is not None, rules)
    book = promise_book(n) if kind.promises else None
    slurm = _typed_slurm(rules.slurm) if rules is not None and rules.slurm is not None else None
    return kind.dispatcher, (book, pbs, slurm)


def indexable(state: RunState, order_kind: int, rules: BatchRules) -> bool:
    """Whether :mod:`.backfill_index` can stand for the job-by-job loop after the
    reservations: FCFS order, one pool, no memory, shapes, GPUs or queue limits, and a
    backfilling pass without promises or greedy blocking."""
    cluster = state.cluster
    return bool(
        order_kind == ORDER_FCFS
        and cluster.pools == 1
        and cluster.masks.all()
        and not state.limits.any
        and not state.mem_per_cpu.any()
        and not state.ppn.any()
        and not state.gpn.any()
        and rules.backfill
        and not rules.greedy
        and not rules.promises
        and rules.slurm is None
    )


def replay(
    state: RunState,
    ordering: WaitingOrder,
    rules: BatchRules,
    *,
    record: dict[int, float] | None = None,
    heads: list[tuple[int, float]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    index: bool = True,
) -> tuple[int, int]:
    """Run every job of ``state`` (fresh, nothing submitted yet) under ``rules`` in one
    compiled call, filling its start and end times, its limit counts and the ordering's
    ledger as the Python engine would; with ``record``, the first reservation of every job
    that got one (by job number), and under Slurm's rules in ``heads`` the head of the
    waiting jobs at each backfill cycle that reserved for it (with its reserved start);
    ``index``: use :mod:`.backfill_index` where it applies
    (false: the job-by-job loop only, for tests). Returns the number of scheduling passes
    and of the jobs they decided for one by one (the cost a deep queue would multiply)."""
    n = state.n
    cluster = state.cluster
    ledger, log, kind, priority = _ledger_of(ordering, n)
    f64 = np.float64
    # writable copies: numba compiles read-only arrays (pandas hands some out) apart
    static, weights = (
        (ordering.static, ordering.weights)
        if isinstance(ordering, SlurmMultifactorOrder)
        else (np.zeros(0), np.zeros(3))
    )
    run = RunJobs(
        np.array(state.submit, dtype=f64),
        np.array(state.work, dtype=f64),
        priority,
        np.array(static, dtype=f64),
        np.array(weights, dtype=f64),
    )
    jobs = JobArrays(
        state.cpus, state.queue, state.estimate, state.ppn, cluster.masks, state.mask_of
    )
    limits = state.limits
    first_reservation = np.full(n, np.inf)
    out = RunOut(
        state.start_time, state.end_time, first_reservation, limits.held_times, limits.held_jobs
    )
    caps = (cluster.pool_capacity_cpus, cluster.pool_capacity_mem, cluster.pool_capacity_gpus)
    fast = index and indexable(state, kind, rules)
    pbs = ordering.keys if isinstance(ordering, PbsJobOrder) else None
    if rules.slurm is not None and pbs is not None:
        raise ValueError("Slurm's timed passes do not run compiled under the PBS order")
    if rules.slurm is not None and rules.promises:
        raise ValueError("Slurm's timed passes make no promises")
    kernel, tail = _entry(n, pbs, rules)
    _PROGRESS[0] = progress
    try:
        status, passes, scanned, _, log, found = kernel(
            run,
            jobs,
            state.mem_per_cpu,
            state.gpn,
            cluster.node_state,
            caps,
            bool(cluster.gpus_modelled),
            limits.state(),
            bool(limits.any),
            ledger,
            log,
            kind,
            BatchRules(
                int(rules.depth),
                bool(rules.backfill),
                bool(rules.greedy),
                bool(rules.reserve_limited),
                bool(rules.promises),
                bool(rules.starving_only),
            ),
            record is not None,
            out,
            no_heads(),
            empty_scratch(n),
            max(1, n // 200) if progress is not None else 0,
            make_index(state.cpus if fast else np.zeros(0, dtype=np.int64)),
            fast,
            *tail,
        )
    finally:
        _PROGRESS[0] = None
    if status == FAILED_PLACEMENT:
        raise PolicyViolation("the compiled run could not place a job its pass planned")
    done = ~np.isnan(state.end_time)
    state.job_state[done] = JobState.DONE
    if isinstance(ordering, FairshareOrder | PbsJobOrder):
        ordering.ledger.log = log
    if record is not None:
        for job in np.flatnonzero(first_reservation < np.inf).tolist():
            record.setdefault(job, float(first_reservation[job]))
        if heads is not None:
            size = int(found.size[0])
            heads.extend(zip(found.jobs[:size].tolist(), found.times[:size].tolist(), strict=True))
    if progress is not None:
        progress(n, n)
    return int(passes), int(scanned)


def _typed_slurm(slurm: SlurmRules) -> SlurmRules:
    """``slurm`` with the types the compiled run is compiled for (one signature)."""
    return SlurmRules(
        bool(slurm.backfill),
        int(slurm.queue_depth),
        int(slurm.sched_interval),
        int(slurm.bf_interval),
        float(slurm.bf_window),
        int(slurm.bf_resolution),
        int(slurm.bf_max_job_test),
        int(slurm.bf_max_job_user),
    )


def warm_up(ordering: WaitingOrder | None = None, rules: BatchRules | None = None) -> None:
    """Compile the run under ``ordering``'s kind and ``rules`` (:func:`kernels_for`; by
    default the run of every order but the PBS order, one pass per event), or load it
    from numba's cache, on a one-job input, so that a run's time is not charged the
    compilation."""
    run_kind = _kind(isinstance(ordering, PbsJobOrder), rules)
    kernel, tail = _entry(1, tiny_pbs_keys() if run_kind.pbs else None, rules)
    site = Site.model_validate(
        {"name": "warm-up", "clusters": [{"name": "c", "nodes": 1, "cpus_per_node": 1}]}
    )
    cluster = ClusterState(site, [site.queues[0].name])
    one_f, one_i, zero_i = np.ones(1), np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    ledger, log, kind, priority = _ledger_of(FCFSOrder(), 1)
    limits = no_limits(zero_i, 1)
    kernel(
        RunJobs(np.zeros(1), one_f.copy(), priority, np.zeros(0), np.zeros(3)),
        JobArrays(one_i, zero_i, one_f, zero_i.copy(), cluster.masks, zero_i.copy()),
        zero_i.copy(),
        zero_i.copy(),
        cluster.node_state,
        (cluster.pool_capacity_cpus, cluster.pool_capacity_mem, cluster.pool_capacity_gpus),
        False,
        limits,
        False,
        ledger,
        log,
        kind,
        BatchRules(1, True, False, False, run_kind.promises, False),
        True,
        RunOut(
            np.full(1, np.nan),
            np.full(1, np.nan),
            np.full(1, np.inf),
            np.zeros(3, dtype=np.int64),
            np.zeros((3, 1), dtype=np.bool_),
        ),
        no_heads(),
        empty_scratch(1),
        0,
        make_index(one_i),
        not run_kind.slurm,
        *tail,
    )


#: the kernel a run in one call enters from Python, specialised per :class:`RunKind`
#: (see :mod:`.kernels` and :func:`kernels_for`)
KERNELS = (replay_events,)
