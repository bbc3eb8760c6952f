"""The details page's rows read by pyarrow (parsers.ncu.details_columns).

The frame must be exactly the one pandas' C parser builds with ``dtype="category"`` (the
reading it replaces, kept as the fallback: parsers.ncu.csv._pandas_columns): the same texts per
cell, the same sorted categories of the same dtype, the same code dtype; rows of other widths
than the common one (rule rows, padded metric rows, rows ending at their value) set aside and
merged back in file order, whether they are read again by pyarrow or split by csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import gen_ncu
from parsers.ncu import csv as ncu_csv
from parsers.ncu import csv_layouts, details_columns
from parsers.ncu.csv_layouts import DETAILS_ROW_COLUMNS
from tests.parsers.test_ncu_details_columns import EDITS, REAL, SAMPLE, _body


def _same_as_pandas(raw: bytes) -> pd.DataFrame:
    """The pyarrow frame of ``raw``, checked equal in every respect to pandas' frame (its
    columns read on every row; the launches' first rows as texts)."""
    args = _body(raw)
    read = details_columns.arrow_details_columns(*args)
    whole = ncu_csv._pandas_columns(*args)
    assert read is not None and whole is not None
    got, launches = read
    assert set(got.columns) == set(whole.columns) & DETAILS_ROW_COLUMNS
    expected = whole[list(got.columns)]
    firsts = whole.drop_duplicates(["Process ID", "ID"]).reset_index(drop=True)
    assert len(firsts) == len(launches) > 0 and list(launches.columns) == list(whole.columns)
    assert launches.astype(object).equals(firsts.astype(object))
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    for name in got.columns:
        mine, theirs = got[name].array, expected[name].array
        assert isinstance(mine, pd.Categorical) and isinstance(theirs, pd.Categorical)
        assert mine.categories.dtype == theirs.categories.dtype, name
        assert mine.categories.tolist() == theirs.categories.tolist(), name
        assert mine.codes.dtype == theirs.codes.dtype, name
        assert mine.codes.tolist() == theirs.codes.tolist(), name
    return got


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("details") / "details.csv"
    gen_ncu.write_ncu_details(path, 3000, seed=5)
    return path.read_bytes()


def test_sample_and_generated_page(page: bytes) -> None:
    frame = _same_as_pandas(SAMPLE.read_bytes())
    assert (frame["Rule Name"] != "").sum() > 0  # rule rows merged back
    frame = _same_as_pandas(page)
    rules = frame.index[frame["Rule Name"] != ""]
    assert 0 < len(rules) < len(frame) // 5
    # in file order: every row of a launch sits between its launch's first and last rows
    launch = frame["ID"].astype(str).astype(int).to_numpy()
    assert (np.diff(launch) >= 0).all()


@pytest.mark.real_profiles
def test_real_details_pages(real_profiles: Path) -> None:
    paths = sorted((real_profiles / REAL).glob("*/ncu.*.csv"))
    assert len(paths) >= 8
    for path in paths:
        _same_as_pandas(path.read_bytes())


@pytest.mark.parametrize(
    ("label", "edit"), [(e[0], e[1]) for e in EDITS if e[2]], ids=[e[0] for e in EDITS if e[2]]
)
def test_edited_samples(label: str, edit: object) -> None:
    raw = edit(SAMPLE.read_bytes())  # type: ignore[operator]
    if b'"Host Name"' in raw and b'"True"' in raw:
        return  # pandas reads True/False cells as booleans: no frame of texts to compare with
    _same_as_pandas(raw)


def _rows(raw: bytes) -> list[bytes]:
    return raw[ncu_csv._top_header(raw)[3] :].split(b"\n")  # type: ignore[index]


@pytest.mark.parametrize("few", [0, 10, 10_000])
def test_three_widths_each_read_again(
    page: bytes, few: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of three widths (metric rows ending at the value, padded ones, rule rows): the rows
    set aside are read again by pyarrow (``few`` = 0: down to the last width), or split by csv
    once they are fewer than ``few``; the frame is the same."""
    head = page[: ncu_csv._top_header(page)[3]]  # type: ignore[index]
    rows = _rows(page)
    for k in range(0, len(rows) - 1, 7):  # every seventh metric row padded to the full width
        if rows[k].endswith(b","):
            rows[k] += b",,,,"
    for k in range(3, len(rows) - 1, 11):  # and every eleventh one without its trailing comma
        if rows[k].endswith(b","):
            rows[k] = rows[k][:-1]
    raw = head + b"\n".join(rows)
    monkeypatch.setattr(details_columns, "_FEW_ROWS", few)
    _same_as_pandas(raw)


@pytest.mark.parametrize("few", [0, 10_000])
@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r.rsplit(b",", 3)[0],  # short of Metric Value
        lambda r: r + b',,,,,,,"x"',  # longer than the header
    ],
    ids=["short", "long"],
)
def test_a_row_of_no_accepted_width_is_refused(
    page: bytes, few: int, damage: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = page[: ncu_csv._top_header(page)[3]]  # type: ignore[index]
    rows = _rows(page)
    rows[40] = damage(rows[40])  # type: ignore[operator]
    monkeypatch.setattr(details_columns, "_FEW_ROWS", few)
    assert details_columns.arrow_details_columns(*_body(head + b"\n".join(rows))) is None


def test_most_rows_of_a_refused_width_are_refused(page: bytes) -> None:
    """The first rows longer than the header: nothing is read (the row-by-row reading names
    the row)."""
    head = page[: ncu_csv._top_header(page)[3]]  # type: ignore[index]
    rows = [r + b",,,,,,,," if r else r for r in _rows(page)]
    assert details_columns.arrow_details_columns(*_body(head + b"\n".join(rows))) is None


def test_launch_firsts_are_each_launchs_first_row() -> None:
    """A launch whose rows come back later (not after each other) keeps its first row; the
    rows are numbered by (Process ID, ID) as the frames number launches."""
    ids = ["0", "0", "1", "1", "0", "2", "1", "2", "3"]
    pids = ["7", "7", "7", "7", "7", "7", "8", "8", "8"]
    rows = pd.DataFrame({"Process ID": pids, "ID": ids}, dtype="category")
    firsts = details_columns._launch_firsts(rows)
    assert firsts.tolist() == [0, 2, 5, 6, 7, 8]
    codes = csv_layouts._codes(rows.copy(), ["Process ID", "ID"])
    assert firsts.tolist() == np.unique(codes, return_index=True)[1].tolist()


def _same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal cells, categories (texts, order, dtype) and code dtypes."""
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for name in a.columns:
        mine, theirs = a[name].array, b[name].array
        assert mine.categories.tolist() == theirs.categories.tolist(), name
        assert mine.categories.dtype == theirs.categories.dtype, name
        assert mine.codes.dtype == theirs.codes.dtype, name


@pytest.mark.parametrize("split", [1, 4000])
def test_halves_parsed_on_two_threads_read_as_the_whole(
    page: bytes, split: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first pass split in two at a line end (each half on its own thread, the set-aside
    rows' numbers and each column's texts joined) gives the frames of one pass over the whole,
    whether a half holds rule rows, texts the other lacks, or (a cut at the first line end)
    almost nothing."""
    monkeypatch.setattr(details_columns, "_SPLIT_BYTES", split)
    sample = SAMPLE.read_bytes()
    pages = [sample, page] + [edit(sample) for _, edit, columnar in EDITS if columnar]
    for raw in pages:
        args = _body(raw)
        assert len(details_columns._halves(args[0], args[1])) == 2
        first = details_columns.FirstRead(args[0], args[1], args[2], args[4])
        halves = details_columns.arrow_details_columns(*args, first)
        whole = details_columns.arrow_details_columns(*args)
        assert halves is not None and whole is not None
        _same_frames(halves[0], whole[0])
        _same_frames(halves[1], whole[1])


def test_texts_numbered_in_order_of_first_appearance() -> None:
    """Texts are numbered on from those known, a repeated new text once (the texts of one
    pyarrow dictionary are distinct; those of a csv-split part need not be)."""
    known: dict[str, int] = {}
    assert details_columns._numbered(known, ["b", "a"]).tolist() == [0, 1]
    assert details_columns._numbered(known, ["c", "a", "d"]).tolist() == [2, 1, 3]
    assert details_columns._numbered(known, ["e", "b", "e", "f"]).tolist() == [4, 0, 4, 5]
    assert list(known) == ["b", "a", "c", "d", "e", "f"]
    again: dict[str, int] = {}
    assert details_columns._numbered(again, ["x", "y", "x"]).tolist() == [0, 1, 0]
    assert list(again) == ["x", "y"]


def test_lines_joined_a_run_at_a_time() -> None:
    """Lines taken from the bytes (runs of neighbouring lines sliced at once) are those lines
    joined by line ends, whatever the selection: runs, lone lines, the first and last line, a
    subset of lines whose neighbours in the subset are not neighbours in the bytes, none."""
    raw = SAMPLE.read_bytes()
    _, start, _, ends, _ = _body(raw)
    begins = np.concatenate(([start], ends[:-1] + 1))
    n = len(ends)
    picks = [
        np.arange(n), np.array([0]), np.array([n - 1]), np.array([0, 1, 2, 5, 6, 9, n - 1]),
        np.array([3, 5, 7]), np.zeros(0, dtype=np.int64),
    ]  # fmt: skip
    for lines in picks:
        expected = b"\n".join(raw[begins[k] : ends[k]] for k in lines.tolist())
        assert bytes(details_columns._joined(raw, begins, ends, lines)) == expected
    every_other = np.arange(0, n, 2)  # a subset: its neighbours are not the bytes' neighbours
    sub_begins, sub_ends = begins[every_other], ends[every_other]
    got = details_columns._joined(raw, sub_begins, sub_ends, np.arange(len(every_other)))
    assert bytes(got) == b"\n".join(raw[begins[k] : ends[k]] for k in every_other.tolist())
