#!/usr/bin/env bash
# Session 14's second flash call (issue 16, ~6 minutes): the preprocess that
# zeroes dQ_acc (no zero kernel) checked and timed; the backward with
# --bwd-dv-early (dve), alone and with xb (--bwd-across-barriers, then $TESSEL_WGMMA_ACROSS_BARRIERS=1),
# on the longest-first grid; the D128 causal forward with --mask-after (ma)
# and --gemm-turns (gt); then SDPA and tessel fwd+bwd side by side.
#   tools/dev/s14_flash_call2.sh .probe/stage/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" flash2 /tmp/tc_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-540}
DVE="--bwd-dv-early=true"
XB="--bwd-across-barriers=true"  # was TESSEL_WGMMA_ACROSS_BARRIERS=1
chk="$fa --backend=gpu --check --pass=bwd"
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-fb-d128 120 $fb --size=2x333x4x128
par chk-fb-d64 120 $fb --size=2x333x4x64
par chk-gqa-d128 120 $chk --size=2x333x4x128 --heads-kv=2
par chk-mqa-d64 120 $chk --size=2x333x4x64 --heads-kv=1
par chk-dve-fb-d128 120 $fb --size=1x333x2x128 $DVE
par chk-xbdve-fb-d64 120 $fb --size=1x333x2x64 $DVE $XB
par chk-ma-gt-d128 120 $fa --backend=gpu --check --size=2x333x4x128 --mask-after=true --gemm-turns=true
wait
par mem-fb-d128 120 $san memcheck $fb --size=1x200x2x128
par mem-fb-d64 120 $san memcheck $fb --size=1x200x2x64 --causal=true
par race-bwd-d128 120 $san racecheck $chk --size=1x200x2x128 --causal=true
par race-pre-d64 120 $san racecheck $chk --size=1x300x2x64 --causal=false
wait
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-dve-d128 75 $bench $d128 $DVE
step bwd-xbdve-d128 75 $bench $d128 $DVE $XB
step bwd-dve-d64 75 $bench $d64 $DVE
fwd="$fa --backend=gpu --bench --check=false --pass=fwd --causal=true"
step fwd-default-d128 60 $fwd $d128
step fwd-ma-d128 60 $fwd $d128 --mask-after=true
step fwd-gt-d128 60 $fwd $d128 --gemm-turns=true
step sdpa 200 python3 bench/peers.py --only sdpa \
  --attention-passes fwd,fwd+bwd --gqa-shapes '' --out "$O/peers.json"
grep -h "cudnn" "$O/sdpa.log" >>"$O/bench.txt" 2>/dev/null
fwdbwd="$fa --backend=gpu --bench --check=false --pass=fwd+bwd --causal=both"
step fb-default-d128 90 $fwdbwd $d128 --json="$O/fb_d128.json"
step fb-default-d64 90 $fwdbwd $d64 --json="$O/fb_d64.json"
grep -h "timed" "$O"/*.log >>"$O/bench.txt"
end_call flash2
