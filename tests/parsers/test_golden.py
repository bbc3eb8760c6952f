"""Golden normalised output.

The project's own samples are compared in full; a representative real file of each format and
mode is compared by fingerprint (see tests/golden.py: counts, aggregates and hashes, no content).
Regenerate on purpose with ``UPDATE_GOLDEN=1 python -m pytest tests/parsers/test_golden.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import parsers
from tests import golden

REAL_SUBSET = [
    "csv/magus_nvprof/gtx1080ti/matrixMul_trace.csv",  # nvprof gpu-trace, CUDA 8 header
    "csv/magus_nvprof/gtx1080ti/matrixMul_metrics.csv",  # nvprof --metrics summary
    "csv/nanzifan_nvprof_titanxp/cfd_csv/print-gpu-summary.csv",  # summary + unified memory
    "csv/nanzifan_nvprof_titanxp/cfd_csv/print-gpu-trace.csv",  # CUDA 9 trace with UM rows
    "csv/amaris_bspgpusync_k40/backprop-11264.csv",  # per-launch metric trace
    "csv/amaris_gpuperfpredict/logs_run_0/dotProd-traces.csv",  # repeated blocks
    "csv/amaris_gpuperfpredict/logs_run_0/matMul_gpu_sharedmem-kernel-traces.csv",  # headerless
    "csv/nanzifan_nvprof_titanxp/text_mode/BabelStream_print-gpu-trace.txt",  # nvprof text
    "csv/xgc_summit_v100_text/report-xgc-cab-nvprof.txt",  # nvprof text summary
    "csv/xgc_summit_v100_text/cabana-main-kernel.txt",  # nvprof text metrics excerpt
    "csv/amaris_bspgpu/gt-630/times1_nvprof_raw/matMul-Gm-SP.txt",  # CUDA 5 text, many runs
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv",
    "csv/llmperfopt_rtx5090/ncu/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3/ncu.details.csv",
    "csv/llmperfopt_rtx5090/nsys/per-stage_decode_summary_cuda_gpu_kern_sum.csv",
    "csv/amaris_bspgpu/gt-630/matMul-Gm-SP.txt",  # derived timing table
    "csv/amaris_gpuperfpredict/datasets/bpnn_layerforward_CUDA-GTX-680.csv",  # R dataset
    "reports/GPU_ML/timeline.nvvp",  # nvprof database
    "reports/CudaProgramming/streamSimple.sqlite",  # nsys SQLite export
]

SAMPLES = sorted(
    p.name for p in (Path(__file__).resolve().parents[2] / "sample_profiles").glob("synthetic_*")
)


def _golden_name(prefix: str, rel: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9]+", "_", rel).strip("_")


@pytest.mark.parametrize("rel", REAL_SUBSET)
def test_real_profile_fingerprint(real_profiles: Path, rel: str) -> None:
    profile = parsers.read(real_profiles / rel)
    golden.check(_golden_name("real/", rel), golden.fingerprint(profile))


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_full_normalised_output(samples: Path, name: str) -> None:
    profile = parsers.read(samples / name)
    golden.check(_golden_name("samples/", name), golden.full(profile))


def test_samples_exist() -> None:
    assert len(SAMPLES) >= 10
