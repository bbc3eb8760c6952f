"""``advisor.models.host.blocks``: intervals already in start order (a trace) are merged in
place, without the sort; the blocks are those of the sorted reading, ties in any order."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.models import host


def _sorted_blocks(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The blocks by a lexsort on (start, end), as the function computed them for every input."""
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    first = np.concatenate([[True], s[1:] > reach[:-1]])
    heads = np.flatnonzero(first)
    tails = np.concatenate([heads[1:] - 1, [len(s) - 1]])
    return s[heads], reach[tails]


@pytest.mark.parametrize("in_order", [True, False])
def test_blocks_equal_the_sorted_reading(in_order: bool) -> None:
    rng = np.random.default_rng(int(in_order))
    for _ in range(300):
        n = int(rng.integers(1, 50))
        start = rng.integers(0, 100, n).astype(float)
        if in_order:  # in order with ties, the ends of tied starts in any order
            start = np.cumsum(rng.integers(0, 3, n).astype(float))
        end = start + rng.integers(0, 20, n) * rng.random(n)
        kept = (start.copy(), end.copy())
        got, want = host.blocks(start, end), _sorted_blocks(start, end)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        assert np.array_equal(start, kept[0]) and np.array_equal(end, kept[1])  # not written


def test_blocks_of_an_interval_ending_before_it_starts_are_sorted_as_before() -> None:
    start = np.array([0.0, 0.0, 5.0])
    end = np.array([3.0, -1.0, 6.0])  # in start order, but one ends before it starts: the
    # order of the tied starts then matters (sorted: a block of its own)
    got, want = host.blocks(start, end), _sorted_blocks(start, end)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
