"""NVIDIA's rule results of a kernel (advisor.criteria.ncu_rules) are grouped on the rows'
codes: the same entries, launches and largest speedups as the row-by-row grouping they
replace, missing cells and descriptions that share their first 60 characters included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from advisor.criteria import ncu_rules


def _by_rows(rules: pd.DataFrame) -> tuple[dict[str, Any], ...]:
    """The row-by-row grouping: one entry per (section, rule, type, description head)."""

    def s(value: Any) -> str:
        return "" if value is None or pd.isna(value) else str(value)

    out: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    names = ("section", "rule", "rule_type", "description", "speedup_type")
    columns = [rules[c].tolist() for c in (*names, "estimated_speedup_frac")]
    for section, rule, rule_type, description, speedup_type, est in zip(*columns, strict=True):
        text = s(description)
        key = (s(section), s(rule), s(rule_type), text[:60])
        entry = out.setdefault(
            key,
            {
                "section": key[0], "rule": key[1], "rule_type": key[2], "description": text,
                "speedup_type": s(speedup_type) or None, "estimated_speedup_frac": None,
                "launches": 0,
            },
        )  # fmt: skip
        entry["launches"] += 1
        if not pd.isna(est):
            best = entry["estimated_speedup_frac"]
            entry["estimated_speedup_frac"] = float(est) if best is None else max(best, float(est))
    return tuple(out[k] for k in sorted(out))


def test_grouped_rules_equal_the_row_by_row_grouping() -> None:
    rng = np.random.default_rng(3)
    n = 3000
    long = "x" * 70

    def pick(words: list[Any]) -> pd.Series:
        return pd.Series([words[i] for i in rng.integers(0, len(words), n)], dtype="string")

    rules = pd.DataFrame(
        {
            "section": pick(["SOL", "Occupancy", None]),
            "rule": pick(["SOLBottleneck", "AchievedOccupancy", None, ""]),
            "rule_type": pick(["OPT", "WRN", None]),
            # two descriptions alike in their first 60 characters: one entry, the first's text
            "description": pick([long + "a", long + "b", "short", None, ""]),
            "speedup_type": pick(["global", "local", None, ""]),
            "estimated_speedup_frac": np.where(rng.random(n) < 0.3, np.nan, rng.random(n).round(3)),
        }
    )
    rules.loc[rules["rule"] == "AchievedOccupancy", "estimated_speedup_frac"] = np.nan
    got, expected = ncu_rules(rules), _by_rows(rules)
    assert got == expected
    assert any(e["estimated_speedup_frac"] is None for e in got)  # a key with no speedup
    assert sum(e["launches"] for e in got) == n
    assert ncu_rules(rules.iloc[:0]) == () and ncu_rules(None) == ()
