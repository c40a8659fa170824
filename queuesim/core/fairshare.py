"""Fairshare accounting: each account's decayed past usage.

Following Klusáček et al. (paper 004, sections 2.1 and 4.2): a user (or group) who used
more recently gets a lower priority; usage ages by a decay factor so that recent use
weighs more. What a job pays per second of runtime is its CPU count, or with the
multi-resource charge its *processor equivalents*: on every node it occupies, the larger
of its CPUs there and its memory there expressed in CPUs of that node (memory / (node
memory / node CPUs)). A job with little memory pays its CPUs; one that fills a node's
memory with one CPU pays for the whole node. With the fairshare option ``charge_gpus``
the GPUs it holds on a node count too, in CPUs of that node (GPUs / (node GPUs / node
CPUs)): a one-CPU job holding all GPUs of a node pays for the whole node.

Decay is either continuous with a half-life (usage x 0.5 ** (dt / half_life)) or by a
factor at every interval boundary (usage x factor at t = k * interval), as schedulers do
in periodic accounting runs.

A running job is charged as it runs: while it runs, an account's usage includes the job's
charge for the time it has run so far (not yet decayed); when it ends, its whole charge
enters the account's decayed usage at the end time. An account's *effective* usage, the
fairshare key, is its usage divided by its share (default 1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from queuesim.common.jit import jit
from queuesim.core.cluster import Allocation
from queuesim.site.enums import Account, Charge, MemoryModel
from queuesim.site.model import Fairshare, Site


class LedgerState(NamedTuple):
    """A ledger's arrays, as the compiled kernels read and change them."""

    #: per account: decayed usage of ended jobs, share, and the running jobs' charge per
    #: second and its sum of charge x start
    usage: np.ndarray
    share: np.ndarray
    running_rate: np.ndarray
    running_since: np.ndarray
    #: per job: its account, its charge per second and its start
    job_account: np.ndarray
    rate: np.ndarray
    started: np.ndarray
    #: per node: CPUs, memory and GPUs, as floats (for processor equivalents)
    node_cpus: np.ndarray
    node_mem: np.ndarray
    node_gpus: np.ndarray
    #: [time decayed to, next usage-log time (inf: no log)]
    clock: np.ndarray
    #: [decay factor, decay interval, stepwise (0/1), usage-log interval (inf: none),
    #: multi-resource charge (0/1), GPUs charged (0/1)]
    params: np.ndarray


class UsageLog(NamedTuple):
    """Usage-log snapshots: ``times[:size[0]]`` and, a row each, every account's effective
    usage then; the arrays grow (double) as snapshots come."""

    times: np.ndarray
    usage: np.ndarray
    #: how many snapshots there are (one element, so kernels can change it in place)
    size: np.ndarray


def empty_log(accounts: int) -> UsageLog:
    """A usage log without snapshots, with room for a few."""
    return UsageLog(np.zeros(16), np.zeros((16, accounts)), np.zeros(1, dtype=np.int64))


@jit
def advance(ledger: LedgerState, now: float, log: UsageLog, current: np.ndarray) -> UsageLog:
    """Decay the ledger to ``now``, taking the usage-log snapshots that fall on the way
    (into ``log``, or a larger copy of it, which is returned); ``current``: scratch of one
    value per account."""
    clock, every = ledger.clock, ledger.params[3]
    while clock[1] <= now:
        at = clock[1]
        decay_to(ledger, at)
        current_usage(ledger, at, current)
        n = log.size[0]
        if n == log.times.shape[0]:
            times = np.empty(2 * n)
            usage = np.empty((2 * n, current.shape[0]))
            for r in range(n):
                times[r] = log.times[r]
                for a in range(current.shape[0]):
                    usage[r, a] = log.usage[r, a]
            log = UsageLog(times, usage, log.size)
        log.times[n] = at
        for a in range(current.shape[0]):
            log.usage[n, a] = current[a]
        log.size[0] = n + 1
        clock[1] = at + every
    decay_to(ledger, now)
    return log


@jit
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """numpy's sum of a block of at most 128: in order below 8, else 8 running sums."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = np.empty(8)
    for j in range(8):
        r[j] = a[lo + j]
    i = 8
    while i < n - (n % 8):
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = (r[0] + r[1] + (r[2] + r[3])) + (r[4] + r[5] + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return float(res)


@jit
def _pairwise(a: np.ndarray, lo: int, n: int) -> float:
    """numpy's pairwise sum of ``a[lo:lo + n]``: blocks of up to 128, halves (multiples
    of 8) above, added as numpy's recursion adds them (kept on a stack here: numba's
    cache cannot hold a recursive function)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    t_lo = np.empty(256, dtype=np.int64)
    t_n = np.empty(256, dtype=np.int64)
    t_phase = np.empty(256, dtype=np.int64)
    values = np.empty(256)
    tasks, nvalues = 1, 0
    t_lo[0], t_n[0], t_phase[0] = lo, n, 0
    while tasks:
        tasks -= 1
        start, size, phase = t_lo[tasks], t_n[tasks], t_phase[tasks]
        if size <= 128:
            values[nvalues] = _block_sum(a, start, size)
            nvalues += 1
        elif phase == 0:
            half = size // 2
            half -= half % 8
            t_lo[tasks], t_n[tasks], t_phase[tasks] = start, size, 1
            t_lo[tasks + 1], t_n[tasks + 1], t_phase[tasks + 1] = start + half, size - half, 0
            t_lo[tasks + 2], t_n[tasks + 2], t_phase[tasks + 2] = start, half, 0
            tasks += 3
        else:
            nvalues -= 1
            values[nvalues - 1] = values[nvalues - 1] + values[nvalues]
    return float(values[0])


@jit
def numpy_sum(a: np.ndarray) -> float:
    """``float(a.sum())`` of a 1-d float array to the last bit (numpy's pairwise sum), so
    that a charge is the same in compiled code as in numpy."""
    return _pairwise(a, 0, a.shape[0])


@jit
def charge_rate(
    ledger: LedgerState, cpus: int, nodes: np.ndarray, counts: np.ndarray, mem: int, gpn: int
) -> float:
    """What a job pays per second: its CPUs, or its processor equivalents on ``nodes``
    (holding ``counts`` CPUs of ``mem`` bytes each and ``gpn`` GPUs on each)."""
    multi = ledger.params[4] > 0
    gpus = ledger.params[5] > 0 and gpn > 0
    if not gpus and (not multi or mem == 0):
        return float(cpus)
    eq = np.empty(nodes.shape[0])
    for k in range(nodes.shape[0]):
        n = nodes[k]
        eq[k] = float(counts[k])
        if multi:
            eq[k] = max(eq[k], counts[k] * mem * ledger.node_cpus[n] / ledger.node_mem[n])
        if gpus:
            eq[k] = max(eq[k], gpn * ledger.node_cpus[n] / ledger.node_gpus[n])
    return numpy_sum(eq)


@jit
def decay_to(ledger: LedgerState, now: float) -> None:
    """Decay every account's usage from the ledger's time to ``now``."""
    before = ledger.clock[0]
    if now <= before:
        return
    factor, interval = ledger.params[0], ledger.params[1]
    if ledger.params[2] > 0:
        steps = np.floor(now / interval) - np.floor(before / interval)
        if steps:
            times = factor**steps
            for a in range(ledger.usage.shape[0]):
                ledger.usage[a] *= times
    else:
        times = factor ** ((now - before) / interval)
        for a in range(ledger.usage.shape[0]):
            ledger.usage[a] *= times
    ledger.clock[0] = now


@jit
def current_usage(ledger: LedgerState, now: float, out: np.ndarray) -> None:
    """Every account's effective usage at ``now`` (decayed to it already) into ``out``."""
    for a in range(ledger.usage.shape[0]):
        running = ledger.running_rate[a] * now - ledger.running_since[a]
        out[a] = (ledger.usage[a] + running) / ledger.share[a]


@jit
def charge_start(ledger: LedgerState, job: int, rate: float, now: float) -> None:
    """``job`` starts at ``now`` (decayed to it already), paying ``rate`` per second."""
    a = ledger.job_account[job]
    ledger.rate[job] = rate
    ledger.started[job] = now
    ledger.running_rate[a] += rate
    ledger.running_since[a] += rate * now


@jit
def charge_end(ledger: LedgerState, job: int, now: float) -> None:
    """``job`` ends at ``now`` (decayed to it already): its whole charge enters usage."""
    a = ledger.job_account[job]
    rate = ledger.rate[job]
    ledger.running_rate[a] -= rate
    ledger.running_since[a] -= rate * ledger.started[job]
    ledger.usage[a] += rate * (now - ledger.started[job])


class FairshareLedger:
    """Decayed usage per account, updated as jobs start and end (the compiled run of
    :mod:`queuesim.core.batch_run` changes the same arrays through the same kernels)."""

    def __init__(
        self,
        config: Fairshare,
        job_account: np.ndarray,
        capacity_cpus: np.ndarray,
        capacity_mem: np.ndarray,
        memory_modelled: bool,
        capacity_gpus: np.ndarray | None = None,
    ) -> None:
        self.config = config
        accounts, inverse = np.unique(job_account, return_inverse=True)
        self.job_account = inverse.astype(np.int64)
        self.account_ids = accounts
        factor, interval = config.decay
        multi = config.charge is Charge.MULTI_RESOURCE
        gpus = capacity_gpus is not None and multi and config.charge_gpus
        log_every = config.usage_log
        n = job_account.shape[0]
        self.state = LedgerState(
            np.zeros(accounts.shape[0]),
            np.array([config.shares.get(int(a), 1.0) for a in accounts], dtype=np.float64),
            np.zeros(accounts.shape[0]),
            np.zeros(accounts.shape[0]),
            self.job_account,
            np.zeros(n),
            np.zeros(n),
            capacity_cpus.astype(np.float64),
            capacity_mem.astype(np.float64),
            (capacity_gpus if gpus and capacity_gpus is not None else capacity_cpus).astype(
                np.float64
            ),
            np.array([0.0, 0.0 if log_every is not None else np.inf]),
            np.array(
                [
                    factor,
                    interval,
                    float(config.stepwise),
                    np.inf if log_every is None else float(log_every),
                    float(multi and memory_modelled),
                    float(gpus),
                ]
            ),
        )
        self._now = np.zeros(accounts.shape[0])
        #: the usage-log snapshots (none unless the site asks for a log)
        self.log = empty_log(accounts.shape[0])

    @classmethod
    def for_site(
        cls, site: Site, jobs: pd.DataFrame, capacity: tuple[np.ndarray, ...]
    ) -> FairshareLedger:
        """The ledger of ``site``'s fairshare over ``jobs`` (by user or group);
        ``capacity`` is (node CPUs, node memory)."""
        account = jobs["user"] if site.fairshare.by is Account.USER else jobs["group"]
        return cls(
            site.fairshare,
            account.to_numpy(),
            capacity[0],
            capacity[1],
            site.memory is MemoryModel.PER_CPU,
            site.node_gpus(),
        )

    @property
    def usage(self) -> np.ndarray:
        return self.state.usage

    def _advance(self, now: float) -> None:
        """Decay to ``now``, taking the usage-log snapshots that fall on the way."""
        self.log = advance(self.state, now, self.log, self._now)

    def rate_of(self, cpus: int, alloc: Allocation) -> float:
        """What the job pays per second: CPUs, or processor equivalents."""
        return float(
            charge_rate(
                self.state, cpus, alloc.nodes, alloc.cpus, alloc.mem_per_cpu, alloc.gpus_per_node
            )
        )

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None:
        self._advance(now)
        charge_start(self.state, job, self.rate_of(cpus, alloc), now)

    def job_finished(self, job: int, now: float) -> None:
        self._advance(now)
        charge_end(self.state, job, now)

    def effective_usage(self, now: float) -> np.ndarray:
        """Each account's usage at ``now``, running jobs included, divided by its share."""
        self._advance(now)
        current_usage(self.state, now, self._now)
        return self._now.copy()

    def usage_table(self) -> pd.DataFrame | None:
        """The recorded usage over time (``time, account, usage``), if asked for."""
        if self.config.usage_log is None:
            return None
        n = int(self.log.size[0])
        if not n:
            return pd.DataFrame({"time": [], "account": [], "usage": []})
        times = np.repeat(self.log.times[:n], self.account_ids.shape[0])
        accounts = np.tile(self.account_ids, n)
        usage = self.log.usage[:n].ravel()
        return pd.DataFrame({"time": times, "account": accounts, "usage": usage})
