#!/usr/bin/env bash
# Session 26 on the GPU machine: the random staged element-wise programs
# (tests/fuzz/random_staged_programs.h) and the other random programs
# against the interpreter, over several seeds; memcheck on the staged ones;
# every GPU suite.
#   tools/dev/stage_device.sh $(cd build/release && ls tests/*/*gpu_test)
#   tar cJf .probe/s26f.tar.xz -C .probe/stage build
#   (device, carry .probe/s26f.tar.xz) bash tools/dev/s26_fuzz_device.sh
set -u
rm -rf /tmp/s26f && mkdir -p /tmp/s26f && tar xJf ${TAR:-.probe/s26f.tar.xz} -C /tmp/s26f
B=/tmp/s26f/build
export LD_LIBRARY_PATH=$B/runtime-libs:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name --format=csv,noheader
F=$OUT/fuzz; mkdir -p $F
export TESSEL_CACHE_DIR=/tmp/c26f
summary() { grep -E '^\[  (PASSED|FAILED) ' $1 | tr '\n' ' '; grep -c '^\[  FAILED  \] [A-Z]' $1; }
# SUITES: a grep pattern of the suites to run (all by default).
for t in $(cd $B && ls tests/*/*gpu_test | grep -v random_gpu | grep -E "${SUITES:-.}"); do
  timeout 200 $B/$t > $F/$(basename $t).log 2>&1
  echo "$(basename $t) rc=$? $(summary $F/$(basename $t).log)"
done
for seed in ${SEEDS:-20261201 11 12 13 14}; do
  TESSEL_FUZZ_SEED=$seed TESSEL_FUZZ_SCALE=${SCALE:-3} timeout 240 \
    $B/tests/fuzz/tessel_random_gpu_test > $F/random_$seed.log 2>&1
  echo "random seed $seed rc=$? $(summary $F/random_$seed.log)"
  [ $SECONDS -gt ${BUDGET:-420} ] && { echo "stopping at ${SECONDS}s"; break; }
done
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $B/tests/fuzz/tessel_random_gpu_test --gtest_filter='Staged/*' > $F/memcheck_staged.log 2>&1
echo "memcheck staged rc=$? $(tail -1 $F/memcheck_staged.log)"
grep -h -B2 -A12 '^\[  FAILED  \]\|Failure' $F/random_*.log | head -60
(cd "$OUT" && tar czf fuzz.tgz fuzz && rm -rf fuzz)
echo "done ${SECONDS}s"
