"""A big text file is first read only as far as its start (parsers.source.Source.pending); the
fast path of a big table then reads the rest from the file a piece at a time and checks each
piece as the whole bytes are checked on the other paths (parsers/arrow_csv.py,
_StreamPieces): the same frames, and every case the whole bytes refuse still refused, with
the same outcome once the file is read whole (the row-by-row reading, its notes and errors).

Sizes are made small here (pending from 4 KiB, pieces of a few hundred bytes) so that every
file takes that path with many pieces."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput
from parsers import arrow_csv
from parsers.source import Source

ROWS = "".join(f"{i}.5,{i % 7},k{i % 3},x{i}\n" for i in range(400))
NVPROF_HEADER = (
    "==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
    '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","Device",'
    '"Context","Stream","Name","Correlation_ID"\n'
    "s,ms,,,,,,,,B,B,MB,GB/s,,,,,\n"
)


def _trace(rows: int, name: str = "kern(float*)") -> str:
    return NVPROF_HEADER + "".join(
        f"{i * 0.001:.6f},{0.0005 + i % 5 * 1e-5:.6f},{i % 4 + 1},1,1,128,1,1,32,0,0,,,"
        f'"GPU (0)",1,7,"{name}{i % 3}",{i}\n'
        for i in range(rows)
    )


@pytest.fixture(autouse=True)
def small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_csv, "MIN_BYTES", 0)
    monkeypatch.setattr(arrow_csv, "PIECE_BYTES", 300)
    monkeypatch.setattr(parsers, "PENDING_BYTES", 4097)
    monkeypatch.setattr(parsers, "PENDING_START", 4096)


def _pending(path: Path) -> Source:
    src = parsers._pending(str(path), b"")
    assert src is not None and src.is_pending
    return src


def test_streamed_rows_equal_rows_from_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode() + b"\n\n\n")  # trailing newlines are ignored
    src = _pending(path)
    streamed = arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3])
    assert src.is_pending  # never read whole
    from_bytes = arrow_csv.read_rows(path.read_bytes(), 0, 4, [0, 1], [2, 3])
    assert streamed is not None and from_bytes is not None and len(streamed) == 400
    pd.testing.assert_frame_equal(streamed, from_bytes, check_exact=True)


def test_the_arrays_grow_past_a_low_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # long first lines make the estimate from the start of the rows far too low
    monkeypatch.setattr(arrow_csv, "ESTIMATE_BYTES", 2000)
    grown: list[int] = []
    real = arrow_csv._read_pieces
    monkeypatch.setattr(
        arrow_csv,
        "_read_pieces",
        lambda *a: grown.append(a[1]) or real(*a),  # type: ignore
    )
    wide = "".join(f"{i}.5,{i},k{'y' * 200},x\n" for i in range(10))
    path = tmp_path / "t.csv"
    path.write_text(wide + ROWS * 8)
    streamed = arrow_csv.read_rows(_pending(path), 0, 4, [0, 1], [2, 3])
    assert grown[0] < 3210  # the estimate the arrays started at
    from_bytes = arrow_csv.read_rows(path.read_bytes(), 0, 4, [0, 1], [2, 3])
    assert streamed is not None and from_bytes is not None and len(streamed) == 3210
    pd.testing.assert_frame_equal(streamed, from_bytes, check_exact=True)


@pytest.mark.parametrize(
    "damage",
    [
        b"\r",  # a carriage return
        b"\xff",  # a byte that is not UTF-8
        b"\n",  # a blank line
        b'"a\nb"',  # a quoted field across lines
        b"," * 100_001,  # a line wider than any profiler writes
    ],
)
def test_a_damaged_piece_is_refused_as_the_whole_bytes_are(tmp_path: Path, damage: bytes) -> None:
    lines = ROWS.encode().splitlines(keepends=True)
    path = tmp_path / "t.csv"
    path.write_bytes(b"".join(lines[:300]) + damage + b"".join(lines[300:]))
    assert arrow_csv.read_rows(_pending(path), 0, 4, [0, 1], [2, 3]) is None
    assert arrow_csv.read_rows(path.read_bytes(), 0, 4, [0, 1], [2, 3]) is None


def test_a_carriage_return_before_the_rows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b,c,d\r\n" + ROWS.encode())
    assert arrow_csv.read_rows(_pending(path), 9, 4, [0, 1], [2, 3]) is None


def test_a_file_replaced_meanwhile_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode())
    src = _pending(path)
    path.write_bytes((ROWS + ROWS).encode())
    assert arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3]) is None


def test_a_pending_trace_reads_as_the_whole_file_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "trace.csv"
    path.write_text(_trace(600))
    streamed = parsers.read(path)
    monkeypatch.setattr(parsers, "PENDING_BYTES", 1 << 62)  # read whole at once
    whole = parsers.read(path)
    assert len(streamed.launches) == 600
    for table in ("launches", "transfers"):
        pd.testing.assert_frame_equal(
            getattr(streamed, table), getattr(whole, table), check_exact=True
        )
    assert streamed.provenance == whole.provenance


def test_a_later_byte_not_utf8_gives_the_decoding_note(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    last = _trace(1, "k\xe9rn").encode("cp1252").split(b"\n")[-2]
    path.write_bytes(_trace(600).encode() + last + b"\n")
    src = _pending(path)
    assert src.is_pending  # the start is ASCII: the rest is looked at when it is read
    profile = parsers.read(path)
    assert any("Windows-1252" in n for n in profile.provenance[0].notes)
    assert len(profile.launches) == 601


def test_a_later_line_too_wide_is_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text(_trace(600) + "," * 100_001 + "\n")
    with pytest.raises(MalformedInput, match="100,002 fields"):
        parsers.read(path)


def test_a_start_that_is_not_ascii_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes("é,".encode() + ROWS.encode())
    assert parsers._pending(str(path), b"") is None
    small = tmp_path / "small.csv"
    small.write_bytes(ROWS.encode()[:4096])
    assert parsers._pending(str(small), b"") is None  # under PENDING_BYTES


def test_the_head_and_line_offsets_come_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode())
    src = _pending(path)
    assert src.head(3) == ["0.5,0,k0,x0", "1.5,1,k1,x1", "2.5,2,k2,x2"]
    assert src.line_offset(2) == len("0.5,0,k0,x0\n1.5,1,k1,x1\n")
    assert src.size == len(ROWS) and src.is_pending
    assert src.line_offset(399) == ROWS.rindex("399.5")  # beyond the start: read whole
    assert not src.is_pending and src.raw == ROWS.encode()


def _lines(path: Path, start: int = 0) -> tuple[list[bytes], int | None]:
    """The pieces _StreamPieces hands out (copied as they are given) and their line counts."""
    size = path.stat().st_size
    got: list[bytes] = []
    counts = 0
    with open(path, "rb", buffering=0) as handle:
        assert isinstance(handle, io.FileIO)
        with arrow_csv._StreamPieces(handle, start, size) as pieces:
            for piece, lines in pieces:
                assert piece is not None and lines is not None
                got.append(bytes(piece))
                counts += lines
    return got, counts


def test_the_worker_hands_out_every_piece_in_order_while_buffers_take_turns(
    tmp_path: Path,
) -> None:
    # two buffers take turns: a piece kept (copied) by the caller is never overwritten while
    # it is held, and the pieces joined again are the file's bytes
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode().rstrip(b"\n"))
    pieces, lines = _lines(path)
    assert len(pieces) > 10
    assert b"\n".join(pieces) == path.read_bytes()
    assert lines == ROWS.count("\n")


def test_a_piece_held_stays_intact_until_it_is_given_back(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode().rstrip(b"\n"))
    size = path.stat().st_size
    with (
        open(path, "rb", buffering=0) as handle,
        arrow_csv._StreamPieces(handle, 0, size) as pieces,
    ):
        it = iter(pieces)
        first, _ = next(it)
        assert first is not None
        kept = bytes(first)
        time.sleep(0.05)  # the worker had time to read ahead into the other buffer
        assert bytes(first) == kept
        second, _ = next(it)
        assert second is not None and bytes(second) != kept


def test_an_error_on_the_worker_is_raised_in_the_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode().rstrip(b"\n"))
    calls = []

    def failing(handle: object, at: int, view: memoryview) -> bool:
        calls.append(at)
        if len(calls) > 2:
            raise OSError("device gone")
        return real(handle, at, view)  # type: ignore[arg-type]

    real = arrow_csv._read_into
    monkeypatch.setattr(arrow_csv, "_read_into", failing)
    with pytest.raises(OSError, match="device gone"):
        _lines(path)
    # read_rows, as every read error of the fast path, answers None (the scanner reads on)
    src = _pending(path)
    calls.clear()
    assert arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3]) is None


def test_the_worker_ends_when_the_reader_stops_early(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(ROWS.encode().rstrip(b"\n"))
    before = threading.active_count()
    size = path.stat().st_size
    with (
        open(path, "rb", buffering=0) as handle,
        arrow_csv._StreamPieces(handle, 0, size) as pieces,
    ):
        for piece, _ in pieces:
            assert piece is not None
            break  # the reader stops after one piece; the worker waits for a buffer
    assert threading.active_count() == before
