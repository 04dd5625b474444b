#!/usr/bin/env bash
# Copies what tools/dev/device_final.sh and session8_*.sh run into
# .probe/stage/build, laid out as the build folder is (so bench/run_all.py
# --build works there), with the Abseil libraries the GPU machine lacks.
# .probe is git-ignored; pass it to the device tool in `carry`.
# The whole stage is over the device tool's 64 MiB carry; name the binaries
# a call runs to stage only those (and the libraries):
#   tools/dev/stage_device.sh samples/gemm bench/cublas_gemm
set -euo pipefail
cd "$(dirname "$0")/../.."
b=build/release
tools/bundle-runtime-libs.sh "$b" >/dev/null
dst=.probe/stage/build
rm -rf .probe/stage && mkdir -p "$dst"
cd "$b"
if (($#)); then
  cp --parents "$@" "../../$dst/"
  cp -r runtime-libs "../../$dst/"
  cd ../..
  du -sh .probe/stage
  exit 0
fi
cp --parents tests/*/*gpu_test tests/codegen/tessel_gemm_bench \
   bench/cublas_gemm bench/jit_bench \
   samples/{gemm,splitk_gemm,linear_attention,flash_attention} \
   samples/{rmsnorm,layernorm,softmax,tessel-demo} "../../$dst/"
cp -r runtime-libs "../../$dst/"
cd ../..
# The quickstart as a user builds it: from the installed package
# (tools/check-quickstart.sh's steps), run there with --target=gpu.
qs=$(mktemp -d)
cmake --install "$b" --prefix "$qs/prefix" >/dev/null
cmake -S "$qs/prefix/share/tessel/examples/quickstart" -B "$qs/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$qs/prefix" >/dev/null
cmake --build "$qs/build" >/dev/null
cp "$qs/build/quickstart" "$dst/"
rm -rf "$qs"
du -sh .probe/stage
