#!/usr/bin/env bash
# Session 7's second H200 call (~5 minutes): warpgroup ping-pong in the
# warp-specialized flash attention (checks at ragged sizes, sanitizers, A/B
# against --pingpong=false at the bench sizes), SDPA in the same call; the
# fp8 wgmma GEMM (GPU tests, checks, racecheck, 8192^3 against
# torch._scaled_mm).
# Argument: the staged build.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention
log() { printf '%-30s rc=%-3s %4ss\n' "$1" "$2" "$3" >>"$OUT/summary.txt"; }
t=$SECONDS; timeout 100 "$S/tests/samples/samples_gpu_test" --gtest_filter='*flash*' >"$OUT/gpu.log" 2>&1; log samples-gpu-flash $? $((SECONDS - t))
for D in 64 128; do for s in 300 333 1000; do
  t=$SECONDS; timeout 60 "$fa" --backend=gpu --check --size="2x${s}x3x$D" >>"$OUT/checks.log" 2>&1; log "check-D$D-S$s" $? $((SECONDS - t))
done; done
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  t=$SECONDS; timeout 120 $san $tool "$fa" --backend=gpu --check --size=1x300x2x128 >"$OUT/$tool.log" 2>&1; log "$tool-flash-pingpong" $? $((SECONDS - t))
done
g=$S/samples/gemm
t=$SECONDS; timeout 150 "$S/tests/codegen/tessel_codegen_gpu_test" --gtest_filter='Gpu.GemmWgmma*' >"$OUT/fp8-gpu.log" 2>&1; log gpu-wgmma-tests $? $((SECONDS - t))
for dt in e4m3 e5m2; do for sz in small 2048x2048x2048 1000x1000x1000; do
  t=$SECONDS; timeout 60 $g --check --size=$sz --dtype=$dt --layout=NT >>"$OUT/fp8-checks.log" 2>&1; log "check-$dt-$sz" $? $((SECONDS - t))
done; done
t=$SECONDS; timeout 120 $san racecheck $g --check --size=small --dtype=e4m3 --layout=NT >"$OUT/racecheck-fp8.log" 2>&1; log racecheck-fp8 $? $((SECONDS - t))
timeout 100 python3 bench/peers.py --only fp8_gemm --out "$OUT/fp8_peers.json" >"$OUT/fp8_peers.log" 2>&1
for sz in 8192x8192x8192 4096x4096x4096; do
  timeout 60 $g --bench --size=$sz --dtype=e4m3 --layout=NT 2>&1 | grep " gpu " >>"$OUT/fp8.txt"
done
grep -i "scaled_mm\|fp8" "$OUT/fp8_peers.log" | tail -4 >>"$OUT/fp8.txt"
timeout 100 python3 bench/peers.py --only sdpa --out "$OUT/sdpa.json" >"$OUT/sdpa.log" 2>&1
for cfg in "128" "128 --pingpong=false" "64" "64 --pingpong=false" "64 --block-n=64" "64 --stages=3"; do
  set -- $cfg; D=$1; shift; H=16; [ "$D" = 64 ] && H=32
  r=$(timeout 60 "$fa" --backend=gpu --bench --check=false --size="8x4096x${H}x$D" "$@" 2>&1 | grep " gpu ")
  printf 'D%s %s\n%s\n' "$D" "$*" "$r" >>"$OUT/flash.txt"
done
grep "torch_sdpa  " "$OUT/sdpa.log" >"$OUT/sdpa.txt"
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude='*.txt' . && find . -mindepth 1 ! -name '*.txt' -delete && mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt" "$OUT/flash.txt" "$OUT/sdpa.txt" "$OUT/fp8.txt"
