"""Hand-computed cases for the core rules whose mutants the targeted tests let survive
(`.ci/maintain mutation`, issue 20): fairshare decay first. Each case is small enough to
compute by hand; the kernels are called directly (compiled, or as Python when the mutation
runner turns numba's JIT off)."""

from __future__ import annotations

import numpy as np
import pytest

from queuesim.core.fairshare import LedgerState, decay_to


def _ledger(
    usage: list[float], clock: float, factor: float, interval: float, step: bool
) -> LedgerState:
    n = len(usage)
    zeros = np.zeros(n)
    return LedgerState(
        usage=np.array(usage, dtype=np.float64),
        share=np.ones(n),
        running_rate=zeros.copy(),
        running_since=zeros.copy(),
        job_account=np.zeros(0, dtype=np.int64),
        rate=np.zeros(0),
        started=np.zeros(0),
        node_cpus=np.ones(1),
        node_mem=np.ones(1),
        node_gpus=np.zeros(1),
        clock=np.array([clock, np.inf]),
        params=np.array([factor, interval, 1.0 if step else 0.0, np.inf, 0.0, 0.0]),
    )


def test_continuous_decay_halves_usage_per_interval_and_moves_the_clock() -> None:
    """factor 0.5 per 100 s, from t=50 to t=250: two intervals, usage x 0.25."""
    ledger = _ledger([8.0, 2.0], clock=50.0, factor=0.5, interval=100.0, step=False)
    decay_to(ledger, 250.0)
    assert ledger.usage.tolist() == [2.0, 0.5]
    assert ledger.clock.tolist() == [250.0, np.inf]


def test_continuous_decay_over_part_of_an_interval() -> None:
    """From t=0 to t=50 at 0.25 per 100 s: x 0.25^0.5 = 0.5."""
    ledger = _ledger([4.0], clock=0.0, factor=0.25, interval=100.0, step=False)
    decay_to(ledger, 50.0)
    assert ledger.usage.tolist() == pytest.approx([2.0])


@pytest.mark.parametrize(
    ("before", "now", "expected"),
    [
        (50.0, 250.0, 2.0),  # boundaries 100 and 200 crossed: x 0.25
        (50.0, 99.0, 8.0),  # no boundary crossed: unchanged
        (99.0, 100.0, 4.0),  # the boundary itself counts: x 0.5
        (100.0, 199.0, 8.0),  # from a boundary to before the next: unchanged
        (0.0, 300.0, 1.0),  # three boundaries: x 0.125
    ],
)
def test_stepwise_decay_counts_the_interval_boundaries_crossed(
    before: float, now: float, expected: float
) -> None:
    ledger = _ledger([8.0], clock=before, factor=0.5, interval=100.0, step=True)
    decay_to(ledger, now)
    assert ledger.usage.tolist() == [expected]
    assert ledger.clock.tolist() == [now, np.inf]


@pytest.mark.parametrize("step", [False, True])
def test_decay_to_an_earlier_time_changes_nothing(step: bool) -> None:
    ledger = _ledger([8.0, 3.0], clock=500.0, factor=0.5, interval=100.0, step=step)
    decay_to(ledger, 400.0)
    assert ledger.usage.tolist() == [8.0, 3.0]
    assert ledger.clock.tolist() == [500.0, np.inf]
