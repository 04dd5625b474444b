#!/usr/bin/env bash
# Session 16: the row kernels' block shapes at the two large sizes (threads,
# persistent grids, two rows a block, rmsnorm's prefetch), then one round of
# the peers (eager, torch.compile, copy) in the same call. Session 16 ran it
# with a streaming-cache-hint variant beside each default as well (ld/st
# .global.cs on the row copies): 1-2 % slower at the large sizes on the H100,
# so that variant was dropped (docs/benchmarks.md).
#   tools/dev/s16_rows_sweep.sh .probe/m16/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" sweep16 /tmp/tc_sweep16
deadline=${DEADLINE:-280}
for sz in 4096x8192 16384x4096; do
  for k in rmsnorm layernorm softmax; do
    b="$S/samples/$k --backend=gpu --bench --check=false --size=$sz"
    step ${k}_${sz}_default 40 $b --json="$O/${k}_${sz}_default.json"
    for t in 256 1024; do
      step ${k}_${sz}_t$t 40 $b --threads=$t --json="$O/${k}_${sz}_t$t.json"
    done
    for g in 528 1056; do
      step ${k}_${sz}_g$g 40 $b --grid=$g --json="$O/${k}_${sz}_g$g.json"
    done
    step ${k}_${sz}_m2 40 $b --block-m=2 --json="$O/${k}_${sz}_m2.json"
  done
  step rmsnorm_${sz}_g528p 40 $S/samples/rmsnorm --backend=gpu --bench \
    --check=false --size=$sz --grid=528 --prefetch --json="$O/rmsnorm_${sz}_g528p.json"
done
for k in rmsnorm layernorm softmax; do
  b="$S/samples/$k --backend=gpu --bench --check=false --size=8192x1024"
  step ${k}_8192x1024_default 40 $b --json="$O/${k}_8192x1024_default.json"
done
step peers 100 python3 bench/peers.py --only norms --compile-norms \
  --norm-timing events --out "$O/peers.json"
grep -h "norm\|softmax\|copy" "$O"/peers.log >>"$O/bench.txt" 2>/dev/null
end_call sweep16
