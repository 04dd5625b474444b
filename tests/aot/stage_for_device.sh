#!/usr/bin/env bash
# Copies the AOT GPU checks' binaries into .probe/aot (git-ignored, about
# 11 MB) with the shared libraries a bare GPU machine lacks (Abseil, gtest),
# for tests/aot/run_on_device.sh there.
#   tests/aot/stage_for_device.sh [build/release]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
out=.probe/aot
rm -rf "$out"
mkdir -p "$out/libs"
for b in aot_quickstart aot_quickstart_jit aot_gpu_test; do
  cp "$build/tests/aot/$b" "$out/"
  ldd "$build/tests/aot/$b" | awk '/libabsl|libgtest|libgmock/ {print $3}' |
    xargs -r -I{} cp -L {} "$out/libs/"
done
cp tests/aot/run_on_device.sh "$out/"
echo "staged $(du -sh "$out" | cut -f1) in $out: run $out/run_on_device.sh on the GPU"
