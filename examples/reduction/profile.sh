#!/usr/bin/env bash
# Profile the three parallel-reduction versions of seed 002 with Nsight Compute and Nsight Systems.
# Needs an NVIDIA GPU, nvcc, ncu and nsys on PATH.  Writes profiles/ beside this script:
#   profiles/reduction-VARIANT.ncu-rep          ncu --set full report (read by cuda-advisor with
#                                             `pip install 'cuda-advisor[ncu]'`)
#   profiles/reduction-VARIANT.ncu-raw.csv      the same report as ncu's raw CSV page
#   profiles/reduction-VARIANT.nsys-rep         an Nsight Systems timeline (no kernel replay)
#   profiles/reduction-VARIANT_cuda_gpu_trace.csv, _cuda_gpu_kern_sum.csv, _cuda_api_sum.csv
# usage: ./profile.sh [SIZE]     SIZE: elements (default 16777216); variants: v1 v2 v3
set -euo pipefail
cd "$(dirname "$0")"
SIZE="${1:-16777216}"
make
mkdir -p profiles
for variant in v1 v2 v3; do
  out="profiles/reduction-$variant"
  ncu --set full --force-overwrite -o "$out" ./reduction "$variant" "$SIZE"
  ncu --import "$out.ncu-rep" --csv --page raw > "$out.ncu-raw.csv"
  nsys profile --trace=cuda --force-overwrite true -o "$out" ./reduction "$variant" "$SIZE"
  nsys stats --report cuda_gpu_trace,cuda_gpu_kern_sum,cuda_api_sum --format csv \
    --force-export=true --output "$out" "$out.nsys-rep"
done
# Analyse one version (kernel metrics from ncu, the timeline from nsys), optionally with a
# measured device characterization (cuda-advisor microbench run && cuda-advisor microbench fit):
#   cuda-advisor report profiles/reduction-v1.ncu-raw.csv profiles/reduction-v1_cuda_gpu_trace.csv \
#     --device device.json -o reduction-v1.html --json reduction-v1.json
# Compare the versions (the tuning iterations of the papers):
#   cuda-advisor compare --version v1=profiles/reduction-v1.ncu-raw.csv,profiles/reduction-v1_cuda_gpu_trace.csv \
#     ... --version v3=profiles/reduction-v3.ncu-raw.csv,profiles/reduction-v3_cuda_gpu_trace.csv
echo "profiles written to $(pwd)/profiles"
