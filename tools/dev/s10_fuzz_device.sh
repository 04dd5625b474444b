#!/usr/bin/env bash
# Session 10: random GEMM and row programs on the H200 against the
# interpreter (tests/fuzz/random_gpu_test.cc), three seeds of 48 (~90 s).
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s10}/fuzz
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_fuzz TESSEL_REQUIRE_GPU=1
deadline=${DEADLINE:-110}
# gemm --tune's ping-pong axis on the GPU: 128-thread tiles, both schedules
# checked against float64 and timed (~15 s).
TESSEL_CACHE_DIR=/tmp/tc_s10_tune timeout 40 "$S/samples/gemm" --tune --retune \
  --size=2048x2048x2048 --threads=128 --block-k=64 >"$O/tune.log" 2>&1
echo "tune rc=$? $(grep -c 'pingpong=1: [0-9]' "$O/tune.log") ping-pong candidates timed, $(grep -c 'failed' "$O/tune.log") failed"
grep -E "winner|failed" "$O/tune.log" | head -5
for seed in 20261201 1 2; do
  left=$((deadline - SECONDS))
  ((left < 10)) && { echo "seed $seed skipped (deadline)"; continue; }
  TESSEL_FUZZ_SEED=$seed timeout $left "$S/tests/fuzz/tessel_random_gpu_test" \
    >"$O/seed_$seed.log" 2>&1
  echo "seed $seed rc=$? $(grep -c '^\[       OK' "$O/seed_$seed.log") ok, $(grep -c '^\[  FAILED  \] Random' "$O/seed_$seed.log") failed"
  grep -A12 "Failure" "$O/seed_$seed.log" | head -40
done
