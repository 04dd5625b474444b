#!/usr/bin/env bash
# Builds tools/dev/gemm_probe.cu for the H200 (sm_90a) into build/dev/ and
# keeps ptxas's register / shared-memory report next to it. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
mkdir -p build/dev
"$cuda/bin/nvcc" -O3 -std=c++17 -arch=sm_90a -lineinfo -Xptxas -v \
  -I src/codegen/prelude tools/dev/gemm_probe.cu -o build/dev/gemm_probe \
  -lcublas 2>&1 | tee build/dev/gemm_probe.ptxas.log |
  grep -E "error|warning|gemm_f16_kernel|Used" | grep -B1 -A0 "Used" |
  grep -A1 "gemm_f16_kernel" | grep -E "Function properties|Used" || true
echo "built build/dev/gemm_probe (ptxas report: build/dev/gemm_probe.ptxas.log)"
