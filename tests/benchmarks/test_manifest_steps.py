"""Steps derived from a MANIFEST (benchmarks/manifest_steps.py): every ``paired_with`` form, the
change-text keywords, and agreement with the reviewed steps of the shared families."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import manifest_steps as ms  # noqa: E402
import speedup_validation as bench  # noqa: E402

HEADER = ("family_id", "local_path", "kernel_names", "change", "paired_with")


def _manifest(tmp_path: Path, rows: list[tuple[str, ...]]) -> Path:
    path = tmp_path / "MANIFEST.tsv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_every_paired_with_form(tmp_path: Path) -> None:
    path = _manifest(
        tmp_path,
        [
            ("A", "a/base.ncu-rep", "k[#0 grid=1 blk=1]", "BASELINE: <<<1,1>>>", "-"),
            (
                "A",
                "a/fast.ncu-rep",
                "k2[#0 grid=64 blk=256]",
                "<<<64,256>>> (fills the GPU)",
                "base.ncu-rep:k",
            ),
            (
                "B",
                "b/run.output",
                "red(float *)[grid=8]; red_ws(float *)",
                "red = BASELINE; red_ws = warp-shuffle instead of smem",
                "red -> red_ws (within file)",
            ),
            (
                "B",
                "b/flags.output",
                "red(float *); red_ws(float *)",
                "metrics only",
                "companion of run",
            ),
            ("C", "c/one.nvvp", "add[launches=1]", "BASELINE", "-"),
            (
                "C",
                "c/two.nvvp",
                "add[launches=4]",
                "pinned memory + 4 streams",
                "one.nvvp (compare gpu_span)",
            ),
            ("D", "d/l.ncu-rep", "conv[L1][#1 grid=9]; conv[L2][#4 grid=9]", "BASELINE", "-"),
            (
                "D",
                "d/m.ncu-rep",
                "cvt[L1 cvt][#2]; conv[L1 conv][#3]; conv[L2][#7]",
                "FP16 conversion",
                "l.ncu-rep:conv (same layer; add conversion kernels to after-time)",
            ),
            (
                "E",
                "e/x.ncu-rep",
                "p[#0]; q[#1]",
                "p=BASELINE (stride-7 uncoalesced); q (coalesced) -> paired p",
                "chain (see change column)",
            ),
            ("F", "f/y.ncu-rep", "z", "something", "a riddle"),
        ],
    )
    derived = ms.derive(path)
    got = {
        (
            s["family"],
            s["before"],
            s["before_kernel"],
            s["after"],
            s["after_kernel"],
            s["scope"],
            s["addressed"],
        )
        for s in derived.steps
    }
    assert got == {
        (
            "A",
            "a/base.ncu-rep",
            "k",
            "a/fast.ncu-rep",
            "k2",
            "kernel",
            "LOADBALANC_SM,THROUGHPUT_OCCUPANCY",
        ),
        (
            "B",
            "b/run.output|b/flags.output",
            "red",
            "b/run.output",
            "red_ws",
            "kernel",
            "DEVICESYNC",
        ),
        ("C", "c/one.nvvp", "*", "c/two.nvvp", "*", "span", "HOSTSYNC"),
        ("D", "d/l.ncu-rep", "conv#1", "d/m.ncu-rep", "cvt+conv#3", "kernel", "none"),
        ("D", "d/l.ncu-rep", "conv#4", "d/m.ncu-rep", "conv#7", "kernel", "none"),
        ("E", "e/x.ncu-rep", "p", "e/x.ncu-rep", "q", "kernel", "L1_GRANULARITY,L2_GRANULARITY"),
    }
    assert list(derived.not_derived) == ["F"]
    assert "a riddle" in derived.not_derived["F"]
    assert [s["step_id"] for s in derived.steps if s["family"] == "D"] == ["D-m1", "D-m2"]


def test_odd_manifests_are_read_or_refused_in_one_line(tmp_path: Path) -> None:
    # a byte-order mark, a short row, a "[2 launches]" tag (not a layer), a file name with "("
    path = tmp_path / "MANIFEST.tsv"
    rows = [
        "\t".join(HEADER),
        "G\tg/one (1).nvvp\tk[2 launches]\tBASELINE\t-",
        "G\tg/two.nvvp\tk[2 launches]\tpinned + 2 streams\tone (1).nvvp (compare gpu_span)",
        "H\th/a.rep\tk",
        "H\th/b.rep\tk\tsame\tb.rep:k",
    ]
    path.write_text("\ufeff" + "\n".join(rows) + "\n", encoding="utf-8")
    derived = ms.derive(path)
    assert [(s["before"], s["after"], s["scope"]) for s in derived.steps] == [
        ("g/one (1).nvvp", "g/two.nvvp", "span")
    ]
    assert "paired with itself" in derived.not_derived["H"]
    assert ms.parse_entries("k[2 launches][#3]") == [ms.Entry("k", 3, None)]
    broken = tmp_path / "bad.tsv"
    broken.write_text("family_id\tlocal_path\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no column kernel_names, change, paired_with"):
        ms.read_manifest(broken)
    families = tmp_path / "fam"
    families.mkdir()
    (families / "MANIFEST.tsv").write_text("family_id\n", encoding="utf-8")
    assert bench.main(["--families", str(families)]) == 2


def test_keywords_and_clauses() -> None:
    assert ms.addressed("padding the tile removes bank conflicts") == "SHMEM_EFFICIENCY"
    assert ms.addressed("branch-free select instead of if/else") == "DIVERGENCE"
    assert ms.addressed("shared-memory tiling") == "none"
    # the baseline's name is not part of the change it is compared with
    text = "a = BASELINE; b (x) -> paired gmem_coalesce; c = more threads"
    assert ms.clause(text, "b") == "b (x) "
    assert ms.clause(text, "c") == "c = more threads"
    assert ms.clause(text, "zzz") == text


def test_a_manifest_the_reviewed_table_does_not_know_is_derived(tmp_path: Path) -> None:
    _manifest(
        tmp_path,
        [
            ("F01a", "x/base.ncu-rep", "k", "BASELINE", "-"),
            ("F01a", "x/next.ncu-rep", "k", "coalesced index", "base.ncu-rep:k"),
        ],
    )
    steps, derived, missing = bench.plan_steps(tmp_path, bench.STEPS)
    # the family id exists in the reviewed table, but its files are not this MANIFEST's
    assert derived == 1 and not missing
    assert steps[0]["before"] == "x/base.ncu-rep" and steps[0]["origin"] == "derived"


def test_derived_steps_agree_with_the_reviewed_table(tuning_families: Path) -> None:
    derived = ms.derive(tuning_families / "MANIFEST.tsv")
    reviewed = bench.read_steps(bench.STEPS)
    assert not derived.not_derived
    assert {s["family"] for s in derived.steps} == {s["family"] for s in reviewed}

    def same_kernels(a: str, b: str) -> bool:
        """The same selections: equal launch ids, and names equal or one inside the other
        (F13's Numba names are selected by their start in the reviewed table)."""
        pieces = list(zip(a.split("+"), b.split("+"), strict=False))
        if len(pieces) != len(a.split("+")) or len(a.split("+")) != len(b.split("+")):
            return False
        for x, y in pieces:
            (nx, _, ix), (ny, _, iy) = x.partition("#"), y.partition("#")
            if ix != iy or not (nx == ny or nx in ny or ny in nx):
                return False
        return True

    pairs = agree = 0
    for s in derived.steps:
        twins = [
            t
            for t in reviewed
            if (t["before"], t["after"], t["scope"]) == (s["before"], s["after"], s["scope"])
            and same_kernels(s["before_kernel"], t["before_kernel"])
            and same_kernels(s["after_kernel"], t["after_kernel"])
        ]
        pairs += bool(twins)
        agree += any(t["addressed"] == s["addressed"] for t in twins)
    # every derived step is a reviewed one; the keywords agree with the review on all but the
    # three steps where the change adds __syncthreads (F12-2/3) or names it only in the
    # baseline's clause (F14-2)
    assert pairs == len(derived.steps) == len(reviewed) - 1  # F07's span step is reviewed only
    assert agree >= pairs - 3


@pytest.mark.parametrize("form", ["reviewed", "derived"])
def test_the_benchmark_runs_on_derived_steps(tuning_families: Path, form: str) -> None:
    steps, derived, missing = bench.plan_steps(tuning_families, bench.STEPS, form == "derived")
    assert not missing
    assert (derived == 0) == (form == "reviewed")
    first = next(s for s in steps if s["family"] == "F15")
    bench.MANIFEST_GPU.update(bench.read_manifest_gpus(tuning_families))
    result = bench.score(first, tuning_families, True)
    assert result.measured is not None and result.ours is not None
