#!/usr/bin/env bash
# Copies what tools/dev/device_final.sh runs into .probe/stage/build, laid
# out as the build folder is (so bench/run_all.py --build works there), with
# the Abseil libraries the GPU machine lacks. .probe is git-ignored; pass it
# to the device tool in `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=build/release
tools/bundle-runtime-libs.sh "$b" >/dev/null
dst=.probe/stage/build
rm -rf .probe/stage && mkdir -p "$dst"
cd "$b"
cp --parents tests/*/*gpu_test tests/codegen/tessel_gemm_bench \
   bench/cublas_gemm bench/jit_bench \
   samples/{gemm,splitk_gemm,linear_attention,flash_attention} \
   samples/{rmsnorm,layernorm,softmax,tessel-demo} "../../$dst/"
cp -r runtime-libs "../../$dst/"
cd ../..
du -sh .probe/stage
