#!/usr/bin/env bash
# Session 8's row-kernel tile sweep (issue 17), part of one H200 call
# (~3 minutes): rmsnorm / layernorm / softmax at the three bench sizes over a
# handful of (block_m, threads) tiles each, unchecked (the defaults' checks
# run in row_kernels_device.sh), then the PyTorch peers and the copy
# bandwidth of the same run. One line per (kernel, size, tile) in
# $OUT/rows_sweep.txt. Argument: the staged build.
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/rows_sweep_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
declare -A tiles=(
  [4096x8192]="1:256 1:512 1:1024 2:256 2:512 2:1024 4:1024"
  [16384x4096]="1:128 1:256 1:512 2:256 2:512 4:512 4:1024 8:1024"
  [8192x1024]="1:32 2:64 4:128 8:256 4:256 8:512 16:512 16:1024 32:1024"
)
for k in rmsnorm layernorm softmax; do
  for size in 4096x8192 16384x4096 8192x1024; do
    for t in ${tiles[$size]}; do
      bm=${t%%:*} th=${t##*:}
      line=$(timeout 30 "$S/samples/$k" --backend=gpu --bench --check=false \
        --size="$size" --block-m="$bm" --threads="$th" 2>&1 | grep " gpu " |
        head -1)
      printf '%-10s %-11s bm=%-3s threads=%-5s %s\n' "$k" "$size" "$bm" "$th" \
        "${line:-FAILED}" >>"$OUT/rows_sweep.txt"
    done
  done
done
timeout 90 python3 bench/peers.py --only norms --compile-norms \
  --out "$OUT/peers_norms.json" >"$OUT/peers_norms.log" 2>&1
grep -h "copy\|torch" "$OUT/peers_norms.log" >>"$OUT/rows_sweep.txt"
