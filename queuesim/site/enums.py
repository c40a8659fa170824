"""The choices a site file makes by name: routing, runtime estimates, memory, ordering,
fairshare charges and accounts, DFRS annotation."""

from __future__ import annotations

from enum import StrEnum


class Routing(StrEnum):
    """How a job finds its queue."""

    TRACE = "trace"  #: by the trace's queue field, through each queue's trace_queues
    WALLTIME = "walltime"  #: the smallest queue whose max_walltime fits the request


class EstimateSource(StrEnum):
    """What the scheduler believes a job's runtime to be when it plans."""

    REQUESTED = "requested"  #: the walltime the user requested (the trace's field 9)
    EXACT = "exact"  #: the real runtime (a clairvoyant scheduler)
    QUEUE_LIMIT = "queue-limit"  #: the max walltime of the job's queue


class MemoryModel(StrEnum):
    """Whether the trace's memory requests constrain placement."""

    IGNORE = "ignore"
    PER_CPU = "per-cpu"  #: the trace's requested memory per CPU must fit on each node


class Ordering(StrEnum):
    """The order in which policies see waiting jobs (Klusáček et al., paper 004, 2.1)."""

    FCFS = "fcfs"  #: by submit time, then trace order
    QUEUE_PRIORITY = "queue-priority"  #: queue priority, then fairshare within a queue
    FAIRSHARE = "fairshare"  #: fairshare over all jobs; queues are only "virtual"
    PBS = "pbs"  #: the PBS scheduler's order (``pbs_order``; sched_config(5))
    #: Slurm's priority/multifactor: queue priority (PriorityTier) first, then the weighted
    #: sum of the age, fair-share, job size and partition factors (the ``priority`` block)
    SLURM_MULTIFACTOR = "slurm-multifactor"


class Charge(StrEnum):
    """What a job pays into fairshare, per second of runtime."""

    CPU = "cpu"  #: its CPUs
    MULTI_RESOURCE = "multi-resource"  #: processor equivalents: max(CPU, memory) share


class Account(StrEnum):
    USER = "user"
    GROUP = "group"


class DfrsAnnotation(StrEnum):
    """Where a DFRS policy takes every job's tasks, CPU need and memory from."""

    FILE = "file"  #: the trace's own annotation file (``NAME.dfrs.csv``, traces.dfrs_annotation)
    HPC2N = "hpc2n"  #: paper 000's rule for the HPC2N log, applied to a trace without one
