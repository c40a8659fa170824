"""Fairshare by a tree of groups, as the PBS scheduler compares entities.

The PBS Professional Administrator's Guide ("Using fairshare", the ``resource_group``
file) and sched_config(5): entities (users or groups, the leaves) sit in a tree of
groups, each node with its shares among its siblings; a group's usage is the sum of its
members' (decayed) usage. To choose between two jobs the scheduler walks both entities'
paths from the root and, at the first level where the paths part, prefers the node whose
usage is lowest for its shares (usage / shares: siblings have one parent, so comparing
usage per share among siblings is comparing usage against the fraction of the machine
each is due). A flattened tree (every leaf's share of the whole machine) can order
differently: a light user in a heavy group loses to a heavy user in a light group here.

The usage itself is the decayed usage of :class:`~.fairshare.FairshareLedger` (one
implementation of decay and of charging running jobs); this module only ranks accounts.
Where two nodes that part have the same usage per share, the comparison goes on one level
deeper (then to the job's other keys), so the order is a total order and deterministic.
"""

from __future__ import annotations

import numpy as np

from queuesim.common.jit import jit
from queuesim.site.model import Fairshare

__all__ = ["FairshareTree", "tree_ranks"]


class FairshareTree:
    """The tree of :class:`~queuesim.site.model.Fairshare` (``groups``, ``members``,
    ``shares``) over the accounts ``account_ids`` (a ledger's, ascending)."""

    def __init__(self, config: Fairshare, account_ids: np.ndarray) -> None:
        groups = {g.name: g for g in config.groups}
        order = [g.name for g in config.groups]
        g_index = {name: i for i, name in enumerate(order)}
        n_acc = account_ids.shape[0]
        # paths from the top: group indices, then the account itself (-1 - account)
        paths: list[list[int]] = []
        for a in account_ids.tolist():
            path = [-1 - len(paths)]
            at = config.members.get(int(a), config.unknown_group)
            while at != "root":
                path.append(g_index[at])
                at = groups[at].parent
            paths.append(path[::-1])
        depth = max((len(p) for p in paths), default=1)
        #: per account and level: the node there (group index, or -1 - account; n: none)
        self.path = np.full((n_acc, depth), len(order) + n_acc, dtype=np.int64)
        for k, p in enumerate(paths):
            self.path[k, : len(p)] = p
        self.group_shares = np.array([g.shares for g in config.groups], dtype=np.float64)
        self.account_shares = np.array(
            [config.shares.get(int(a), 1.0) for a in account_ids.tolist()], dtype=np.float64
        )
        self.n_groups = len(order)
        self.percent = self._percent(config, account_ids)

    def _percent(self, config: Fairshare, account_ids: np.ndarray) -> np.ndarray:
        """Each account's share of the whole machine in percent (PBS's fair_share_perc):
        its shares over its siblings', times its parent's fraction, up to the root.
        Siblings are the groups and the accounts (of the jobs, or named in the file)
        below one parent."""
        below: dict[str, float] = {}
        for g in config.groups:
            below[g.parent] = below.get(g.parent, 0.0) + g.shares
        accounts = set(account_ids.tolist()) | set(config.members) | set(config.shares)
        for a in accounts:
            parent = config.members.get(int(a), config.unknown_group)
            below[parent] = below.get(parent, 0.0) + config.shares.get(int(a), 1.0)
        groups = {g.name: g for g in config.groups}
        out = np.empty(account_ids.shape[0])
        for k, a in enumerate(account_ids.tolist()):
            at = config.members.get(int(a), config.unknown_group)
            fraction = config.shares.get(int(a), 1.0) / below[at]
            while at != "root":
                fraction *= groups[at].shares / below[groups[at].parent]
                at = groups[at].parent
            out[k] = 100.0 * fraction
        return out

    def ranks(self, usage: np.ndarray) -> np.ndarray:
        """Each account's place (0: most deserving; equal places for equal keys) given its
        decayed usage ``usage`` (not divided by shares), compared top-down."""
        rank: np.ndarray = tree_ranks(
            self.path, self.n_groups, self.group_shares, self.account_shares, usage
        )
        return rank


@jit
def tree_ranks(
    path: np.ndarray,
    n_groups: int,
    group_shares: np.ndarray,
    account_shares: np.ndarray,
    usage: np.ndarray,
) -> np.ndarray:
    """:meth:`FairshareTree.ranks` of the tree whose accounts' paths are ``path`` (compiled,
    for both run paths): at each level, top first, a node's usage per share (a group's
    usage is its members' summed in account order); accounts ranked by those ratios
    lexicographically, equal rows sharing a rank."""
    n_acc, depth = path.shape
    group_usage = np.zeros(n_groups + 1)
    for a in range(n_acc):
        for level in range(depth):
            node = path[a, level]
            if 0 <= node < n_groups:
                group_usage[node] += usage[a]
    ratio = np.zeros((n_acc, depth))
    for a in range(n_acc):
        for level in range(depth):
            node = path[a, level]
            if 0 <= node < n_groups:
                ratio[a, level] = group_usage[node] / group_shares[node]
            elif node < 0:
                ratio[a, level] = usage[-1 - node] / account_shares[-1 - node]
    # stable sorts from the deepest level up: lexicographic, the top level first
    order = np.arange(n_acc)
    for level in range(depth - 1, -1, -1):
        order = order[np.argsort(ratio[order, level], kind="mergesort")]
    rank = np.zeros(n_acc, dtype=np.int64)
    place = 0
    for k in range(1, n_acc):
        for level in range(depth):
            if ratio[order[k], level] != ratio[order[k - 1], level]:
                place += 1
                break
        rank[order[k]] = place
    return rank
