"""The lean column reading of the SQLite readers: ``Database.int_frame`` (int64 chunks, with damaged
cells converted exactly as ``frame`` + ``int_column`` do, each column in memory of its own),
``text_per_distinct`` / ``categories_per_distinct`` / ``text_column`` and ``in_time_order`` (no
copy when a table is already in time order)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.errors import MalformedInput
from parsers.sqlite import db as sqlite_db
from parsers.sqlite.columns import (
    categories_per_distinct,
    in_time_order,
    text_column,
    text_per_distinct,
)
from parsers.sqlite.db import Database, int_column, open_database

BIG = 1_700_000_000_123_456_789  # absolute ns: float64 would round it
#: (a, name) rows: clean integers, then NULL, 5.0, 1.5, text and a blob in ``a``
ROWS: list[tuple[object, object]] = [
    (1, 10), (BIG, 11), (3, 10), (4, 12),
    (None, 10), (5.0, 11), (1.5, "text name"), ("12", 10), (b"\x01", None), (-7, 10),
]  # fmt: skip


def database(path: Path, rows: list[tuple[object, object]]) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(a, name)")  # no column types: cells keep their own
    conn.executemany("INSERT INTO t VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("chunk", [1, 3, 4, 100])
def test_int_frame_matches_frame_and_int_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(sqlite_db, "_CHUNK_ROWS", chunk)
    with open_database(str(database(tmp_path / "t.db", ROWS))) as db:
        fast = db.int_frame("t", ["a", "name", "absent"], required=["a"], keep=["name"])
        slow = db.frame("t", ["a", "name"])
    expected = [1, BIG, 3, 4, None, 5, None, None, None, -7]  # 5.0 is whole; 1.5, text, blob not
    assert str(fast["a"].dtype) == "Int64"
    assert [None if pd.isna(v) else int(v) for v in fast["a"]] == expected
    assert fast["a"].equals(int_column(slow["a"]))
    # a kept column with text is returned as stored (ids stay ints, NULL is None)
    assert list(fast["name"]) == [10, 11, 10, 12, 10, 11, "text name", 10, None, 10]
    assert fast["absent"].isna().all() and str(fast["absent"].dtype) == "Int64"


def test_int_frame_of_clean_integers_keeps_ids_as_int64(tmp_path: Path) -> None:
    rows: list[tuple[object, object]] = [(i, 100 + i % 3) for i in range(50)]
    rows[7] = (None, 101)  # a NULL: masked, not a damaged chunk
    with open_database(str(database(tmp_path / "t.db", rows))) as db:
        out = db.int_frame("t", ["a", "name"], keep=["name"])
    assert str(out["name"].dtype) == "Int64"
    assert out["name"].tolist() == [100 + i % 3 for i in range(50)]
    assert out["a"].isna().tolist() == [i == 7 for i in range(50)]
    assert int(out["a"].sum()) == sum(range(50)) - 7


def test_int_frame_reads_rows_beyond_the_counted_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_db, "_CHUNK_ROWS", 2)
    monkeypatch.setattr(Database, "count", lambda self, table: 1)
    with open_database(str(database(tmp_path / "t.db", ROWS[:4]))) as db:
        out = db.int_frame("t", ["a"])
    assert out["a"].tolist() == [1, BIG, 3, 4]


def test_int_frame_columns_keep_only_their_own_memory(tmp_path: Path) -> None:
    """A column the reader drops once converted (times, name ids) frees its own array: no
    column is a view into one block of all the columns."""
    rows: list[tuple[object, object]] = [(i, 100 + i % 3) for i in range(20)]
    with open_database(str(database(tmp_path / "t.db", rows))) as db:
        out = db.int_frame("t", ["a", "name"])
    for column, expected in (("a", list(range(20))), ("name", [100 + i % 3 for i in range(20)])):
        values = out[column].array._data
        owner = values
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        assert owner.nbytes == values.nbytes == 20 * 8  # not one block of both columns
        assert values.tolist() == expected


def test_int_frame_of_absent_table_and_lacking_column(tmp_path: Path) -> None:
    with open_database(str(database(tmp_path / "t.db", ROWS[:2]))) as db:
        assert db.int_frame("nope", ["a"]).empty
        with pytest.raises(MalformedInput, match="table t has no column start"):
            db.int_frame("t", ["a", "start"], required=["start"])


def test_text_per_distinct_runs_once_per_distinct_id() -> None:
    calls: list[object] = []

    def name(cell: object) -> str | None:
        calls.append(cell)
        return None if cell is None else f"k{cell}"

    cells = pd.Series(pd.array([2, 1, 2, None, 1, 2], dtype="Int64"))
    out = text_per_distinct(cells, name)
    assert out.dtype == pd.StringDtype()
    assert out.tolist() == ["k2", "k1", "k2", pd.NA, "k1", "k2"]
    assert sorted(calls, key=str) == [1, 2, None]  # None: the slot for a missing cell


def test_text_per_distinct_of_object_cells() -> None:
    out = text_per_distinct(pd.Series([3, "x", None], dtype="object"), lambda c: str(c))
    assert out.tolist() == ["3", "x", "None"]


def test_categories_per_distinct_runs_once_per_distinct_id() -> None:
    calls: list[object] = []

    def name(cell: object) -> str | None:
        calls.append(cell)
        return None if cell is None else f"k{cell}"

    cells = pd.Series(pd.array([2, 1, 2, None, 1, 12], dtype="Int64"), index=range(5, 11))
    out = categories_per_distinct(cells, name)
    assert isinstance(out.dtype, pd.CategoricalDtype)
    # each text once, sorted as text ("k12" before "k2"), object dtype as the schema keeps them
    assert list(out.cat.categories) == ["k1", "k12", "k2"]
    assert out.cat.categories.dtype == object
    assert out.cat.codes.tolist() == [2, 0, 2, -1, 0, 1]
    assert list(out.index) == list(range(5, 11))
    assert sorted(calls, key=str) == [1, 12, 2, None]


def test_categories_per_distinct_keeps_only_texts_that_occur() -> None:
    def same(cell: object) -> str:
        return "none" if cell is None else "same"

    # two ids, one text; no missing cell, so fn(None)'s text is no category
    out = categories_per_distinct(pd.Series(pd.array([1, 2], dtype="Int64")), same)
    assert list(out.cat.categories) == ["same"] and out.tolist() == ["same", "same"]
    # a missing cell gets fn(None), as text_per_distinct gives it
    out = categories_per_distinct(pd.Series(pd.array([1, None], dtype="Int64")), same)
    assert list(out.cat.categories) == ["none", "same"] and out.tolist() == ["same", "none"]


def test_categories_per_distinct_of_object_cells_runs_per_cell() -> None:
    calls: list[object] = []

    def text(cell: object) -> str | None:
        calls.append(cell)
        return None if cell is None else f"<{cell}>"

    out = categories_per_distinct(pd.Series([3, "x", None, 3], dtype="object"), text)
    assert calls == [3, "x", None, 3]  # a damaged column: every cell, in row order
    assert list(out.cat.categories) == ["<3>", "<x>"]
    assert out.cat.codes.tolist() == [0, 1, -1, 0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 40, None]), max_size=12))
def test_categories_per_distinct_has_the_values_of_text_per_distinct(
    ids: list[int | None],
) -> None:
    names = {1: "b", 2: "a", 3: "b", 40: None}  # two ids share a text; one id has none

    def name(cell: object) -> str | None:
        return "missing" if cell is None else names[int(cell)]  # type: ignore[call-overload]

    cells = pd.Series(pd.array(ids, dtype="Int64"))
    strings = text_per_distinct(cells, name)
    out = categories_per_distinct(cells, name)
    assert out.astype("string").tolist() == strings.tolist()
    assert list(out.cat.categories) == sorted(set(strings.dropna()))


@pytest.mark.parametrize("dtype", ["category", "string"])
def test_text_column_builds_the_schema_dtype(dtype: str) -> None:
    cells = pd.Series(pd.array([7, 8, 7], dtype="Int64"))
    out = text_column(cells, lambda c: f"n{c}", dtype)
    assert isinstance(out.dtype, pd.CategoricalDtype) == (dtype == "category")
    assert out.dtype == pd.StringDtype() or dtype == "category"
    assert out.astype("string").tolist() == ["n7", "n8", "n7"]


times = st.lists(
    st.tuples(st.sampled_from([0.0, 1.0, 2.0, np.nan]), st.sampled_from([1, 2, 3, None])),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(times)
def test_in_time_order_is_the_stable_sort(rows: list[tuple[float, int | None]]) -> None:
    frame = pd.DataFrame(
        {
            "start_ns": [s for s, _ in rows],
            "correlation_id": pd.array([c for _, c in rows], dtype="Int64"),
            "row": range(len(rows)),
        },
        index=range(10, 10 + len(rows)),
    )
    expected = frame.sort_values(["start_ns", "correlation_id"], kind="stable")
    pd.testing.assert_frame_equal(in_time_order(frame), expected.reset_index(drop=True))


def test_in_time_order_does_not_copy_an_ordered_frame() -> None:
    start = np.arange(5, dtype=np.float64)
    frame = pd.DataFrame({"start_ns": start, "correlation_id": pd.array([5, 1, 1, 2, 0])})
    out = in_time_order(frame)
    assert np.shares_memory(out["start_ns"].to_numpy(), frame["start_ns"].to_numpy())
