#!/usr/bin/env bash
# Session 9's GEMM exploration on the H200 (~2 minutes): the shapes nearest
# their bar (1000^3, 4096x4096x1024, 2048^3, 4096^3) with the tensor-map
# prefetch in the producer, a few 1000^3 tiles, and 4096^3 three times
# between two cuBLAS runs to see how much a ratio moves inside one call.
#   tools/dev/s9_gemm_explore.sh .probe/stage/build   # writes $OUT/gemm
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/explore}/gemm
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
sizes=1000x1000x1000,4096x4096x1024,2048x2048x2048,4096x4096x4096
cublas() {
  timeout 60 "$S/bench/cublas_gemm" --sizes "$sizes" --dtypes f16 \
    --layouts NN,NT --out "$OUT/cublas_$1.json" >"$OUT/cublas_$1.log" 2>&1
  grep -h "cublas" "$OUT/cublas_$1.log" | sed "s/^/cublas run $1: /" >>"$OUT/table.txt"
}
run() {  # name, flags...
  local n=$1; shift
  timeout 40 "$g" --bench "$@" >"$OUT/$n.log" 2>&1
  echo "$n rc=$? $(grep -h ' gpu ' "$OUT/$n.log" | tr -s ' ')" >>"$OUT/table.txt"
}
: # checks: in s9_pingpong_device.sh



cublas 1
for i in 1 2; do run "nn4096_$i" --size=4096x4096x4096; done
run nt4096 --size=4096x4096x4096 --layout=NT
for s in 1000x1000x1000 4096x4096x1024 2048x2048x2048; do
  run "nn_$s" --size=$s
  run "nt_$s" --size=$s --layout=NT
done
run 1000_s4 --size=1000x1000x1000 --block-m=128 --block-n=128 --stages=4
run 1000_m64 --size=1000x1000x1000 --block-m=64 --block-n=128 --stages=8 --threads=128
run 1000_n64 --size=1000x1000x1000 --block-m=128 --block-n=64 --stages=6
run 1024_s8 --size=4096x4096x1024 --block-m=128 --block-n=128 --stages=8
cublas 2
cat "$OUT/table.txt"
