"""The raw page read from the file's bytes (parsers.ncu.csv.one_raw_table, parsers.ncu.raw).

The bytes path must give exactly the profile of the line-by-line path (parsers.ncu.csv._tables),
with and without the metric selection of ``report``; anything unusual (a carriage return, a
blank line, a second table, application output) goes to the line path.  Checked on generated
pages and on the real raw pages, read in place.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import parsers
from advisor import schema
from advisor.criteria.engine.needed import is_needed
from parsers.ncu import csv as ncu_csv
from parsers.ncu import csv_layouts as ncu_csv_layouts
from parsers.source import Source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu

B200 = "csv/roofline_analysis_ncu_b200"
RAW_PAGES = (
    "flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64",
    "flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64",
    "torch_sdpa_auto__mqa_bf16_b128_ctx4k_p64",
    "torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64",
)
TEXT_COLUMNS = ("kernel", "device", "metric", "tool_metric", "unit")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("raw") / "raw.csv"
    gen_ncu.write_ncu_raw(path, 30, seed=5)
    return path


def _frames(profile: parsers.Profile) -> dict[str, Any]:
    """Every table as plain Python values (dtypes aside), and the provenance."""
    frames = profile.frames.items()
    out: dict[str, Any] = {
        t: f.astype(object).where(f.notna(), None).to_dict("list") for t, f in frames
    }
    out["provenance"] = profile.provenance
    return out


def _by_lines(path: Path, metrics: Any, monkeypatch: pytest.MonkeyPatch) -> parsers.Profile:
    """The profile read with the bytes path turned off (every table split line by line)."""
    with monkeypatch.context() as patch:
        patch.setattr(ncu_csv, "one_raw_table", lambda src: None)
        return parsers.read(path, metrics=metrics)


def _row_by_row(path: Path, metrics: Any, monkeypatch: pytest.MonkeyPatch) -> parsers.Profile:
    """The profile read by the row-by-row fallback of parsers.ncu.csv_layouts."""
    with monkeypatch.context() as patch:
        patch.setattr(ncu_csv_layouts, "read_raw_cells", lambda *args: None)
        return parsers.read(path, metrics=metrics)


def _found(path: Path) -> ncu_csv.Table | None:
    return ncu_csv.one_raw_table(Source.from_path(path))


@pytest.mark.parametrize("selection", [None, is_needed])
def test_generated_page_reads_the_same_both_ways(
    page: Path, selection: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _found(page)
    # two ==PROF== lines, then the header (0-based line 2); the rows follow as bytes
    assert table is not None and table.header_line == 2 and table.data is not None
    read = _frames(parsers.read(page, metrics=selection))
    assert read == _frames(_by_lines(page, selection, monkeypatch))
    assert read == _frames(_row_by_row(page, selection, monkeypatch))


@pytest.mark.real_profiles
@pytest.mark.parametrize("selection", [None, is_needed])
def test_real_raw_pages_read_the_same_both_ways(
    real_profiles: Path, selection: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in RAW_PAGES:  # the folder's other files are failed runs (no table)
        path = real_profiles / B200 / f"{name}.ncu.csv"
        assert _found(path) is not None, path
        read = _frames(parsers.read(path, metrics=selection))
        assert read == _frames(_by_lines(path, selection, monkeypatch)), path
        assert read == _frames(_row_by_row(path, selection, monkeypatch)), path


def _variant(page: Path, tmp_path: Path, edit: Any) -> Path:
    out = tmp_path / "variant.csv"
    out.write_bytes(edit(page.read_bytes()))
    return out


def _second_row(raw: bytes) -> int:
    """Offset of the line after the units row (the first launch)."""
    return raw.index(b"\n", raw.index(b'\n""') + 1) + 1


@pytest.mark.parametrize(
    ("label", "edit", "launches"),
    [
        ("CRLF line ends", lambda b: b.replace(b"\n", b"\r\n"), 30),
        ("blank line", lambda b: b[: _second_row(b)] + b"\n" + b[_second_row(b) :], 30),
        ("application output", lambda b: b + b"done in 3 s\n", 30),
        ("status line at the end", lambda b: b + b"==PROF== Disconnected\n", 30),
        ("a second table", lambda b: b + b[b.index(b'"ID"') :], 60),
        ("leading spaces", lambda b: b[: _second_row(b)] + b"  " + b[_second_row(b) :], 30),
    ],
)
def test_unusual_files_take_the_line_path(
    page: Path, tmp_path: Path, label: str, edit: Any, launches: int
) -> None:
    path = _variant(page, tmp_path, edit)
    assert _found(path) is None, label
    assert len(parsers.read(path).launches) == launches, label


def test_last_line_without_newline_keeps_the_bytes_path(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _variant(page, tmp_path, lambda b: b.rstrip(b"\n"))
    assert _found(path) is not None
    assert _frames(parsers.read(path)) == _frames(_by_lines(path, None, monkeypatch))


def test_ragged_row_is_named_by_the_line_path(page: Path, tmp_path: Path) -> None:
    # the third launch loses its last cell: pyarrow refuses the table, the line path names it
    def cut(raw: bytes) -> bytes:
        start = _second_row(raw)
        for _ in range(2):
            start = raw.index(b"\n", start) + 1
        end = raw.index(b"\n", start)
        return raw[: raw.rindex(b',"', start, end)] + raw[end:]

    path = _variant(page, tmp_path, cut)
    assert _found(path) is not None
    with pytest.raises(parsers.MalformedInput) as err:
        parsers.read(path)
    # lines: 2 status lines, header (3), units (4), launches from line 5: the third is line 7
    assert err.value.line == 7 and "474 fields" in str(err.value)


def test_bytes_are_released_once_read(page: Path) -> None:
    src = Source.from_path(page)
    profile = ncu_csv.read_ncu_csv(src, None)
    assert src.raw is None and len(profile.launches) == 30
    assert src.lines[0].startswith("==PROF==")  # read again from the file when asked


def test_selection_leaves_out_the_fact_columns(page: Path) -> None:
    """The launch and device facts come from columns the report does not read; their rows are
    not in the selected metrics, yet the launches and devices are complete."""
    whole, part = parsers.read(page), parsers.read(page, metrics=is_needed)
    facts = {"launch__grid_dim_x", "device__attribute_display_name", "launch__stream_id"}
    assert facts <= set(whole.metrics["tool_metric"])
    assert not facts & set(part.metrics["tool_metric"])
    assert set(part.metrics["metric"]) == {m for m in set(whole.metrics["metric"]) if is_needed(m)}
    assert _frames(parsers.read(page))["launches"] == _frames(part)["launches"]
    assert part.devices["name"].tolist() == [gen_ncu.DEVICE_NAME]


def test_launch_with_only_fact_values_keeps_every_row(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launch whose selected cells are all blank would lose every metrics row: then every row
    of the file is kept, as parsers.read does for the line path."""
    raw = page.read_bytes()
    header = raw.split(b"\n")[2].decode()
    names = header.strip('"').split('","')
    facts = {"ID", *gen_ncu.ID_COLUMNS, "launch__grid_dim_x", "launch__block_dim_x"}
    lines = raw.split(b"\n")
    cells = lines[4].decode().strip('"').split('","')  # the first launch
    lines[4] = ",".join(
        f'"{c}"' if n in facts or "__" not in n else '""' for n, c in zip(names, cells, strict=True)
    ).encode()
    path = tmp_path / "sparse.csv"
    path.write_bytes(b"\n".join(lines))
    part = parsers.read(path, metrics=is_needed)
    assert _frames(part) == _frames(_by_lines(path, is_needed, monkeypatch))
    first = part.metrics[part.metrics["launch_id"] == 0]
    assert set(first["tool_metric"]) == {"launch__grid_dim_x", "launch__block_dim_x"}
    # the rows of the fact columns stay, for every launch
    facts = part.metrics[part.metrics["tool_metric"] == "device__attribute_display_name"]
    assert facts["launch_id"].tolist() == list(range(1, 30))


def test_text_columns_are_sorted_categoricals(page: Path) -> None:
    metrics = parsers.read(page, metrics=is_needed).metrics
    for column in TEXT_COLUMNS:
        dtype = metrics[column].dtype
        assert isinstance(dtype, pd.CategoricalDtype), column
        words = list(dtype.categories)
        assert words == sorted(words) and dtype.categories.dtype == object, column
        assert set(words) == set(metrics[column].dropna()), column  # every category used
    assert metrics["device"].unique().tolist() == [gen_ncu.DEVICE_NAME]


def test_schema_makes_repeated_metric_names_sorted_categoricals() -> None:
    rows = pd.DataFrame(
        {
            "launch_id": [0, 1, 2],
            "kernel": pd.Categorical(["b", "a", "b"], categories=["b", "a", "unused"]),
            "metric": ["x", "y", "x"],
            "value": [1.0, 2.0, 3.0],
        }
    )
    out = schema.validate("metrics", rows)
    kernel = out["kernel"]
    assert isinstance(kernel.dtype, pd.CategoricalDtype)
    assert list(kernel.dtype.categories) == ["a", "b"]  # sorted, the unused one dropped
    assert kernel.tolist() == ["b", "a", "b"]
    metric = out["metric"]  # given as text, made the schema's categorical too
    assert isinstance(metric.dtype, pd.CategoricalDtype) and list(metric.cat.categories) == [
        "x",
        "y",
    ]
    assert out["text"].dtype == pd.StringDtype()  # free text stays text
    assert np.isnan(out["minimum"]).all()
    # elsewhere a text column stays plain text
    devices = schema.validate("devices", pd.DataFrame({"name": pd.Categorical(["GPU"])}))
    assert devices["name"].dtype == pd.StringDtype()
