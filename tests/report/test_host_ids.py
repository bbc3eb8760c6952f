"""``advisor.models.host``: the calls' correlation ids searched in their own (narrow) width."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.models import host


@pytest.mark.parametrize("width", [np.int8, np.int16, np.int32, np.int64])
def test_first_call_in_the_ids_width_finds_what_int64_finds(width: type) -> None:
    """Ids beyond the keys' width (300 in 8 bits, 2**40) are not found, as in int64; ids
    ascending (searched in place) or not (sorted, the first call of a repeated id leads)."""
    rng = np.random.default_rng(0)
    wanted = np.array([2, 300, -1, 3, 2**40, 0, 127, -128], dtype=np.int64)
    for ascending in (True, False):
        ids = np.arange(-128, 128) if ascending else rng.integers(-128, 128, 400)
        got = host._first_call(ids.astype(width), wanted)
        want = host._first_call(ids.astype(np.int64), wanted)
        assert got.tolist() == want.tolist()
        for k, w in enumerate(wanted.tolist()):  # the first call with that id, else -1
            rows = np.flatnonzero(ids == w)
            assert got[k] == (rows[0] if len(rows) else -1)
