"""Hand-written instruction rows (the columns of :mod:`parsers.ncu.source_counters`) for the
location tests."""

from __future__ import annotations

from typing import Any

import pandas as pd

from parsers.ncu import source_counters


def instruction_rows(
    *specs: dict[str, Any], file: str = "", sass_is_opcode: bool = False
) -> pd.DataFrame:
    """Rows of one kernel ``k``, the i-th at PC 16 × i: every counter 0 and every stall column
    0 unless given; ``line`` 0 means no line info.  ``file``: the rows' file unless given;
    ``sass_is_opcode``: a row without its own ``sass`` shows its opcode as its SASS."""
    base = {"function": "k", "sass": "", "opcode": "NOP", "file": file, "line": 0}
    out = []
    for i, spec in enumerate(specs):
        row = {**base, "pc": 16 * i, "pc_offset": 16 * i, **spec}
        if sass_is_opcode and "sass" not in spec:
            row["sass"] = row["opcode"]
        for column in source_counters.COUNTERS:
            row.setdefault(column, 0.0)
        out.append(row)
    frame = pd.DataFrame(out)
    stalls = [c for c in frame.columns if c.startswith("stall_")]
    frame[stalls] = frame[stalls].fillna(0.0)
    return frame
