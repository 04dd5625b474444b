#!/usr/bin/env bash
# One H200 call for the flash attention work: the GPU tests that cover it,
# the sample's GPU checks, and benches of tile configs at the bench sizes.
# Expects a staged folder (tools/dev/stage_device.sh) as its first argument
# and a config list (lines "D block_m block_n threads stages [flags]") as
# its second. Few files come back: tests.log, bench.log, summary.txt.
# The device tool sends the session's own checkout (not a helper's
# worktree): stage into an ignored folder there and carry that folder.
# One bench-size config takes ~35 s end to end (host inputs, two compiles,
# two do_bench runs), hence the 60 s limit per config.
set -u
S=${1:?staged folder}
CONFIGS=${2:?config list}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/bin/flash_attention
summary=()
# Benches stop at the deadline, so the summary always comes back.
DEADLINE=${DEADLINE:-200}
# The correctness runs first, side by side (NVRTC compiles dominate); the
# benches after them, alone on the GPU.
par() {
  local n=$1; shift
  (t=$SECONDS; timeout "${TEST_LIMIT:-100}" "$@" >"$OUT/$n.log" 2>&1
   echo "$(printf '%-26s rc=%-3s %4ss' "$n" "$?" "$((SECONDS - t))")" \
     >"$OUT/$n.rc") &
}
par check-small "$fa" --backend=gpu --check --size=small
par check-medium "$fa" --backend=gpu --check --size=1x1024x2x128
par seed-gpu "$S/bin/tessel_seed_gpu_test"
par samples-gpu "$S/bin/samples_gpu_test"
# Every benched config also against the float64 reference, at a sequence
# length that is not a multiple of its tiles.
cfg_checks() {
  local failed=0
  while read -r D bm bn th st extra; do
    [ -z "$D" ] && continue
    echo "=== D$D m$bm n$bn t$th s$st $extra"
    "$fa" --backend=gpu --check --size="1x600x2x$D" --block-m="$bm" \
      --block-n="$bn" --threads="$th" --stages="$st" $extra || failed=1
  done <"$CONFIGS"
  return $failed
}
export -f cfg_checks
export fa CONFIGS
par cfg-checks bash -c cfg_checks
wait
for n in check-small check-medium seed-gpu samples-gpu cfg-checks; do
  summary+=("$(cat "$OUT/$n.rc")")
  { echo "=== $n"; cat "$OUT/$n.log"; } >>"$OUT/tests.log"
  rm -f "$OUT/$n.rc" "$OUT/$n.log"
done
table=()
while read -r D bm bn th st extra; do
  [ -z "$D" ] && continue
  [ $((SECONDS + 40)) -gt "$DEADLINE" ] && break
  tag="D$D m$bm n$bn t$th s$st $extra"
  echo "=== $tag" >>"$OUT/bench.log"
  timeout 60 "$fa" --backend=gpu --bench --check=false --size="8x4096x16x$D" \
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
{
  printf '%s\n' "${summary[@]}"
  printf '%s\n' "${table[@]}"
} | tee "$OUT/summary.txt"
