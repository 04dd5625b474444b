#!/usr/bin/env bash
# One H200 call for the Hopper GEMM path: correctness of the GEMM sample
# under every pass-config combination (small ragged sizes and big ones),
# the GPU test binaries that hold GEMMs, compute-sanitizer, tessel vs
# cuBLAS, and the SASS / ptxas facts of the default kernel. Logs under $OUT,
# a summary table last. Argument: the staged build (tools/dev/stage_device.sh).
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
summary=()
step() {
  local n=$1 limit=$2; shift 2; local t=$SECONDS
  timeout "$limit" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  summary+=("$(printf '%-34s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
}
g=$S/samples/gemm
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for combo in "--tma=true --warp-specialized=true" "--tma=false" \
             "--warp-specialized=false" "--tma=false --warp-specialized=false" \
             "--wgmma=false"; do
  name=$(echo "$combo" | tr -d ' -' | tr '=' '_')
  step "small-$name" 120 $g --check --size=small $combo
done
for sz in 4096x4096x4096 1000x1000x1000 3000x5000x4000 4095x4097x4096 \
          256x8192x8192; do
  step "check-$sz" 120 $g --check --size=$sz
  step "check-NT-$sz" 120 $g --check --size=$sz --layout=NT --dtype=bf16
done
step check-notma-4096 120 $g --check --size=4096x4096x4096 --tma=false
for t in codegen_gpu seed_gpu samples_gpu tma_gpu autotune_gpu; do
  f=$(ls "$S"/tests/*/*${t}_test 2>/dev/null | head -1)
  [ -n "$f" ] && step "$t" 300 "$f"
done
for tool in memcheck racecheck synccheck; do
  step "$tool-gemm" 180 $san $tool $g --check --size=small
done
step race-seed 240 $san racecheck "$S/tests/codegen/tessel_seed_gpu_test"
TESSEL_DUMP_SOURCE=$OUT/src step bench-gemm 240 $g --bench --size=bench \
  --json="$OUT/gemm_bench.json"
step bench-gemm-notma 200 $g --bench --size=bench --tma=false \
  --json="$OUT/gemm_bench_notma.json"
step cublas 200 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes f16,bf16 \
  --layouts NN --out "$OUT/cublas.json"
# SASS and registers of the default kernel, from its generated source.
src=$(ls "$OUT"/src/gemm_NN*.cu 2>/dev/null | head -1)
if [ -n "$src" ]; then
  nvcc -arch=sm_90a -cubin -std=c++17 -I src/codegen/prelude -Xptxas -v \
    "$src" -o /tmp/g.cubin >"$OUT/ptxas.log" 2>&1
  cuobjdump -sass /tmp/g.cubin >/tmp/g.sass 2>&1
  echo "HGMMA $(grep -c HGMMA /tmp/g.sass) UTMALDG $(grep -c UTMALDG /tmp/g.sass)" \
    >"$OUT/sass_counts.txt"
fi
printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
grep -h "ms\|TFLOP" "$OUT"/bench-gemm*.log "$OUT"/cublas.log | tail -30 >"$OUT/bench.txt"
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude=summary.txt --exclude=bench.txt \
  --exclude=sass_counts.txt --exclude=ptxas.log . &&
  find . -mindepth 1 ! -name summary.txt ! -name bench.txt ! -name sass_counts.txt \
    ! -name ptxas.log -delete && mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt" "$OUT/sass_counts.txt" "$OUT/bench.txt" 2>/dev/null
grep -i "registers\|smem" "$OUT/ptxas.log" | head -5
