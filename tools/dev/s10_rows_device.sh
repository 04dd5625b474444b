#!/usr/bin/env bash
# Session 10, issue 17: rmsnorm 4096x8192 against torch.compile (~120 s).
# ncu (call 1) gave both kernels 33.3 us, yet events timing put tessel at
# 0.0396 ms against 0.0366. Here: the peers (events and graphs), tessel's
# default and the variants with more occupancy (--keep-dtype: x kept in f16
# registers; 512 / 1024 threads), each float64-checked, events and graphs;
# and tools/dev/s10_flush_probe.py (does the flush's fill value matter?).
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s10}/rows
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_rows
timeout 60 python3 bench/peers.py --only norms --compile-norms \
  --norm-timing events,cuda_graph --out "$O/peers_norms.json" >"$O/peers_norms.log" 2>&1
timeout 60 python3 tools/dev/s10_flush_probe.py >"$O/flush_probe.txt" 2>&1
: >"$O/t.txt"
run() { # tag size flags...
  local tag=$1 size=$2; shift 2
  timeout 30 "$S/samples/rmsnorm" --backend=gpu --check --size=1000x8192 "$@" >"$O/chk_$tag.log" 2>&1 || echo "CHECK FAILED $tag" >>"$O/t.txt"
  for mode in events graph; do
    local extra=""; [ $mode = graph ] && extra=--cuda-graph
    timeout 30 "$S/samples/rmsnorm" --backend=gpu --bench --check=false --size=$size $extra "$@" \
      --json="$O/rms_${tag}_${size}_$mode.json" >"$O/rms_${tag}_${size}_$mode.log" 2>&1
    printf '%-14s %-11s %-6s %s\n' "$tag" "$size" "$mode" \
      "$(grep -ho '[0-9.]* ms' "$O/rms_${tag}_${size}_$mode.log" | head -1)" >>"$O/t.txt"
  done
}
for size in 4096x8192 16384x4096 8192x1024; do
  run default $size
  run keep $size --keep-dtype
  run t512 $size --threads=512
  run t512keep $size --threads=512 --keep-dtype
done
run t1024 4096x8192 --threads=1024
grep -h "rmsnorm" "$O/peers_norms.log" | grep -v "^#" | head -20
cat "$O/flush_probe.txt"
cat "$O/t.txt"
