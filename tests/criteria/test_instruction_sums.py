"""Per-instruction data filling criteria whose kernel-level counters are missing
(advisor.criteria.engine.instruction_sums, parsers.ncu.source_counters.criterion_sums;
docs/criteria.md "Per-instruction recipes").

The sums and the recipes are checked on a stand-in ``ncu_report`` action with hand-computed
values; the decoding of the access codes and the recipes' effect on the real reports under
../shared.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import parsers
from advisor.criteria import evaluate
from advisor.criteria.engine import instruction_sums
from advisor.criteria.engine.analysis import COMPUTED
from advisor.devices.resolve import resolve_device
from parsers.ncu import source_counters
from parsers.ncu.source_counters import SourceRef
from tests.criteria.test_criteria_engine import DEVICE, criterion, launch, make_profile, metric


class _Ids:
    def __init__(self, pcs: list[int]) -> None:
        self._pcs = pcs

    def as_uint64(self, i: int) -> int:
        return self._pcs[i]


class _Metric:
    """An instanced metric of ``ncu_report``: one value per PC."""

    def __init__(self, by_pc: dict[int, float]) -> None:
        self._pcs, self._values = list(by_pc), list(by_pc.values())

    def has_correlation_ids(self) -> bool:
        return True

    def correlation_ids(self) -> _Ids:
        return _Ids(self._pcs)

    def num_instances(self) -> int:
        return len(self._pcs)

    def has_value(self) -> bool:
        return True

    def as_double(self, i: int | None = None) -> float:
        """One instance's value; without ``i`` the aggregate (the kernel total)."""
        return float(sum(self._values)) if i is None else self._values[i]


class _Action:
    def __init__(self, metrics: dict[str, dict[int, float]]) -> None:
        self._metrics = metrics

    def metric_names(self) -> list[str]:
        return list(self._metrics)

    def metric_by_name(self, name: str) -> _Metric | None:
        return _Metric(self._metrics[name]) if name in self._metrics else None


# PC: 0 a 128-bit global load, 16 a 32-bit global store, 32 a shared load, 48 a global atomic
# (access type 8), 64 a local store, 80 an ALU instruction (no memory codes)
CODES = {
    "memory_type": {0: 4.0, 16: 4.0, 32: 16.0, 48: 4.0, 64: 8.0},
    "memory_access_type": {0: 2.0, 16: 4.0, 32: 2.0, 48: 8.0, 64: 4.0},
    "memory_access_size_type": {0: 128.0, 16: 32.0, 32: 32.0, 48: 32.0, 64: 64.0},
}


def _action(lanes: dict[int, float], inst: dict[int, float], **more: dict[int, float]) -> _Action:
    return _Action(
        {
            **CODES,
            "thread_inst_executed_true": lanes,
            "inst_executed": inst,
            **more,
        }
    )


def _ref(action: _Action, launch_id: int = 0) -> SourceRef:
    return SourceRef("hand.ncu-rep", 0, launch_id, "k", handle=(None, action))


LANES = {0: 320.0, 16: 640.0, 32: 32.0, 48: 32.0, 64: 32.0, 80: 1000.0}
INST = {0: 10.0, 16: 20.0, 32: 1.0, 48: 1.0, 64: 1.0, 80: 100.0}


def test_requested_bytes_weigh_each_global_access_by_its_width_and_active_lanes() -> None:
    sums = source_counters.criterion_sums(_ref(_action(LANES, INST)))
    # loads: only PC 0 (global, load): 320 lanes x 128 bits / 8 = 5120 B; the shared load,
    # the atomic and the local store are left out.  Stores: PC 16: 640 lanes x 4 B = 2560 B
    assert sums["source.global_load_requested_bytes"] == 5120.0
    assert sums["source.global_store_requested_bytes"] == 2560.0
    assert sums["source.thread_inst_executed_true"] == 320 + 640 + 32 + 32 + 32 + 1000
    assert sums["source.inst_executed"] == 10 + 20 + 1 + 1 + 1 + 100
    assert "source.memory_l1_wavefronts_shared" not in sums  # not in the report: absent


def test_without_the_access_codes_no_requested_bytes_are_given() -> None:
    action = _Action({"thread_inst_executed_true": LANES, "inst_executed": INST})
    sums = source_counters.criterion_sums(_ref(action))
    assert "source.global_load_requested_bytes" not in sums
    assert sums["source.inst_executed"] == 133.0


def _granularity_profile(launches: int = 1) -> Any:
    # per launch: 10 global load requests, 0 stores, 160 L1 / L2 sectors (loads), 0 stores
    rows = []
    for lid in range(launches):
        for name, value in (
            ("global_load_requests", 10.0),
            ("global_store_requests", 0.0),
            ("gld_transactions", 160.0),
            ("gst_transactions", 0.0),
            ("l2_tex_read_transactions", 160.0),
            ("l2_tex_write_transactions", 0.0),
            ("warp_execution_efficiency", 1.0),
            ("memory_l1_wavefronts_shared_ideal", 0.0),
            ("memory_l1_wavefronts_shared", 0.0),
        ):
            rows.append(metric(lid, name, value))
    return make_profile([launch(lid, 1000.0) for lid in range(launches)], rows)


def test_granularity_reads_the_access_widths_instead_of_the_word_estimate() -> None:
    profile = _granularity_profile()
    before = criterion(evaluate(profile, DEVICE), "L1_GRANULARITY")
    # Decision G2: 4 sectors x 10 requests / 160 sectors = 0.25 (float4 loads read low)
    assert before.value == pytest.approx(0.25)
    assert before.method.startswith("4 sectors per global request")
    # the 10 loads are float4 loads of 32 lanes: 10 x 32 x 16 B = 5120 B = 160 sectors' worth
    action = _Action(
        {
            "memory_type": {0: 4.0},
            "memory_access_type": {0: 2.0},
            "memory_access_size_type": {0: 128.0},
            "thread_inst_executed_true": {0: 320.0},
            "inst_executed": {0: 10.0},
        }
    )
    profile.instruction_sources = {0: _ref(action)}
    analysis = evaluate(profile, DEVICE)
    for name, level in (("L1_GRANULARITY", "L1"), ("L2_GRANULARITY", "L2")):
        after = criterion(analysis, name)
        assert after.status == COMPUTED
        assert after.value == pytest.approx(1.0)  # 5120 B / (32 B x 160)
        assert after.method == (
            f"requested bytes from each instruction's access width / (32 B x {level} sectors)"
        )
        assert after.inputs["source.global_load_requested_bytes"] == 5120.0
        assert any("per-instruction counters" in n for n in after.notes)


def test_divergence_and_shared_efficiency_from_the_sums_when_the_kernel_has_no_counters() -> None:
    profile = make_profile([launch(0, 1000.0)], [metric(0, "gpu_time_duration", 1000.0)])
    wavefronts = {
        "memory_l1_wavefronts_shared_ideal": {32: 1.0},
        "memory_l1_wavefronts_shared": {32: 4.0},
    }
    profile.instruction_sources = {0: _ref(_action(LANES, INST, **wavefronts))}
    analysis = evaluate(profile, DEVICE)
    divergence = criterion(analysis, "DIVERGENCE")
    assert divergence.status == COMPUTED
    # 2056 predicated-on lanes / (32 x 133 warp instructions)
    assert divergence.raw_value == pytest.approx(2056 / (32 * 133))
    assert "summed over the instructions" in divergence.method
    shmem = criterion(analysis, "SHMEM_EFFICIENCY")
    assert shmem.raw_value == pytest.approx(0.25)  # 1 ideal / 4 actual wavefronts
    assert "summed over the instructions" in shmem.method


def test_only_kernels_that_need_the_sums_read_them(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []

    def reader(ref: SourceRef, wanted: frozenset[str]) -> dict[str, float]:
        assert wanted == {
            "source.global_load_requested_bytes",
            "source.global_store_requested_bytes",
        }
        read.append(ref.action_index)
        return {}

    monkeypatch.setattr(source_counters, "criterion_sums", reader)
    # every criterion with a per-instruction recipe has its kernel-level counters: nothing read
    full = make_profile(
        [launch(0, 1000.0)],
        [
            metric(0, n, v)
            for n, v in (
                ("global_load_requested_bytes", 512.0),
                ("global_store_requested_bytes", 0.0),
                ("gld_transactions", 16.0),
                ("gst_transactions", 0.0),
                ("l2_tex_read_transactions", 16.0),
                ("l2_tex_write_transactions", 0.0),
                ("warp_execution_efficiency", 1.0),
                ("memory_l1_wavefronts_shared_ideal", 1.0),
                ("memory_l1_wavefronts_shared", 1.0),
            )
        ],
    )
    full.instruction_sources = {0: _ref(_Action({}), 0)}
    evaluate(full, DEVICE)
    assert read == []
    # the word estimate is used on 12 launches: the first LAUNCHES_MAX are read, in order
    profile = _granularity_profile(12)
    profile.instruction_sources = {lid: _ref(_Action({}), lid) for lid in range(12)}
    evaluate(profile, DEVICE)
    assert read == list(range(instruction_sums.LAUNCHES_MAX))


# -- the real reports --


@pytest.mark.parametrize(
    "path",
    [
        "real_profiles/reports/CUDA_Learning/shared_report.ncu-rep",
        *(
            f"tuning_families/cranberryyan/Elementwise/build/app/elementwise_relu_{v}.ncu-rep"
            for v in ("baseline", "v1", "v2", "v3")
        ),
    ],
)
def test_requested_bytes_of_coalesced_kernels_equal_ncus_ideal_sectors(
    real_profiles: Path, tuning_families: Path, ncu_module: ModuleType, path: str
) -> None:
    """Kernels whose global accesses are whole aligned warps of 4 B words: the requested bytes
    from the decoded access codes are exactly 32 B x Nsight Compute's ideal sector count."""
    profile = parsers.read(str(real_profiles.parent / path))
    checked = 0
    for lid, ref in sorted(profile.instruction_sources.items()):
        sums = source_counters.criterion_sums(ref)
        rows = profile.metrics[profile.metrics["launch_id"] == lid]
        ideal = rows[rows["metric"] == "memory_l2_theoretical_sectors_global_ideal"]["value"]
        requested = (
            sums["source.global_load_requested_bytes"] + sums["source.global_store_requested_bytes"]
        )
        assert requested == 32 * float(ideal.iloc[0]), (path, ref.kernel)
        checked += 1
    assert checked


def test_ray_tracer_kernels_are_scored_from_their_instructions(
    real_profiles: Path, ncu_module: ModuleType
) -> None:
    """gpu-ray-tracer/report.ncu-rep has no kernel-level divergence or requested-byte counter:
    DIVERGENCE comes from the per-instruction lanes (before: not computable) and the
    granularity from each access's width (before: 4 sectors per request), and the lanes summed
    over the instructions are the report's own kernel totals."""
    profile = parsers.read(str(real_profiles / "reports/gpu-ray-tracer/report.ncu-rep"))
    analysis = evaluate(profile, resolve_device(profile, None))
    metrics = profile.metrics
    scored = 0
    for kernel in analysis.kernels:
        by_name = {c.name: c for c in kernel.criteria}
        divergence = by_name["DIVERGENCE"]
        lids = profile.launches[profile.launches["name"] == kernel.name]["launch_id"].tolist()
        if not any(lid in profile.instruction_sources for lid in lids):
            assert divergence.status != COMPUTED  # no per-instruction data: as before
            continue
        scored += 1
        assert divergence.status == COMPUTED, kernel.name
        assert "summed over the instructions" in divergence.method
        rows = metrics[metrics["launch_id"].isin(lids[: instruction_sums.LAUNCHES_MAX])]
        total = rows.groupby("metric", observed=True)["value"].sum()
        lanes = divergence.inputs["source.thread_inst_executed_true"]
        assert divergence.inputs["source.inst_executed"] > 0
        if divergence.launches_used == 1:  # the inputs are that launch's sums
            assert lanes == total["thread_inst_executed_true"]
        for name in ("L1_GRANULARITY", "L2_GRANULARITY"):
            assert by_name[name].method.startswith("requested bytes from each instruction"), (
                kernel.name,
                name,
                by_name[name].method,
            )
    assert scored == 2  # build_meshes and build_lights; trace has no SourceCounters
