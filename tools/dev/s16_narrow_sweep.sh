#!/usr/bin/env bash
# Session 16: the row kernels' narrow-row block shapes at 8192x1024 (rows per
# block, threads, elements per thread), two rounds, then the peers once.
#   tools/dev/s16_narrow_sweep.sh .probe/m16/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" narrow16 /tmp/tc_narrow16
deadline=${DEADLINE:-150}
for r in 1 2; do
  for k in rmsnorm layernorm softmax; do
    b="$S/samples/$k --backend=gpu --bench --check=false --size=8192x1024"
    step ${k}_default_r$r 30 $b --json="$O/${k}_default_r$r.json"
    for v in "2 128" "2 256" "4 256" "4 512" "1 64" "8 512"; do
      set -- $v
      step ${k}_m$1_t$2_r$r 30 $b --block-m=$1 --threads=$2 \
        --json="$O/${k}_m$1_t$2_r$r.json"
    done
  done
done
step peers 100 python3 bench/peers.py --only norms --compile-norms \
  --norm-timing events --out "$O/peers.json"
grep -h "norm\|softmax\|copy" "$O"/peers.log >>"$O/bench.txt" 2>/dev/null
end_call narrow16
