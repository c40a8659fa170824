"""Nodes shared by time-sharing policies: where every task runs, and the checks on it.

Dynamic fractional resource scheduling (Stillwell, Vivien and Casanova, papers ``000`` and
``002``) runs a job as ``tasks`` identical tasks, one per node slot, each holding a fixed
fraction of its node's memory and using ``cpu_need x rate`` of its node's CPU, where
``rate`` is the job's progress rate (its yield) in the engine. A node's memory is never
overcommitted; its CPU may hold more needs than it has, but the rates the policy hands
out must then fit: on every node, the sum of ``cpu_need x rate`` over its tasks is at most 1.

The engine owns one :class:`SharedNodes` per run (made on the first placement) and checks
every placement and, after each scheduling pass, the CPU of every node; a breach raises
:class:`~queuesim.common.errors.PolicyViolation` naming the job and the node.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from queuesim.common.errors import PolicyViolation

#: slack on the unit capacity of a node (sums of fractions are not exact in floating point)
CAPACITY_EPS = 1e-9

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class SharedNodes:
    """``hosts`` identical nodes of capacity 1 (CPU and memory) and the tasks mapped on them."""

    def __init__(
        self,
        hosts: int,
        tasks: IntArray,
        cpu_need: FloatArray,
        mem_fraction: FloatArray,
        job_ids: npt.NDArray[np.int64],
    ) -> None:
        self.hosts = hosts
        self.tasks = tasks
        self.cpu_need = cpu_need
        self.mem_fraction = mem_fraction
        self.job_ids = job_ids
        self.mem_used = np.zeros(hosts)
        #: job -> the node of each of its tasks, for every mapped job
        self.hosts_of: dict[int, IntArray] = {}

    def mapped(self, job: int) -> IntArray | None:
        return self.hosts_of.get(job)

    def place(self, job: int, hosts: npt.ArrayLike) -> None:
        """Map ``job``'s tasks on ``hosts`` (one node per task), replacing any mapping it had."""
        where = np.asarray(hosts, dtype=np.int64).reshape(-1)
        name = f"job {int(self.job_ids[job])}"
        if where.shape[0] != self.tasks[job]:
            raise PolicyViolation(
                f"{name} has {int(self.tasks[job])} tasks but was given {where.shape[0]} nodes"
            )
        if where.size and (where.min() < 0 or where.max() >= self.hosts):
            raise PolicyViolation(f"{name}: node numbers must lie in 0..{self.hosts - 1}")
        old = self.hosts_of.get(job)
        mem = float(self.mem_fraction[job])
        used = self.mem_used.copy()
        if old is not None:
            np.subtract.at(used, old, mem)
        np.add.at(used, where, mem)
        over = np.flatnonzero(used > 1.0 + CAPACITY_EPS)
        if over.size:
            node = int(over[0])
            raise PolicyViolation(
                f"{name}: node {node} would hold {used[node]:.6g} of its memory (at most 1); "
                "a node's memory is never overcommitted"
            )
        self.mem_used = used
        self.hosts_of[job] = where

    def remove(self, job: int) -> None:
        """Take ``job``'s tasks off their nodes (the job ended or was paused)."""
        old = self.hosts_of.pop(job, None)
        if old is not None:
            np.subtract.at(self.mem_used, old, float(self.mem_fraction[job]))

    def cpu_used(self, rate: FloatArray) -> FloatArray:
        """CPU used on every node when every mapped job progresses at ``rate[job]``."""
        used = np.zeros(self.hosts)
        for job, where in self.hosts_of.items():
            np.add.at(used, where, float(self.cpu_need[job]) * float(rate[job]))
        return used

    def check_cpu(self, rate: FloatArray) -> None:
        """Raise :class:`PolicyViolation` when the rates overcommit some node's CPU."""
        used = self.cpu_used(rate)
        over = np.flatnonzero(used > 1.0 + CAPACITY_EPS)
        if over.size:
            node = int(over[0])
            jobs = sorted(int(self.job_ids[j]) for j, w in self.hosts_of.items() if node in w)
            raise PolicyViolation(
                f"node {node}: the rates of jobs {jobs} use {used[node]:.6g} of its CPU (at most 1)"
            )
