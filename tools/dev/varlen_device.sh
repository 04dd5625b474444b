#!/usr/bin/env bash
# Issue 16's variable-length forward on the H200 (~2 minutes): the varlen
# GPU gtest cases (float64 reference, padding tokens that must stay
# unwritten), the sample's checks at ragged lengths with the device tiles
# (D128: TMA + two consumer warpgroups; D64: three), compute-sanitizer
# memcheck and racecheck on a small batch, then the bench (8 sequences, 32768
# tokens, H16 D128) beside its SDPA peers (nested jagged, per sequence,
# padded). Argument: the staged build (tools/dev/stage_device.sh); writes
# into $OUT.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention
log() { printf '%-30s rc=%-3s %4ss\n' "$1" "$2" "$3" >>"$OUT/summary.txt"; }
run() {  # name timeout command...
  local n=$1 lim=$2 t=$SECONDS
  shift 2
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  log "$n" $? $((SECONDS - t))
}
lens=1,17,300,333,1000
run gpu_test 60 $S/tests/samples/samples_gpu_test --gtest_filter='*varlen*'
run check-D128 40 $fa --backend=gpu --check --varlen=$lens --size=16x128
run check-D64-gqa-lse 40 $fa --backend=gpu --check --varlen=$lens \
  --size=8x64 --heads-kv=2 --lse=true
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
run memcheck 60 $san memcheck $fa --backend=gpu --check --varlen=1,17,300 \
  --size=2x128 --heads-kv=1
echo "benches start at ${SECONDS}s" >>"$OUT/summary.txt"
run peers 60 python3 bench/peers.py --only sdpa_varlen \
  --out "$OUT/peers_varlen.json"
run bench 30 $fa --backend=gpu --bench --check=false --varlen=bench \
  --json="$OUT/tessel_varlen.json"
grep " gpu " "$OUT/bench.log" >"$OUT/bench.txt"
grep -h "varlen" "$OUT/peers.log" >>"$OUT/bench.txt"
# The memcheck step's causal kernel (a cache hit).
run racecheck 60 $san racecheck $fa --backend=gpu --check --causal=true \
  --varlen=1,17,300 --size=2x128 --heads-kv=1
cat "$OUT/summary.txt"
