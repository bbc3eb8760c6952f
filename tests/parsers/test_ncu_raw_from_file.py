"""A raw Nsight Compute page that runs to the end of its file is parsed by pyarrow from the file
(parsers.ncu.raw.FileRows), its bytes let go first, instead of from the bytes held in memory:
the same frames either way, and the bytes are used where the file on disk is not the one read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from advisor import pipeline
from advisor.criteria.engine.analysis import to_json
from parsers.ncu import csv_layouts
from parsers.ncu.raw import FileRows
from parsers.source import Source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu


def _frames(path: Path) -> dict[str, pd.DataFrame]:
    profile = pipeline.read([str(path)])
    return {t: getattr(profile, t) for t in ("launches", "metrics", "devices")}


def _check(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[FileRows | None] = []
    real = csv_layouts._file_rows

    def spy(src: Source, data: memoryview | None) -> FileRows | None:
        used.append(real(src, data))
        return used[-1]

    with monkeypatch.context() as patch:
        patch.setattr(csv_layouts, "_file_rows", spy)
        from_file = _frames(path)
    assert len(used) == 1 and isinstance(used[0], FileRows)
    assert path.read_bytes()[used[0].offset - 1 : used[0].offset] == b"\n"  # a row starts there
    with monkeypatch.context() as patch:
        patch.setattr(csv_layouts, "_file_rows", lambda *args: None)
        from_bytes = _frames(path)
    for table, frame in from_file.items():
        pd.testing.assert_frame_equal(frame, from_bytes[table], check_exact=True)


def test_the_rows_read_from_the_file_give_the_frames_of_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 150, seed=6)
    _check(page, monkeypatch)
    _check(samples / "synthetic_ncu_raw.csv", monkeypatch)


def test_the_bytes_are_read_where_the_file_is_not_the_one_held(tmp_path: Path) -> None:
    page = tmp_path / "raw.csv"
    page.write_bytes(b'"ID","Kernel Name"\n"",""\n"0","k"\n')
    raw = page.read_bytes()
    rows = memoryview(raw)[19:]
    found = csv_layouts._file_rows(Source.from_bytes(str(page), raw), rows)
    assert found == FileRows(str(page), 19)
    longer = Source.from_bytes(str(page), raw + b'"1","k"\n')  # the file changed since
    assert csv_layouts._file_rows(longer, memoryview(longer.raw or b"")[19:]) is None
    gone = Source.from_bytes(str(tmp_path / "absent.csv"), raw)
    assert csv_layouts._file_rows(gone, rows) is None
    assert csv_layouts._file_rows(Source.from_bytes(str(page), raw), None) is None


def test_a_file_that_cannot_be_read_again_falls_back_to_the_rows_read_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 40, seed=9)
    expected = _analysis(page)
    gone = FileRows(str(tmp_path / "moved.csv"), 10)
    monkeypatch.setattr(csv_layouts, "_file_rows", lambda *args: gone)
    assert _analysis(page) == expected  # read row by row, from the file the profile names


def _analysis(path: Path) -> str:
    run = pipeline.analyse_profile(pipeline.read([str(path)]))
    return json.dumps(to_json(run.analysis), sort_keys=True)
