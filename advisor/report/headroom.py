"""The roofline headroom that caps a hint's estimate (Decision P2), shared by the report, by
``compare``'s prediction ledger and by the validation scripts, so that the speedup a report
promises for a fix is the speedup they score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: criteria whose fix moves fewer DRAM bytes: the roofline headroom (Decision P2: a bound only a
#: change moving fewer DRAM bytes or doing fewer FLOPs can beat) does not cap their estimate
FEWER_BYTES = frozenset({"L1_GRANULARITY", "L2_GRANULARITY", "UM_MIGRATION"})


def roofline_headroom(k: Mapping[str, Any]) -> float | None:
    """A kernel's overall potential speedup when it is a roofline bound (DRAM or FLOP fraction of
    peak, Decision P2); None when the engine fell back to the busiest unit or had no figure."""
    method = str((k.get("throughputs") or {}).get("bound_method") or "")
    head = k.get("potential_speedup")
    return float(head) if head is not None and method.startswith("roofline") else None


def fix_within_headroom(
    criterion: str, speedup: float | None, kernel: Mapping[str, Any]
) -> float | None:
    """One kernel's estimate for fixing ``criterion`` as the report states it (the report's
    ``cap_at_headroom`` for one kernel): no larger than the kernel's roofline headroom, unless
    the fix moves fewer DRAM bytes.  ``compare`` and the validation scripts score this figure,
    not the uncapped one, so the speedup a report promises is the speedup they check."""
    if speedup is None or criterion in FEWER_BYTES:
        return speedup
    head = roofline_headroom(kernel)
    return speedup if head is None else min(speedup, head)
