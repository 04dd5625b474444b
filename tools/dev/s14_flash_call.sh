#!/usr/bin/env bash
# Session 14's first flash call (issue 16, ~7 minutes): causal blocks
# launched longest first over groups of heads (samples/attention_grid.h,
# default on; lf0 = --longest-first=false --bwd-longest-first=false, the
# grid as it was) and the backward's dQ gemm before dK's (dkl =
# --bwd-dk-last=true), alone and with xb (TESSEL_WGMMA_ACROSS_BARRIERS=1).
# 1. float64 checks (ragged S, GQA) and memcheck / racecheck;
# 2. backward alone, full and causal, B8 S4096 H16 D128 and H32 D64;
# 3. the forward, causal, with and without the new grid.
#   tools/dev/s14_flash_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
O=$TOP/flash
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-540}
LF0="--longest-first=false --bwd-longest-first=false"
DKL="--bwd-dk-last=true"
XB=TESSEL_WGMMA_ACROSS_BARRIERS=1
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
: >"$O/summary.txt"
chk="$fa --backend=gpu --check --pass=bwd"
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-fb-d128 120 $fb --size=2x333x4x128
par chk-fb-d64 120 $fb --size=2x333x4x64
par chk-gqa-d128 120 $chk --size=2x333x4x128 --heads-kv=2 --causal=true
par chk-dkl-fb-d128 120 $fb --size=1x333x2x128 $DKL
par chk-dkl-fb-d64 120 $fb --size=1x333x2x64 $DKL
par chk-xbdkl-fb-d128 120 env $XB $fb --size=1x333x2x128 $DKL
par chk-xbdkl-gqa-d64 120 env $XB $chk --size=2x333x4x64 --heads-kv=1 $DKL
par chk-fwd-b3 120 $fa --backend=gpu --check --size=3x1000x5x128 --causal=true
wait
par mem-dkl-d128 120 $san memcheck $fb --size=1x200x2x128 $DKL --causal=true
par race-dkl-d128 120 $san racecheck $chk --size=1x200x2x128 $DKL
par race-d64 120 $san racecheck $chk --size=1x200x2x64 --causal=true
par race-fwd 120 $san racecheck $fa --backend=gpu --check --size=2x300x4x128 --causal=true
wait
grep -h " gpu " "$O"/chk-*.log | awk '{print $NF}' | sort | uniq -c >"$O/checks.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log >>"$O/checks.txt"
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-lf0-d128 75 $bench $d128 $LF0
step bwd-dkl-d128 75 $bench $d128 $DKL
step bwd-xbdkl-d128 75 env $XB $bench $d128 $DKL
step bwd-xb-d128 75 env $XB $bench $d128
step bwd-default-d64 75 $bench $d64
step bwd-lf0-d64 75 $bench $d64 $LF0
step bwd-xbdkl-d64 75 env $XB $bench $d64 $DKL
fwd="$fa --backend=gpu --bench --check=false --pass=fwd --causal=true"
step fwd-default-d128 60 $fwd $d128
step fwd-lf0-d128 60 $fwd $d128 $LF0
step fwd-default-d64 60 $fwd $d64
step fwd-lf0-d64 60 $fwd $d64 $LF0
cat "$O/summary.txt" "$O/checks.txt" "$O/bench.txt" >"$TOP/flash_table.txt"
(cd "$TOP" && tar -czf flash.tar.gz flash && rm -rf flash)
cat "$TOP/flash_table.txt"
