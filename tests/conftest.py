"""Shared fixtures.

Real traces live outside the repository, in ``../shared/workloads`` beside the checkout
(or wherever ``QUEUESIM_SHARED_WORKLOADS`` points). Tests that need them use the
``real_workloads`` fixture, which skips the test cleanly when the folder is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

# Property tests guard behaviour, never speed: hypothesis's per-example deadline (200 ms by
# default) is a timing assertion that fails on a loaded machine, so it is off for every test
# (speed targets live in ``queuesim bench``).
settings.register_profile("queuesim", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("queuesim")

REPO = Path(__file__).resolve().parents[1]

# The mutation runner (.ci/mutate.py) wants to know whether a property fails, not its
# smallest failing example: no shrinking there (shrinking a mutant's failure takes minutes)
if os.environ.get("QUEUESIM_MUTATION_RUN"):
    settings.register_profile(
        "mutation",
        parent=settings.get_profile("queuesim"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        print_blob=False,
    )
    settings.load_profile("mutation")


def shared_workloads_dir() -> Path:
    override = os.environ.get("QUEUESIM_SHARED_WORKLOADS")
    return Path(override) if override else REPO.parent / "shared" / "workloads"


@pytest.fixture
def real_workloads() -> Path:
    folder = shared_workloads_dir()
    if not folder.is_dir():
        pytest.skip(f"real traces not available ({folder} is absent)")
    return folder


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def site_logs() -> Path:
    """The real PBS and Slurm logs of ``../shared/workloads/site-logs`` (skips if absent)."""
    folder = shared_workloads_dir() / "site-logs"
    if not folder.is_dir():
        pytest.skip(f"site logs not available ({folder} is absent)")
    return folder
