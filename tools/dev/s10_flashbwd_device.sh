#!/usr/bin/env bash
# Session 10, issue 16: the flash backward's candidates on the H200, in one
# call, beside SDPA's fwd+bwd.
#
#   default  today's sm_90 tile: D128 128x64 + dq-pad 4, overlap,
#            mask-diagonal; D64 128x128, no schedule options.
#   bulk     --bwd-dq-bulk=true (new lowering, PassConfig::
#            bulk_reduce_atomics): dQ's shared tile reaches dQ_acc as one
#            cp.reduce.async.bulk .add.f32 per row (512 B at D128) from the
#            TMA unit, issued by 64 threads (128 at D64), instead of 8 float4
#            atomics per thread from all 256 (FA3's dQ path, without its
#            separate writer warp). The issuers wait for the TMA's reads only
#            before their next barrier (a no-op by then);
#            TESSEL_BULK_WAIT_AT_ISSUE=1 waits right after the issue (bulki).
#   dve      --bwd-dv-early=true (D128, needs the overlap D128 has): P^T's
#            cast and dV's gemm issue before dS^T's math, which runs under
#            dV's gemm (dP^T's wait leaves it in flight). ptxas: no spill
#            full, 4 B causal (D64 spills 200 B with it: not a D64 candidate).
#   d64s     D64 with the D128 schedule: --bwd-dq-pad=8 --bwd-overlap=true
#            --bwd-mask-diagonal=true (never measured at D64).
#   xb       TESSEL_WGMMA_ACROSS_BARRIERS=1 (env, A/B only; every overlapped
#            kernel, the forward's too): a wgmma group whose shared operands
#            only the TMA writes stays in flight across a barrier, so dQ's
#            gemm issues behind dV's and dK's (one wait<0> after dQ instead
#            of one before the barrier and one after dQ). No spill (ptxas).
#   all      D128: xb + dve + bulk; D64: r240 + xb + d64s + bulk (ptxas:
#            no spill in any).
#   r240     TESSEL_WS_REGISTERS_24_240=1 (env, A/B only): setmaxnreg 24 for
#            the producer, 240 for the two consumer warpgroups (FA3's
#            split) instead of 40 / 232; for the D64 kernels that spill
#            (ptxas: D64 + d64s causal 100 B -> 0).
#   d64n64   D64 on the 128x64 tile (dQ transposed, as D128) + dq-pad 4,
#            overlap, mask-diagonal.
#
#   tools/dev/s10_flashbwd_device.sh .probe/stage/build   # from the repo root
#
# 1. float64 checks at S=333 (ragged), full and causal each (--causal
#    default both), D128 / D64, GQA / MQA, fwd+bwd; compute-sanitizer memcheck
#    and racecheck of the bulk path at 1x200x2x128; all in parallel (~40 s).
# 2. benches, backward alone (--pass=bwd --check=false), full and causal in
#    one process (~30 s each, host inputs), most telling first; then SDPA
#    fwd+bwd (peers.py) and tessel fwd+bwd with the fastest backward
#    candidate per size (sum of full and causal). DEADLINE (default 150 s) stops starting steps past it, the
#    table still comes: 150 gets D128 default / all / bulk; DEADLINE=240
#    D64 default / all / d64s too; DEADLINE=390 every backward A/B;
#    DEADLINE=540 SDPA and fwd+bwd too; DEADLINE=680 all.
# Logs go to $OUT/flashbwd/; the table is printed last.
set -u
S=${1:?staged build folder (.probe/stage/build)}
OUT=${OUT:-/tmp/s10_out}/flashbwd
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_flashbwd
fa=$S/samples/flash_attention
DEADLINE=${DEADLINE:-150}
BULK="--bwd-dq-bulk=true"
DVE="--bwd-dv-early=true"
R240=TESSEL_WS_REGISTERS_24_240=1
XB=TESSEL_WGMMA_ACROSS_BARRIERS=1
BULKI=TESSEL_BULK_WAIT_AT_ISSUE=1
D64S="--bwd-dq-pad=8 --bwd-overlap=true --bwd-mask-diagonal=true"
D64N64="--bwd-block-m=128 --bwd-block-n=64 --bwd-threads=256 --bwd-dq-pad=4
  --bwd-overlap=true --bwd-mask-diagonal=true"
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
summary=()

par() {  # name, limit, command...: in the background, rc into name.rc
  local n=$1 lim=$2; shift 2
  (t=$SECONDS; timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
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
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-bulk-fb-d128 100 $fb --size=1x333x2x128 $BULK
par chk-bulk-gqa-d128 100 $chk --size=1x333x4x128 --heads-kv=2 $BULK
par chk-dve-fb-d128 100 $fb --size=1x333x2x128 $DVE
par chk-dve-bulk-gqa-d128 100 $chk --size=2x333x4x128 --heads-kv=2 $DVE $BULK
par chk-bulk-fb-d64 100 $fb --size=1x333x2x64 $BULK
par chk-bulk-mqa-d64 100 $chk --size=1x333x4x64 --heads-kv=1 $BULK
par chk-d64s 100 $fb --size=1x333x2x64 $D64S
par chk-d64s-bulk-gqa 100 $chk --size=2x333x4x64 --heads-kv=2 $D64S $BULK
par chk-d64n64 100 $fb --size=1x333x2x64 $D64N64
par chk-d64n64-bulk 100 $chk --size=1x333x4x64 --heads-kv=2 $D64N64 $BULK
par chk-xb-fb-d128 100 env $XB $fb --size=1x333x2x128
par chk-all-gqa-d128 100 env $XB $chk --size=2x333x4x128 --heads-kv=2 $DVE $BULK
par chk-all-d64-fb 100 env $R240 $XB $fb --size=1x333x2x64 $D64S $BULK
par chk-all-d64-mqa 100 env $R240 $XB $chk --size=2x333x4x64 --heads-kv=1 \
  $D64S $BULK
par chk-r240-d64s 100 env $R240 $fb --size=1x333x2x64 $D64S
par chk-r240-d128 100 env $R240 $chk --size=1x333x4x128 --heads-kv=2
par chk-bulki-gqa-d128 100 env $BULKI $chk --size=1x333x4x128 --heads-kv=2 \
  $BULK
par mem-bulk-d128 60 $san memcheck $chk --size=1x200x2x128 $BULK
par race-bulk-d128 60 $san racecheck $chk --size=1x200x2x128 --causal=false \
  $BULK
par mem-bulk-d64 60 $san memcheck $chk --size=1x200x2x64 --causal=true $BULK
par race-all-d128 60 env $XB $san racecheck $chk --size=1x200x2x128 \
  --causal=true $DVE $BULK
wait
for f in "$OUT"/*.rc; do summary+=("$(cat "$f")"); rm -f "$f"; done
# The last column of a sample's table row: pass / FAIL.
checks=$(grep -h " gpu " "$OUT"/chk-*.log | awk '{print $NF}' | sort | uniq -c |
  tr -s ' \n' ' ')
san_errors=$(grep -h "ERROR SUMMARY" "$OUT"/mem-*.log "$OUT"/race-*.log |
  sort | uniq -c | tr -s ' \n' ' ')

# 2. Backward alone, full and causal in one process each.
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-all-d128 75 env $XB $bench $d128 $DVE $BULK
step bwd-bulk-d128 75 $bench $d128 $BULK
step bwd-default-d64 75 $bench $d64
step bwd-all-d64 75 env $R240 $XB $bench $d64 $D64S $BULK
step bwd-d64s-d64 75 $bench $d64 $D64S
step bwd-dve-d128 75 $bench $d128 $DVE
step bwd-xb-d128 75 env $XB $bench $d128
step bwd-r240-d64s-d64 75 env $R240 $bench $d64 $D64S
step bwd-xb-d64s-bulk-d64 75 env $XB $bench $d64 $D64S $BULK
step bwd-d64s-bulk-d64 75 $bench $d64 $D64S $BULK
step sdpa-fwdbwd 120 python3 bench/peers.py --only sdpa \
  --attention-passes fwd+bwd --gqa-shapes '' --out "$OUT/peers.json"
grep -h "cudnn" "$OUT/sdpa-fwdbwd.log" >>"$OUT/bench.txt" 2>/dev/null

# Sum of the full and causal times of a bench step's log (999 if missing).
total() {
  awk '/ gpu /{for (i = 1; i < NF; ++i) if ($(i + 1) == "ms") s += $i; n++}
       END {print n == 2 ? s : 999}' "$OUT/$1.log" 2>/dev/null || echo 999
}
best() {  # step, flags, step, flags, ...: the flags of the smallest total
  local flags="" t=999 n
  while (($# >= 2)); do
    n=$(total "$1")
    if awk -v a="$n" -v b="$t" 'BEGIN {exit !(a < b)}'; then
      t=$n flags=$2
    fi
    shift 2
  done
  echo "$flags"
}
best128=$(best bwd-default-d128 "" bwd-all-d128 "$XB $DVE $BULK" \
  bwd-bulk-d128 "$BULK" bwd-dve-d128 "$DVE" bwd-xb-d128 "$XB")
best64=$(best bwd-default-d64 "" bwd-all-d64 "$R240 $XB $D64S $BULK" \
  bwd-d64s-d64 "$D64S" bwd-r240-d64s-d64 "$R240 $D64S" \
  bwd-xb-d64s-bulk-d64 "$XB $D64S $BULK" bwd-d64s-bulk-d64 "$D64S $BULK")
fwdbwd="$fa --backend=gpu --bench --check=false --pass=fwd+bwd --causal=both"
fwdbwd_step() {  # name, size, flags (TESSEL_* words go to env)
  local n=$1 size=$2 w envs=() args=()
  for w in $3; do
    if [[ $w == TESSEL_* ]]; then envs+=("$w"); else args+=("$w"); fi
  done
  step "$n" 75 env "${envs[@]}" $fwdbwd $size "${args[@]}"
}
fwdbwd_step fwdbwd-best-d128 $d128 "$best128"
fwdbwd_step fwdbwd-best-d64 $d64 "$best64"
step bwd-bulk-d64 75 $bench $d64 $BULK
step bwd-d64n64-d64 75 $bench $d64 $D64N64
step bwd-r240-d128 75 env $R240 $bench $d128
step bwd-bulki-d128 75 env $BULKI $bench $d128 $BULK
echo "fwd+bwd flags: D128 '${best128}' D64 '${best64}'" >>"$OUT/bench.txt"
# tessel fwd+bwd against cuDNN's, same call: cuDNN ms / tessel ms (goal 0.9).
cat "$OUT/sdpa-fwdbwd.log" "$OUT"/fwdbwd-best-d*.log 2>/dev/null | awk '
  $2 == "torch_sdpa:cudnn" && $3 == "fwd+bwd" {
    d = $8; sub(":", "", d); sub("D", "", d); peer[d " " $4] = $9 }
  / gpu / && /fwd_bwd/ {
    d = ""; for (i = 1; i <= NF; ++i) if ($i ~ /^D=/) d = substr($i, 3)
    for (i = 1; i < NF; ++i) if ($(i + 1) == "ms") t = $i
    mine[d " " ($1 ~ /causal/ ? "causal" : "full")] = t }
  END { for (k in mine) if (k in peer)
          printf "fwd+bwd D%s: tessel %s ms, cuDNN %s ms, ratio %.3f\n",
                 k, mine[k], peer[k], peer[k] / mine[k] }' >>"$OUT/bench.txt"

printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
echo "checks (float64): $checks" >>"$OUT/summary.txt"
echo "sanitizers: $san_errors" >>"$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/bench.txt" 2>/dev/null
