"""The pyarrow fast path for big gpu-trace CSV tables (parsers/arrow_csv.py) and the lazy Source.

Every profile read by the fast path must equal the line scanner's, frame for frame and note for
note; anything unusual must fall back to the scanner, so errors keep their messages and lines.
Small handmade files go through the fast path with its size threshold lowered to 0.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

import parsers
from advisor import schema
from advisor.errors import MalformedInput
from advisor.profile import Profile
from parsers import arrow_csv
from parsers.nsys import csv as nsys_csv
from parsers.nvprof import csv as nvprof_csv
from parsers.source import Source, has_line_longer

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import gen_nsys, gen_nvprof

NV_PRE = "==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
NV_HEADER = (
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
    '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType",'
    '"DstMemType","Device","Context","Stream","Unified Memory","Virtual Address","Name",'
    '"Correlation_ID"\n'
    "s,ms,,,,,,,,B,KB,MB,GB/s,,,,,,B,,,\n"
)
NV_ROWS = (
    '1.5,0.002,,,,,,,,,,0.5,1.0,"Pageable","Device","TITAN Xp (0)","1","7",,,'
    '"[CUDA memcpy HtoD]",105\n'
    '1.6,1.25,256,1,1,512,1,1,61,49152,1.5,,,,,"TITAN Xp (0)","1","21",,,'
    '"vectorAdd(float const*, float*, int)",108\n'
    '1.7,,,,,,,,,,,,,,,,,,"PC 0x5e240510","0x7f54d8000000","[Unified Memory CPU page faults]",\n'
)
NS_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
)
NS_ROWS = (
    "512342618,1196,105,,,,,,,,,,0.008,6849.495,Device,Pageable,NVIDIA A100 (0),1,,7,"
    "[CUDA memcpy Device-to-Host]\n"
    "512349678,1915,108,65536,1,1,64,1,1,122,0.049,0.000,,,,,NVIDIA A100 (0),1,,21,"
    '"f(float*, int)"\n'
)


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Lower the size threshold to 0 and record the files the fast path read."""
    monkeypatch.setattr(arrow_csv, "MIN_BYTES", 0)
    used: list[str] = []
    for module in (nvprof_csv, nsys_csv):
        real = module._fast_scan

        def spy(src: Source, real=real):  # type: ignore[no-untyped-def]
            found = real(src)
            if found is not None:
                used.append(src.path)
            return found

        monkeypatch.setattr(module, "_fast_scan", spy)
    return used


def _slow(path: Path, monkeypatch: pytest.MonkeyPatch) -> Profile:
    with monkeypatch.context() as m:
        m.setattr(arrow_csv, "read_rows", lambda *a, **k: None)
        return parsers.read(path)


def _assert_same(a: Profile, b: Profile) -> None:
    assert a.provenance == b.provenance
    for table in schema.TABLES:
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True)


def _write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("text", [NV_PRE + NV_HEADER + NV_ROWS, NS_HEADER + NS_ROWS * 3])
def test_fast_path_equals_scanner(
    tmp_path: Path, fast: list[str], monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = _write(tmp_path, text + "\n\n")
    profile = parsers.read(path)
    assert fast == [str(path)]
    _assert_same(profile, _slow(path, monkeypatch))


def test_fast_path_values(tmp_path: Path, fast: list[str]) -> None:
    """Units row applied per column: s/ms -> ns, KB (binary) and MB sizes -> bytes; the
    page-fault row skipped with the scanner's note."""
    profile = parsers.read(_write(tmp_path, NV_PRE + NV_HEADER + NV_ROWS))
    assert fast
    launch = profile.launches.iloc[0]
    assert launch["start_ns"] == pytest.approx(1.6e9)
    assert launch["duration_ns"] == pytest.approx(1.25e6)
    assert launch["dynamic_shared_bytes"] == 1536.0  # 1.5 KB
    assert launch["grid_x"] == 256 and launch["stream"] == 21
    copy = profile.transfers.iloc[0]
    assert copy["bytes"] == 0.5 * 1024 * 1024 and copy["kind"] == "HtoD"
    assert any("1 [Unified Memory CPU page faults]" in n for n in profile.provenance[0].notes)


def test_truncated_last_line_is_dropped_with_the_note(
    tmp_path: Path, fast: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, NV_PRE + NV_HEADER + NV_ROWS * 2 + '1.8,0.1,64,1,1,"TITAN')
    profile = parsers.read(path)
    assert fast == [str(path)]
    assert "line 11 is cut short (6 of 22 fields)" in " ".join(profile.provenance[0].notes)
    _assert_same(profile, _slow(path, monkeypatch))


@pytest.mark.parametrize(
    "tail",
    [
        "==1== Warning: 3 records have invalid timestamps\n",  # a status line: a note
        "\n" + NV_HEADER + NV_ROWS,  # a second table after a blank line
        "application output, not a row\n",
        "\n",  # a blank line: the rows after it belong to no table
        NV_ROWS.replace("1.5,0.002,", ",0.002,") + "\n",  # no Start, then a blank line
        "1.9\r\n",  # a carriage return
        NV_ROWS.replace("1.6,1.25,", "1.6,inf,"),  # not finite: the scanner judges it
    ],
)
def test_unusual_files_fall_back_to_the_scanner(
    tmp_path: Path, fast: list[str], monkeypatch: pytest.MonkeyPatch, tail: str
) -> None:
    path = _write(tmp_path, NV_PRE + NV_HEADER + NV_ROWS + tail + NV_ROWS)
    profile = parsers.read(path)
    assert fast == []
    _assert_same(profile, _slow(path, monkeypatch))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            NV_PRE + NV_HEADER + NV_ROWS + NV_ROWS.replace(",256,", ",2.5,"),
            ":9: column 'Grid X': expected a whole number, got '2.5'",
        ),
        (  # a NaN that is no placeholder: pyarrow reads it, the scanner names it
            NV_PRE + NV_HEADER + NV_ROWS + NV_ROWS.replace("1.6,1.25,", "1.6,-nan,"),
            ":9: column 'Duration': expected a number, got '-nan'",
        ),
        (
            NV_PRE + NV_HEADER + NV_ROWS.replace(',"1","21",', ',"1","21","x",') + NV_ROWS,
            ":6: gpu-trace row has 23 fields, expected 22 as in the header on line 3",
        ),
        (
            NS_HEADER + NS_ROWS + NS_ROWS.replace(",1915,", ",fast,"),
            ":5: cuda_gpu_trace: column 'Duration (ns)': expected a number, found 'fast'",
        ),
    ],
)
def test_errors_keep_the_scanners_message(
    tmp_path: Path, fast: list[str], text: str, message: str
) -> None:
    with pytest.raises(MalformedInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        parsers.read(_write(tmp_path, text))
    assert fast == []


@pytest.mark.parametrize(
    ("writer", "module"),
    [(gen_nvprof.write_nvprof_gputrace, nvprof_csv), (gen_nsys.write_nsys_gputrace, nsys_csv)],
)
def test_generated_trace_over_the_threshold(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    writer: Callable[[Path, int, int], None],
    module: ModuleType,
) -> None:
    path = tmp_path / "big.csv"
    writer(path, 9000, 1)
    assert path.stat().st_size > arrow_csv.MIN_BYTES
    assert module._fast_scan(Source.from_path(path)) is not None
    profile = parsers.read(path)
    assert len(profile.launches) + len(profile.transfers) == 9000
    _assert_same(profile, _slow(path, monkeypatch))


@pytest.mark.parametrize(
    "raw", [b"a\nbb\n\nccc", b"a\r\nbb\r\n", b"a\rbb\rc", b"x,y\n" * 600, b"\n" * 10, b""]
)
def test_lazy_source_lines_and_head(raw: bytes) -> None:
    src = Source.from_bytes("f", raw)
    assert src.raw == raw and src.encoding_note is None
    expected = raw.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert src.head(3) == expected[:3]
    assert src.head(500) == expected[:500]
    assert src.lines == expected


def test_non_utf8_source_is_decoded_up_front() -> None:
    src = Source.from_bytes("f", b"caf\xe9,1\n")
    assert src.raw is None
    assert src.lines == ["café,1", ""] and src.encoding_note is not None
    assert Source.from_bytes("f", b"\xef\xbb\xbfa\n").lines == ["a", ""]


def _longest(raw: bytes) -> int:
    return max(len(line) for line in raw.split(b"\n"))


def test_has_line_longer() -> None:
    assert not has_line_longer(b"ab\nabcd\n", 4) and has_line_longer(b"ab\nabcd\n", 3)
    big = b"x" * 70_000 + b"\n" + b"y" * 100_001 + b"\nz"
    assert has_line_longer(big, 100_000) and not has_line_longer(big, 100_001)
    assert not has_line_longer(b"y\n" * 40_000, 1)
    assert not has_line_longer(b"", 0) and has_line_longer(b"abc", 2)
    rng = np.random.default_rng(3)
    for _ in range(300):  # line lengths around every stride offset, against a plain split
        limit = int(rng.integers(1, 40))
        lengths = rng.integers(0, 2 * limit + 3, int(rng.integers(1, 6)))
        raw = b"\n".join(b"a" * int(k) for k in lengths)
        assert has_line_longer(raw, limit) == (_longest(raw) > limit), (raw, limit)
