"""Scheduling policies, installed as ``queuesim.policies``; importing this package
registers the built-in ones (see :mod:`queuesim.policies.registry`)."""

from queuesim.policies import backfill as backfill
from queuesim.policies import dpsa as dpsa
from queuesim.policies import slurm as slurm
from queuesim.policies.dfrs import online as online

__all__ = ["backfill", "dpsa", "online", "slurm"]
