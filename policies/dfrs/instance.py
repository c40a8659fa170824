"""Instances of the virtual-cluster resource allocation problem and their allocations.

The model is VCSched from Casanova, Schanzenbach, Stillwell and Vivien, *Resource
Allocation using Virtual Clusters* (INRIA RR-6692; ``003`` in ``../shared/papers``), with the
parallel jobs of its section 5:

* ``hosts`` identical hosts, each with CPU capacity 1.0 and memory capacity 1.0 (every
  quantity is a fraction of one host);
* jobs (the paper's "services"), each with a number of tasks; every task of job ``i`` has the
  same *CPU need* ``cpu_need[i]`` in (0, 1] (the fraction of a host it would use if alone)
  and the same memory requirement ``memory[i]`` in [0, 1].

An :class:`Allocation` maps every task to one host and gives every job a *yield* in [0, 1]:
each task of job ``i`` receives ``cpu_need[i] * yields[i]`` of its host's CPU. It is valid
when no host holds more than 1.0 of memory and no host hands out more than 1.0 of CPU
(:func:`allocation_problems`).

Instances are written as JSON or YAML (:func:`load_instance`)::

    hosts: 4
    jobs:
      - {name: a, tasks: 2, cpu_need: 0.5, memory: 0.3}
      - {tasks: 1, cpu_need: 1.0, memory: 0.75}

``name`` is optional (default ``job<i>``) and ``tasks`` defaults to 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from queuesim.common.errors import QueuesimError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: slack allowed on a host's memory and CPU by :func:`allocation_problems`
TOLERANCE = 1e-9

_JOB_KEYS = ("name", "tasks", "cpu_need", "memory")


class InstanceError(QueuesimError, ValueError):
    """An instance (built in code or read from a file) is malformed; the message says where."""


class NoAllocationError(QueuesimError):
    """An algorithm found no allocation of every task (a heuristic may fail on a feasible
    instance; the exact MILP fails only on infeasible ones)."""

    exit_code = 1


class InfeasibleAllocation(Exception):
    """An allocation breaks a host's memory or CPU capacity (a bug in the algorithm)."""


def _frozen(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Instance:
    """``hosts`` unit hosts and jobs given by per-job arrays (see the module docstring).

    Arrays are copied, checked and made read-only; a bad value raises
    :class:`InstanceError` naming the job and the rule.
    """

    hosts: int
    tasks: IntArray
    cpu_need: FloatArray
    memory: FloatArray
    names: tuple[str, ...] = ()
    #: job of every task; tasks of a job are consecutive, jobs in order
    task_job: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        problems = _instance_problems(self.hosts, self.tasks, self.cpu_need, self.memory)
        if problems:
            raise InstanceError("invalid instance: " + "; ".join(problems))
        tasks = np.array(self.tasks, dtype=np.int64)
        names = tuple(self.names) or tuple(f"job{i}" for i in range(tasks.shape[0]))
        if len(names) != tasks.shape[0]:
            raise InstanceError(f"invalid instance: {len(names)} names for {tasks.shape[0]} jobs")
        object.__setattr__(self, "hosts", int(self.hosts))
        object.__setattr__(self, "tasks", _frozen(tasks))
        object.__setattr__(self, "cpu_need", _frozen(np.array(self.cpu_need, dtype=np.float64)))
        object.__setattr__(self, "memory", _frozen(np.array(self.memory, dtype=np.float64)))
        object.__setattr__(self, "names", names)
        task_job = np.repeat(np.arange(tasks.shape[0], dtype=np.int64), tasks)
        object.__setattr__(self, "task_job", _frozen(task_job))

    @property
    def n_jobs(self) -> int:
        return int(self.tasks.shape[0])

    @property
    def n_tasks(self) -> int:
        return int(self.task_job.shape[0])

    @property
    def task_cpu(self) -> FloatArray:
        """CPU need of every task."""
        out: FloatArray = self.cpu_need[self.task_job]
        return out

    @property
    def task_memory(self) -> FloatArray:
        """Memory requirement of every task."""
        out: FloatArray = self.memory[self.task_job]
        return out

    def subset(self, jobs: Sequence[int] | IntArray) -> Instance:
        """The same hosts with only ``jobs`` (indices, in the order given)."""
        keep = np.asarray(jobs, dtype=np.int64)
        if keep.size == 0 or (keep.min() >= 0 and keep.max() < self.n_jobs):
            # already-checked values: skip the validation (online MCB8 subsets a lot)
            sub = object.__new__(Instance)
            tasks = _frozen(self.tasks[keep])
            for name, value in (
                ("hosts", self.hosts),
                ("tasks", tasks),
                ("cpu_need", _frozen(self.cpu_need[keep])),
                ("memory", _frozen(self.memory[keep])),
                ("names", tuple(self.names[i] for i in keep.tolist())),
                ("task_job", _frozen(np.repeat(np.arange(keep.shape[0], dtype=np.int64), tasks))),
            ):
                object.__setattr__(sub, name, value)
            return sub
        return Instance(
            self.hosts,
            self.tasks[keep],
            self.cpu_need[keep],
            self.memory[keep],
            tuple(self.names[int(i)] for i in keep),
        )


def _instance_problems(hosts: object, tasks: object, cpu: object, mem: object) -> list[str]:
    """Every rule the raw instance arrays break, each naming the job (empty when valid)."""
    problems: list[str] = []
    if isinstance(hosts, bool) or not isinstance(hosts, int | np.integer) or hosts < 1:
        problems.append(f"hosts must be a positive integer, got {hosts!r}")
    arrays = {}
    for label, raw in (("tasks", tasks), ("cpu_need", cpu), ("memory", mem)):
        try:
            arrays[label] = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            problems.append(f"{label} must be numbers, got {raw!r}")
            continue
        if arrays[label].ndim != 1:
            shape = arrays[label].shape
            problems.append(f"{label} must be one value per job (1-D), got shape {shape}")
    if problems:
        return problems
    lengths = {label: a.shape[0] for label, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        return [f"tasks, cpu_need and memory must have one value per job, got lengths {lengths}"]
    if lengths["tasks"] == 0:
        return ["an instance needs at least one job"]
    for i in range(lengths["tasks"]):
        t, c, m = (float(arrays[k][i]) for k in ("tasks", "cpu_need", "memory"))
        if not (t >= 1 and t == math.floor(t) and math.isfinite(t)):
            problems.append(f"job {i}: tasks must be an integer >= 1, got {t:g}")
        if not 0.0 < c <= 1.0:
            problems.append(f"job {i}: cpu_need must be in (0, 1] (of a host), got {c:g}")
        if not 0.0 <= m <= 1.0:
            problems.append(f"job {i}: memory must be in [0, 1] (of a host), got {m:g}")
    return problems


# ------------------------------------------------------------------------------ allocations


@dataclass(frozen=True, eq=False)
class Allocation:
    """Every task's host and every job's yield; an immutable record.

    ``host[t]`` is the host of task ``t`` (tasks numbered as in :attr:`Instance.task_job`);
    ``yields[i]`` the yield of job ``i``, shared by all its tasks.
    """

    instance: Instance
    host: IntArray
    yields: FloatArray
    algorithm: str = ""

    def __post_init__(self) -> None:
        host = np.array(self.host, dtype=np.int64)
        yields = np.array(self.yields, dtype=np.float64)
        if host.shape != (self.instance.n_tasks,):
            raise ValueError(f"host must give one host per task ({self.instance.n_tasks})")
        if yields.shape != (self.instance.n_jobs,):
            raise ValueError(f"yields must give one yield per job ({self.instance.n_jobs})")
        object.__setattr__(self, "host", _frozen(host))
        object.__setattr__(self, "yields", _frozen(yields))

    @property
    def min_yield(self) -> float:
        return float(self.yields.min())

    @property
    def average_yield(self) -> float:
        return float(self.yields.mean())

    def host_memory(self) -> FloatArray:
        """Memory used on every host."""
        return host_sums(self.instance, self.host, self.instance.task_memory)

    def host_cpu(self) -> FloatArray:
        """CPU handed out on every host: sum of need * yield over its tasks."""
        task_cpu = self.instance.task_cpu * self.yields[self.instance.task_job]
        return host_sums(self.instance, self.host, task_cpu)

    def problems(self) -> list[str]:
        """See :func:`allocation_problems`."""
        return allocation_problems(self.instance, self.host, self.yields)

    def check(self) -> None:
        """Raise :class:`InfeasibleAllocation` listing every broken capacity."""
        problems = self.problems()
        if problems:
            name = self.algorithm or "allocation"
            raise InfeasibleAllocation(f"{name} is infeasible: " + "; ".join(problems))


def host_sums(instance: Instance, host: IntArray, per_task: FloatArray) -> FloatArray:
    """Sum of a per-task quantity on every host."""
    sums = np.bincount(host, weights=per_task, minlength=instance.hosts)
    return np.asarray(sums, dtype=np.float64)


def allocation_problems(
    instance: Instance, host: IntArray, yields: FloatArray, tolerance: float = TOLERANCE
) -> list[str]:
    """Every rule a task mapping and job yields break (empty when the allocation is valid).

    The rules are those of VCSched (paper 003, section 2.3 and 5.1): every task is on one of
    the hosts; every yield is in [0, 1]; on every host the tasks' memory adds up to at most
    1.0 and their CPU, ``cpu_need * yield``, to at most 1.0 (both up to ``tolerance``).
    """
    host = np.asarray(host, dtype=np.int64)
    yields = np.asarray(yields, dtype=np.float64)
    if host.shape != (instance.n_tasks,):
        return [f"expected one host per task ({instance.n_tasks}), got shape {host.shape}"]
    if yields.shape != (instance.n_jobs,):
        return [f"expected one yield per job ({instance.n_jobs}), got shape {yields.shape}"]
    problems: list[str] = []
    off = np.flatnonzero((host < 0) | (host >= instance.hosts))
    problems += [f"task {t} is on host {host[t]}, not one of 0..{instance.hosts - 1}" for t in off]
    bad = np.flatnonzero(~((yields >= -tolerance) & (yields <= 1.0 + tolerance)))
    problems += [f"job {instance.names[i]!r} has yield {yields[i]:g}, not in [0, 1]" for i in bad]
    if problems:
        return problems
    memory = host_sums(instance, host, instance.task_memory)
    cpu = host_sums(instance, host, instance.task_cpu * yields[instance.task_job])
    for h in np.flatnonzero(memory > 1.0 + tolerance):
        problems.append(f"host {h} holds {memory[h]:.6g} of memory (capacity 1)")
    for h in np.flatnonzero(cpu > 1.0 + tolerance):
        problems.append(f"host {h} hands out {cpu[h]:.6g} of CPU (capacity 1)")
    return problems


# ------------------------------------------------------------------------------ files


def instance_from_dict(data: object, source: str = "instance") -> Instance:
    """Build an instance from parsed JSON/YAML; :class:`InstanceError` lists every problem,
    each prefixed by ``source`` and the key (``jobs[2].cpu_need``)."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise InstanceError(f"{source}: expected a mapping with keys 'hosts' and 'jobs'")
    for key in sorted(set(data) - {"hosts", "jobs"}):
        problems.append(f"{key}: unknown key (known keys: hosts, jobs)")
    hosts = data.get("hosts")
    if hosts is None:
        problems.append("hosts: missing (the number of identical hosts)")
    elif isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
        problems.append(f"hosts: expected a positive integer, got {hosts!r}")
    jobs = data.get("jobs")
    names: list[str] = []
    tasks: list[int] = []
    cpu: list[float] = []
    mem: list[float] = []
    if jobs is None:
        problems.append("jobs: missing (a list of jobs)")
    elif not isinstance(jobs, list) or not jobs:
        problems.append("jobs: expected a non-empty list of jobs")
    else:
        for i, job in enumerate(jobs):
            where = f"jobs[{i}]"
            if not isinstance(job, Mapping):
                problems.append(f"{where}: expected a mapping with tasks, cpu_need, memory")
                continue
            for key in sorted(set(job) - set(_JOB_KEYS)):
                problems.append(f"{where}.{key}: unknown key (known keys: {', '.join(_JOB_KEYS)})")
            name = job.get("name", f"job{i}")
            if not isinstance(name, str) or not name:
                problems.append(f"{where}.name: expected a non-empty string, got {name!r}")
            n = job.get("tasks", 1)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                problems.append(f"{where}.tasks: expected an integer >= 1, got {n!r}")
            c = _number(job, "cpu_need", where, problems)
            if c is not None and not 0.0 < c <= 1.0:
                problems.append(f"{where}.cpu_need: expected a number in (0, 1], got {c!r}")
            m = _number(job, "memory", where, problems)
            if m is not None and not 0.0 <= m <= 1.0:
                problems.append(f"{where}.memory: expected a number in [0, 1], got {m!r}")
            names.append(str(name))
            tasks.append(n if isinstance(n, int) else 1)
            cpu.append(c if c is not None else 1.0)
            mem.append(m if m is not None else 0.0)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        listing = "\n".join(f"  {source}: {p}" for p in problems)
        raise InstanceError(f"{source}: {len(problems)} {noun} in the instance:\n{listing}")
    if len(set(names)) != len(names):
        raise InstanceError(f"{source}: jobs: job names must be unique")
    assert isinstance(hosts, int)
    return Instance(hosts, np.array(tasks), np.array(cpu), np.array(mem), tuple(names))


def _number(job: Mapping[str, object], key: str, where: str, problems: list[str]) -> float | None:
    value = job.get(key)
    if value is None:
        problems.append(f"{where}.{key}: missing")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"{where}.{key}: expected a number, got {value!r}")
        return None
    return float(value)


def load_instance(path: str | Path) -> Instance:
    """Read an instance from a ``.json``, ``.yaml`` or ``.yml`` file (see the module
    docstring); every problem is reported with the file name and the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read the instance file: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise InstanceError(f"{path}: not valid YAML at {where}: {exc}") from None
    return instance_from_dict(data, str(path))


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The file form of an instance (inverse of :func:`instance_from_dict`)."""
    return {
        "hosts": instance.hosts,
        "jobs": [
            {
                "name": instance.names[i],
                "tasks": int(instance.tasks[i]),
                "cpu_need": float(instance.cpu_need[i]),
                "memory": float(instance.memory[i]),
            }
            for i in range(instance.n_jobs)
        ],
    }
