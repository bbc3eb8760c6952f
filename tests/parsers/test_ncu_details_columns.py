"""The details page read by columns (parsers.ncu.csv.one_details_table).

The columnar read must give exactly the profile (or the error) of the row-by-row reading
(parsers.ncu.csv._tables + csv_layouts._checked); anything it cannot vouch for (an escaped or
stray quote, a row shorter than ``Metric Value`` or longer than the header, a carriage return,
application output, a second table) goes to the row-by-row reading.  Checked on the sample, on
edited copies of it, on a generated page and on the real details pages, read in place.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import parsers
from advisor.errors import InputError
from benchmarks import gen_ncu
from parsers.ncu import csv as ncu_csv
from parsers.source import Source

REPO = Path(__file__).resolve().parents[2]

SAMPLE = REPO / "sample_profiles" / "synthetic_ncu_details.csv"
REAL = "csv/llmperfopt_rtx5090/ncu"


def _frames(profile: parsers.Profile) -> dict[str, Any]:
    """Every table as plain Python values with its dtypes, and the provenance."""
    out: dict[str, Any] = {}
    for name, frame in profile.frames.items():
        out[name] = frame.astype(object).where(frame.notna(), None).to_dict("list")
        out[f"{name} dtypes"] = [str(d) for d in frame.dtypes]
    out["provenance"] = profile.provenance
    return out


def _outcome(path: Path) -> Any:
    """The frames read, or the error's type and message."""
    try:
        return _frames(parsers.read(path))
    except InputError as exc:
        return (type(exc).__name__, str(exc))


def _by_rows(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The outcome with the columnar read turned off."""
    with monkeypatch.context() as patch:
        patch.setattr(ncu_csv, "one_details_table", lambda src: None)
        return _outcome(path)


def _columnar(path: Path) -> bool:
    return ncu_csv.one_details_table(Source.from_path(path)) is not None


def _rows_at(raw: bytes) -> int:
    """Offset of the first row after the header."""
    return raw.index(b"\n", raw.index(b'"ID",')) + 1


def _body(raw: bytes) -> tuple[bytes, int, list[str], np.ndarray, int]:
    """(bytes, offset of the first row, header, line ends, fields up to ``Metric Value``): the
    arguments of the column readers."""
    found = ncu_csv._top_header(raw)
    assert found is not None
    _, header, _, start = found
    ends = ncu_csv._plain_rows(raw, start)
    assert ends is not None
    return raw, start, header, ends, header.index("Metric Value") + 1


def _edit_row(k: int, edit: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """Apply ``edit`` to the k-th row after the header."""

    def apply(raw: bytes) -> bytes:
        head, rows = raw[: _rows_at(raw)], raw[_rows_at(raw) :].split(b"\n")
        rows[k] = edit(rows[k])
        return head + b"\n".join(rows)

    return apply


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("details") / "details.csv"
    gen_ncu.write_ncu_details(path, 3000, seed=3)
    return path


def test_sample_and_generated_page_read_the_same_both_ways(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in (SAMPLE, page):
        assert _columnar(path), path
        read = _outcome(path)
        assert isinstance(read, dict) and len(read["metrics"]["value"]) > 50
        assert read == _by_rows(path, monkeypatch), path


@pytest.mark.real_profiles
def test_real_details_pages_read_the_same_both_ways(
    real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sorted((real_profiles / REAL).glob("*/ncu.*.csv"))
    assert len(paths) >= 8
    for path in paths:
        assert _columnar(path), path
        assert _outcome(path) == _by_rows(path, monkeypatch), path


# (label, edit of the sample's bytes, whether the columnar read takes the file)
EDITS: list[tuple[str, Callable[[bytes], bytes], bool]] = [
    ("last line without newline", lambda b: b.rstrip(b"\n"), True),
    (
        "odd quote in a status line",
        lambda b: b.replace(b"==PROF== Connected", b'==PROF== "x', 1),
        True,
    ),
    ("metric row padded to the full width", _edit_row(0, lambda r: r + b",,,,"), True),
    (
        "empty value cell, row as wide as Metric Value",
        _edit_row(1, lambda r: r.rsplit(b",", 2)[0] + b',"",'),
        True,
    ),
    (
        "comma inside a quoted name",
        _edit_row(2, lambda r: r.replace(b'"Elapsed Cycles"', b'"Elapsed, Cycles"')),
        True,
    ),
    (
        "escaped quote in a kernel name",
        lambda b: b.replace(b"transposeNaive(", b'trans""pose(', 3),
        False,
    ),
    ("text after a closing quote", _edit_row(3, lambda r: r.replace(b'"%"', b'"%"x')), False),
    ("row shorter than Metric Value", _edit_row(4, lambda r: r.rsplit(b",", 2)[0]), False),
    ("row longer than the header, blank cells", _edit_row(5, lambda r: r + b",,,,,,,,"), False),
    ("row longer than the header, a value", _edit_row(5, lambda r: r + b',,,,,"x"'), False),
    ("CRLF line ends", lambda b: b.replace(b"\n", b"\r\n"), False),
    ("application output", _edit_row(6, lambda r: b"done in 3 s\n" + r), False),
    ("blank line", _edit_row(6, lambda r: b"\n" + r), False),
    ("a second table", lambda b: b + b[b.index(b'"ID"') :], False),
    ("leading space", _edit_row(7, lambda r: b" " + r), False),
    ("unterminated quote", _edit_row(8, lambda r: r[:-1] + b'"x'), False),
    ("duplicate header column", lambda b: b.replace(b'"Rule Type"', b'"Rule Name"'), False),
    # rule cells are stripped and an empty one is missing: taken per distinct text
    (
        "rule cells with spaces around them, one of spaces only",
        lambda b: b.replace(
            b'"SpeedOfLight","","","","SOLBottleneck","OPT"',
            b'" SpeedOfLight","","","","SOLBottleneck ","  "',
            1,
        ).replace(b'"INF","DRAM', b'"INF"," DRAM', 1),
        True,
    ),
    # read as categoricals, cells that look like numbers stay the texts they are: launch "00"
    # is not launch "0", and "8.00" is not "8.0"
    ("numbers spelled two ways", lambda b: b.replace(b'\n"2","', b'\n"00","'), True),
    ("compute capability spelled two ways", lambda b: b.replace(b'"8.0"', b'"8.00"', 9), True),
    # pandas makes a column of True/False cells booleans: that page is read as object columns
    (
        "True/False cells",
        lambda b: b.replace(b'"127.0.0.1"', b'"True"').replace(b'"True"', b'"TRUE"', 5),
        True,
    ),
    (
        "a unit separator in a name",
        lambda b: b.replace(b"transposeNaive(", b"trans\x1fpose("),
        True,
    ),
]


@pytest.mark.parametrize(("label", "edit", "columnar"), EDITS, ids=[e[0] for e in EDITS])
def test_edited_sample_reads_as_the_row_by_row_reading_does(
    tmp_path: Path, label: str, edit: Callable[[bytes], bytes], columnar: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "edited.csv"
    path.write_bytes(edit(SAMPLE.read_bytes()))
    assert path.read_bytes() != SAMPLE.read_bytes(), label
    assert _columnar(path) is columnar, label
    assert _outcome(path) == _by_rows(path, monkeypatch), label


def test_columns_are_read_as_categoricals_of_their_texts(tmp_path: Path) -> None:
    """Every column of a page is a categorical of the file's texts (a few dozen names over a
    page's rows), ``True``/``False`` cells included (pandas' C parser would make them
    booleans: that reading, the fallback, reads such a page as object columns)."""
    table = ncu_csv.one_details_table(Source.from_path(SAMPLE))
    assert table is not None and table.frame is not None
    frame = table.frame
    assert all(str(d) == "category" for d in frame.dtypes)
    assert set(frame["ID"].cat.categories) == {"0", "1", "2"}  # texts, not numbers
    assert "404,546" in set(frame["Metric Value"].cat.categories)
    assert len(frame["Kernel Name"].cat.categories) == 3
    booleans = tmp_path / "booleans.csv"
    booleans.write_bytes(SAMPLE.read_bytes().replace(b'"127.0.0.1"', b'"True"'))
    table = ncu_csv.one_details_table(Source.from_path(booleans))
    assert table is not None and table.frame is not None
    assert table.launches is not None  # a column read on each launch's first row only
    assert "Host Name" not in table.frame and len(table.launches) == 3
    assert list(table.launches["Host Name"].cat.categories) == ["True"]
    assert set(table.launches["Host Name"]) == {"True"}
    by_pandas = ncu_csv._pandas_columns(*_body(booleans.read_bytes()))
    assert by_pandas is not None and by_pandas["Host Name"].dtype == object


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 4096])
def test_quote_check_is_the_same_whatever_the_chunk(chunk: int) -> None:
    """The plain-quoting check looks at the bytes a chunk at a time: a quote or a line end on a
    chunk's first or last byte is judged as anywhere else."""
    raw = SAMPLE.read_bytes()
    start = _rows_at(raw)
    whole = ncu_csv._plain_rows(raw, start)
    assert whole is not None and len(whole) == raw.count(b"\n", start)
    got = ncu_csv._plain_rows(raw, start, chunk=chunk)
    assert got is not None and got.tolist() == whole.tolist()
    for label, edit, _columnar in EDITS:
        edited = edit(raw)
        if b"\r" in edited or not edited.startswith(raw[:start]):
            continue  # refused before the check, or the header changed
        expected = ncu_csv._plain_rows(edited, start)
        got = ncu_csv._plain_rows(edited, start, chunk=chunk)
        assert (got is None) == (expected is None), label
        if expected is not None:
            assert got is not None and got.tolist() == expected.tolist(), label


def _plain_rows_by_line(raw: bytes, start: int) -> list[int] | None:
    """The plain-quoting rules of ``_plain_rows`` applied one line and one quote at a time in
    Python (the reference the bit-set check must agree with)."""
    if start >= len(raw) or b"\x00" in raw:
        return None
    ends: list[int] = []
    at = start
    while at < len(raw):
        end = raw.find(b"\n", at)
        ends.append(len(raw) if end < 0 else end)
        at = ends[-1] + 1
    inside = False  # the quote parity runs over the whole body, not per line
    for found in re.finditer(rb'["\n]', raw[start:]):
        k = start + found.start()
        if raw[k] == ord('"'):
            if not inside and raw[k - 1] not in b",\n":
                return None  # opens a field elsewhere than at its start
            if inside and k + 1 < len(raw) and raw[k + 1] not in b",\n":
                return None  # closes one elsewhere than at its end
            inside = not inside
        elif inside:
            return None  # a quoted line break
    if inside:
        return None
    begin = start
    for end in ends:
        line = raw[begin:end]
        if not line.startswith(b'"') or not line.endswith((b'"', b",")):
            return None
        if line.startswith((b'"ID",', b'"Process ID",')):
            return None
        begin = end + 1
    return ends


def test_quote_check_agrees_with_a_byte_by_byte_reading() -> None:
    """Random damage (a quote, comma, line break or letter put in, taken out or swapped) at
    random places of the sample, each judged by the bit-set check with a random chunk size
    (words of 64 bytes split anywhere) as the byte-by-byte rules judge it."""
    rng = np.random.default_rng(7)
    raw = SAMPLE.read_bytes()
    start = _rows_at(raw)
    alphabet = [b'"', b",", b"\n", b"x", b'""', b'","']
    verdicts = {True: 0, False: 0}
    for trial in range(400):
        edited = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            k = int(rng.integers(start, len(edited)))
            kind = int(rng.integers(0, 3))
            piece = alphabet[int(rng.integers(0, len(alphabet)))]
            if kind == 0:
                edited[k:k] = piece
            elif kind == 1:
                del edited[k : k + int(rng.integers(1, 3))]
            else:
                edited[k : k + len(piece)] = piece
        body = bytes(edited)
        chunk = int(rng.choice([63, 64, 65, 127, 128, 1000, 4096, 1 << 22]))
        expected = _plain_rows_by_line(body, start)
        got = ncu_csv._plain_rows(body, start, chunk=chunk)
        assert (got is None) == (expected is None), (trial, chunk)
        if expected is not None:
            assert got is not None and got.tolist() == expected, (trial, chunk)
        verdicts[expected is not None] += 1
    assert verdicts[True] > 20 and verdicts[False] > 100  # both outcomes tried often
