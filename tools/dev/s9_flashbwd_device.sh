#!/usr/bin/env bash
# Session 9, issue 16: the flash backward on the warp-specialized sm_90a path
# (a TMA producer loads Q, dO, LSE2, Delta per query step; two consumer
# warpgroups run the five gemms on wgmma; 128 keys x 64 queries at D128,
# 128 x 128 at D64), on the H200, in one call:
#   1. float64 checks, side by side (NVRTC compiles dominate): fwd+bwd and bwd
#      at ragged S = 333 (D64, D128), grouped heads (Hq 4 Hkv 2 D128, MQA D64),
#      causal and full, with the H200 tile (new) and with the old tile on the
#      cp.async path (old: --bwd-block-m=64 --bwd-threads=128 --tma=false);
#   2. benches alone on the GPU: fwd+bwd (new) at B8 S4096 H16 D128 and H32
#      D64, SDPA fwd+bwd (cuDNN / FA2 / efficient) in the same run, then the
#      backward alone new vs old ("kernel" column: the main kernel alone).
#   3. a small tile sweep of the backward (full mask) at the bench sizes.
#   Also compute-sanitizer racecheck / memcheck of the new backward (small).
#
#   tools/dev/s9_flashbwd_device.sh .probe/stage/build   # from the repo root
#
# Logs go to $OUT/flashbwd/; a short table is printed last. Phase 1 takes
# ~30-60 s, each bench step ~20-30 s: DEADLINE (default 200 s) stops
# starting steps past it (most important first; the table still comes).
# DEADLINE=150 still gets the fwd+bwd benches and SDPA.
set -u
S=${1:?staged build folder (.probe/stage/build)}
OUT=${OUT:-/tmp/s9_out}/flashbwd
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_flashbwd
fa=$S/samples/flash_attention
DEADLINE=${DEADLINE:-200}
OLD="--bwd-block-m=64 --bwd-threads=128 --tma=false"
summary=()

par() {  # name, command...: runs in the background, rc into name.rc
  local n=$1; shift
  (t=$SECONDS; timeout 100 "$@" >"$OUT/$n.log" 2>&1
   printf '%-28s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
step() {  # name, limit, command...: alone on the GPU, skipped past DEADLINE
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 15 > DEADLINE)); then
    summary+=("$(printf '%-28s skipped (deadline)' "$n")"); return
  fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$n" "$?" "$((SECONDS - t))")")
  grep -h " gpu " "$OUT/$n.log" | sed "s|^|$n: |" >>"$OUT/bench.txt"
}

# 1. Checks (float64 reference) and sanitizers, in parallel.
chk="$fa --backend=gpu --check"
par chk-fb-d64-s333 $chk --pass=fwd+bwd --size=1x333x2x64
par chk-fb-d128-s333 $chk --pass=fwd+bwd --size=1x333x2x128
par chk-fb-gqa-d128 $chk --pass=fwd+bwd --size=1x256x4x128 --heads-kv=2
par chk-bwd-d128-s333 $chk --pass=bwd --size=2x333x2x128
par chk-bwd-mqa-d64 $chk --pass=bwd --size=1x333x4x64 --heads-kv=1
par chk-bwd-old-d128 $chk --pass=bwd --size=1x333x2x128 $OLD
# Sweep variants: dQ's gemm first (D128, D64), one consumer warpgroup.
par chk-bwd-dqfirst $chk --pass=bwd --size=1x333x2x128 --bwd-block-m=128 \
  --bwd-threads=256 --bwd-dq-first=true
par chk-bwd-dqfirst-d64 $chk --pass=bwd --size=1x333x2x64 --bwd-block-m=128 \
  --bwd-threads=256 --bwd-dq-first=true
par chk-bwd-1wg $chk --pass=bwd --size=1x333x2x128 --bwd-block-m=64 \
  --bwd-block-n=64 --bwd-threads=128
cs=/usr/local/cuda/bin/compute-sanitizer
par san-racecheck-d128 $cs --tool racecheck --error-exitcode 9 $chk --pass=bwd \
  --size=1x200x2x128 --causal=true
par san-memcheck-d64 $cs --tool memcheck --error-exitcode 9 $chk --pass=bwd \
  --size=1x333x2x64 --heads-kv=1
wait
for f in "$OUT"/*.rc; do summary+=("$(cat "$f")"); rm -f "$f"; done
# The last column of a sample's table row: pass / FAIL.
checks=$(grep -h " gpu " "$OUT"/chk-*.log | awk '{print $NF}' | sort | uniq -c |
  tr -s ' \n' ' ')

# 2. Benches, alone on the GPU, most important first (each ~20-30 s: host
# inputs at B8 S4096, compiles, do_bench).
bench="$fa --backend=gpu --bench --check=false"
step fb-new-d128 60 $bench --pass=fwd+bwd --size=8x4096x16x128 \
  --json="$OUT/fb_new_d128.json"
step peers-sdpa 90 python3 bench/peers.py --only sdpa --attention-passes fwd+bwd \
  --gqa-shapes '' --out "$OUT/peers_sdpa.json"
grep -h "torch_sdpa" "$OUT/peers-sdpa.log" >>"$OUT/bench.txt" 2>/dev/null
step fb-new-d64 60 $bench --pass=fwd+bwd --size=8x4096x32x64 \
  --json="$OUT/fb_new_d64.json"
# The backward alone ("kernel" column: the main kernel), new vs old.
step bwd-new-d128 60 $bench --pass=bwd --size=8x4096x16x128
step bwd-old-d128 60 $bench --pass=bwd --size=8x4096x16x128 $OLD
step bwd-old-d64 60 $bench --pass=bwd --size=8x4096x32x64 $OLD

# 3. Tile sweep of the backward (D block_m block_n threads stages [flags]);
# the defaults are D128 128 64 256 2 and D64 128 128 256 2.
while read -r D bm bn th st extra; do
  step "sweep-d$D-m$bm-n$bn-t$th-s$st${extra:+-dqfirst}" 60 $bench --pass=bwd \
    --causal=false --size=8x4096x$((D == 64 ? 32 : 16))x$D --bwd-block-m="$bm" \
    --bwd-block-n="$bn" --bwd-threads="$th" --bwd-stages="$st" $extra
done <<'EOF2'
128 128 64 256 2 --bwd-dq-first=true
128 64 64 128 2
64 64 64 128 2
128 128 64 256 3
64 128 128 256 2 --bwd-dq-first=true
EOF2

printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
echo "checks (float64): $checks" >>"$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/bench.txt" 2>/dev/null
