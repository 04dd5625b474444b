#!/usr/bin/env bash
# The session's closing H200 call (~8 minutes): every GPU test binary (three
# at a time: NVRTC dominates), the GEMM sample under each pass config and at
# ragged / TMA-refusing sizes, compute-sanitizer, then the benches alone on
# the GPU: the warp-specialized GEMM (persistent and not) against cuBLAS,
# the row kernels, the fused bias + ReLU epilogue. Argument: the staged build.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
step() {
  local n=$1 limit=$2; shift 2; local t=$SECONDS
  timeout "$limit" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  printf '%-30s rc=%-3s %4ss\n' "$n" "$rc" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
par() {
  local n=$1; shift
  (t=$SECONDS; timeout 200 "$@" >"$OUT/$n.log" 2>&1
   printf '%-30s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
g=$S/samples/gemm
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
n=0
for t in "$S"/tests/*/*gpu_test; do
  par "$(basename "$t")" "$t"
  n=$((n + 1)); ((n % 3 == 0)) && wait
done
wait
for f in "$OUT"/*.rc; do cat "$f" >>"$OUT/summary.txt"; rm -f "$f"; done
for combo in "" "--persistent=false" "--tma=false" "--warp-specialized=false" \
             "--wgmma=false"; do
  step "small$(echo "$combo" | tr -d ' -' | tr '=' '_')" 60 $g --check \
    --size=small $combo
done
for sz in 4096x4096x4096 3000x5000x4000 4095x4097x4096 1000x1000x1000 \
          256x8192x8192; do
  step "check-$sz" 60 $g --check --size=$sz
done
step check-NT-bf16-4096 60 $g --check --size=4096x4096x4096 --layout=NT --dtype=bf16
step check-np-4096 60 $g --check --size=4096x4096x4096 --persistent=false
for tool in memcheck racecheck synccheck; do
  step "$tool-gemm" 120 $san $tool $g --check --size=small
done
step racecheck-seed 200 $san racecheck "$S/tests/codegen/tessel_seed_gpu_test"
few='*rows_over_warps*:*multiwarp_tail*:*warp_rows*:*chunks_not_clear*'
step memcheck-rows 60 $san memcheck "$S/tests/codegen/tessel_row_reduce_gpu_test" \
  --gtest_filter="$few"
step racecheck-rows 60 $san racecheck "$S/tests/codegen/tessel_row_reduce_gpu_test" \
  --gtest_filter="$few"
step cublas 120 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes f16,bf16 \
  --layouts NN,NT --out "$OUT/cublas.json"
TESSEL_DUMP_SOURCE=$OUT/src step bench-gemm 120 $g --bench --size=bench \
  --json="$OUT/gemm_ws_persistent.json"
step bench-gemm-nt 120 $g --bench --size=bench --layout=NT \
  --json="$OUT/gemm_ws_persistent_nt.json"
step bench-gemm-np 120 $g --bench --size=bench --persistent=false \
  --json="$OUT/gemm_ws_blocks.json"
for s in rmsnorm layernorm softmax; do
  step "bench-$s" 90 "$S/samples/$s" --backend=gpu --bench --check \
    --size=bench --json="$OUT/row_$s.json"
done
for e in plain bias_relu; do
  flag=(); [ $e = bias_relu ] && flag=(--bias-relu)
  step "bench-gemm-$e" 60 $g --bench --size=4096x4096x4096 "${flag[@]}" \
    --json="$OUT/gemm_$e.json"
done
src=$(ls "$OUT"/src/gemm_NN*.cu 2>/dev/null | head -1)
if [ -n "$src" ]; then
  nvcc -arch=sm_90a -cubin -std=c++17 -I src/codegen/prelude -Xptxas -v \
    "$src" -o /tmp/g.cubin >"$OUT/ptxas.log" 2>&1
  cuobjdump -sass /tmp/g.cubin >/tmp/g.sass 2>&1
  echo "HGMMA $(grep -c HGMMA /tmp/g.sass) UTMALDG $(grep -c UTMALDG /tmp/g.sass)" >>"$OUT/ptxas.log"
fi
# The issue's 16-shape suite, NN and NT, cuBLAS first (last: capped).
shapes="4096x4096x4096 8192x8192x8192 2048x2048x2048 4096x14336x4096
4096x4096x14336 4096x6144x4096 8192x28672x8192 8192x8192x28672 512x4096x4096
256x8192x8192 4096x4096x1024 16384x4096x4096 3000x5000x4000 4095x4097x4096
1000x1000x1000 6144x6144x6144"
step cublas-suite 60 "$S/bench/cublas_gemm" --sizes "$(echo $shapes | tr ' ' ',')" \
  --dtypes f16 --layouts NN,NT --out "$OUT/cublas_suite.json"
t0=$SECONDS
for l in NN NT; do for sz in $shapes; do
  ((SECONDS - t0 > 80)) && break
  timeout 20 $g --bench --size=$sz --layout=$l >>"$OUT/suite.log" 2>&1
done; done
grep " gpu " "$OUT/suite.log" >"$OUT/suite.txt"
grep cublas "$OUT/cublas-suite.log" >>"$OUT/suite.txt"
grep -h " gpu \|cublas " "$OUT"/bench-*.log "$OUT"/cublas.log >"$OUT/bench.txt"
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude=summary.txt --exclude=bench.txt \
  --exclude=ptxas.log --exclude=suite.txt . && find . -mindepth 1 ! -name summary.txt \
  ! -name bench.txt ! -name ptxas.log ! -name suite.txt -delete &&
  mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt" "$OUT/bench.txt" "$OUT/suite.txt"; grep -i "registers\|HGMMA" "$OUT/ptxas.log"
