#!/usr/bin/env bash
# Session 14's first flash call (issue 16, ~7 minutes): causal blocks
# launched longest first over groups of heads (samples/attention_grid.h,
# default on; lf0 = --longest-first=false --bwd-longest-first=false, the
# grid as it was) and the backward's dQ gemm before dK's (dkl =
# --bwd-dk-last=true), alone and with xb (then $TESSEL_WGMMA_ACROSS_BARRIERS=1,
# now --bwd-across-barriers). The forward's --longest-first and dk-last lost
# and are gone: their steps now stop at the unknown flag.
# 1. float64 checks (ragged S, GQA) and memcheck / racecheck;
# 2. backward alone, full and causal, B8 S4096 H16 D128 and H32 D64;
# 3. the forward, causal, with and without the new grid.
#   tools/dev/s14_flash_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" flash /tmp/tc_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-540}
LF0="--longest-first=false --bwd-longest-first=false"
DKL="--bwd-dk-last=true"
XB="--bwd-across-barriers=true"  # was TESSEL_WGMMA_ACROSS_BARRIERS=1
chk="$fa --backend=gpu --check --pass=bwd"
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-fb-d128 120 $fb --size=2x333x4x128
par chk-fb-d64 120 $fb --size=2x333x4x64
par chk-gqa-d128 120 $chk --size=2x333x4x128 --heads-kv=2 --causal=true
par chk-dkl-fb-d128 120 $fb --size=1x333x2x128 $DKL
par chk-dkl-fb-d64 120 $fb --size=1x333x2x64 $DKL
par chk-xbdkl-fb-d128 120 $fb --size=1x333x2x128 $DKL $XB
par chk-xbdkl-gqa-d64 120 $chk --size=2x333x4x64 --heads-kv=1 $DKL $XB
par chk-fwd-b3 120 $fa --backend=gpu --check --size=3x1000x5x128 --causal=true
wait
par mem-dkl-d128 120 $san memcheck $fb --size=1x200x2x128 $DKL --causal=true
par race-dkl-d128 120 $san racecheck $chk --size=1x200x2x128 $DKL
par race-d64 120 $san racecheck $chk --size=1x200x2x64 --causal=true
par race-fwd 120 $san racecheck $fa --backend=gpu --check --size=2x300x4x128 --causal=true
wait
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-lf0-d128 75 $bench $d128 $LF0
step bwd-dkl-d128 75 $bench $d128 $DKL
step bwd-xbdkl-d128 75 $bench $d128 $DKL $XB
step bwd-xb-d128 75 $bench $d128 $XB
step bwd-default-d64 75 $bench $d64
step bwd-lf0-d64 75 $bench $d64 $LF0
step bwd-xbdkl-d64 75 $bench $d64 $DKL $XB
fwd="$fa --backend=gpu --bench --check=false --pass=fwd --causal=true"
step fwd-default-d128 60 $fwd $d128
step fwd-lf0-d128 60 $fwd $d128 $LF0
step fwd-default-d64 60 $fwd $d64
step fwd-lf0-d64 60 $fwd $d64 $LF0
end_call flash
