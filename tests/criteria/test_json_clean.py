"""The JSON cleaning of an analysis (advisor.criteria.engine.analysis._clean).

NaN and infinities become None, numpy scalars Python numbers, tuples lists and keys strings,
recursively; the plain types are told apart by their exact type first, and every other value
(subclasses included) must be read as before.
"""

from __future__ import annotations

import enum
import math
from collections import OrderedDict, namedtuple
from typing import Any

import numpy as np

from advisor.criteria.engine.analysis import _clean


class _Level(enum.IntEnum):
    HIGH = 2


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, NaN alike, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def test_plain_values() -> None:
    got = _clean({"a": [1.5, math.nan, -math.inf, (2, "x")], 3: {"b": None, "c": True}})
    assert _same(got, {"a": [1.5, None, None, [2, "x"]], "3": {"b": None, "c": True}})
    assert _same(_clean(-0.0), -0.0) and math.copysign(1.0, _clean(-0.0)) == -1.0


def test_other_types_read_as_before() -> None:
    point = namedtuple("point", "x y")
    value = OrderedDict(
        [
            ("np_int", np.int64(3)),
            ("np_nan", np.float32("nan")),
            ("np_bool", np.bool_(True)),
            ("np_float", np.float64(0.25)),  # a float subclass: kept as it is
            ("np_inf", np.float64("inf")),
            ("enum", _Level.HIGH),
            ("named", point(1.0, math.inf)),
            ("other", "text"),
        ]
    )
    got = _clean(value)
    assert type(got) is dict
    assert _same(got["np_int"], 3) and _same(got["np_bool"], True)
    assert got["np_nan"] is None and got["np_inf"] is None
    assert type(got["np_float"]) is np.float64 and got["np_float"] == 0.25
    assert got["enum"] is _Level.HIGH
    assert _same(got["named"], [1.0, None])
    marker = object()
    assert _clean(marker) is marker
