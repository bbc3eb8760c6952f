"""The GPU trace of nvprof's plain-text output read by columns (parsers/nvprof/text_trace.py).

Every test reads one file twice, by columns and line by line (the fast path turned off), and
requires the same profile (every table, exactly, and the provenance) or the same error, on the
benchmark generator's output, the real trace in ../shared and the sample, and on edited copies
of them; the tests of the cases read line by line also check that the fast path declined them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers
from advisor.errors import AdvisorError, MalformedInput
from advisor.profile import Profile
from benchmarks import gen_nvprof
from parsers.nvprof import text_trace
from parsers.source import Source
from parsers.units import nvprof_cell

SAMPLE = Path(__file__).resolve().parents[2] / "sample_profiles" / "synthetic_nvprof_gputrace.txt"
BABELSTREAM = "csv/nanzifan_nvprof_titanxp/text_mode/BabelStream_print-gpu-trace.txt"

Edit = Callable[[list[str]], list[str]]
Change = Callable[[str], str]


@pytest.fixture(autouse=True)
def _fast_path_on_small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path on files of any size (the test files are small)."""
    monkeypatch.setattr(text_trace, "MIN_BYTES", 0)


def _read(path: Path, fast: bool) -> Profile | AdvisorError:
    old = text_trace.MIN_BYTES
    text_trace.MIN_BYTES = 0 if fast else 1 << 62
    try:
        return parsers.read(path)
    except AdvisorError as exc:
        return exc
    finally:
        text_trace.MIN_BYTES = old


def _declined(path: Path) -> bool:
    """True when the fast path refuses the file (then the line reader reads it whole)."""
    return text_trace.read_trace(Source.from_path(path)) is None


def assert_same_reading(path: Path) -> Profile | AdvisorError:
    """The file read by columns and line by line gives the same profile or the same error."""
    fast, rows = _read(path, True), _read(path, False)
    if isinstance(rows, AdvisorError):
        assert type(fast) is type(rows) and str(fast) == str(rows)
        return rows
    assert isinstance(fast, Profile), fast
    for table, frame in rows.frames.items():
        pd.testing.assert_frame_equal(fast.frames[table], frame, check_exact=True, obj=table)
    assert fast.provenance == rows.provenance
    return rows


def _generated(tmp_path: Path, n: int, seed: int = 0) -> Path:
    path = tmp_path / f"gen{seed}.txt"
    gen_nvprof.write_nvprof_gputrace_text(path, n, seed)
    return path


def _edit(tmp_path: Path, source: Path, edit: Edit, name: str = "edited.txt") -> Path:
    """A copy of ``source`` whose lines ``edit`` (a function of the list of lines) changed."""
    lines = source.read_text(encoding="utf-8").split("\n")
    out = tmp_path / name
    out.write_text("\n".join(edit(lines)), encoding="utf-8")
    return out


def _header_index(lines: list[str]) -> int:
    return next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("Start  "))


# -- the same frames as the line reader --------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "piece", "n"), [(0, 16 << 20, 3000), (1, 4096, 3000), (2, 300, 120)]
)
def test_generated_trace_reads_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, piece: int, n: int
) -> None:
    """Read in pieces of any size (300 bytes: some lines are longer than a piece)."""
    monkeypatch.setattr(text_trace, "PIECE_BYTES", piece)
    path = _generated(tmp_path, n, seed)
    assert not _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile)
    assert len(prof.launches) + len(prof.transfers) == n
    assert prof.transfers["kind"].notna().all() and prof.launches["grid_x"].notna().all()


@pytest.mark.real_profiles
def test_real_babelstream_trace_reads_alike(real_profiles: Path) -> None:
    path = real_profiles / BABELSTREAM
    assert not _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile) and len(prof.launches) == 501 and len(prof.transfers) == 103


def test_sample_trace_reads_alike() -> None:
    assert not _declined(SAMPLE)
    assert_same_reading(SAMPLE)


def test_values_are_those_printed(tmp_path: Path) -> None:
    """Values read by columns, checked against the cells as printed (not only against the line
    reader): times in ns, binary sizes, dimensions, ids, devices, memory kinds."""
    path = _generated(tmp_path, 400)
    found = text_trace.read_trace(Source.from_path(path))
    assert found is not None
    lines = path.read_text(encoding="utf-8").split("\n")
    rows = found.rows
    for k in (0, 1, 2, 57, 399):
        cells = lines[found.header + 1 + k].split()
        assert rows["start_ns"][k] == nvprof_cell(cells[0])[0]
        assert rows["duration_ns"][k] == nvprof_cell(cells[1])[0]
        assert rows["device"][k] == "TITAN Xp" and rows["device_id"][k] == 0
        if cells[2] == "-":  # a copy: no launch configuration, a size and memory kinds
            assert pd.isna(rows["grid_x"][k]) and pd.isna(rows["registers_per_thread"][k])
            assert rows["bytes"][k] == nvprof_cell(cells[7])[0]
            assert rows["src_kind"][k] == cells[9] and rows["name"][k].startswith("[CUDA")
            assert rows["stream"][k] == int(cells[15])
        else:  # (x y z) splits into three tokens
            assert (rows["grid_x"][k], rows["grid_y"][k]) == (int(cells[2][1:]), int(cells[3]))
            assert rows["registers_per_thread"][k] == int(cells[8])
            assert rows["static_shared_bytes"][k] == nvprof_cell(cells[9])[0]
            assert math.isnan(rows["bytes"][k]) and pd.isna(rows["src_kind"][k])
            assert rows["stream"][k] == int(cells[19])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**12),
            st.integers(0, 9),
            st.sampled_from(["s", "ms", "us", "ns", "B", "KB", "MB", "GB"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_glued_numbers_as_python_reads_them(cells: list[tuple[int, int, str]]) -> None:
    """Each number+unit cell gives exactly ``nvprof_cell``'s float (Arrow's decimal conversion
    and Python's are both correctly rounded; the factor is applied the same way)."""
    texts = []
    for whole, decimals, unit in cells:
        digits = str(whole)
        number = digits if decimals == 0 else f"{digits[:-1] or '0'}.{digits[-1:] * decimals}"
        texts.append(number + unit)
    for units in (text_trace._TIME_UNITS, text_trace._BYTE_UNITS):
        chosen = [t for t in texts if t.rstrip("0123456789.") in units]
        if not chosen:
            continue
        array = pa.array([*chosen, "-"], pa.large_string())
        got = text_trace._glued(array, np.array([True] * len(array)), units)
        want = [nvprof_cell(t)[0] for t in chosen]
        assert got[:-1].tolist() == want and math.isnan(got[-1])


# -- files around the table ----------------------------------------------------------------------


def test_text_before_and_after_the_table(tmp_path: Path) -> None:
    """Application output before the table, the legend, a summary and a second run after it:
    line numbers and notes of the rest of the file are the line reader's."""
    second = SAMPLE.read_text(encoding="utf-8").split("\n")[2:]

    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        return ["app says hello", *lines[:h], *lines[h:], *second]

    path = _edit(tmp_path, _generated(tmp_path, 500), edit)
    assert not _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile)
    assert any(n.startswith("run 2 of 2") for n in prof.provenance[0].notes)


def test_last_row_without_newline(tmp_path: Path) -> None:
    path = _generated(tmp_path, 300)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert not _declined(path)
    assert_same_reading(path)


def test_non_ascii_names_read_by_columns(tmp_path: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        lines[h + 3] = lines[h + 3] + "  µkernel ✓ "  # the name grows, trailing space dropped
        return lines

    path = _edit(tmp_path, _generated(tmp_path, 300), edit)
    assert not _declined(path)
    assert_same_reading(path)


def test_second_trace_table_in_one_run_read_by_lines(tmp_path: Path) -> None:
    """Two trace tables in one run: the rows stay in file order (the whole file line by line)."""

    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        return [*lines, *lines[h : h + 20], ""]

    path = _edit(tmp_path, _generated(tmp_path, 300), edit)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile) and len(prof.launches) + len(prof.transfers) == 319


def test_error_after_the_table_is_the_line_readers(tmp_path: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        return [*lines, "==1== Metric result:", "Invocations  Metric Name  Metric Description"
                "  Min  Max  Avg", "    1  ipc  Executed IPC  1.0  2.0"]  # fmt: skip

    path = _edit(tmp_path, _generated(tmp_path, 300), edit)
    assert not _declined(path)
    err = assert_same_reading(path)
    assert isinstance(err, MalformedInput)


# -- read line by line: anything the fast path cannot show it reads alike ----------------------


def _row_edit(k: int, change: Change) -> Edit:
    """An edit of the k-th row of the table (``change`` maps the line to its new text)."""

    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        lines[h + 1 + k] = change(lines[h + 1 + k])
        return lines

    return edit


def _replace_cell(old: str, new: str) -> Change:
    """Replace the first occurrence of ``old`` (right-aligned: padded to keep the widths)."""
    return lambda line: line.replace(old, new.rjust(len(old)), 1)


@pytest.mark.parametrize(
    ("what", "edit"),
    [
        ("bare number", _row_edit(5, lambda ln: ln.replace("us ", "   ", 1))),
        ("unknown unit", _row_edit(5, lambda ln: ln.replace("us ", "xs ", 1))),
        ("size unit in a time", _row_edit(5, lambda ln: ln.replace("us ", "KB ", 1))),
        ("exponent", _row_edit(7, lambda ln: ln.replace("1.", "1e", 1))),
        ("other placeholder", _row_edit(0, lambda ln: _replace_cell(ln.split()[0], "n/a")(ln))),
        ("misaligned", _row_edit(9, lambda ln: " " + ln)),
        ("tab", _row_edit(4, lambda ln: ln.replace("  ", "\t", 1))),
        ("carriage return", _row_edit(4, lambda ln: ln + "\r")),
        ("non-ASCII left of Name", _row_edit(3, _replace_cell("TITAN Xp (0)", "TITÄN Xp (0)"))),
        ("no name", _row_edit(6, lambda ln: ln[: ln.rindex("  ")] + " " * 8)),
        (
            "unified memory row",
            _row_edit(2, lambda ln: ln[: ln.rindex("  ") + 2] + "[Unified Memory GPU page faults]"),
        ),
        (
            "unified memory copy",
            _row_edit(2, lambda ln: ln[: ln.rindex("  ") + 2] + "[Unified Memory Memcpy HtoD]"),
        ),
        ("text after the rows", lambda lines: [*lines[:-1], "short output line", ""]),
        (
            "units row",
            lambda lines: [
                *lines[: _header_index(lines) + 1],
                " " * 12 + "s" + " " * 11 + "us",
                *lines[_header_index(lines) + 1 :],
            ],
        ),
    ],
)
def test_declined_and_read_alike(tmp_path: Path, what: str, edit: Edit) -> None:
    path = _edit(tmp_path, _generated(tmp_path, 200), edit)
    assert _declined(path), what
    assert_same_reading(path)


def test_text_placeholders_read_by_columns(tmp_path: Path) -> None:
    """Text cells are looked at once per distinct text, with the line reader's own functions:
    any placeholder there is read by columns."""
    edit = _row_edit(0, _replace_cell("TITAN Xp (0)", "n/a"))
    path = _edit(tmp_path, _generated(tmp_path, 200), edit)
    assert not _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile)


def _rename(k: int, name: str) -> Edit:
    return _row_edit(k, lambda ln: ln[: ln.rindex("  ") + 2] + name)


@pytest.mark.parametrize(
    ("name", "declined"),
    [
        ("k(int)  [12]", False),  # the name keeps a trailing space before its suffix
        ("k(int) [1234567890123456789]", False),  # too long for the suffix regex: frames split
        ("k(int)\u00a0[12]", False),  # a separator only Python's \\s knows: frames split it
        ("k(int) [1] [2]", True),  # split once by the line reader
        ("[CUDA memcpy HtoD] [5]", True),  # a kernel by its printed name
        ("[Unified Memory foo] [5]", True),
        (" [12]", True),  # nothing before the suffix
    ],
)
def test_correlation_suffixes(tmp_path: Path, name: str, declined: bool) -> None:
    path = _edit(tmp_path, _generated(tmp_path, 200), _rename(1, name))
    assert _declined(path) == declined
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile)


def test_correlation_column_and_suffix(tmp_path: Path) -> None:
    """A Correlation_ID column: its value wins over a name's suffix, the suffix fills it where
    the column is a placeholder."""
    lines = [
        "==1== Profiling result:",
        *_table(
            ["Start", "Duration", "Grid Size", "Block Size", "Correlation_ID", "Name"],
            [
                ["1.0s", "2.0us", "(1 1 1)", "(32 1 1)", "7", "k(int) [70]"],
                ["2.0s", "2.0us", "(1 1 1)", "(32 1 1)", "-", "k(int) [80]"],
                ["3.0s", "2.0us", "-", "-", "9", "[CUDA memcpy HtoD]"],
                ["4.0s", "2.0us", "(1 1 1)", "(32 1 1)", "-", "k(int)"],
            ],
        ),
        "",
    ]
    path = tmp_path / "corr.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert not _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile)
    assert prof.launches["correlation_id"].tolist() == [7, 80, pd.NA]
    assert prof.transfers["correlation_id"].tolist() == [9]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header) - 1)]

    def fmt(r: list[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]

    return [fmt(header)] + [fmt(r) for r in rows]


def test_api_calls_mixed_into_the_trace(tmp_path: Path) -> None:
    """``--print-api-trace`` with the GPU trace: an API call row (no launch configuration) sends
    the file to the line reader, which files it under api_calls."""

    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        row = next(ln for ln in lines[h + 1 :] if "[CUDA memcpy" in ln)
        cut = row.rindex("  ") + 2
        lines.insert(h + 1, row[:cut] + "cudaLaunchKernel (lud_diagonal(float*, int, int) [111])")
        return lines

    path = _edit(tmp_path, _generated(tmp_path, 200), edit)
    assert _declined(path)
    prof = assert_same_reading(path)
    assert isinstance(prof, Profile) and len(prof.api_calls) == 1


def test_kernel_named_like_an_api_call_with_a_grid_reads_by_columns(tmp_path: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        h = _header_index(lines)
        row = next(ln for ln in lines[h + 1 :] if ln.split()[2].startswith("("))
        lines.insert(h + 1, row[: row.rindex("  ") + 2] + "cuKernel (x)")
        return lines

    path = _edit(tmp_path, _generated(tmp_path, 200), edit)
    assert not _declined(path)
    assert_same_reading(path)


def test_random_cell_edits_read_alike(tmp_path: Path) -> None:
    """Random single-character edits of rows: read by columns or declined, never read
    otherwise than the line reader reads them (same profile or same error)."""
    base = _generated(tmp_path, 60).read_text(encoding="utf-8").split("\n")
    h = _header_index(base)
    rng = random.Random(7)
    alphabet = "0123456789 .-()sumnKMGB/xa\t"
    for trial in range(25):
        lines = list(base)
        k = h + 1 + rng.randrange(60)
        at = rng.randrange(len(lines[k]))
        lines[k] = lines[k][:at] + rng.choice(alphabet) + lines[k][at + 1 :]
        path = tmp_path / f"random{trial}.txt"
        path.write_text("\n".join(lines), encoding="utf-8")
        assert_same_reading(path)
