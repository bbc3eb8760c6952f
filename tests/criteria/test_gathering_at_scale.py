"""Gathering the units of a trace of many launches: the launch configuration converted element
by element while few rows are asked for (a few units over many launches), as lists once many are,
and never kept after the analysis; whether metric values can be handed over, decided on arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.criteria.engine import gathering
from advisor.profile import Profile, Provenance


def test_config_rows_are_the_same_floats_either_way() -> None:
    config = {
        "launch.grid_size": np.array([4.0, np.nan, 8.0] * 16),
        "launch.duration_ns": np.arange(48, dtype=float),
    }
    want = [{k: float(c[i]) for k, c in config.items() if not np.isnan(c[i])} for i in range(48)]
    got = [gathering._config_at(config, i) for i in range(48)]
    assert got == want
    hit = gathering._LISTS[id(config)]
    assert hit[2] is not None  # 48 rows asked for: converted to lists along the way
    gathering._LISTS.clear()


def test_a_trace_of_few_units_is_not_converted_to_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 4000
    launches = pd.DataFrame(
        {
            "name": ["k1", "k2"] * (n // 2),
            "start_ns": np.arange(n, dtype=float) * 10.0,
            "duration_ns": np.full(n, 5.0),
            "grid_x": pd.array([64] * n, dtype="Int64"),
            "block_x": pd.array([256] * n, dtype="Int64"),
        }
    )
    profile = Profile(
        provenance=(Provenance(path="t.csv", format="test", profiler="nvprof"),),
        launches=launches,
    )
    answers: list[object] = []
    as_lists = gathering._as_lists

    def spy(config: dict[str, np.ndarray]) -> object:
        answers.append(as_lists(config))
        return answers[-1]

    monkeypatch.setattr(gathering, "_as_lists", spy)
    kernels = gathering.gather(profile)
    assert [k.name for k in kernels] == ["k1", "k2"]
    assert [sum(u.count for u in k.units) for k in kernels] == [n // 2, n // 2]
    assert answers and all(a is None for a in answers)  # a few units: no column as a list
    assert gathering._LISTS == {}  # nothing kept after the analysis


def _read_once_by_dict(
    ids: np.ndarray, codes: np.ndarray, code_of: dict[str, int], ids_of: dict[str, list[int]]
) -> bool:
    """The rule as a dict of every launch (what the arrays must answer)."""
    listed = ids.tolist()
    kernel_of = dict(zip(listed, codes.tolist(), strict=True))
    if len(kernel_of) != len(listed):
        return False
    for name, lids in ids_of.items():
        code = code_of.get(name, -2)
        if any(kernel_of.get(lid, code) != code for lid in lids):
            return False
    return True


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-1, 12), st.integers(-1, 2)), max_size=12),
    st.dictionaries(
        st.sampled_from(["k0", "k1", "k2", "other"]),
        st.lists(st.integers(-1, 14), max_size=4),
        max_size=4,
    ),
)
def test_read_once_on_arrays_answers_as_the_dict(
    launches: list[tuple[int, int]], ids_of: dict[str, list[int]]
) -> None:
    ids = np.array([i for i, _ in launches], dtype=np.int64)
    codes = np.array([c for _, c in launches], dtype=np.int64)
    code_of = {"k0": 0, "k1": 1, "k2": 2}
    want = _read_once_by_dict(ids, codes, code_of, ids_of)
    assert gathering._read_once(ids, codes, code_of, ids_of) == want
