"""The order in which a policy sees the waiting jobs.

Ordering is separate from placement (as in Ciw's queue disciplines and AccaSim's split of
"which job next" from "which nodes"): each ordering is a function of the waiting jobs and
the scheduling context that returns them sorted. Jobs are numbered in submit order (ties
by trace line), so the job number is the final tie-breaker of every ordering and the
result is deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from queuesim.site import Ordering, Site

if TYPE_CHECKING:
    from queuesim.engine import Context


def order_fcfs(ctx: Context, waiting: np.ndarray) -> np.ndarray:
    """First come, first served: by submit time, then trace line (the job number)."""
    return waiting  # the engine lists waiting jobs by job number already


_ORDERINGS = {Ordering.FCFS: order_fcfs}


def order_waiting(site: Site, ctx: Context, waiting: np.ndarray) -> np.ndarray:
    """``waiting`` (job numbers, ascending) in the order of the site's ordering."""
    return _ORDERINGS[site.ordering](ctx, waiting)
