#!/usr/bin/env bash
# Profile the three matrix-transpose versions of seed 002 with Nsight Compute and Nsight Systems.
# Needs an NVIDIA GPU, nvcc, ncu and nsys on PATH.  Writes profiles/ beside this script:
#   profiles/transpose-VARIANT.ncu-rep          ncu --set full report (read by cuda-advisor with
#                                             `pip install 'cuda-advisor[ncu]'`)
#   profiles/transpose-VARIANT.ncu-raw.csv      the same report as ncu's raw CSV page
#   profiles/transpose-VARIANT.nsys-rep         an Nsight Systems timeline (no kernel replay)
#   profiles/transpose-VARIANT_cuda_gpu_trace.csv, _cuda_gpu_kern_sum.csv, _cuda_api_sum.csv
# usage: ./profile.sh [SIZE]     SIZE: N x N matrix (default 4096); variants: naive shared padded
set -euo pipefail
cd "$(dirname "$0")"
SIZE="${1:-4096}"
make
mkdir -p profiles
for variant in naive shared padded; do
  out="profiles/transpose-$variant"
  ncu --set full --force-overwrite -o "$out" ./transpose "$variant" "$SIZE"
  ncu --import "$out.ncu-rep" --csv --page raw > "$out.ncu-raw.csv"
  nsys profile --trace=cuda --force-overwrite true -o "$out" ./transpose "$variant" "$SIZE"
  nsys stats --report cuda_gpu_trace,cuda_gpu_kern_sum,cuda_api_sum --format csv \
    --force-export=true --output "$out" "$out.nsys-rep"
done
# Analyse one version (kernel metrics from ncu, the timeline from nsys), optionally with a
# measured device characterization (cuda-advisor microbench run && cuda-advisor microbench fit):
#   cuda-advisor report profiles/transpose-naive.ncu-raw.csv profiles/transpose-naive_cuda_gpu_trace.csv \
#     --device device.json -o transpose-naive.html --json transpose-naive.json
# Compare the versions (the tuning iterations of the papers):
#   cuda-advisor compare --version naive=profiles/transpose-naive.ncu-raw.csv,profiles/transpose-naive_cuda_gpu_trace.csv \
#     ... --version padded=profiles/transpose-padded.ncu-raw.csv,profiles/transpose-padded_cuda_gpu_trace.csv
echo "profiles written to $(pwd)/profiles"
