"""Golden files for normalised output.

* For cuda-advisor's own sample profiles the golden holds the full normalised frames.
* For real profiles (which must not be copied into the repository) the golden holds a
  fingerprint: row counts, per-column non-missing counts, numeric sums/min/max and a SHA-256 of
  the canonical serialisation of each frame.  Any change in what a parser reads changes it, yet
  no content of the real file is stored.

Goldens are regenerated only on purpose: ``UPDATE_GOLDEN=1 python -m pytest tests/...``.  On a
mismatch the actual output is written beside the golden as ``<name>.actual.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from advisor.profile import Profile

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def _num(x: float) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{float(x):.9g}")


def _canonical_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, float_format="%.9g", na_rep="", lineterminator="\n")


def provenance(profile: Profile) -> list[dict[str, Any]]:
    return [
        {
            "format": p.format,
            "profiler": p.profiler,
            "modes": list(p.modes),
            "profiler_version": p.profiler_version,
            "notes": list(p.notes),
        }
        for p in profile.provenance
    ]


def fingerprint(profile: Profile) -> dict[str, Any]:
    """Content-free description of every frame of ``profile``."""
    tables: dict[str, Any] = {}
    for name, frame in profile.frames.items():
        if not len(frame):
            tables[name] = {"rows": 0}
            continue
        cols: dict[str, Any] = {}
        for col in frame.columns:
            series = frame[col]
            info: dict[str, Any] = {"present": int(series.notna().sum())}
            if info["present"] and series.dtype.kind in "fiu":
                values = series.dropna().astype("float64")
                if len(values):
                    info.update(
                        sum=_num(values.sum()), min=_num(values.min()), max=_num(values.max())
                    )
            elif info["present"]:
                distinct = sorted(str(v) for v in series.dropna().unique())
                info["distinct"] = len(distinct)
            cols[col] = info
        digest = hashlib.sha256(_canonical_csv(frame).encode("utf-8")).hexdigest()
        tables[name] = {"rows": len(frame), "sha256": digest, "columns": cols}
    prov = provenance(profile)
    for entry in prov:  # notes may quote the file: keep only their count and hash
        notes = entry.pop("notes")
        entry["notes_count"] = len(notes)
        entry["notes_sha256"] = hashlib.sha256("\n".join(notes).encode("utf-8")).hexdigest()
    return {"provenance": prov, "tables": tables}


def full(profile: Profile) -> dict[str, Any]:
    """The complete normalised frames (for the project's own samples only)."""
    tables = {}
    for name, frame in profile.frames.items():
        if len(frame):
            tables[name] = json.loads(
                frame.to_json(orient="split", index=False, double_precision=10)
            )
    return {"provenance": provenance(profile), "tables": tables}


def check(name: str, data: dict[str, Any]) -> None:
    """Compare ``data`` with ``golden/<name>.json`` (or write it under UPDATE_GOLDEN=1)."""
    path = GOLDEN_DIR / f"{name}.json"
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        raise AssertionError(f"golden {path} missing; create it with UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    actual_path = path.with_suffix(".actual.json")
    if text != expected:
        actual_path.write_text(text, encoding="utf-8")
        raise AssertionError(
            f"normalised output differs from {path}; actual written to {actual_path}"
        )
    actual_path.unlink(missing_ok=True)
