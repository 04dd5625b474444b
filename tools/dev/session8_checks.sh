#!/usr/bin/env bash
# Session 8's correctness call on the H200 (~8 minutes): every GPU test
# binary (four at a time), the samples' float64 checks of this session's
# paths at ragged sizes (flash forward / backward / fwd+bwd, grouped heads,
# variable length; GEMM pass configs and tiles), the quickstart on the GPU,
# then compute-sanitizer on small sizes. Argument: the staged build
# (tools/dev/stage_device.sh). $OUT gets summary.txt and logs.tar.gz.
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/checks_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention g=$S/samples/gemm
export fa g S
# step NAME LIMIT COMMAND...: one line in summary.txt, the output in NAME.log.
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-36s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
par() {  # like step, in the background
  local n=$1 lim=$2; shift 2
  (t=$SECONDS; timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
   printf '%-36s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
flash_checks() {
  local failed=0
  for p in fwd bwd fwd+bwd; do for D in 64 128; do
    $fa --backend=gpu --check --pass=$p --size=2x333x4x$D || failed=1
    $fa --backend=gpu --check --pass=$p --size=2x333x4x$D --heads-kv=2 || failed=1
  done; done
  $fa --backend=gpu --check --size=2x333x3x64 --block-m=192 --block-n=128 --threads=384 || failed=1
  if $fa --help 2>&1 | grep -q -- --varlen; then
    $fa --backend=gpu --check --varlen=1,17,300,333,1000 --size=16x128 || failed=1
    $fa --backend=gpu --check --varlen=1,17,300,333,1000 --size=8x64 --heads-kv=2 --lse=true || failed=1
  fi
  return $failed
}
gemm_checks() {
  local failed=0
  for combo in "" "--persistent=false" "--tma=false" "--warp-specialized=false" "--wgmma=false"; do
    $g --check --size=small $combo || failed=1
  done
  for sz in 512x4096x4096 256x8192x8192 1000x1000x1000 3000x5000x4000 4095x4097x4096 4096x4096x1024; do
    $g --check --size=$sz || failed=1
    $g --check --size=$sz --layout=NT || failed=1
  done
  $g --check --size=4096x4096x4096 --dtype=bf16 || failed=1
  return $failed
}
export -f flash_checks gemm_checks
n=0
for t in "$S"/tests/*/*gpu_test; do
  par "$(basename "$t")" 240 "$t"; n=$((n + 1)); ((n % 4 == 0)) && wait
done
par flash-checks 240 bash -c flash_checks
par gemm-checks 240 bash -c gemm_checks
wait
for f in "$OUT"/*.rc; do cat "$f" >>"$OUT/summary.txt"; rm -f "$f"; done
[ -x "$S/quickstart" ] && step quickstart-gpu 60 "$S/quickstart" --target=gpu
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  ((SECONDS > 500)) && break
  step "$tool-flash-fwd" 60 $san $tool $fa --backend=gpu --check --size=1x300x2x128
  step "$tool-flash-bwd" 90 $san $tool $fa --backend=gpu --check --pass=fwd+bwd --size=1x200x2x64 --heads-kv=1
  step "$tool-flash-varlen" 60 $san $tool $fa --backend=gpu --check --varlen=1,17,300 --size=2x128 --heads-kv=1
  step "$tool-gemm-splitk" 60 $san $tool $g --check --size=300x200x1000 --split-k=3 --bias-relu
  step "$tool-gemm" 60 $san $tool $g --check --size=small
  step "$tool-rows" 60 $san $tool "$S/tests/codegen/tessel_row_reduce_gpu_test" \
    --gtest_filter='*rows_over_warps*:*multiwarp_tail*:*warp_rows*:*chunks_not_clear*'
  for k in rmsnorm layernorm softmax; do
    step "$tool-$k" 60 $san $tool "$S/samples/$k" --backend=gpu --check --size=small
  done
done
(cd "$OUT" && tar -czf /tmp/logs.tar.gz ./*.log && rm -f ./*.log &&
  mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt"
