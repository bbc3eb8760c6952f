"""advisor.schema.combined_codes: one key per row, equal exactly where every part is equal,
whether or not the key is renumbered on the way (parts too wide for 62 bits together)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor import schema


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = pd.DataFrame({"a": a, "b": b}).drop_duplicates()
    return bool(pairs["a"].is_unique and pairs["b"].is_unique)


@pytest.mark.parametrize("width", [3, 40_000])  # 40,000**5 > 2**62: renumbered on the way
def test_keys_equal_where_every_part_is(width: int) -> None:
    rng = np.random.default_rng(width)
    n = 5000
    parts = [rng.integers(0, width, n) for _ in range(5)]
    parts = [np.concatenate([p, p[::4]]) for p in parts]  # repeated rows
    key, size = schema.combined_codes(((p, width) for p in parts), len(parts[0]))
    assert key.dtype == np.int64 and len(key) == len(parts[0])
    assert int(key.min()) >= 0 and int(key.max()) < size < 2**62
    rows = pd.DataFrame({f"p{k}": p for k, p in enumerate(parts)})
    assert _same_partition(key, rows.groupby(list(rows.columns), sort=False).ngroup().to_numpy())


def test_no_part_gives_one_key_for_every_row() -> None:
    key, size = schema.combined_codes(iter(()), 4)
    assert key.tolist() == [0, 0, 0, 0] and size == 1


def test_the_parts_are_not_changed() -> None:
    first = np.array([1, 0, 1], dtype=np.int64)
    second = np.array([2, 2, 0], dtype=np.int64)
    key, _ = schema.combined_codes([(first, 2), (second, 3)], 3)
    assert first.tolist() == [1, 0, 1] and second.tolist() == [2, 2, 0]
    assert key.tolist() == [1 * 3 + 2, 0 * 3 + 2, 1 * 3 + 0]
