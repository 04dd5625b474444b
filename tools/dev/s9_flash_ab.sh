#!/usr/bin/env bash
# Session 9: A/B of the flash forward's scheduling choices on the H200
# (~80 s): causal --longest-first false / true at B8 S4096 H16 D128 (the
# overlapped device tile), H32 D64 and Hq32 Hkv8 D128; the variable-length
# forward with and without the overlap (its D128 default follows the dense
# one); the GPU sample cases of both against float64 first.
#   tools/dev/s9_flash_ab.sh .probe/stage/build   # writes $OUT/flash_ab
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/ab}/flash_ab
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
fa=$S/samples/flash_attention
run() {  # name, flags...
  local n=$1; shift
  timeout 60 "$fa" --backend=gpu "$@" >"$OUT/$n.log" 2>&1
  echo "$n rc=$? $(grep -h ' gpu ' "$OUT/$n.log" | tr -s ' ' | paste -sd'|')" >>"$OUT/table.txt"
}
TESSEL_REQUIRE_GPU=1 timeout 120 "$S/tests/samples/samples_gpu_test" \
  --gtest_filter='*longest_first*:*overlap*:*grid*' >"$OUT/gpu_test.log" 2>&1
echo "samples_gpu_test longest_first/overlap/grid rc=$? $(grep -c '\[       OK' "$OUT/gpu_test.log") ok" >>"$OUT/table.txt"
run chk-lf --check --causal=true --size=2x333x4x128 --heads-kv=2 --longest-first=true
for lf in false true; do
  run "d128-lf-$lf" --bench --check=false --causal=true --size=8x4096x16x128 --longest-first=$lf
  run "d64-lf-$lf" --bench --check=false --causal=true --size=8x4096x32x64 --longest-first=$lf
  run "gqa-lf-$lf" --bench --check=false --causal=true --size=8x4096x32x128 --heads-kv=8 --longest-first=$lf
done
for ov in false true; do
  run "varlen-overlap-$ov" --bench --check=false --varlen=bench --overlap=$ov
done
cat "$OUT/table.txt"
