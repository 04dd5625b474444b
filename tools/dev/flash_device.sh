#!/usr/bin/env bash
# One H200 call for the flash attention work: the GPU tests that cover it,
# the sample's GPU checks, and benches of tile configs at the bench sizes.
# Expects a staged folder (tools/dev/stage_device.sh) as its first argument
# and a config list (lines "D block_m block_n threads stages [flags]") as
# its second. Few files come back: tests.log, bench.log, summary.txt.
set -u
S=${1:?staged folder}
CONFIGS=${2:?config list}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/bin/flash_attention
summary=()
step() {
  local n=$1 limit=$2; shift 2; local t=$SECONDS
  echo "=== $n: $*" >>"$OUT/tests.log"
  timeout "$limit" "$@" >>"$OUT/tests.log" 2>&1; local rc=$?
  summary+=("$(printf '%-26s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
}
table=()
while read -r D bm bn th st extra; do
  [ -z "$D" ] && continue
  tag="D$D m$bm n$bn t$th s$st $extra"
  echo "=== $tag" >>"$OUT/bench.log"
  timeout 40 "$fa" --backend=gpu --bench --check=false --size="8x4096x16x$D" \
    --block-m="$bm" --block-n="$bn" --threads="$th" --stages="$st" $extra \
    >"$OUT/one.log" 2>&1
  rc=$?
  cat "$OUT/one.log" >>"$OUT/bench.log"
  for v in flash_attention flash_attention_causal; do
    line=$(grep -E "^$v +B=" "$OUT/one.log" | head -1)
    ms=$(echo "$line" | grep -oE '[0-9.]+ ms' | head -1)
    tf=$(echo "$line" | grep -oE '[0-9.]+ TFLOP/s' | head -1)
    table+=("$(printf '%-34s %-24s %-12s %-16s rc=%s' "$tag" "$v" "$ms" "$tf" "$rc")")
  done
done <"$CONFIGS"
rm -f "$OUT/one.log"
step check-small 120 "$fa" --backend=gpu --check --size=small
step check-medium 120 "$fa" --backend=gpu --check --size=1x1024x2x128
step seed-gpu 200 "$S/bin/tessel_seed_gpu_test"
step samples-gpu 200 "$S/bin/samples_gpu_test"
{
  printf '%s\n' "${summary[@]}"
  printf '%s\n' "${table[@]}"
} | tee "$OUT/summary.txt"
