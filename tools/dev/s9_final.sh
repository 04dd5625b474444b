#!/usr/bin/env bash
# Session 9's closing call on the H200: the GEMM suite (issue 15), the flash
# backward's A/B (issue 16), then linear attention's bench (its wgmma code
# changed: one asm per run, scale-d 0 clears). Logs in $OUT/final.tgz.
set -u
S=${1:?staged build}
export OUT=${OUT:-/tmp/final}/w
mkdir -p "$OUT"
t=$SECONDS
DEADLINE=${GEMM_DEADLINE:-280} timeout 300 bash tools/dev/s9_gemm_suite.sh "$S" >"$OUT/gemm.stdout" 2>&1
echo "== gemm suite rc=$? $((SECONDS - t))s" >>"$OUT/../summary.txt"
t=$SECONDS
DEADLINE=${BWD_DEADLINE:-220} timeout 240 bash tools/dev/s9_flashbwd2_device.sh "$S" >"$OUT/flashbwd2.stdout" 2>&1
echo "== flashbwd2 rc=$? $((SECONDS - t))s" >>"$OUT/../summary.txt"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64 TESSEL_CACHE_DIR=/tmp/tc
for sz in 8x4096x16x128 8x4096x32x64; do
  timeout 30 "$S/samples/linear_attention" --backend=gpu --bench --check=false \
    --size=$sz >"$OUT/la_$sz.log" 2>&1
  grep -h " gpu " "$OUT/la_$sz.log" >>"$OUT/../summary.txt"
done
cd "$OUT/.." && tar -czf final.tgz w
tail -45 w/gemm.stdout; tail -40 w/flashbwd2.stdout; cat summary.txt
