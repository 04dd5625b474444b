#!/usr/bin/env bash
# Builds tools/dev/hopper_gemm_probe.cu for the H200 (sm_90a) into build/dev/
# and keeps ptxas's register report next to it. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
mkdir -p build/dev
log=build/dev/hopper_gemm_probe.ptxas.log
if ! "$cuda/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v \
  tools/dev/hopper_gemm_probe.cu -o build/dev/hopper_gemm_probe \
  -lcublas -L"$cuda/lib64/stubs" -lcuda >"$log" 2>&1; then
  grep -E "error" -A3 "$log" | head -40
  echo "build failed (full log: $log)" >&2
  exit 1
fi
grep -E "registers|spill" "$log" | sort | uniq -c | head -20
echo "built build/dev/hopper_gemm_probe (ptxas report: $log)"
