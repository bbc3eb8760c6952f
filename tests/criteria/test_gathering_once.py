"""Gathering a raw Nsight Compute page hands each launch's metric values over to its unit
(advisor.criteria.engine.gathering._read_once) instead of copying them and holding both: the
units must be the same as with the copy, and the hand-over must be refused where a launch's
values could be read twice."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from advisor import pipeline
from advisor.criteria.engine import gathering

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu


def _units(profile: object) -> list[tuple[str, list[tuple[object, dict[str, float]]]]]:
    return [
        (k.name, [(u.launch_id, dict(u.values)) for u in k.units])
        for k in gathering.gather(profile)  # type: ignore[arg-type]
    ]


def test_handing_the_values_over_gives_the_same_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 120, seed=4)
    profile = pipeline.read([str(page)])
    taken: list[bool] = []
    real = gathering._read_once
    monkeypatch.setattr(gathering, "_read_once", lambda *a: taken.append(real(*a)) or taken[-1])
    handed = _units(profile)
    assert taken == [True]
    monkeypatch.setattr(gathering, "_read_once", lambda *a: False)
    assert handed == _units(profile)
    assert sum(len(units) for _, units in handed) == 120  # a unit per launch, values and all


def test_the_hand_over_is_refused_where_a_launch_could_be_read_twice() -> None:
    ids, codes = np.array([0, 1, 2]), np.array([0, 0, 1])
    code_of = {"k": 0, "m": 1}
    assert gathering._read_once(ids, codes, code_of, {"k": [0, 1], "m": [2, 7]})
    # two launches rows with one id
    assert not gathering._read_once(np.array([0, 1, 1]), codes, code_of, {"k": [0, 1]})
    # kernel m's metric rows name a launch of kernel k
    assert not gathering._read_once(ids, codes, code_of, {"k": [0], "m": [1, 2]})
