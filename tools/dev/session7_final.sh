#!/usr/bin/env bash
# Session 7's closing H200 call (~9.5 minutes): every GPU test binary (four
# at a time), checks of the new paths at ragged sizes, compute-sanitizer,
# then the benches alone on the GPU, each section stopping at a deadline:
# flash attention against SDPA, the fp8 GEMM against torch._scaled_mm, the
# GEMM 16-shape suite NN / NT against cuBLAS, the row kernels against
# PyTorch and the copy bandwidth. Argument: the staged build.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention g=$S/samples/gemm
log() { printf '%-34s rc=%-3s %4ss\n' "$1" "$2" "$3" >>"$OUT/summary.txt"; }
par() {
  local n=$1; shift
  (t=$SECONDS; timeout 170 "$@" >"$OUT/$n.log" 2>&1
   printf '%-34s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
checks() {
  local failed=0
  for D in 64 128; do
    $fa --backend=gpu --check --size="2x333x3x$D" || failed=1
  done
  $fa --backend=gpu --check --size=2x333x3x64 --block-m=192 --block-n=128 --threads=384 || failed=1
  $fa --backend=gpu --check --size=2x333x3x128 --warp-specialized=false || failed=1
  for dt in e4m3 e5m2; do for sz in small 2048x2048x2048 1000x1000x1000; do
    $g --check --size=$sz --dtype=$dt --layout=NT || failed=1
  done; done
  for combo in "" "--persistent=false" "--tma=false" "--warp-specialized=false" "--wgmma=false"; do
    $g --check --size=small $combo || failed=1
  done
  for sz in 512x4096x4096 256x8192x8192 1000x1000x1000; do
    $g --check --size=$sz || failed=1
  done
  return $failed
}
export -f checks; export fa g
n=0
for t in "$S"/tests/*/*gpu_test; do
  par "$(basename "$t")" "$t"; n=$((n + 1)); ((n % 4 == 0)) && wait
done
par checks bash -c checks
wait
for f in "$OUT"/*.rc; do cat "$f" >>"$OUT/summary.txt"; rm -f "$f"; done
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  t=$SECONDS; timeout 60 $san $tool $fa --backend=gpu --check --size=1x300x2x128 >"$OUT/$tool-flash.log" 2>&1; log "$tool-flash" $? $((SECONDS - t))
  t=$SECONDS; timeout 60 $san $tool $fa --backend=gpu --check --size=1x300x2x64 --block-m=192 --block-n=128 --threads=384 >"$OUT/$tool-flash384.log" 2>&1; log "$tool-flash-384" $? $((SECONDS - t))
  t=$SECONDS; timeout 60 $san $tool $g --check --size=small --dtype=e4m3 --layout=NT >"$OUT/$tool-fp8.log" 2>&1; log "$tool-fp8" $? $((SECONDS - t))
  t=$SECONDS; timeout 60 $san $tool $g --check --size=small >"$OUT/$tool-gemm.log" 2>&1; log "$tool-gemm" $? $((SECONDS - t))
done
echo "benches start at ${SECONDS}s" >>"$OUT/summary.txt"
timeout 90 python3 bench/peers.py --only sdpa,fp8_gemm --out "$OUT/peers.json" >"$OUT/peers.log" 2>&1
for cfg in "128" "64" "64 --block-m=192 --block-n=128 --threads=384"; do
  set -- $cfg; D=$1; shift; H=16; [ "$D" = 64 ] && H=32
  timeout 50 "$fa" --backend=gpu --bench --check=false --size="8x4096x${H}x$D" "$@" \
    --json="$OUT/flash_D${D}${1:+_bm192}.json" 2>&1 | grep " gpu " | sed "s|^|$* |" >>"$OUT/bench.txt"
done
timeout 50 $g --bench --size=8192x8192x8192 --dtype=e4m3 --layout=NT --json="$OUT/fp8.json" 2>&1 | grep " gpu " >>"$OUT/bench.txt"
timeout 50 $g --bench --size=4096x4096x4096 --dtype=e4m3 --layout=NT 2>&1 | grep " gpu " >>"$OUT/bench.txt"
shapes="4096x4096x4096 8192x8192x8192 2048x2048x2048 4096x14336x4096
4096x4096x14336 4096x6144x4096 8192x28672x8192 8192x8192x28672 512x4096x4096
256x8192x8192 4096x4096x1024 16384x4096x4096 3000x5000x4000 4095x4097x4096
1000x1000x1000 6144x6144x6144"
timeout 80 "$S/bench/cublas_gemm" --sizes "$(echo $shapes | tr ' ' ',')" \
  --dtypes f16 --layouts NN,NT --out "$OUT/cublas_suite.json" >"$OUT/cublas-suite.log" 2>&1
timeout 40 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes bf16 --layouts NN \
  --out "$OUT/cublas_bf16.json" >>"$OUT/cublas-suite.log" 2>&1
for sz in 4096x4096x4096 8192x8192x8192; do
  timeout 40 $g --bench --size=$sz --dtype=bf16 --json="$OUT/gemm_bf16_$sz.json" 2>&1 | grep " gpu " >>"$OUT/suite.txt"
done
for l in NN NT; do for sz in $shapes; do
  ((SECONDS > 545)) && break
  timeout 25 $g --bench --size=$sz --layout=$l --json="$OUT/gemm_${l}_$sz.json" 2>&1 | grep " gpu " >>"$OUT/suite.txt"
done; done
grep -h "cublas" "$OUT/cublas-suite.log" >>"$OUT/suite.txt"
grep -h "torch_sdpa  \|scaled_mm" "$OUT/peers.log" >>"$OUT/bench.txt"
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude='*.txt' . && find . -mindepth 1 ! -name '*.txt' -delete && mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt" "$OUT/bench.txt" "$OUT/suite.txt"
