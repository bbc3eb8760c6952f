"""Launch grouping of the criteria gathering (advisor/criteria/engine/gathering.py) on columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor.criteria.engine import gathering


def _config(rng: np.random.Generator, n: int, distinct: int) -> dict[str, np.ndarray]:
    out = {}
    for key in gathering.CONFIG:
        values = rng.integers(0, distinct, n).astype(float)
        values[rng.random(n) < 0.1] = np.nan
        out[key] = values
    return out


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal labels in ``a`` exactly where ``b`` has equal labels."""
    pairs = pd.DataFrame({"a": a, "b": b}).drop_duplicates()
    return pairs["a"].is_unique and pairs["b"].is_unique


@pytest.mark.parametrize("distinct", [2, 5000])  # 5000: the key is renumbered to fit 62 bits
def test_groups_match_a_plain_groupby(distinct: int) -> None:
    rng = np.random.default_rng(distinct)
    n = 20_000
    codes = rng.integers(-1, 20_000 if distinct > 2 else 3, n)
    config = _config(rng, n, distinct)
    own = rng.random(n) < 0.05
    got = gathering._groups(codes, config, own)
    duration = config["launch.duration_ns"]
    frame = pd.DataFrame({k: config[k] for k in gathering.CONFIG[:-1]})
    frame["code"] = codes
    frame["flags"] = np.isfinite(duration).astype(int) + (duration > 0)
    expected = frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()
    assert (got[own] == -1).all() and (got[~own] >= 0).all()
    assert _same_partition(got[~own], expected[~own])


def test_stable_order_is_numpys_stable_argsort() -> None:
    rng = np.random.default_rng(0)
    for high in (5, 40_000):  # 16-bit radix path, then the plain one
        values = rng.integers(-1, high, 10_000)
        assert (gathering._stable_order(values) == np.argsort(values, kind="stable")).all()
    assert len(gathering._stable_order(np.array([], dtype=np.int64))) == 0


@pytest.mark.parametrize("all_named", [True, False])
def test_known_config_is_any_finite_value_per_kernel(all_named: bool) -> None:
    # per launch.* column, per kernel code: does any launch of the kernel have a finite value;
    # a column finite everywhere takes the shortcut (the kernels that have a launch at all)
    rng = np.random.default_rng(7)
    n, kernels = 2000, 6
    codes = rng.integers(0 if all_named else -1, kernels - 1, n).astype(np.int8)  # kernel 5: none
    partly = rng.random(n)
    partly[codes == 2] = np.nan  # kernel 2 never has it
    partly[rng.random(n) < 0.3] = np.nan
    config = {
        "everywhere": rng.random(n),
        "also everywhere": rng.random(n),
        "partly": partly,
        "nowhere": np.full(n, np.nan),
    }
    known = gathering._known_config(codes, kernels, config)
    for key, column in config.items():
        want = [bool(np.isfinite(column[codes == k]).any()) for k in range(kernels)]
        assert known[key].tolist() == want, key
    known["everywhere"][0] = not known["everywhere"][0]  # each column its own array
    assert known["also everywhere"][0] != known["everywhere"][0]
