#!/usr/bin/env bash
# Session 13's last call (~4 minutes): persistent grids of three dims (flash
# attention's tiles x heads x batch, split-K's tiles x slices) for the
# warp-specialized kernels whose loop runs the same steps for every tile.
#   1. float64 checks of every kernel that changed (flash forward and
#      backward full, grouped heads, D64 / D128, ragged S; linear attention
#      forward, chunk states; split-K GEMM), racecheck of flash fwd+bwd and
#      split-K;
#   2. A/B against --persistent=false (the previous code, one block per
#      tile) in the same call: flash fwd+bwd D128 full, linear attention
#      forward D64, split-K; the persistent forward D128 and fwd+bwd D64;
#      SDPA's fwd and fwd+bwd.
# Result (bench/results/h200_s13/persistent/): all correct, but fwd+bwd D128
# 8.302 ms against 8.304, linear attention D64 forward 0.158 against 0.139,
# split-K 0.324 against 0.171: the change was reverted.
#   tools/dev/s13_persistent_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
O=$TOP/persistent
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_persistent
fa=$S/samples/flash_attention la=$S/samples/linear_attention sk=$S/samples/splitk_gemm
deadline=${DEADLINE:-250}
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
: >"$O/summary.txt"
par chk-fb-d128 100 $fa --backend=gpu --check --pass=fwd+bwd --size=1x333x2x128 --causal=false
par chk-fb-gqa-d128 100 $fa --backend=gpu --check --pass=fwd+bwd --size=2x333x4x128 --heads-kv=2 --causal=false
par chk-fb-d64 100 $fa --backend=gpu --check --pass=fwd+bwd --size=2x333x2x64 --causal=false
par chk-fwd-d128 100 $fa --backend=gpu --check --pass=fwd --size=3x1000x3x128
par chk-la 100 $la --backend=gpu --check --size=small
par chk-sk 100 $sk --backend=gpu --check --size=small
par chk-sk-big 100 $sk --backend=gpu --check --size=1000x520x3000
par race-fb-d128 100 $san racecheck $fa --backend=gpu --check --pass=fwd+bwd --size=1x200x2x128 --causal=false
par mem-fb-d64 100 $san memcheck $fa --backend=gpu --check --pass=fwd+bwd --size=1x200x2x64 --causal=false
par race-sk 100 $san racecheck $sk --backend=gpu --check --size=small
wait
grep -h " gpu " "$O"/chk-*.log | awk '{print $NF}' | sort | uniq -c >"$O/checks.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log >>"$O/checks.txt"
fb="$fa --backend=gpu --bench --check=false --pass=fwd+bwd --causal=false"
step fb-d128-persistent 60 $fb --size=8x4096x16x128
step fb-d128-blocks 60 $fb --size=8x4096x16x128 --persistent=false
step fwd-d128-persistent 60 $fa --backend=gpu --bench --check=false --pass=fwd --causal=false --size=8x4096x16x128
step la-persistent 60 $la --backend=gpu --bench --check=false --pass=fwd --size=8x4096x32x64
step la-blocks 60 $la --backend=gpu --bench --check=false --pass=fwd --size=8x4096x32x64 --persistent=false
step sk-persistent 40 $sk --backend=gpu --bench --size=bench
step sk-blocks 40 $sk --backend=gpu --bench --size=bench --persistent=false
step sdpa 100 python3 bench/peers.py --only sdpa --attention-shapes 8,4096,16,128 \
  --gqa-shapes '' --varlen-shapes '' --out "$O/peers.json"
grep -h "cudnn" "$O/sdpa.log" >>"$O/bench.txt" 2>/dev/null
step fb-d64-persistent 60 $fb --size=8x4096x32x64
cat "$O/summary.txt" "$O/checks.txt" "$O/bench.txt" >"$TOP/persistent_table.txt"
(cd "$TOP" && tar -czf persistent.tar.gz persistent && rm -rf persistent)
cat "$TOP/persistent_table.txt"
