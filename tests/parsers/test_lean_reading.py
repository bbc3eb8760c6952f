"""What big inputs do not cost: the bytes of a text file are released once the pyarrow fast
path has read its rows, a binary file is sniffed from its first bytes only, and text columns
read by pyarrow stay categorical (each distinct name once) until the schema's strings."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import parsers
from parsers import arrow_csv
from parsers.source import Source, read_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import gen_nsys, gen_nvprof


def test_released_source_reads_its_lines_again(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n3,4\n")
    src = Source.from_path(path)
    src.release()
    assert src.raw is None
    assert src.lines == ["a,b", "1,2", "3,4", ""]
    assert src.head(2) == ["a,b", "1,2"]


def test_release_keeps_decoded_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"x\n")
    src = Source.from_path(path)
    assert src.lines == ["x", ""]
    path.unlink()  # the lines are at hand: nothing is read again
    src.release()
    assert src.lines == ["x", ""]


def test_read_bytes_limit(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    path.write_bytes(bytes(range(200)))
    assert read_bytes(path, 16) == bytes(range(16))
    assert read_bytes(path) == bytes(range(200))


def test_binary_file_is_sniffed_from_its_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.sqlite"
    gen_nsys.write_nsys_sqlite(path, 50)
    limits: list[int | None] = []

    def spy(p: str | Path, limit: int | None = None) -> bytes:
        limits.append(limit)
        return read_bytes(p, limit)

    monkeypatch.setattr(parsers, "read_bytes", spy)
    profile = parsers.read(path)
    assert len(profile.launches) == 50
    assert limits == [parsers.SNIFF_BYTES]


@pytest.mark.parametrize("write", [gen_nvprof.write_nvprof_gputrace, gen_nsys.write_nsys_gputrace])
def test_fast_path_releases_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: object
) -> None:
    path = tmp_path / "trace.csv"
    write(path, 300)  # type: ignore[operator]
    monkeypatch.setattr(arrow_csv, "MIN_BYTES", 0)
    released: list[str] = []
    real = Source.release

    def spy(self: Source) -> None:
        released.append(self.path)
        real(self)

    monkeypatch.setattr(Source, "release", spy)
    profile = parsers.read(path)
    assert released == [str(path)]
    assert len(profile.launches) + len(profile.transfers) == 300
    names = profile.launches["name"]  # the schema's categorical: distinct names, sorted, once
    assert isinstance(names.dtype, pd.CategoricalDtype)
    assert list(names.cat.categories) == sorted(set(names.dropna()))
    assert profile.transfers["kind"].dtype == "string"


def test_read_rows_texts_are_categorical(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = b'1,"k<a, b>"\n2,k\n3," k "\n4,\n5,k\n'
    monkeypatch.setattr(arrow_csv, "MIN_BYTES", 0)
    frame = arrow_csv.read_rows(raw, 0, 2, [0], [1])
    assert frame is not None
    names = frame[1]
    assert isinstance(names.dtype, pd.CategoricalDtype)
    assert list(names.astype(str)) == ["k<a, b>", "k", " k ", "", "k"]
    assert sorted(names.cat.categories) == ["", " k ", "k", "k<a, b>"]


def test_recode_applies_once_per_distinct_text() -> None:
    cells = pd.Series(pd.Categorical([" a", "b ", "", " a", "a"]))
    seen: list[int] = []

    def stripped(words: pd.Series) -> pd.Series:
        seen.append(len(words))
        words = words.str.strip()
        return words.mask(words == "")

    out = arrow_csv.recode(cells, stripped)
    assert seen == [4]  # " a", "a", "b ", "": each once
    assert list(out.astype("string")) == ["a", "b", pd.NA, "a", "a"]
    assert sorted(out.cat.categories) == ["a", "b"]


def test_whole_numbers() -> None:
    assert arrow_csv.whole_numbers(np.array([1.0, np.nan, -2.0]))
    assert not arrow_csv.whole_numbers(np.array([1.0, 1.5]))
    assert not arrow_csv.whole_numbers(np.array([np.inf]))
    assert not arrow_csv.whole_numbers(np.array([1e20]))
    assert arrow_csv.whole_numbers(np.array([], dtype=float))
    # looked at a chunk at a time: a fraction in the last value of any chunk is found
    n = 3 * arrow_csv.WHOLE_CHUNK + 5
    for at in (0, arrow_csv.WHOLE_CHUNK - 1, arrow_csv.WHOLE_CHUNK, n - 1):
        values = np.arange(n, dtype=float)
        assert arrow_csv.whole_numbers(values)
        values[at] += 0.5
        assert not arrow_csv.whole_numbers(values), at
