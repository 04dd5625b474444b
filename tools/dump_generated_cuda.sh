#!/usr/bin/env bash
# Writes the generated CUDA (and NVRTC options) of every kernel in
# samples/kernels.json, every seed case and every IR test program, for sm_80
# and sm_90a, into OUT_DIR: one file per (kernel, arch), a failed lowering
# as its status text. For refactorings that must change nothing:
#
#   tools/dump_generated_cuda.sh /tmp/before     # on the base commit
#   tools/dump_generated_cuda.sh /tmp/after      # on the change
#   diff -r /tmp/before /tmp/after && echo identical
#
# BUILD_DIR (default build/release) is built for the dump target first.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: tools/dump_generated_cuda.sh OUT_DIR}"
build="${BUILD_DIR:-build/release}"
cmake --build "$build" --target tessel_dump_generated_cuda >/dev/null
rm -rf "$out"
"$build/tests/tools/tessel_dump_generated_cuda" samples/kernels.json "$out" \
  sm_80 sm_90a
