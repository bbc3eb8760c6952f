"""HOSTSYNC's interval union on arrays equals the plain loop (advisor/criteria/hostsync.py)."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.criteria.hostsync import hostsync_value, interval_union


@pytest.mark.parametrize("in_order", [True, False])
def test_interval_union_equals_the_loop(in_order: bool) -> None:
    rng = np.random.default_rng(int(in_order))
    for _ in range(300):
        n = int(rng.integers(1, 40))
        starts = rng.integers(0, 200, n).astype(float) + (rng.random(n) if in_order else 0.0)
        if in_order:  # starts in order, some tied: the path that skips the sort
            starts = np.cumsum(rng.integers(0, 3, n).astype(float))
        ends = starts + rng.integers(0, 30, n) * rng.random(n)
        got = interval_union(starts, ends)
        want = hostsync_value(list(zip(starts.tolist(), ends.tolist(), strict=True)))
        assert got == want


def test_interval_union_by_hand() -> None:
    # [0, 4] and [2, 6] merge into 6 busy ns; [10, 12] adds 2; span 12
    got = interval_union(np.array([0.0, 2.0, 10.0]), np.array([4.0, 6.0, 12.0]))
    assert got == (8 / 12, 8.0, 12.0)
    unsorted = interval_union(np.array([10.0, 2.0, 0.0]), np.array([12.0, 6.0, 4.0]))
    assert unsorted == got


@pytest.mark.parametrize("in_order", [True, False])
def test_interval_union_in_place_gives_the_same_numbers(in_order: bool) -> None:
    """``in_place``: the ends array is the caller's scratch; the starts are never written."""
    rng = np.random.default_rng(10 + int(in_order))
    for _ in range(200):
        n = int(rng.integers(1, 40))
        starts = rng.integers(0, 200, n).astype(float)
        if in_order:
            starts = np.cumsum(rng.integers(0, 3, n).astype(float))
        ends = starts + rng.integers(0, 30, n) * rng.random(n)
        want = interval_union(starts, ends.copy())
        kept = starts.copy()
        assert interval_union(starts, ends.copy(), in_place=True) == want
        assert np.array_equal(starts, kept)
