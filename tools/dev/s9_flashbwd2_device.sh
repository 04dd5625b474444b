#!/usr/bin/env bash
# Session 9, issue 16: the flash backward's variants on the H200, in one call.
#
#   new   the default now: a clear_accum wgmma gemm's first k step overwrites
#         its accumulator (scale-d 0) instead of adding to zeroed registers.
#         Static (ptxas, sm_90a): the full-mask backward was serialized
#         ("wgmma.mma_async instructions are serialized due to insufficient
#         register resources": a wait after each of the 32 HGMMA k steps) at
#         D128 and D64, and D64 spilled 384 bytes; now 4 waits per step, no
#         spill. Causal kernels were not serialized (unchanged but for the
#         zero movs).
#   old   TESSEL_WGMMA_CLEAR_BY_MOVS=1: the zeroed registers, as on main.
#   dqreg --bwd-dq-registers=true (D64 tile): dQ added by atomics straight
#         from registers (no dq_shared, one named barrier less per step).
#   s3    --bwd-stages=3 (D128: 214784 bytes of shared memory, no spill).
#   pad   --bwd-dq-pad=4 (D128) / 8 (D64): dQ's shared rows padded, so its
#         stores from registers stop hitting one bank from 4 (D128) or up to
#         8 (D64) rows at a time.
#   ovl   --bwd-overlap=true: the step as order / stage lists (stage 0):
#         dV's and dK's gemms issue back to back and share one wait (one
#         wgmma wait less per step), S^T retires alone before P^T's exp.
#   diag  --bwd-mask-diagonal=true: causal masks only the steps crossing the
#         diagonal (D64 causal spills 32 bytes instead of 76).
#
#   tools/dev/s9_flashbwd2_device.sh .probe/stage/build   # from the repo root
#
# 1. float64 checks (S=333, causal and full, D64 / D128, GQA, MQA) of each
#    variant and of linear attention (its wgmma gemms changed the same way),
#    in parallel (~40-60 s, NVRTC compiles dominate);
# 2. backward-alone benches (--pass=bwd --check=false, "kernel" column: the
#    main kernel), full mask at B8 S4096 H16 D128 and H32 D64, most telling
#    first, ~30 s each (host inputs); DEADLINE (default 200 s) stops starting
#    steps past it, the table still comes. DEADLINE=270 gets the first six
#    (new / old at D128 and D64 full, the static wins together at D128 and
#    D64 full), DEADLINE=480 all.
# Logs go to $OUT/flashbwd2/; the table is printed last.
set -u
S=${1:?staged build folder (.probe/stage/build)}
OUT=${OUT:-/tmp/s9_out}/flashbwd2
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_flashbwd2
fa=$S/samples/flash_attention la=$S/samples/linear_attention
DEADLINE=${DEADLINE:-200}
OLD=(env TESSEL_WGMMA_CLEAR_BY_MOVS=1)
T128="--bwd-block-m=128 --bwd-block-n=64 --bwd-threads=256"
T64="--bwd-block-m=128 --bwd-block-n=128 --bwd-threads=256"
summary=()

par() {  # name, command...: runs in the background, rc into name.rc
  local n=$1; shift
  (t=$SECONDS; timeout 120 "$@" >"$OUT/$n.log" 2>&1
   printf '%-26s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
step() {  # name, limit, command...: alone on the GPU, skipped past DEADLINE
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 20 > DEADLINE)); then
    summary+=("$(printf '%-26s skipped (deadline)' "$n")"); return
  fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  summary+=("$(printf '%-26s rc=%-3s %4ss' "$n" "$?" "$((SECONDS - t))")")
  grep -h " gpu " "$OUT/$n.log" | sed "s|^|$n: |" >>"$OUT/bench.txt"
}

# 1. Checks against float64 (the sample's --check), causal and full each.
chk="$fa --backend=gpu --check --pass=bwd"
par chk-new-d128 $chk --size=2x333x2x128
par chk-new-d64 $chk --size=1x333x2x64
par chk-new-gqa-d128 $chk --size=1x333x4x128 --heads-kv=2
par chk-new-fb-d128 $fa --backend=gpu --check --pass=fwd+bwd --size=1x333x2x128
par chk-dqreg-d64 $chk --size=1x333x2x64 $T64 --bwd-dq-registers=true
par chk-dqreg-mqa-d64 $chk --size=1x333x4x64 --heads-kv=1 $T64 \
  --bwd-dq-registers=true
par chk-s3-d128 $chk --size=1x333x2x128 $T128 --bwd-stages=3
par chk-old-d128 "${OLD[@]}" $chk --size=1x333x2x128
par chk-diag-d128 $chk --size=2x333x2x128 --causal=true --bwd-mask-diagonal=true
par chk-diag-gqa-d128 $chk --size=1x333x4x128 --heads-kv=2 --causal=true \
  --bwd-mask-diagonal=true
par chk-diag-dqreg-d64 $chk --size=1x333x2x64 --causal=true $T64 \
  --bwd-mask-diagonal=true --bwd-dq-registers=true
par chk-pad-d128 $chk --size=2x333x2x128 --bwd-dq-pad=4
par chk-pad-d64 $chk --size=1x333x2x64 --bwd-dq-pad=8
par chk-ovl-d128 $chk --size=2x333x2x128 --bwd-overlap=true --bwd-dq-pad=4
par chk-ovl-d64 $chk --size=1x333x2x64 $T64 --bwd-overlap=true \
  --bwd-dq-registers=true
par chk-ovl-gqa-d128 $chk --size=1x333x4x128 --heads-kv=2 --bwd-overlap=true \
  --bwd-mask-diagonal=true --bwd-dq-pad=4
par chk-la-d64 $la --backend=gpu --check --size=1x512x2x64
par chk-la-d128 $la --backend=gpu --check --size=1x512x2x128
wait
for f in "$OUT"/*.rc; do summary+=("$(cat "$f")"); rm -f "$f"; done
# The last column of a sample's table row: pass / FAIL.
checks=$(grep -h " gpu " "$OUT"/chk-*.log | awk '{print $NF}' | sort | uniq -c |
  tr -s ' \n' ' ')

# 2. Backward alone, full mask (where the serialization was), new vs old.
bench="$fa --backend=gpu --bench --check=false --pass=bwd"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-new-d128-full 75 $bench $d128 --causal=false
step bwd-old-d128-full 75 "${OLD[@]}" $bench $d128 --causal=false
step bwd-new-d64-full 75 $bench $d64 --causal=false
step bwd-old-d64-full 75 "${OLD[@]}" $bench $d64 --causal=false
# The static wins together (each alone further down).
step bwd-padovl-d128-full 75 $bench $d128 --causal=false --bwd-dq-pad=4 \
  --bwd-overlap=true
step bwd-dqovl-d64-full 75 $bench $d64 --causal=false $T64 \
  --bwd-dq-registers=true --bwd-overlap=true
# Past DEADLINE=270 (DEADLINE=480 runs them all). Causal (not serialized
# before): today's default measured 4.125 ms (D128) alone.
step bwd-all-d128-causal 75 $bench $d128 --causal=true --bwd-dq-pad=4 \
  --bwd-overlap=true --bwd-mask-diagonal=true
step bwd-new-d128-causal 75 $bench $d128 --causal=true
step bwd-pad-d128-full 75 $bench $d128 --causal=false --bwd-dq-pad=4
step bwd-ovl-d128-full 75 $bench $d128 --causal=false --bwd-overlap=true
step bwd-dqreg-d64-full 75 $bench $d64 --causal=false $T64 \
  --bwd-dq-registers=true
step bwd-alldq-d64-causal 75 $bench $d64 --causal=true $T64 \
  --bwd-mask-diagonal=true --bwd-dq-registers=true --bwd-overlap=true
step bwd-new-d64-causal 75 $bench $d64 --causal=true

printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
echo "checks (float64): $checks" >>"$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/bench.txt" 2>/dev/null
