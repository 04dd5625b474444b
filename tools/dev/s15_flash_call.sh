#!/usr/bin/env bash
# Session 15's flash call (issues 16 and 15, ~6 minutes) on a build of the
# descriptor change (branch s15-desc): float64 checks of the flash forward,
# fwd+bwd, grouped heads, varlen at ragged S and of the gemm paths the change
# touches (NN, NT, 1000^3, ping-pong, cluster pair); memcheck / racecheck /
# synccheck; the backward and the 4096^3 gemm beside the old descriptors
# (TESSEL_WGMMA_DESC_WHOLE=1) on the same GPU; then SDPA and tessel (fwd,
# fwd+bwd, grouped heads, varlen) in the same call. Table last.
# With a second staged build (branch s15-rows: row reduces that leave their
# scratch to the barrier planner), its row kernels' float64 checks and
# sanitizers run beside the flash ones.
#   tools/dev/s15_flash_call.sh .probe/desc/build [.probe/rows/build]
set -u
S=${1:?staged build folder}
R=${2:-}
source tools/dev/device_steps.sh
begin_call "$S" flash15 /tmp/tc_flash15
fa=$S/samples/flash_attention
g=$S/samples/gemm
deadline=${DEADLINE:-520}
c="$fa --backend=gpu --check"
par chk-fwd-d128 120 $c --size=1x333x2x128
par chk-fwd-gqa 120 $c --size=2x333x4x128 --heads-kv=2 --lse=true
par chk-fwd-d64 120 $c --size=2x1000x3x64 --causal=true
par chk-fb-d128 120 $c --pass=fwd+bwd --size=2x333x4x128
par chk-fb-d64 120 $c --pass=fwd+bwd --size=2x333x4x64
par chk-fb-gqa 120 $c --pass=fwd+bwd --size=1x333x4x128 --heads-kv=2
par chk-bwd-mqa-d64 120 $c --pass=bwd --size=2x333x4x64 --heads-kv=1
par chk-varlen 120 $c --varlen=1,17,300,333,1000 --size=4x128
par chk-gemm-nn 60 $g --check --size=333x517x200
par chk-gemm-nt 60 $g --check --size=333x517x200 --layout=NT
par chk-gemm-1000 60 $g --check --size=1000x1000x1000
par chk-gemm-pingpong 60 $g --check --size=2100x520x200 --layout=NT --pingpong=true
par chk-gemm-pair 60 $g --check --size=512x512x256 --cluster=2
rows=(rmsnorm layernorm softmax)
if [ -n "$R" ]; then
  for k in "${rows[@]}"; do
    for size in 300x1000 64x4100 64x16384 bench; do
      par chk-$k-$size 120 "$R/samples/$k" --backend=gpu --check --size=$size
    done
    par chk-$k-grid 90 "$R/samples/$k" --backend=gpu --check --size=300x1000 --grid=7
  done
  par gtest-row-reduce 120 "$R/tests/codegen/tessel_row_reduce_gpu_test"
  par gtest-samples-rows 150 "$R/tests/samples/samples_gpu_test" \
    --gtest_filter='*rmsnorm*:*layernorm*:*softmax*'
fi
wait
par mem-fb-d128 120 $san memcheck $c --pass=fwd+bwd --size=1x200x2x128
par race-bwd-d128 120 $san racecheck $c --pass=bwd --size=1x200x2x128 --causal=true
par sync-bwd-d128 120 $san synccheck $c --pass=bwd --size=1x200x2x128 --causal=true
par mem-fb-d64 120 $san memcheck $c --pass=fwd+bwd --size=1x200x2x64 --causal=true
par race-fb-d64 120 $san racecheck $c --pass=fwd+bwd --size=1x200x2x64
par race-gemm-pingpong 120 $san racecheck $g --check --size=2100x520x200 --layout=NT --pingpong=true
if [ -n "$R" ]; then
  for k in "${rows[@]}"; do
    for size in 300x1000 64x16384; do
      par mem-$k-$size 120 $san memcheck "$R/samples/$k" --backend=gpu --check --size=$size
      par race-$k-$size 120 $san racecheck "$R/samples/$k" --backend=gpu --check --size=$size
      par sync-$k-$size 120 $san synccheck "$R/samples/$k" --backend=gpu --check --size=$size
    done
    par race-$k-grid 120 $san racecheck "$R/samples/$k" --backend=gpu --check --size=300x1000 --grid=7
  done
fi
wait
grep -H "FAILED\|PASSED\|SKIPPED" "$O"/gtest-*.log >>"$O/bench.txt" 2>/dev/null
OLD=(env TESSEL_WGMMA_DESC_WHOLE=1)
b="$fa --backend=gpu --bench --check=false"
step bwd-d128-new 60 $b --pass=bwd --causal=both --size=8x4096x16x128
step bwd-d128-old 60 "${OLD[@]}" $b --pass=bwd --causal=both --size=8x4096x16x128
step gemm-new 30 $g --bench --size=4096x4096x4096
step gemm-old 30 "${OLD[@]}" $g --bench --size=4096x4096x4096
step sdpa 200 python3 bench/peers.py --only sdpa,sdpa_varlen \
  --attention-passes fwd,fwd+bwd --out "$O/peers.json"
grep -h "cudnn\|varlen" "$O/sdpa.log" >>"$O/bench.txt" 2>/dev/null
step fwd 90 $b --size=bench --json="$O/fwd.json"
step fb-d128 90 $b --pass=fwd+bwd --size=8x4096x16x128 --json="$O/fb_d128.json"
step fb-d64 90 $b --pass=fwd+bwd --size=8x4096x32x64 --json="$O/fb_d64.json"
step fwd-gqa 60 $b --size=8x4096x32x128 --heads-kv=8 --json="$O/fwd_gqa.json"
step fwd-varlen 60 $b --varlen=bench --json="$O/fwd_varlen.json"
step bwd-d64-new 60 $b --pass=bwd --causal=both --size=8x4096x32x64
step bwd-d64-old 60 "${OLD[@]}" $b --pass=bwd --causal=both --size=8x4096x32x64
grep -h "timed" "$O"/*.log >>"$O/bench.txt"
end_call flash15
