"""Access-pattern calculators: cc 1.3 half-warp coalescing, 128 B lines, 32 B sectors, banks.

Each expected value is worked out by hand in the comment above it (addresses in bytes, 4-byte
words unless said otherwise).  Sources: seed 003 §III (protocol, broadcast procedure), seed 001
§4 and Appendix B (stride and bank experiments), MODELS.md §5.
"""

from __future__ import annotations

import json
import math
import sys
import types
from typing import Any

import pytest

from advisor.errors import UsageError
from advisor.models.access import (
    bank_conflicts,
    coalesce,
    default_banks,
    protocol_for_cc,
)
from advisor.models.access.pattern import (
    build_pattern,
    parse_active,
    parse_index_expression,
)
from tests.cli_helpers import run


def cc13(stride: int = 1, word: int = 4, offset: int = 0, **kw: Any) -> Any:
    pattern = build_pattern(word_bytes=word, stride_words=stride, offset_words=offset, **kw)
    return coalesce(pattern.byte_addresses(32), word, "halfwarp-segments")


def sizes(result: Any, group: int = 0) -> list[int]:
    return [t.size_bytes for t in result.groups[group]]


# --- index expressions and active masks ---


def test_index_expression_evaluates_integer_arithmetic() -> None:
    expr = parse_index_expression("(tid//4)*64*4 + (tid+1)%4")
    # tid 5: (5//4)*256 + 6%4 = 256 + 2
    assert expr.evaluate(5) == 258
    assert parse_index_expression("lane + warp*100").evaluate(33) == 101  # lane 1, warp 1
    assert parse_index_expression("tid<<2 | 1").evaluate(3) == 13  # 12 | 1
    assert parse_index_expression("-tid + 40").evaluate(8) == 32
    assert parse_index_expression("tid*S").evaluate(3, {"S": 7}) == 21


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",  # a call
        "tid.real",  # attribute access
        "tid / 2",  # true division (floats)
        "tid ** 2",  # power (unbounded growth)
        "1.5 * tid",  # float literal
        "(lambda: 1)()",
        "[tid]",
        "tid if tid else 1",
        "'a'",
        "tid == 1",
    ],
)
def test_index_expression_rejects_everything_else(text: str) -> None:
    with pytest.raises(UsageError):
        parse_index_expression(text)


def test_index_expression_runtime_errors_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown name"):
        parse_index_expression("tid*S").evaluate(1)
    with pytest.raises(UsageError, match="division by zero"):
        parse_index_expression("tid // (tid - 1)").evaluate(1)
    with pytest.raises(UsageError, match="shift"):
        parse_index_expression("tid << 1000").evaluate(1)
    with pytest.raises(UsageError, match="negative index"):
        build_pattern(index="tid - 5").byte_addresses(32)


def test_parse_active_ranges_and_masks() -> None:
    assert parse_active("0-3,8") == frozenset({0, 1, 2, 3, 8})
    assert parse_active("0x0000ffff") == frozenset(range(16))
    assert parse_active("0x5") == frozenset({0, 2})
    for bad in ("3-1", "x", "0-40", "0xzz"):
        with pytest.raises(UsageError):
            parse_active(bad)


# --- cc 1.2/1.3 half-warp segment protocol (seed 003 §III) ---


def test_cc13_stride1_is_one_64B_transaction_per_half_warp() -> None:
    # 16 threads × 4 B = bytes 0..63.  Segment 128 B [0,128): only the lower half used -> 64 B
    # [0,64); both 32 B halves of that used -> stays 64 B.  Same for half-warp 1 at 64..127.
    r = cc13(stride=1)
    assert sizes(r, 0) == [64] and sizes(r, 1) == [64]
    assert r.transactions_per_request == 2
    assert r.bytes_moved == 128 and r.bytes_requested == 128 and r.efficiency_frac == 1.0
    assert r.threads_per_transaction == 16


def test_cc13_stride2_is_one_128B_transaction_per_half_warp() -> None:
    # thread t at 8t: 0..124 -> both halves of [0,128) used -> one 128 B transaction.
    r = cc13(stride=2)
    assert sizes(r, 0) == [128] and sizes(r, 1) == [128]
    assert r.efficiency_frac == 0.5  # 128 requested / 256 moved


def test_cc13_stride16_is_eight_128B_transactions_per_half_warp() -> None:
    # thread t at 64t: threads (0,1) share [0,128), (2,3) share [128,256), ... and each pair
    # uses both halves of its segment -> 8 × 128 B per half-warp (not 16 × 32 B: that needs a
    # stride of 32 words, one 128 B segment per thread).
    r = cc13(stride=16)
    assert sizes(r, 0) == [128] * 8
    assert [t.threads for t in r.groups[0]][:2] == [(0, 1), (2, 3)]


@pytest.mark.parametrize("stride", [32, 33, 64, 1000])
def test_cc13_stride_32_or_more_is_sixteen_32B_transactions(stride: int) -> None:
    # thread t at 4·stride·t >= 128t: one segment per thread; its 4 bytes sit in one half of
    # the 128 B segment and in one half of the 64 B -> shrunk to 32 B.
    r = cc13(stride=stride)
    assert sizes(r, 0) == [32] * 16 and sizes(r, 1) == [32] * 16
    assert r.transactions_per_request == 32
    assert r.threads_per_transaction == 1


def test_cc13_segment_size_follows_the_word_size() -> None:
    # 1-byte words: 16 B at 0..15, segment 32 B -> one 32 B transaction.
    assert sizes(cc13(word=1)) == [32]
    # 2-byte words: 32 B at 0..31, segment 64 B, only the lower half used -> 32 B.
    assert sizes(cc13(word=2)) == [32]
    # 8-byte words: 128 B at 0..127 -> one 128 B transaction.
    assert sizes(cc13(word=8)) == [128]
    # 16-byte words: 256 B -> two 128 B segments.
    assert sizes(cc13(word=16)) == [128, 128]


def test_cc13_misaligned_start_shrinks_each_piece() -> None:
    # offset 24 words = 96 B: threads 0-7 at 96..127 lie in the upper half of [0,128) -> 64 B
    # [64,128), then the upper half of that -> 32 B [96,128).  Threads 8-15 at 128..159: lower
    # half of [128,256) -> 64 B [128,192), lower half again -> 32 B [128,160).
    r = cc13(offset=24)
    assert [(t.start_byte, t.size_bytes) for t in r.groups[0]] == [(96, 32), (128, 32)]
    assert r.groups[0][0].threads == tuple(range(8))
    # offset 1 word: bytes 4..67 straddle the 64 B halves -> one 128 B transaction.
    assert sizes(cc13(offset=1)) == [128]


def test_cc13_inactive_threads_take_no_part() -> None:
    # threads 0-7 active: bytes 0..31 -> 32 B; half-warp 1 has nothing to fetch.
    r = cc13(active=parse_active("0-7"))
    assert sizes(r, 0) == [32] and sizes(r, 1) == []
    assert r.active_threads == 8 and r.bytes_requested == 32 and r.efficiency_frac == 1.0


def test_cc13_all_threads_one_word_is_one_32B_transaction() -> None:
    # every thread reads byte 0..3: one 32 B transaction per half-warp serving 16 threads.
    r = cc13(stride=0)
    assert sizes(r, 0) == [32] and r.threads_per_transaction == 16
    assert r.efficiency_frac == 2.0  # 64 B requested (16 × 4) / 32 B moved: shared words


def test_seed_stride_experiment_shape() -> None:
    # Seed 001 Appendix B.1 / seed 003 Algorithm 1: thread tid starts at
    # (tid/S)·n·S + (tid+O)%S.  S = 1: threads n words apart -> "16 memory transactions for a
    # half-warp" (seed 001 §4.1); S = 32: consecutive words -> complete coalescing (1 per
    # half-warp).  In between the count falls as S grows (S = 2: 8 pairs -> 8 per half-warp).
    def per_half_warp(s: int) -> int:
        pattern = build_pattern(index="(tid//S)*64*S + tid%S", constants={"S": s})
        return len(coalesce(pattern.byte_addresses(32), 4, "halfwarp-segments").groups[0])

    assert per_half_warp(1) == 16
    assert per_half_warp(2) == 8
    assert per_half_warp(4) == 4
    assert per_half_warp(16) == 1
    assert per_half_warp(32) == 1


# --- Fermi/Kepler 128 B lines and Volta+ 32 B sectors ---


def test_lines_and_sectors_per_warp() -> None:
    def count(stride: int, protocol: str, word: int = 4) -> int:
        p = build_pattern(word_bytes=word, stride_words=stride)
        return coalesce(p.byte_addresses(32), word, protocol).transactions

    # 32 × 4 B = 128 B: one line, four sectors.
    assert count(1, "l1-lines-128") == 1 and count(1, "sectors-32") == 4
    # stride 2: 256 B span -> 2 lines, 8 sectors.
    assert count(2, "l1-lines-128") == 2 and count(2, "sectors-32") == 8
    # stride 8 (32 B apart): every thread its own sector; 4 threads per line -> 8 lines.
    assert count(8, "l1-lines-128") == 8 and count(8, "sectors-32") == 32
    # stride 32: one line and one sector per thread.
    assert count(32, "l1-lines-128") == 32 and count(32, "sectors-32") == 32
    # 8-byte words, stride 1: 256 B -> 2 lines, 8 sectors.
    assert count(1, "l1-lines-128", word=8) == 2 and count(1, "sectors-32", word=8) == 8


def test_protocol_by_compute_capability() -> None:
    assert protocol_for_cc("1.3") == "halfwarp-segments"
    assert protocol_for_cc("1.2") == "halfwarp-segments"
    assert protocol_for_cc("2.0") == protocol_for_cc("3.5") == "l1-lines-128"
    assert (
        protocol_for_cc("5.2") == protocol_for_cc("7.0") == protocol_for_cc("9.0") == "sectors-32"
    )
    with pytest.raises(UsageError, match="not modelled"):
        protocol_for_cc("1.1")
    with pytest.raises(UsageError):
        protocol_for_cc("seven")


# --- shared-memory banks ---


def degree(stride: int, banks: int = 16, word: int = 4, **kw: Any) -> int:
    p = build_pattern(word_bytes=word, stride_words=stride, **kw)
    return bank_conflicts(p.byte_addresses(32), word, banks).degree


def test_shared_stride_shapes_on_16_banks() -> None:
    # stride 1: 16 threads -> 16 different banks -> degree 1.
    assert degree(1) == 1
    # stride 2: words 0,2,..,30 -> banks 0,2,..,14, two words each -> degree 2.
    assert degree(2) == 2
    # stride 16: every word in bank 0 -> 16 distinct words in one bank.
    assert degree(16) == 16
    # odd stride s: s·t mod 16 is a permutation of 0..15 -> degree 1.
    assert all(degree(s) == 1 for s in (3, 5, 7, 9, 11, 13, 15, 17))


def test_shared_broadcast_same_word_is_degree_one() -> None:
    # all 16 threads read word 0: one word in bank 0 -> broadcast, degree 1.
    assert degree(0) == 1
    assert degree(0, banks=32) == 1


def test_shared_32_banks_per_warp() -> None:
    assert default_banks("1.3") == 16 and default_banks("2.0") == 32
    # stride 32 on 32 banks: all 32 words in bank 0 -> 32-way (the transposed 32x32 tile).
    assert degree(32, banks=32) == 32
    # padding the tile to 33 columns: 33·t mod 32 = t -> conflict free.
    assert degree(33, banks=32) == 1
    # stride 16 on 32 banks: banks 0 and 16, 16 words each -> 16.
    assert degree(16, banks=32) == 16
    # 8-byte words, stride 1: 64 bank words over 32 banks -> 2 per bank.
    assert degree(1, banks=32, word=8) == 2
    # 1-byte words, stride 1: 4 threads per 4-byte word, 8 words in 8 banks -> 1.
    assert degree(1, banks=32, word=1) == 1


def test_shared_replays_and_efficiency() -> None:
    # stride 2 on 16 banks: degree 2 in each half-warp -> 1 replay each, 2 in all; 2 ideal
    # passes / 4 actual = 50 %.
    p = build_pattern(stride_words=2)
    r = bank_conflicts(p.byte_addresses(32), 4, 16)
    assert r.group_degrees == (2, 2) and r.replays == 2 and r.efficiency_frac == 0.5


def test_seed003_step_procedure_on_cc1() -> None:
    # tid//2: pairs of threads share words 0..7 (banks 0..7).  Distinct-word degree: 1.  The
    # seed 003 procedure broadcasts one word per step: step 1 serves word 0 (threads 0,1) plus
    # one address in each other bank (threads 2,4,..,14); step 2 serves threads 3,5,..,15.
    p = build_pattern(index="tid//2")
    r = bank_conflicts(p.byte_addresses(32), 4, 16, cc1_procedure=True)
    assert r.group_degrees == (1, 1) and r.group_passes_cc1 == (2, 2)
    # with all distinct words the procedure takes exactly the degree.
    q = bank_conflicts(build_pattern(stride_words=4).byte_addresses(32), 4, 16, cc1_procedure=True)
    assert q.group_degrees == q.group_passes_cc1 == (4, 4)


def test_seed_bank_experiment_shape() -> None:
    # Seed 001 Appendix B.2: S[(threadIdx.x*BANK) % 512], BANK = 0..16, 16 banks.  Word
    # B·t mod 16 repeats every 16/gcd(B,16) threads -> degree gcd(B,16); B = 0: one word,
    # broadcast.  (The seed's text calls the cost "about bank × 4"; the hardware rule gives
    # 4·gcd(B,16), linear only over B = 1, 2, 4, 8, 16.)
    for bank in range(17):
        p = build_pattern(index="(tid*B)%512", constants={"B": bank})
        got = bank_conflicts(p.byte_addresses(32), 4, 16).degree
        assert got == (1 if bank == 0 else math.gcd(bank, 16)), bank


# --- command line ---


def test_cli_global_text() -> None:
    code, out, _ = run("access", "global", "--cc", "1.3", "--stride", "1")
    assert code == 0
    assert "half-warp 0: 1 transaction, 1 × 64 B" in out
    assert "transactions per request: 2" in out
    assert "bytes moved 128, requested 128, efficiency 100.0 %" in out
    # k = 16 -> (500 + 16) / 16 = 32.25 cycles (seed 001 §3.2.2)
    assert "= 32.25 cycles" in out


def test_cli_global_json_on_volta() -> None:
    code, out, _ = run("access", "global", "--cc", "7.0", "--stride", "2", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["protocol"] == "sectors-32"
    assert doc["transactions"] == 8 and doc["bytes_moved"] == 256 and doc["efficiency_frac"] == 0.5
    assert doc["model_cycles_per_access"] is None  # the seeds give no latency for cc 7.0


def test_cli_shared_sweep_table() -> None:
    code, out, _ = run("access", "shared", "--cc", "1.3", "--sweep", "stride=0..16", "--json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert [r["degree"] for r in rows] == [1, 1, 2, 1, 4, 1, 2, 1, 8, 1, 2, 1, 4, 1, 2, 1, 16]
    assert rows[16]["model_cycles_per_access"] == 64.0  # 4 × 16
    code, text, _ = run("access", "shared", "--cc", "1.3", "--sweep", "stride=0..16")
    assert code == 0 and text.splitlines()[2].split()[:2] == ["stride", "degree"]


def test_cli_sweep_over_an_expression_name() -> None:
    code, out, _ = run(
        "access", "global", "--cc", "1.3", "--index", "(tid//S)*N*S + tid%S",
        "--const", "N=64", "--sweep", "S=1,32", "--json",
    )  # fmt: skip
    assert code == 0
    rows = json.loads(out)["rows"]
    assert [r["transactions_per_request"] for r in rows] == [32, 2]


def test_cli_shared_banks_sweep_and_option() -> None:
    code, out, _ = run(
        "access", "shared", "--cc", "2.0", "--stride", "8", "--sweep", "banks=8,32", "--json"
    )
    assert code == 0
    # stride 8 words over 8 banks: all in bank 0 -> 32; over 32 banks: banks 0,8,16,24 -> 8.
    assert [r["degree"] for r in json.loads(out)["rows"]] == [32, 8]


def test_cli_sweep_errors_and_rows_are_deterministic() -> None:
    args = ("access", "global", "--cc", "1.3", "--sweep", "stride=1..32")
    first, second = run(*args), run(*args)
    assert first == second and first[0] == 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (("access", "global", "--stride", "1"), "--cc"),
        (("access", "global", "--cc", "1.1"), "not modelled"),
        (("access", "global", "--cc", "1.3", "--index", "open('x')"), "--index"),
        (
            ("access", "global", "--cc", "1.3", "--index", "tid", "--sweep", "stride=1..4"),
            "--sweep",
        ),
        (("access", "global", "--cc", "1.3", "--sweep", "stride"), "--sweep"),
        (("access", "global", "--cc", "1.3", "--word", "3"), "--word"),
        (("access", "global", "--cc", "1.3", "--sweep", "stride=1..1000000000"), "1..1025"),
        (("access", "global", "--cc", "1.3", "--sweep", "banks=16"), "--sweep banks"),
        (("access", "shared", "--cc", "1.3", "--banks", "0"), "--banks"),
        (("access", "shared", "--cc", "1.3", "--active", "0-99"), "--active"),
        (("access", "shared", "--cc", "1.3", "--index", "tid*S"), "unknown name"),
        (("access", "shared", "--cc", "1.3", "--index", "tid*S", "--const", "tid=3"), "--const"),
    ],
)
def test_cli_usage_errors_are_one_line_exit_2(args: tuple[str, ...], needle: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("cuda-advisor: error: ")
    assert needle in lines[0] and "Traceback" not in err


def test_cli_gpu_name_sets_cc_and_banks(monkeypatch: pytest.MonkeyPatch) -> None:
    # a stand-in device database: a GT200 board with 16 banks.
    fake = types.ModuleType("advisor.devices.database")

    def find_device(name: str) -> Any:
        if name != "GTX 280":
            raise UsageError(f"unknown GPU {name!r}")
        return types.SimpleNamespace(name=name, compute_capability="1.3", shared_banks=16)

    fake.find_device = find_device  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "advisor.devices.database", fake)
    code, out, _ = run("access", "shared", "--gpu", "GTX 280", "--stride", "16", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["cc"] == "1.3" and doc["banks"] == 16 and doc["degree"] == 16
    code, _, err = run("access", "shared", "--gpu", "GTX 999", "--stride", "1")
    assert code == 2 and "GTX 999" in err


def test_cli_gpu_from_the_real_device_database() -> None:
    # GeForce GTX 280: cc 1.3, 16 banks -> stride 16 is 16-way
    code, out, _ = run("access", "shared", "--gpu", "GeForce GTX 280", "--stride", "16", "--json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["cc"], doc["banks"], doc["degree"]) == ("1.3", 16, 16)
    # Tesla V100: cc 7.0 -> 32 B sectors
    code, out, _ = run("access", "global", "--gpu", "Tesla V100-SXM2-16GB", "--json")
    assert code == 0 and json.loads(out)["protocol"] == "sectors-32"
