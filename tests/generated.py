"""Generated Nsight Compute pages for the tests (``benchmarks/gen_ncu.py``), written once per
module by a module-scoped fixture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import gen_ncu


def ncu_page(factory: pytest.TempPathFactory, kind: str, launches: int, seed: int) -> Path:
    """A generated ``kind`` page (``"raw"`` or ``"details"``) of ``launches`` launches."""
    writers: dict[str, Callable[..., object]] = {
        "raw": gen_ncu.write_ncu_raw,
        "details": gen_ncu.write_ncu_details,
    }
    path = factory.mktemp(kind) / f"{kind}.csv"
    writers[kind](path, launches, seed=seed)
    return path
