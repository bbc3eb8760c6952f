"""parsers.heap.give_back: the pages a reader freed go back to the system before the analysis
(the run's peak memory, benchmarks/bench_scale.py), and nothing read changes."""

from __future__ import annotations

import sys

import pytest

from parsers import heap


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@pytest.mark.skipif(heap._malloc_trim() is None, reason="needs Linux with glibc's malloc_trim")
def test_freed_heap_pages_go_back_to_the_system() -> None:
    # 64 MiB of 4 KiB blocks from the C heap (over pymalloc's 512-byte limit), one in eight
    # kept: the free pages between them stay mapped until they are given back
    blocks = [bytearray(4096) for _ in range(16384)]
    for block in blocks:
        block[::512] = b"\x01" * 8  # touched: resident
    kept = blocks[::8]
    del blocks
    before = _resident_bytes()
    heap.give_back()
    after = _resident_bytes()
    assert before - after > 24 * 2**20, (before, after)
    assert len(kept) == 2048


def test_give_back_is_harmless_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    heap._malloc_trim.cache_clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        assert heap._malloc_trim() is None
        heap.give_back()  # pyarrow's pool alone, no C call
    finally:
        heap._malloc_trim.cache_clear()
