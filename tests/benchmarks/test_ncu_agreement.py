"""The pure computations of the Nsight Compute agreement check (benchmarks/ncu_agreement.py).

Every expected value is computed by hand in the comment beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import ncu_agreement as na


def test_counts_add_fills_the_four_cells() -> None:
    c = na.Counts()
    for ours, theirs in [(True, True), (True, False), (False, True), (False, False), (True, True)]:
        c.add(ours, theirs)
    assert (c.both, c.only_we, c.only_ncu, c.neither) == (2, 1, 1, 1)
    assert c.compared == 5 and c.agreed == 3


def test_agreement() -> None:
    # (4 + 7) / (4 + 0 + 2 + 7) = 11/13
    assert na.agreement(na.Counts(both=4, only_we=0, only_ncu=2, neither=7)) == pytest.approx(
        11 / 13
    )
    assert na.agreement(na.Counts(neither=14)) == 1.0
    assert na.agreement(na.Counts(only_ncu=3)) == 0.0
    assert na.agreement(na.Counts()) is None


def test_kappa_textbook_example() -> None:
    # n = 50, p_o = (20 + 15)/50 = 0.7; p_we = 25/50 = 0.5, p_ncu = 30/50 = 0.6;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5)/(1 - 0.5) = 0.4
    c = na.Counts(both=20, only_we=5, only_ncu=10, neither=15)
    assert na.cohen_kappa(c) == pytest.approx(0.4)


def test_kappa_of_a_real_table() -> None:
    # L1_GRANULARITY on the real profiles: n = 13, p_o = 11/13, p_we = 4/13, p_ncu = 6/13;
    # p_e = (4*6 + 9*7)/169 = 87/169; kappa = (143 - 87)/(169 - 87) = 56/82
    c = na.Counts(both=4, only_we=0, only_ncu=2, neither=7)
    assert na.cohen_kappa(c) == pytest.approx(56 / 82)
    assert round(na.cohen_kappa(c) or 0.0, 2) == 0.68


def test_kappa_perfect_chance_and_worse_than_chance() -> None:
    # perfect agreement with both answers present: p_o = 1, p_e = (9 + 100)/169 < 1 -> 1
    assert na.cohen_kappa(na.Counts(both=3, neither=10)) == pytest.approx(1.0)
    # p_we = 0, p_ncu = 1: p_o = 0, p_e = 0*1 + 1*0 = 0 -> kappa = 0
    assert na.cohen_kappa(na.Counts(only_ncu=3)) == 0.0
    # p_o = 0, p_we = p_ncu = 0.5, p_e = 0.5 -> (0 - 0.5)/0.5 = -1
    assert na.cohen_kappa(na.Counts(only_we=5, only_ncu=5)) == pytest.approx(-1.0)


def test_kappa_undefined() -> None:
    # one single answer from both raters: p_e = 1
    assert na.cohen_kappa(na.Counts(neither=14)) is None
    assert na.cohen_kappa(na.Counts(both=2)) is None
    assert na.cohen_kappa(na.Counts()) is None


def test_pooled_sums_cell_by_cell() -> None:
    total = na.pooled(
        [na.Counts(1, 2, 3, 4), na.Counts(10, 20, 30, 40), na.Counts()],
    )
    assert (total.both, total.only_we, total.only_ncu, total.neither) == (11, 22, 33, 44)
    # overall kappa pools the pairs: p_o = 55/110 = 0.5, p_we = 33/110 = 0.3, p_ncu = 44/110 = 0.4,
    # p_e = 0.12 + 0.42 = 0.54, kappa = (0.5 - 0.54)/0.46 = -0.04/0.46
    assert na.cohen_kappa(total) == pytest.approx(-0.04 / 0.46)


def test_tally_keeps_the_pairs_neither_side_could_flag_apart() -> None:
    t = na.Tally()
    t.add(True, True)
    t.add(False, False, "n.a.")
    t.add(True, True, "trivial")
    t.add(False, True)
    t.add(False, False)
    c, k = t.counts, t.kept
    assert (c.both, c.only_we, c.only_ncu, c.neither) == (2, 0, 1, 2)
    assert (k.both, k.only_we, k.only_ncu, k.neither) == (1, 0, 1, 1)
    assert (t.not_applicable, t.trivial, t.compared) == (1, 1, 5)
    # all: 4/5; kept: 2/3
    assert t.agreement == pytest.approx(0.8)
    assert na.agreement(k) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("duration_ns", "launches", "share", "trivial"),
    [
        (4_000.0, 1, 1.0, True),  # 4 us launch
        (6_000.0, 1, 1.0, False),
        (10_000.0, 2, 1.0, False),  # mean launch exactly 5 us: not under it
        (9_000.0, 2, 1.0, True),  # mean launch 4.5 us
        (1e9, 1, 0.005, True),  # 0.5 % of the GPU time
        (1e9, 1, 0.01, False),  # exactly 1 %: not under it
        (None, 1, None, False),  # unknown: kept
        (1e6, 1, None, False),
        (None, 1, 0.5, False),
        (3_000.0, 0, 1.0, False),  # no launch count: the duration says nothing per launch
    ],
)
def test_is_trivial(
    duration_ns: float | None, launches: int, share: float | None, trivial: bool
) -> None:
    assert na.is_trivial(duration_ns, launches, share) is trivial


def test_family_files_keeps_the_nsight_compute_rows_once(tmp_path: Path) -> None:
    manifest = tmp_path / "MANIFEST.tsv"
    rows = [
        ("family_id", "local_path", "tool_version"),
        ("F1", "a/x.ncu-rep", "ncu 2023.3.0.0"),
        ("F1", "a/y.ncu-rep", "ncu (version string not found in file)"),
        ("F2", "b/p.output", "Nsight Compute CLI text output"),
        ("F3", "c/t.sqlite", "nsys 2022.1.3.3 (sqlite export)"),
        ("F4", "d/v.nvvp", "nvprof SQLite (.nvvp, db version 18)"),
        ("F5", "a/x.ncu-rep", "ncu 2023.3.0.0"),
    ]
    manifest.write_text("\n".join("\t".join(r) for r in rows) + "\n", encoding="utf-8")
    assert na.family_files(manifest) == [
        tmp_path / "a/x.ncu-rep",
        tmp_path / "a/y.ncu-rep",
        tmp_path / "b/p.output",
    ]


def test_thresholds_paragraph_names_every_threshold_and_the_data() -> None:
    source = na.Source("real", na.REAL, [Path("f1"), Path("f2")], read=2, with_rules=1, kernels=3)
    source.trivial_kernels = 1
    source.tallies["DIVERGENCE"].add(False, False)
    text = " ".join(na.thresholds_paragraph([source]).split())
    for name in na.PAIRINGS:
        assert f"{name} < {na.THRESHOLDS[name]:g}" in text
    assert "2 files, 2 read by the advisor, 1 with rule results, 3 kernels" in text
    assert "(1 trivial), 1 kernel-criterion pairs compared" in text


@pytest.mark.real_profiles
def test_script_on_the_real_profiles(real_profiles: Path, capsys: pytest.CaptureFixture) -> None:
    assert na.main(["--source", "real"]) == 0
    out = capsys.readouterr().out
    assert "== real: ../shared/real_profiles ==" in out
    assert "overall agreement: " in out and "overall Cohen's κ: " in out
    assert "without n.a. and trivial pairs: " in out
    assert "Thresholds: " in out and "families" not in out.split("Thresholds: ")[1]
    for name in na.PAIRINGS:
        assert name in out
