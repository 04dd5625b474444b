#!/usr/bin/env bash
# Session 14's second flash call (issue 16, ~6 minutes): the preprocess that
# zeroes dQ_acc (no zero kernel) checked and timed; the backward with
# --bwd-dv-early (dve), alone and with xb (TESSEL_WGMMA_ACROSS_BARRIERS=1),
# on the longest-first grid; the D128 causal forward with --mask-after (ma)
# and --gemm-turns (gt); then SDPA and tessel fwd+bwd side by side.
#   tools/dev/s14_flash_call2.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
O=$TOP/flash2
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-540}
DVE="--bwd-dv-early=true"
XB=TESSEL_WGMMA_ACROSS_BARRIERS=1
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
: >"$O/summary.txt"
chk="$fa --backend=gpu --check --pass=bwd"
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-fb-d128 120 $fb --size=2x333x4x128
par chk-fb-d64 120 $fb --size=2x333x4x64
par chk-gqa-d128 120 $chk --size=2x333x4x128 --heads-kv=2
par chk-mqa-d64 120 $chk --size=2x333x4x64 --heads-kv=1
par chk-dve-fb-d128 120 $fb --size=1x333x2x128 $DVE
par chk-xbdve-fb-d64 120 env $XB $fb --size=1x333x2x64 $DVE
par chk-ma-gt-d128 120 $fa --backend=gpu --check --size=2x333x4x128 --mask-after=true --gemm-turns=true
wait
par mem-fb-d128 120 $san memcheck $fb --size=1x200x2x128
par mem-fb-d64 120 $san memcheck $fb --size=1x200x2x64 --causal=true
par race-bwd-d128 120 $san racecheck $chk --size=1x200x2x128 --causal=true
par race-pre-d64 120 $san racecheck $chk --size=1x300x2x64 --causal=false
wait
grep -h " gpu " "$O"/chk-*.log | awk '{print $NF}' | sort | uniq -c >"$O/checks.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log >>"$O/checks.txt"
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-dve-d128 75 $bench $d128 $DVE
step bwd-xbdve-d128 75 env $XB $bench $d128 $DVE
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
cat "$O/summary.txt" "$O/checks.txt" "$O/bench.txt" >"$TOP/flash2_table.txt"
(cd "$TOP" && tar -czf flash2.tar.gz flash2 && rm -rf flash2)
cat "$TOP/flash2_table.txt"
