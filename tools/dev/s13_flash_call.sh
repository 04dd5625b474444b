#!/usr/bin/env bash
# Session 13's flash-backward call (issue 16, ~6 minutes): a third pipeline
# stage for the backward (--bwd-stages=3: D128 215 KB of shared memory, D64
# 196 KB; never timed before), alone and with the opt-in schedules, then
# fwd+bwd beside SDPA's; then layernorm's threads at the large rows.
#   s3     --bwd-stages=3
#   dve    --bwd-dv-early=true
#   xb     TESSEL_WGMMA_ACROSS_BARRIERS=1
#   r240   TESSEL_WS_REGISTERS_24_240=1
# 1. float64 checks (S=333, full and causal) and memcheck / racecheck of s3;
# 2. backward alone, full and causal in one process each, B8 S4096 H16 D128
#    and H32 D64;
# 3. SDPA fwd+bwd (peers.py), tessel fwd+bwd with the default and with s3.
#   tools/dev/s13_flash_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
O=$TOP/flash
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_flash
fa=$S/samples/flash_attention
deadline=${DEADLINE:-430}
S3="--bwd-stages=3"
DVE="--bwd-dv-early=true"
XB=TESSEL_WGMMA_ACROSS_BARRIERS=1
R240=TESSEL_WS_REGISTERS_24_240=1
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
: >"$O/summary.txt"
chk="$fa --backend=gpu --check --pass=bwd"
fb="$fa --backend=gpu --check --pass=fwd+bwd"
par chk-s3-fb-d128 100 $fb --size=1x333x2x128 $S3
par chk-s3-gqa-d128 100 $chk --size=2x333x4x128 --heads-kv=2 $S3
par chk-s3-dve-fb-d128 100 $fb --size=1x333x2x128 $S3 $DVE
par chk-s3-fb-d64 100 $fb --size=1x333x2x64 $S3
par chk-s3-mqa-d64 100 $chk --size=2x333x4x64 --heads-kv=1 $S3
par chk-s3-xb-r240-d128 100 env $XB $R240 $fb --size=1x333x2x128 $S3
par mem-s3-d128 90 $san memcheck $chk --size=1x200x2x128 $S3
par race-s3-d128 90 $san racecheck $chk --size=1x200x2x128 --causal=false $S3
par race-s3-d64 90 $san racecheck $chk --size=1x200x2x64 --causal=true $S3
wait
grep -h " gpu " "$O"/chk-*.log | awk '{print $NF}' | sort | uniq -c >"$O/checks.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log >>"$O/checks.txt"
bench="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
d128="--size=8x4096x16x128" d64="--size=8x4096x32x64"
step bwd-default-d128 75 $bench $d128
step bwd-s3-d128 75 $bench $d128 $S3
step bwd-s3-dve-d128 75 $bench $d128 $S3 $DVE
step bwd-s3-xb-d128 75 env $XB $bench $d128 $S3
step bwd-s3-r240-d128 75 env $R240 $bench $d128 $S3
step bwd-default-d64 75 $bench $d64
step bwd-s3-d64 75 $bench $d64 $S3
step sdpa-fwdbwd 150 python3 bench/peers.py --only sdpa \
  --attention-passes fwd+bwd --gqa-shapes '' --out "$O/peers.json"
grep -h "cudnn" "$O/sdpa-fwdbwd.log" >>"$O/bench.txt" 2>/dev/null
fwdbwd="$fa --backend=gpu --bench --check=false --pass=fwd+bwd --causal=both"
step fb-default-d128 90 $fwdbwd $d128
step fb-s3-d128 90 $fwdbwd $d128 $S3
step fb-default-d64 90 $fwdbwd $d64
step fb-s3-d64 90 $fwdbwd $d64 $S3
cat "$O/summary.txt" "$O/checks.txt" "$O/bench.txt" >"$TOP/flash_table.txt"
(cd "$TOP" && tar -czf flash.tar.gz flash && rm -rf flash)
SIZE=4096x8192 KERNELS=layernorm TILES="1:256 1:512 1:1024" ROUNDS=2 BENCH_SIZES= \
  bash tools/dev/s13_rows_call.sh "$S" >/dev/null 2>&1
SIZE=16384x4096 KERNELS=layernorm TILES="2:256 2:512 1:256 1:512 2:1024" ROUNDS=2 BENCH_SIZES= \
  bash tools/dev/s13_rows_call.sh "$S" >/dev/null 2>&1
cat "$TOP/flash_table.txt" "$TOP"/rows_*.txt
