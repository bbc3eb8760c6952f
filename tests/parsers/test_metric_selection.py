"""``report`` reads only the metrics it uses (advisor.criteria.engine.needed) and says the same.

The report of a file read with the selection must be byte-identical to the report of the file
read whole; checked on a few real files of each format and on the samples.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import parsers
from advisor.cli import main
from advisor.criteria.engine.needed import all_recipes, needed_metrics
from advisor.pipeline import is_needed
from advisor.profile import Profile

#: files per format checked (the first ones in sorted order)
PER_FORMAT = 2
#: the profiler exports among the real files (the others hold no kernel data)
FORMATS = ("ncu-csv", "ncu-rep", "nsys-csv", "nvprof-csv", "nvprof-text", "sqlite")


def _report(files: list[Path], out: Path) -> bytes:
    result = CliRunner().invoke(main, ["report", *map(str, files), "--json", str(out)])
    assert result.exit_code in (0, 4), result.output
    return out.read_bytes()


def _both(
    files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, bytes]:
    tmp_path.mkdir(exist_ok=True)
    selected = _report(files, tmp_path / "selected.json")
    original: Callable[..., Profile] = parsers.read

    def whole(path: str | Path, metrics: Callable[[str], bool] | None = None) -> Profile:
        return original(path)

    monkeypatch.setattr(parsers, "read", whole)
    return selected, _report(files, tmp_path / "whole.json")


def _real_files(root: Path) -> list[Path]:
    picked: dict[str, list[Path]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name in ("README.md", "SOURCES.tsv"):
            continue
        try:
            fmt = parsers.detect(path)
        except Exception:  # files of no known format are not this test's subject
            continue
        if fmt in FORMATS and len(picked.setdefault(fmt, [])) < PER_FORMAT:
            picked[fmt].append(path)
    return [p for files in picked.values() for p in files]


def test_real_files_report_the_same_bytes(
    real_profiles: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _real_files(real_profiles)
    formats = {parsers.detect(p) for p in files}
    assert formats == set(FORMATS)
    for k, path in enumerate(files):
        with monkeypatch.context() as patch:
            selected, whole = _both([path], tmp_path / str(k), patch)
        assert selected == whole, path


def test_ncu_raw_page_is_read_in_part(real_profiles: Path) -> None:
    path = next(
        p
        for p in sorted((real_profiles / "csv" / "roofline_analysis_ncu_b200").glob("*.ncu.csv"))
        if parsers.detect(p) == "ncu-csv"
    )
    whole, part = parsers.read(path), parsers.read(path, metrics=is_needed)
    assert len(part.metrics) < len(whole.metrics) / 2
    assert set(part.metrics["metric"]) == {m for m in set(whole.metrics["metric"]) if is_needed(m)}
    for table in ("launches", "devices"):
        assert getattr(part, table).equals(getattr(whole, table)), table


def test_samples_report_the_same_bytes(
    samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(samples.glob("synthetic_*"))
    assert files
    selected, whole = _both(files, tmp_path, monkeypatch)
    assert selected == whole


def test_needed_set_holds_every_recipe_name() -> None:
    recipes = all_recipes()
    assert len(recipes) > 30
    names = needed_metrics()
    for recipe in recipes:
        for name in (*recipe.needs, *recipe.optional):
            assert is_needed(name), (recipe.label, name)
    assert "gpu_time_duration" in names and "flop_count_dp_fma" not in names
    assert is_needed("flop_count_dp_fma")  # the roofline's, added by the pipeline
    assert is_needed("smsp__pcsamp_warps_issue_stalled_long_scoreboard")
    assert not is_needed("sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active")
