"""MAX / SUM kernel-time model (seed 001 §3, MODELS.md §4): formulas, the paper's numbers, the
kernel-description reader, ``predict maxsum`` and the GTX 295 regression guard.

Hand computations are in the comment above each assertion.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from advisor.cli.access import maxsum_command
from advisor.errors import InputError, UsageError
from advisor.models import maxsum
from advisor.models.maxsum import (
    CostTerm,
    GpuParams,
    KernelModel,
    ThreadCost,
    bounds_verdict,
    compute_cycles,
    global_access_cycles,
    kernel_cycles,
    kernel_time_s,
    predict_kernel,
    predict_program,
    shared_access_cycles,
    table_for,
)
from advisor.models.maxsum import description as maxsum_input

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "sample_profiles" / "kernels"
GTX280 = GpuParams(name="GTX 280", clock_hz=1.3e9, cores_per_sm=8, pipeline_depth=4)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(maxsum_command, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, doc: Any, name: str = "k.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def gt200(**kernel: Any) -> dict[str, Any]:
    base = {"name": "k", "blocks_per_sm": 1, "warps_per_block": 1}
    return {
        "gpu": {"compute_capability": "1.3", "clock_hz": 1e9, "cores_per_sm": 8},
        "kernels": [base | kernel],
    }


# --- formulas -------------------------------------------------------------------------------------


def test_op_cycle_table_gt200() -> None:
    table = table_for("GT200")
    assert table is not None and table is table_for("1.3") and table is table_for("1.2")
    # seed 001 §3.2.1/§3.5: 4 (int add), 16 (32-bit int mul), 48 (int modulus); D = 4 (§2)
    assert (table.ops["int_add"], table.ops["int_mul32"], table.ops["int_mod"]) == (4, 16, 48)
    assert table.pipeline_depth == 4
    assert (table.global_cycles, table.shared_cycles) == (500, 4)
    assert all(table.sources[op] for op in table.ops)  # every value cites its source
    assert table_for("7.0") is None and table_for("1.1") is None  # no cited table: left out


def test_compute_cycles_seed_example() -> None:
    # seed 001 §3.2.1: "two integer additions and two multiplications ... 2·4 + 2·16 = 72
    # cycles".  The per-op values are the paper's; the sum it prints is a slip: 8 + 32 = 40.
    table = table_for("GT200")
    assert table is not None
    assert compute_cycles({"int_add": 2, "int_mul32": 2}, table.ops) == 40
    with pytest.raises(ValueError, match="no cycle count for operation"):
        compute_cycles({"fp64_div": 1}, table.ops)


def test_global_access_cost() -> None:
    assert global_access_cycles(1) == 500  # not coalesced: the paper's 500 cycles
    assert global_access_cycles(16) == pytest.approx(32.25)  # (500 + 16) / 16
    assert global_access_cycles(2) == pytest.approx(251)  # (500 + 2) / 2
    assert global_access_cycles(4, latency_cycles=400) == pytest.approx(101)  # (400 + 4) / 4


def test_shared_access_cost() -> None:
    assert shared_access_cycles(1) == 4
    assert shared_access_cycles(16) == 64  # 4k for a 16-way conflict
    assert shared_access_cycles(0) == 4  # no conflict counts as one access


def test_max_and_sum_of_a_thread() -> None:
    thread = ThreadCost("t", (CostTerm("op", "int_add", 3, 4), CostTerm("global", "g", 2, 500)))
    # N_comp = 3·4 = 12, N_mem = 2·500 = 1000; MAX = 1000, SUM = 1012
    assert (thread.compute_cycles, thread.memory_cycles) == (12, 1000)
    assert (thread.max_cycles, thread.sum_cycles) == (1000, 1012)


def test_kernel_cycles_and_time() -> None:
    # C(K) = 2·4·32·100 / (8·4) = 800 cycles; at 1 GHz 800 ns
    assert kernel_cycles(2, 4, 32, 100, 8, 4) == 800
    assert kernel_time_s(800, 1e9) == pytest.approx(8e-7)
    with pytest.raises(ValueError):
        kernel_cycles(1, 1, 32, 1, 0, 4)
    with pytest.raises(ValueError):
        kernel_time_s(1, 0)


def test_ct_is_the_max_over_thread_classes() -> None:
    light = ThreadCost("light", (CostTerm("compute", "c", 1, 100), CostTerm("memory", "m", 1, 50)))
    heavy = ThreadCost("heavy", (CostTerm("compute", "c", 1, 10), CostTerm("memory", "m", 1, 120)))
    kernel = KernelModel("k", 1, 1, 32, (light, heavy))
    bounds = predict_kernel(kernel, GTX280)
    # MAX: max(100, 120) = 120 (the heavy thread); SUM: max(150, 130) = 150 (the light one)
    assert (bounds.ct_max_cycles, bounds.ct_sum_cycles) == (120, 150)


def test_verdicts() -> None:
    assert bounds_verdict(None, 1, 2) is None
    assert bounds_verdict(1.5, 1, 2) == maxsum.BETWEEN
    assert bounds_verdict(1.0, 1, 2) == maxsum.BETWEEN  # the bounds themselves are inside
    assert bounds_verdict(0.5, 1, 2) == maxsum.BELOW_MAX
    assert bounds_verdict(3.0, 1, 2) == maxsum.ABOVE_SUM


def test_program_time_is_the_sum_over_kernels_and_launches() -> None:
    thread = ThreadCost("t", (CostTerm("compute", "c", 1, 32),))
    a = KernelModel("a", 1, 1, 32, (thread,), launches=3, measured_s=2e-9)
    b = KernelModel("b", 2, 1, 32, (thread,), measured_s=5e-9)
    gpu = GpuParams("g", clock_hz=1e9, cores_per_sm=8, pipeline_depth=4)
    p = predict_program([a, b], gpu)
    # a: 1·1·32·32/32 = 32 cycles = 32 ns per launch, × 3 = 96 ns; b: 2·32 = 64 ns
    assert p.total_max_s == pytest.approx(160e-9) and p.total_sum_s == pytest.approx(160e-9)
    # measured: 3·2 + 5 = 11 ns < 160 ns
    assert p.measured_s == pytest.approx(11e-9) and p.verdict == maxsum.BELOW_MAX


# --- the paper's own numbers ----------------------------------------------------------------------


def test_list_ranking_seed_example() -> None:
    # seed 001 §5.2, N = 2^22: N_B = ceil(2^22 / (22·512·30)) = 13, N_w = 16, N_t = 32,
    # C_T = 4·22·3·500 = 132,000; C(K) = 13·16·32·132000 / 32 = 27,456,000 cycles;
    # T = 27,456,000 / 1.3e9 = 21.12 ms ("≈ 21.0 millisecond" in the paper, 24 ms measured)
    desc = maxsum_input.load(KERNELS / "listRank-gtx280.json")
    (kernel,) = desc.kernels
    assert (kernel.blocks_per_sm, kernel.warps_per_block) == (13, 16)
    p = predict_program(desc.kernels, desc.gpu)
    assert p.total_max_s == pytest.approx(21.12e-3) and p.total_sum_s == pytest.approx(21.12e-3)
    assert p.verdict == maxsum.ABOVE_SUM  # the measured 24 ms is 14 % above both bounds


def test_matrix_multiplication_seed_equation() -> None:
    # seed 001 §5.1 equation at N = 128: (128^2 / (256·30))·8·32·(760·128/16) / (32·1.3e9)
    # = 2.1333·256·6080 / 41.6e9 = 79.8 µs.  The paper's text says "around 11 ms" (actual
    # 16 ms) at N = 128, which its own printed equation does not give.
    desc = maxsum_input.load(KERNELS / "matMul-gtx280.json")
    p = predict_program(desc.kernels, desc.gpu)
    assert p.total_max_s == pytest.approx(79.82e-6, rel=1e-3)
    # SUM adds N_mem = 240·128/16 = 1920: 8000 / 6080 × 79.82 µs = 105.0 µs
    assert p.total_sum_s == pytest.approx(105.03e-6, rel=1e-3)


def test_transpose_example_from_patterns() -> None:
    # no-bank-conflict transpose on GT200: N_comp = 2·4 (mul24) + 2·16 (mul32) + 4·4 (add)
    # = 56; N_mem = 2 × 32.25 (coalesced, k = 16) + 2 × 4 (degree 1) = 72.5.
    # N_B = ceil(65536 / 30) = 2185, N_w = 8: C(K) = 2185·8·32·72.5 / 32 = 1,267,300 cycles
    # -> 0.97786 ms at 1.296 GHz (MAX); SUM 128.5 -> 1.7332 ms.
    desc = maxsum_input.load(KERNELS / "transpose-gt200.json")
    p = predict_program(desc.kernels, desc.gpu)
    naive, tiled, padded = p.kernels
    assert padded.ct_max_cycles == 72.5 and padded.ct_sum_cycles == 128.5
    assert padded.time_max_s == pytest.approx(1267300 / 1.296e9)
    # the column read of the unpadded tile is a 16-way conflict: 64 instead of 4 cycles
    assert tiled.ct_max_cycles == 72.5 + 60
    # the naive write is not coalesced (k = 1): 500 instead of 32.25 cycles
    assert naive.ct_max_cycles == 32.25 + 500
    assert naive.time_max_s > tiled.time_max_s > padded.time_max_s


# --- kernel description reader --------------------------------------------------------------------


def test_reader_resolves_patterns_through_the_calculators(tmp_path: Path) -> None:
    doc = gt200(
        ops={"int_add": 1},
        **{"global": [{"count": 2, "stride": 2}], "shared": [{"count": 1, "stride": 16}]},
    )
    (kernel,) = maxsum_input.load(write(tmp_path, doc)).kernels
    terms = {t.kind: t for t in kernel.threads[0].terms}
    # stride 2 on cc 1.3: one 128 B transaction per half-warp, k = 16 -> 32.25 cycles
    assert terms["global"].count == 2 and terms["global"].cycles_each == pytest.approx(32.25)
    # stride 16 on 16 banks: 16-way -> 64 cycles
    assert terms["shared"].cycles_each == 64


def test_reader_single_kernel_at_top_level_and_blocks(tmp_path: Path) -> None:
    doc = {
        "gpu": {"arch": "GT200", "clock_hz": 1e9, "cores_per_sm": 8, "sm_count": 30},
        "name": "solo",
        "blocks": 61,
        "threads_per_block": 100,
        "compute_cycles": 10,
    }
    desc = maxsum_input.load(write(tmp_path, doc))
    (kernel,) = desc.kernels
    # N_B = ceil(61 / 30) = 3; N_w = ceil(100 / 32) = 4; D from the GT200 table = 4
    assert (kernel.name, kernel.blocks_per_sm, kernel.warps_per_block) == ("solo", 3, 4)
    assert desc.gpu.pipeline_depth == 4 and desc.gpu.arch == "GT200"


@pytest.mark.parametrize(
    "doc, needle",
    [
        (gt200(ops={"fp64_div": 1}), "no cycle count for fp64_div"),
        (gt200(bogus=1), "unknown key(s) bogus"),
        (gt200(**{"global": [{"count": 1}]}), "give a pattern"),
        (
            gt200(**{"global": [{"count": -1, "coalesced": False}]}),
            "global[0].count: value outside [0, 1e+15], got -1",
        ),
        (gt200(**{"shared": [{"count": 1, "index": "tid/2"}]}), "//"),
        (gt200(**{"global": [{"count": 1, "stride": 1, "word_bytes": 3}]}), "word size"),
        ({"gpu": {"cores_per_sm": 8}, "kernels": [{}]}, "gpu.clock_hz"),
        ({"gpu": {"clock_hz": 1e9, "cores_per_sm": 8, "compute_capability": "7.0"}}, "D only"),
        ({"gpu": {"clock_hz": 1e9, "cores_per_sm": 8, "arch": "Volta"}}, "no op-cycle table"),
        (
            {
                "gpu": {"clock_hz": 1e9, "cores_per_sm": 8, "pipeline_depth": 4},
                "blocks_per_sm": 1,
                "warps_per_block": 1,
                "shared": [{"count": 1, "stride": 1}],
            },
            "gpu.shared_cycles",
        ),
        (gt200(blocks_per_sm=float("nan")), "finite"),
        ([1, 2], "JSON object"),
    ],
)
def test_reader_errors_name_the_field(tmp_path: Path, doc: Any, needle: str) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(InputError) as info:
        maxsum_input.load(path)
    assert needle in str(info.value) and str(info.value).startswith(path)


def test_reader_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        maxsum_input.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json:2: not valid JSON"):
        maxsum_input.load(bad)


def test_device_entry_overrides_the_file(tmp_path: Path) -> None:
    device = types.SimpleNamespace(
        name="GeForce GTX 295",
        boost_clock_hz=1.242e9,
        sm_count=30,
        fp32_cores_per_sm=8,
        compute_capability="1.3",
        shared_banks=16,
    )
    doc = {"gpu": {"clock_hz": 1.0, "cores_per_sm": 1}, "blocks": 31, "warps_per_block": 1}
    desc = maxsum_input.load(write(tmp_path, doc), device)
    assert desc.gpu.clock_hz == 1.242e9 and desc.gpu.cores_per_sm == 8
    assert desc.kernels[0].blocks_per_sm == 2  # ceil(31 / 30)


def test_reader_thread_classes(tmp_path: Path) -> None:
    doc = gt200(
        threads=[
            {"name": "a", "compute_cycles": 100, "memory_cycles": 50},
            {"name": "b", "ops": {"int_mod": 1}, "global": [{"count": 1, "coalesced": False}]},
        ]
    )
    (kernel,) = maxsum_input.load(write(tmp_path, doc)).kernels
    # a: MAX 100, SUM 150; b: N_comp 48, N_mem 500 -> MAX 500, SUM 548
    a, b = kernel.threads
    assert (a.max_cycles, a.sum_cycles, b.max_cycles, b.sum_cycles) == (100, 150, 500, 548)
    bad = gt200(threads=[{"compute_cycles": 1}], compute_cycles=5)
    with pytest.raises(InputError, match="put compute_cycles in each thread class"):
        maxsum_input.load(write(tmp_path, bad, "bad.json"))


# --- predict maxsum command -----------------------------------------------------------------------


def test_command_text_output() -> None:
    code, out, _ = invoke("--kernel", str(KERNELS / "listRank-gtx280.json"))
    assert code == 0
    assert "global, not coalesced (given): 264 × 500 = 132000" in out
    assert "T(K)    MAX 21.12 ms  SUM 21.12 ms per launch; measured 24 ms: above SUM" in out


def test_command_json_and_measured_ms() -> None:
    code, out, _ = invoke(
        "--kernel", str(KERNELS / "matMul-gtx280.json"), "--measured-ms", "0.09", "--json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["total_max_ms"] == pytest.approx(0.07982, rel=1e-3)
    assert doc["measured_ms"] == 0.09 and doc["verdict"] == "between"
    assert doc["kernels"][0]["threads"][0]["compute_cycles"] == 6080


def test_command_measured_from_a_profile(tmp_path: Path, samples: Path) -> None:
    doc = {
        "gpu": {"clock_hz": 1.53e9, "cores_per_sm": 64, "pipeline_depth": 1},
        "kernels": [
            {"name": "naive", "profile_name": "transposeNaive", "blocks_per_sm": 205,
             "warps_per_block": 8, "compute_cycles": 100, "memory_cycles": 400},
            {"name": "absent", "blocks_per_sm": 1, "warps_per_block": 1, "compute_cycles": 1},
        ],
    }  # fmt: skip
    path = write(tmp_path, doc)
    trace = str(samples / "synthetic_nvprof_gputrace.csv")
    code, out, _ = invoke("--kernel", path, "--profile", trace, "--json")
    assert code == 0
    result = json.loads(out)
    # the three transposeNaive launches of the synthetic trace average 413.536 µs
    assert result["kernels"][0]["measured_ms"] == pytest.approx(0.413536)
    assert result["kernels"][1]["measured_ms"] is None
    assert any("no kernel named like 'absent'" in n for n in result["notes"])


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (("--kernel", "/nonexistent/k.json"), 3, "no such file"),
        (("--kernel", str(KERNELS / "listRank-gtx280.json"), "--measured-ms", "-1"), 2, "> 0"),
    ],
)
def test_command_errors_are_one_line(args: tuple[str, ...], code: int, needle: str) -> None:
    got, _, err = invoke(*args)
    assert got == code
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("cuda-advisor: error: ") and needle in lines[0]


def test_command_gpu_from_the_device_database(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("advisor.devices.database")

    def find_device(name: str) -> Any:
        if name != "GTX 280":
            raise UsageError(f"unknown GPU {name!r}")
        return types.SimpleNamespace(
            name="GeForce GTX 280", boost_clock_hz=1.296e9, sm_count=30,
            fp32_cores_per_sm=8, compute_capability="1.3", shared_banks=16,
        )  # fmt: skip

    fake.find_device = find_device  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "advisor.devices.database", fake)
    listrank = str(KERNELS / "listRank-gtx280.json")
    code, out, _ = invoke("--kernel", listrank, "--gpu", "GTX 280", "--json")
    assert code == 0
    # same cycles at 1.296 GHz instead of 1.3: 27,456,000 / 1.296e9 = 21.185 ms
    assert json.loads(out)["total_max_ms"] == pytest.approx(21.185, rel=1e-4)
    code, _, err = invoke("--kernel", listrank, "--gpu", "nope")
    assert code == 2 and "nope" in err


def test_command_with_the_real_device_database() -> None:
    # GeForce GTX 280 in advisor/data/gpus.csv: 1296 MHz shader clock, 30 SMs × 8 cores, cc 1.3
    # -> 27,456,000 cycles / 1.296e9 = 21.185 ms
    listrank = str(KERNELS / "listRank-gtx280.json")
    code, out, _ = invoke("--kernel", listrank, "--gpu", "GeForce GTX 280", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["gpu"]["name"] == "GeForce GTX 280" and doc["gpu"]["op_cycle_table"] == "GT200"
    assert doc["total_max_ms"] == pytest.approx(21.185, rel=1e-4)
    # a Volta board has no cited op-cycle or latency table: the file must give them
    code, _, err = invoke("--kernel", listrank, "--gpu", "Tesla V100-SXM2-16GB")
    assert code == 3 and "add gpu.global_cycles" in err


# --- real data: matMul on a GTX 295 (GT200) -------------------------------------------------------


@pytest.mark.real_profiles
def test_gtx295_matmul_regression_guard(
    real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = REPO / "benchmarks" / "maxsum_gtx295.py"
    spec = importlib.util.spec_from_file_location("maxsum_gtx295", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    points = module.reproduce(real_profiles)
    by = {(p.variant, p.n): p for p in points}
    assert len(points) == 28
    # shared-memory, coalesced: the MAX bound is within -0.2 % .. +21 % of the measured time,
    # within 2 % from N = 512 on (shared-load bound: 32 loads × 4 cycles per tile step)
    sm = [by["matMul-Sm-SP", 2**e] for e in range(7, 14)]
    assert all(0.99 <= p.ratio_to_max <= 1.25 for p in sm)
    assert all(abs(p.ratio_to_max - 1) < 0.02 for p in sm[2:])
    # global-memory, coalesced: between the bounds from N = 256 on
    assert all(by["matMul-Gm-SP", 2**e].verdict == "between" for e in range(8, 14))
    # the uncoalesced variants are where a latency-only model fails: above SUM at large N
    assert by["matMul-Gm-Un-SP", 8192].verdict == "above_sum"
    assert by["matMul-Sm-Un-SP", 8192].verdict == "above_sum"
    assert sum(p.verdict == "between" for p in points) == 11
