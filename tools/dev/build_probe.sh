#!/usr/bin/env bash
# Builds tools/dev/gemm_probe.cu for the H200 (sm_90a) into build/dev/ and
# keeps ptxas's register / shared-memory report next to it. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
mkdir -p build/dev
log=build/dev/gemm_probe.ptxas.log
if ! "$cuda/bin/nvcc" -O3 -std=c++17 -arch=sm_90a -lineinfo -Xptxas -v \
  -I src/codegen/prelude tools/dev/gemm_probe.cu -o build/dev/gemm_probe \
  -lcublas >"$log" 2>&1; then
  grep -E "error" -A3 "$log" | head -40
  echo "build failed (full log: $log)" >&2
  exit 1
fi
# One line per kernel: template arguments, registers, spills.
grep -E "Function properties for .*gemm_f16_kernel|spill stores|Used [0-9]+ registers" "$log" |
  grep -A2 "gemm_f16_kernel" | grep -v "^--" | paste - - - |
  perl -ne 'print "$1x$2x$3 w$4x$5 s$6 p$7 fragpipe=$8 smem_epilogue=$9: spill $10 B, regs $11\n" if /gemm_f16_kernelILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELb([01])ELb([01]).*?(\d+) bytes spill stores.*Used (\d+) registers/'
echo "built build/dev/gemm_probe (ptxas report: $log)"
