#!/usr/bin/env bash
# Profile the four matrix-multiplication variants of seed 000 with Nsight Compute and Nsight Systems.
# Needs an NVIDIA GPU, nvcc, ncu and nsys on PATH.  Writes profiles/ beside this script:
#   profiles/matmul-VARIANT.ncu-rep          ncu --set full report (read by cuda-advisor with
#                                             `pip install 'cuda-advisor[ncu]'`)
#   profiles/matmul-VARIANT.ncu-raw.csv      the same report as ncu's raw CSV page
#   profiles/matmul-VARIANT.nsys-rep         an Nsight Systems timeline (no kernel replay)
#   profiles/matmul-VARIANT_cuda_gpu_trace.csv, _cuda_gpu_kern_sum.csv, _cuda_api_sum.csv
# usage: ./profile.sh [SIZE]     SIZE: N x N matrices (default 1024); variants: gm-un gm sm-un sm
set -euo pipefail
cd "$(dirname "$0")"
SIZE="${1:-1024}"
make
mkdir -p profiles
for variant in gm-un gm sm-un sm; do
  out="profiles/matmul-$variant"
  ncu --set full --force-overwrite -o "$out" ./matmul "$variant" "$SIZE"
  ncu --import "$out.ncu-rep" --csv --page raw > "$out.ncu-raw.csv"
  nsys profile --trace=cuda --force-overwrite true -o "$out" ./matmul "$variant" "$SIZE"
  nsys stats --report cuda_gpu_trace,cuda_gpu_kern_sum,cuda_api_sum --format csv \
    --force-export=true --output "$out" "$out.nsys-rep"
done
# Analyse one version (kernel metrics from ncu, the timeline from nsys), optionally with a
# measured device characterization (cuda-advisor microbench run && cuda-advisor microbench fit):
#   cuda-advisor report profiles/matmul-gm-un.ncu-raw.csv profiles/matmul-gm-un_cuda_gpu_trace.csv \
#     --device device.json -o matmul-gm-un.html --json matmul-gm-un.json
# Compare the versions (the tuning iterations of the papers):
#   cuda-advisor compare --version gm-un=profiles/matmul-gm-un.ncu-raw.csv,profiles/matmul-gm-un_cuda_gpu_trace.csv \
#     ... --version sm=profiles/matmul-sm.ncu-raw.csv,profiles/matmul-sm_cuda_gpu_trace.csv
echo "profiles written to $(pwd)/profiles"
