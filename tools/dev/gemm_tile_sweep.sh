#!/usr/bin/env bash
# H200: the GEMM sample's tile and stage options on the Hopper path, f16 and
# bf16 at 4096^3 and 8192^3, cuBLAS in the same call. Prints one line per
# run. Argument: the staged build; TILES (lines of flags) replaces the list.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_CACHE_DIR=/tmp/tc
g=$S/samples/gemm
"$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes f16,bf16 --layouts NN,NT \
  2>&1 | grep cublas
while read -r tile; do
  for sz in 4096x4096x4096 8192x8192x8192; do
    for dt in f16 bf16; do
      r=$(timeout 60 $g --bench --size=$sz --dtype=$dt $tile ${EXTRA:-} 2>&1 |
        grep " gpu ")
      echo "$tile $dt | $r"
    done
  done
done <<<"${TILES:-"--block-m=256 --block-n=128 --stages=3
--block-m=256 --block-n=128 --stages=4
--block-m=128 --block-n=256 --stages=3
--block-m=128 --block-n=256 --stages=4
--block-m=128 --block-n=256 --stages=4 --panel=16
--block-m=128 --block-n=128 --stages=4"}"
