#!/usr/bin/env bash
# Session 14's closing flash call (issue 16, ~5 minutes): float64 checks of
# today's defaults (the backward's longest-first causal grid, the preprocess
# that zeroes dQ_acc, the causal D128 tile's dv_early + wgmma groups across
# barriers) at ragged S, forward, fwd+bwd, grouped heads, varlen;
# compute-sanitizer memcheck / racecheck / synccheck; then SDPA (fwd,
# fwd+bwd, grouped heads, varlen) and tessel in the same call. Table last.
#   tools/dev/s14_flash_final.sh .probe/stage/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" final /tmp/tc_flash_final
fa=$S/samples/flash_attention
deadline=${DEADLINE:-540}
g="$fa --backend=gpu --check"
par chk-fwd-d128 120 $g --size=1x333x2x128
par chk-fwd-gqa 120 $g --size=2x333x4x128 --heads-kv=2 --lse=true
par chk-fwd-d64 120 $g --size=2x1000x3x64 --causal=true
par chk-fb-d128 120 $g --pass=fwd+bwd --size=2x333x4x128
par chk-fb-d64 120 $g --pass=fwd+bwd --size=2x333x4x64
par chk-fb-gqa 120 $g --pass=fwd+bwd --size=1x333x4x128 --heads-kv=2
par chk-bwd-mqa-d64 120 $g --pass=bwd --size=2x333x4x64 --heads-kv=1
par chk-varlen 120 $g --varlen=1,17,300,333,1000 --size=4x128
wait
par mem-fb-d128 120 $san memcheck $g --pass=fwd+bwd --size=1x200x2x128
par race-bwd-d128 120 $san racecheck $g --pass=bwd --size=1x200x2x128 --causal=true
par sync-bwd-d128 120 $san synccheck $g --pass=bwd --size=1x200x2x128 --causal=true
par mem-fb-d64 120 $san memcheck $g --pass=fwd+bwd --size=1x200x2x64 --causal=true
par race-fb-d64 120 $san racecheck $g --pass=fwd+bwd --size=1x200x2x64
wait
step sdpa 200 python3 bench/peers.py --only sdpa,sdpa_varlen \
  --attention-passes fwd,fwd+bwd --out "$O/peers.json"
grep -h "cudnn\|varlen" "$O/sdpa.log" >>"$O/bench.txt" 2>/dev/null
b="$fa --backend=gpu --bench --check=false"
step fwd 90 $b --size=bench --json="$O/fwd.json"
step fwd-gqa 60 $b --size=8x4096x32x128 --heads-kv=8 --json="$O/fwd_gqa.json"
step fwd-varlen 60 $b --varlen=bench --json="$O/fwd_varlen.json"
step fb-d128 90 $b --pass=fwd+bwd --size=8x4096x16x128 --json="$O/fb_d128.json"
step fb-d64 90 $b --pass=fwd+bwd --size=8x4096x32x64 --json="$O/fb_d64.json"
step bwd-d128 90 $b --pass=bwd --size=8x4096x16x128 --json="$O/bwd_d128.json"
grep -h "timed" "$O"/*.log >>"$O/bench.txt"
end_call final
