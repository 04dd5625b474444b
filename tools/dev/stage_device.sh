#!/usr/bin/env bash
# Copies the binaries tools/dev/device_final.sh runs, with the Abseil
# libraries the GPU machine lacks, into .probe/stage (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
b=build/release
tools/bundle-runtime-libs.sh "$b" >/dev/null
rm -rf .probe/stage && mkdir -p .probe/stage/bin
cp "$b"/tests/*/*gpu_test "$b"/tests/codegen/tessel_gemm_bench \
   "$b"/bench/cublas_gemm "$b"/samples/{gemm,splitk_gemm,linear_attention} \
   "$b"/samples/{flash_attention,rmsnorm,softmax,tessel-demo} .probe/stage/bin/
cp -r "$b/runtime-libs" .probe/stage/
du -sh .probe/stage
