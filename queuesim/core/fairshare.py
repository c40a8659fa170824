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

import math

import numpy as np
import pandas as pd

from queuesim.core.cluster import Allocation
from queuesim.site.enums import Charge
from queuesim.site.model import Fairshare


class FairshareLedger:
    """Decayed usage per account, updated as jobs start and end."""

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
        accounts, self.job_account = np.unique(job_account, return_inverse=True)
        self.account_ids = accounts
        self.usage = np.zeros(accounts.shape[0])
        self.share = np.array([config.shares.get(int(a), 1.0) for a in accounts])
        self.factor, self.interval = config.decay
        self.time = 0.0
        self.rate = np.zeros(job_account.shape[0])  #: charge per second of each job
        self.started = np.zeros(job_account.shape[0])
        self.running_rate = np.zeros(accounts.shape[0])  #: sum of rates of running jobs
        self.running_since = np.zeros(accounts.shape[0])  #: sum of rate * start
        self._cpus = capacity_cpus
        self._mem = capacity_mem
        multi = config.charge is Charge.MULTI_RESOURCE
        self._multi = multi and memory_modelled
        self._gpus = capacity_gpus if multi and config.charge_gpus else None
        self._log_every = config.usage_log
        self._next_log = 0.0
        self._log: list[tuple[float, np.ndarray]] = []

    def _advance(self, now: float) -> None:
        """Decay to ``now``, taking the usage-log snapshots that fall on the way."""
        while self._log_every is not None and self._next_log <= now:
            self._decay(self._next_log)
            self._log.append((self._next_log, self._current(self._next_log)))
            self._next_log += self._log_every
        self._decay(now)

    def _current(self, now: float) -> np.ndarray:
        running = self.running_rate * now - self.running_since
        result: np.ndarray = (self.usage + running) / self.share
        return result

    def _decay(self, now: float) -> None:
        if now <= self.time:
            return
        if self.config.stepwise:
            steps = math.floor(now / self.interval) - math.floor(self.time / self.interval)
            if steps:
                self.usage *= self.factor**steps
        else:
            self.usage *= self.factor ** ((now - self.time) / self.interval)
        self.time = now

    def rate_of(self, cpus: int, alloc: Allocation) -> float:
        """What the job pays per second: CPUs, or processor equivalents."""
        gpus = self._gpus is not None and alloc.gpus_per_node > 0
        if not gpus and (not self._multi or alloc.mem_per_cpu == 0):
            return float(cpus)
        node_cpus = self._cpus[alloc.nodes]
        equivalents = alloc.cpus.astype(np.float64)
        if self._multi:
            mem_in_cpus = alloc.cpus * alloc.mem_per_cpu * node_cpus / self._mem[alloc.nodes]
            equivalents = np.maximum(equivalents, mem_in_cpus)
        if gpus and self._gpus is not None:
            gpu_in_cpus = alloc.gpus_per_node * node_cpus / self._gpus[alloc.nodes]
            equivalents = np.maximum(equivalents, gpu_in_cpus)
        return float(equivalents.sum())

    def job_started(self, job: int, cpus: int, alloc: Allocation, now: float) -> None:
        self._advance(now)
        rate = self.rate_of(cpus, alloc)
        account = self.job_account[job]
        self.rate[job] = rate
        self.started[job] = now
        self.running_rate[account] += rate
        self.running_since[account] += rate * now

    def job_finished(self, job: int, now: float) -> None:
        self._advance(now)
        account = self.job_account[job]
        rate = self.rate[job]
        self.running_rate[account] -= rate
        self.running_since[account] -= rate * self.started[job]
        self.usage[account] += rate * (now - self.started[job])

    def effective_usage(self, now: float) -> np.ndarray:
        """Each account's usage at ``now``, running jobs included, divided by its share."""
        self._advance(now)
        return self._current(now)

    def usage_table(self) -> pd.DataFrame | None:
        """The recorded usage over time (``time, account, usage``), if asked for."""
        if self._log_every is None:
            return None
        if not self._log:
            return pd.DataFrame({"time": [], "account": [], "usage": []})
        times = np.repeat([t for t, _ in self._log], self.account_ids.shape[0])
        accounts = np.tile(self.account_ids, len(self._log))
        usage = np.concatenate([u for _, u in self._log])
        return pd.DataFrame({"time": times, "account": accounts, "usage": usage})
