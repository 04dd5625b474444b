#!/usr/bin/env bash
# Session 10's flash attention call on the H200 (issue 16): float64 checks
# of the device defaults at ragged S (forward, fwd+bwd, grouped heads,
# varlen), compute-sanitizer memcheck / racecheck on the forward and the
# backward defaults, then SDPA (every backend, fwd and fwd+bwd, grouped
# heads, varlen) and tessel in the same call: forward at B8 S4096 H16 D128,
# H32 D64 and Hq32 Hkv8 D128, full and causal; fwd+bwd at the first two;
# the varlen forward. Table last.
#   tools/dev/s10_flash_final.sh .probe/main/build   # writes $OUT/flash
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/flash}/flash
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-260}
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
  $fa --backend=gpu --check --size=2x1000x3x64 --causal=true || f=1
  $fa --backend=gpu --check --pass=fwd+bwd --size=1x333x2x128 || f=1
  $fa --backend=gpu --check --pass=fwd+bwd --size=1x333x2x64 || f=1
  $fa --backend=gpu --check --pass=fwd+bwd --size=1x333x4x128 --heads-kv=2 || f=1
  $fa --backend=gpu --check --varlen=1,17,300,333,1000 --size=4x128 || f=1
  return $f
}
export -f checks; export fa
step checks 90 bash -c checks
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
# The new defaults: the D64 causal forward (align_end + mask_after) and the
# backward's D64 schedule with dQ by bulk reductions (D128's too).
for tool in memcheck racecheck; do
  step "$tool-fwd-d64-causal" 40 $san $tool $fa --backend=gpu --check --causal=true --size=1x300x2x64
  step "$tool-fwdbwd-d64" 50 $san $tool $fa --backend=gpu --check --pass=fwd+bwd --size=1x200x2x64
done
step memcheck-fwdbwd-d128 50 $san memcheck $fa --backend=gpu --check --pass=fwd+bwd --size=1x200x2x128
step peers-sdpa 90 python3 bench/peers.py --only sdpa --attention-passes fwd,fwd+bwd \
  --out "$OUT/peers_sdpa.json"
for sz in 8x4096x16x128 8x4096x32x64 "8x4096x32x128 --heads-kv=8"; do
  set -- $sz
  step "fwd-$1${2:+-gqa}" 40 $fa --backend=gpu --bench --check=false --size=$1 ${2:-} \
    --json="$OUT/fwd_$1${2:+_gqa}.json"
done
for sz in 8x4096x16x128 8x4096x32x64; do
  step "fwdbwd-$sz" 60 $fa --backend=gpu --bench --check=false --pass=fwd+bwd --size=$sz \
    --json="$OUT/fwdbwd_$sz.json"
done
step peers-varlen 40 python3 bench/peers.py --only sdpa_varlen --out "$OUT/peers_varlen.json"
step fwd-varlen 30 $fa --backend=gpu --bench --check=false --varlen=bench \
  --json="$OUT/fwd_varlen.json"
cat "$OUT/summary.txt" "$OUT/bench.txt"
