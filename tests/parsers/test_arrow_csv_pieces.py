"""The fast path reads the rows of a file from the file a piece at a time, after checking and
releasing its bytes (parsers/arrow_csv.py): the same frames as from the bytes, and every case the
bytes refused (a blank line at any place, a file replaced meanwhile) still refused.

The pieces are made a few hundred bytes long here, so every file has many of them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import parsers
from parsers import arrow_csv
from parsers.source import Source

ROWS = "".join(f"{i}.5,{i % 7},k{i % 3},x{i}\n" for i in range(200))


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_csv, "MIN_BYTES", 0)
    monkeypatch.setattr(arrow_csv, "PIECE_BYTES", 300)


def _source(tmp_path: Path, text: str) -> Source:
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    return Source.from_path(path)


def test_rows_from_the_file_equal_rows_from_the_bytes(tmp_path: Path) -> None:
    src = _source(tmp_path, ROWS)
    raw = src.raw
    assert raw is not None
    from_bytes = arrow_csv.read_rows(raw, 0, 4, [0, 1], [2, 3])
    from_file = arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3])
    assert src.raw is None  # released: the rows were read from the file
    assert from_bytes is not None and from_file is not None
    assert len(from_file) == 200
    pd.testing.assert_frame_equal(from_file, from_bytes, check_exact=True)


def test_decoded_lines_keep_the_bytes(tmp_path: Path) -> None:
    src = _source(tmp_path, ROWS)
    assert src.lines[0] == "0.5,0,k0,x0"  # split already: release() keeps the bytes
    frame = arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3])
    assert src.raw is not None and frame is not None and len(frame) == 200


@pytest.mark.parametrize("numbers", [[0, 1], [1]])  # the first column a number, or text
def test_a_blank_line_anywhere_is_refused(tmp_path: Path, numbers: list[int]) -> None:
    lines = ROWS.splitlines(keepends=True)
    texts = [j for j in range(4) if j not in numbers]
    for at in range(1, len(lines)):  # every place, the ends of the pieces among them
        src = _source(tmp_path, "".join(lines[:at]) + "\n" + "".join(lines[at:]))
        assert arrow_csv.read_rows(src, 0, 4, numbers, texts) is None, at


def test_a_file_replaced_meanwhile_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source(tmp_path, ROWS)
    real = arrow_csv._read_pieces

    def replace_first(*args: object) -> object:
        Path(src.path).write_bytes((ROWS + ROWS).encode())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(arrow_csv, "_read_pieces", replace_first)
    assert arrow_csv.read_rows(src, 0, 4, [0, 1], [2, 3]) is None


def test_truncated_trace_after_release_keeps_its_last_line_note(tmp_path: Path) -> None:
    """nvprof's fast path reads the file's bytes again for its second try (all rows but a
    last line cut short) once the first try released them."""
    header = '"Start","Duration","Grid X","Name","Correlation_ID"\ns,ms,,,\n'
    rows = "".join(f'{i}.0,0.5,{i % 4 + 1},"k{i % 3}",{i}\n' for i in range(100))
    path = tmp_path / "trace.csv"
    path.write_bytes((header + rows + '101.0,0.5,"k').encode())
    profile = parsers.read(path)
    assert len(profile.launches) == 100
    assert "is cut short" in " ".join(profile.provenance[0].notes)
