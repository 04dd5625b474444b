#!/usr/bin/env bash
# Session 9's flash forward call on the H200 (issue 16, ~90 s): float64
# checks of the device defaults at ragged S (D128 now overlapped, grouped
# heads, varlen), compute-sanitizer on the overlapped tile, then SDPA (every
# backend, fwd and fwd+bwd, grouped heads) and tessel's forward at B8 S4096
# H16 D128, H32 D64 and Hq32 Hkv8 D128, full and causal, and the varlen
# forward beside SDPA per sequence. Table last.
#   tools/dev/s9_flash_final.sh .probe/stage/build   # writes $OUT/flash
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/flash}/flash
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
fa=$S/samples/flash_attention
deadline=${DEADLINE:-110}
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 5 > deadline)); then echo "$n skipped (deadline)" >>"$OUT/summary.txt"; return; fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-34s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
  grep -h " gpu \|torch_sdpa" "$OUT/$n.log" | sed "s|^|$n: |" >>"$OUT/bench.txt"
}
checks() {
  local f=0
  $fa --backend=gpu --check --size=1x333x2x128 || f=1
  $fa --backend=gpu --check --size=2x333x4x128 --heads-kv=2 --lse=true || f=1
  $fa --backend=gpu --check --size=1x333x3x64 || f=1
  $fa --backend=gpu --check --varlen=1,17,300,333,1000 --size=4x128 || f=1
  return $f
}
export -f checks; export fa
step checks 60 bash -c checks
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  step "$tool-overlap-d128" 40 $san $tool $fa --backend=gpu --check --size=1x300x2x128
done
step peers-sdpa 60 python3 bench/peers.py --only sdpa --attention-passes fwd \
  --out "$OUT/peers_sdpa.json"
for sz in 8x4096x16x128 8x4096x32x64 "8x4096x32x128 --heads-kv=8"; do
  set -- $sz
  step "fwd-$1${2:+-gqa}" 40 $fa --backend=gpu --bench --check=false --size=$1 ${2:-} \
    --json="$OUT/fwd_$1${2:+_gqa}.json"
done
step peers-varlen 40 python3 bench/peers.py --only sdpa_varlen --out "$OUT/peers_varlen.json"
step fwd-varlen 30 $fa --backend=gpu --bench --check=false --varlen=bench \
  --json="$OUT/fwd_varlen.json"
cat "$OUT/summary.txt" "$OUT/bench.txt"
