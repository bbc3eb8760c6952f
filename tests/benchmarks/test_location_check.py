"""benchmarks/location_check.py: the acceptance on tuning steps, on a folder outside the
repository (docs/locations.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import location_check  # noqa: E402


@pytest.mark.real_profiles
def test_acceptance_on_a_families_folder_outside_the_repository(
    tuning_families: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ncu_report")
    manifest = (tuning_families / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    rows = [manifest[0]] + [r for r in manifest[1:] if r.startswith("F15\t")]
    assert len(rows) == 3  # the stride-7 baseline and its unit-stride version
    folder = tmp_path / "families"
    folder.mkdir()
    (folder / "MANIFEST.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "cismine").symlink_to(tuning_families / "cismine")
    # no steps table: the step is derived from the MANIFEST
    code = location_check.main(
        ["--steps-only", "--families", str(folder), "--steps", str(tmp_path / "none.tsv")]
    )
    out = capsys.readouterr().out
    assert code == 0
    # the coalescing step addresses L1/L2 granularity; the earlier version's top location of
    # the excess sectors is the load whose excess the later version no longer has
    assert "testMixed: L1_GRANULARITY at testMixed(int *, int *, int)+0x0190" in out
    assert out.rstrip().endswith(
        "top location in the changed code: 1 of 1 steps with per-instruction data in both "
        "versions (100%)"
    )


def test_without_a_manifest_the_folder_is_refused(tmp_path: Path) -> None:
    assert location_check.main(["--steps-only", "--families", str(tmp_path)]) == 2
