"""Slurm's multifactor job priority (``ordering: slurm-multifactor``).

Following Slurm's priority_multifactor page and slurm.conf(5) (``PriorityType=
priority/multifactor``): a waiting job's priority is the sum of weight x factor, each
factor in [0, 1], truncated to a whole number as Slurm stores it (a 32-bit integer):

* **age**: time waiting since submit over ``PriorityMaxAge``, capped at 1;
* **fair-share**: the classic factor ``2 ** (-U / S)``, U the account's decayed usage
  (running jobs charged as they run: :mod:`.fairshare`, half-life
  ``PriorityDecayHalfLife``) over the decayed usage of all accounts, S the account's
  shares over the shares of all accounts of the run (users directly under the root: the
  flat case of the documented formula; Slurm's effective usage over an account tree and
  fair-tree are not modelled);
* **job size**: the job's CPUs over the machine's CPUs (``1 -`` that with
  ``PriorityFavorSmall``; Slurm averages this with the node share, which traces rarely
  give);
* **partition**: the queue's ``PriorityJobFactor`` over the largest of the site's.

The size and partition terms do not change while a job waits: they are summed once per
job (``static``). Age and fair-share change with time, so keys are computed afresh at
every scheduling pass (Slurm recomputes them every ``PriorityCalcPeriod``). Jobs are
sorted by queue priority (the partition's ``PriorityTier``, higher first), then by
priority (higher first), then by submit order, as Slurm's job queue sort.

One kernel, :func:`multifactor_order`, orders the jobs on both run paths (the Context's
ordering and the compiled run of :mod:`.batch_run`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queuesim.common.jit import jit
from queuesim.site.model import Site

#: the indices of the dynamic weights in the array :func:`multifactor_order` reads
W_AGE, MAX_AGE, W_FAIRSHARE = 0, 1, 2


def static_priority(site: Site, jobs: pd.DataFrame) -> np.ndarray:
    """Per job: weight x factor of job size and partition, which do not change as it waits."""
    prio = site.priority
    size = jobs["cpus"].to_numpy(dtype=np.float64) / float(site.total_cpus)
    size = np.minimum(size, 1.0)
    if prio.favor_small:
        size = 1.0 - size
    factors = np.array(
        [prio.partition_job_factor.get(q.name, 1.0) for q in site.queues], dtype=np.float64
    )
    top = factors.max() if factors.size else 0.0
    names = [q.name for q in site.queues]
    codes = pd.Categorical(jobs["queue"], categories=names).codes
    part = factors[codes] / top if top > 0 else np.zeros(codes.shape[0])
    static: np.ndarray = prio.weight_job_size * size + prio.weight_partition * part
    return static


def dynamic_weights(site: Site) -> np.ndarray:
    """The weights the kernel applies at each pass: age, max age (seconds), fair-share."""
    prio = site.priority
    out = np.zeros(3)
    out[W_AGE], out[MAX_AGE], out[W_FAIRSHARE] = (
        prio.weight_age,
        prio.max_age,
        prio.weight_fairshare,
    )
    return out


@jit
def multifactor_keys(
    now: float,
    waiting: np.ndarray,
    submit: np.ndarray,
    static: np.ndarray,
    weights: np.ndarray,
    job_account: np.ndarray,
    share: np.ndarray,
    usage_now: np.ndarray,
) -> np.ndarray:
    """Every waiting job's priority at ``now``; ``usage_now``: each account's effective
    usage (usage / share, running jobs included), ``share``: each account's share."""
    total_usage, total_share = 0.0, 0.0
    for a in range(share.shape[0]):
        total_usage += usage_now[a] * share[a]
        total_share += share[a]
    keys = np.empty(waiting.shape[0])
    for k in range(waiting.shape[0]):
        job = waiting[k]
        age = min(1.0, max(0.0, now - submit[job]) / weights[MAX_AGE])
        p = static[job] + weights[W_AGE] * age
        if weights[W_FAIRSHARE] > 0:
            a = job_account[job]
            # U / S = (raw / total raw) / (share / total share); raw = effective x share
            ratio = usage_now[a] * total_share / total_usage if total_usage > 0 else 0.0
            p += weights[W_FAIRSHARE] * 2.0 ** (-ratio)
        keys[k] = np.floor(p)
    return keys


@jit
def multifactor_order(
    now: float,
    waiting: np.ndarray,
    submit: np.ndarray,
    static: np.ndarray,
    tier: np.ndarray,
    weights: np.ndarray,
    job_account: np.ndarray,
    share: np.ndarray,
    usage_now: np.ndarray,
) -> np.ndarray:
    """``waiting`` (ascending job numbers) by queue tier, then priority (both higher
    first), then job number."""
    keys = multifactor_keys(now, waiting, submit, static, weights, job_account, share, usage_now)
    by_priority = waiting[np.argsort(-keys, kind="mergesort")]
    tiers = np.empty(by_priority.shape[0])
    for k in range(by_priority.shape[0]):
        tiers[k] = -tier[by_priority[k]]
    return by_priority[np.argsort(tiers, kind="mergesort")]
