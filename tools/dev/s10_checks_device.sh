#!/usr/bin/env bash
# Session 10's final call, correctness first (~60 s): the seed programs and
# the random GEMM / row programs on the GPU against the interpreter (the
# TMA-store epilogue and the one-shuffle cumsum carry are defaults now).
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s10}/checks
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_checks TESSEL_REQUIRE_GPU=1
for t in codegen/tessel_seed_gpu_test codegen/tessel_row_reduce_gpu_test fuzz/tessel_random_gpu_test; do
  timeout 45 "$S/tests/$t" >"$O/$(basename $t).log" 2>&1
  echo "$t rc=$? $(grep -c '^\[       OK' "$O/$(basename $t).log") ok, $(grep -c '^\[  FAILED  \]' "$O/$(basename $t).log") failed lines"
  grep -A8 "Failure" "$O/$(basename $t).log" | head -20
done
