"""The per-launch rows of the criteria engine (advisor.criteria.engine.gathering._PerLaunch):
the first row of each (launch, metric) pair is found without sorting every row when the rows
are by launch already (a raw Nsight Compute page), and each kernel's launch ids from the pairs
left once a row repeating the one before it is dropped.  Both must give exactly what the sort
gives, on rows by launch and on rows in any order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from advisor.criteria.engine import gathering


def _first_by_sort(lid: np.ndarray, code: np.ndarray, width: int) -> np.ndarray:
    """Row numbers, by launch, of each pair's first row: the sort the fast path replaces."""
    key = lid.astype(np.int64) * width + code
    rows = np.sort(np.unique(key, return_index=True)[1])
    return rows[np.argsort(lid[rows], kind="stable")]


def test_first_rows_of_pairs_match_the_sort_on_rows_by_launch() -> None:
    rng = np.random.default_rng(7)
    lid = np.sort(rng.integers(0, 300, 5000)).astype(float)
    code = rng.integers(-1, 12, 5000).astype(np.int8)  # -1: a row without a metric name
    first = gathering._first_of_pairs(lid, code, 13)
    assert first is not None
    assert len(np.flatnonzero(first)) < 5000  # there were repeats to drop
    assert np.array_equal(np.flatnonzero(first), _first_by_sort(lid, code, 13))


def test_first_rows_of_pairs_decline_rows_out_of_launch_order_and_sparse_tables() -> None:
    code = np.zeros(4, dtype=np.int8)
    assert gathering._first_of_pairs(np.array([0.0, 2.0, 1.0, 3.0]), code, 2) is None
    # four launches of 1,000 metrics for four rows: the table would dwarf the rows
    assert gathering._first_of_pairs(np.arange(4, dtype=float), code, 1001) is None
    empty = gathering._first_of_pairs(np.zeros(0), np.zeros(0, dtype=np.int8), 5)
    assert empty is not None and not len(empty)


def test_the_kept_rows_are_those_of_the_sort_whatever_the_row_order() -> None:
    rng = np.random.default_rng(11)
    n = 4000
    for ordered in (True, False):
        lid = rng.integers(0, 200, n).astype(float)
        if ordered:
            lid = np.sort(lid)
        codes = rng.integers(0, 9, n)
        metric = pd.Categorical.from_codes(codes, categories=pd.Index([f"m{k}" for k in range(9)]))
        frame = pd.DataFrame(
            {
                "launch_id": pd.array(lid.astype(np.int64), dtype="Int64"),
                "metric": metric,
                "kernel": pd.Categorical.from_codes(
                    (lid % 3).astype(np.int64), categories=pd.Index(["a", "b", "c"])
                ),
                "value": rng.normal(size=n),
            }
        )
        rows = gathering._PerLaunch(frame, np.ones(n, dtype=bool))
        expected = _first_by_sort(lid, codes, 10)
        assert np.array_equal(rows._value, frame["value"].to_numpy()[expected])
        assert np.array_equal(rows._lid, lid[expected].astype(np.int64))


def test_kernel_launch_ids_ignore_repeats_and_order() -> None:
    kernels = pd.Index(["a", "b"])
    lid = np.array([5, 5, 5, 2, 2, 9, 5, 2], dtype=float)
    kcode = np.array([0, 0, 1, 1, 1, -1, 0, 1], dtype=np.int8)
    # launch 5 shows rows of both kernels; launch 9 has no kernel name
    assert gathering._ids_of(lid, kcode, kernels) == {"a": [5], "b": [2, 5]}
