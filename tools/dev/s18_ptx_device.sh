#!/usr/bin/env bash
# Session 18's PTX-backend call: every GPU test and sample check with the
# PTX emitter on (TESSEL_PTX=1), sanitizers on a subset, then the samples'
# benchmarks with it off and on, alternating, in the same call.
#   tools/dev/stage_branch.sh /work/main s18 <gpu tests> samples/...
#   (device) bash tools/dev/s18_ptx_device.sh .probe/s18/build
set -u
S=$(realpath "${1:?staged build folder}")
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64 TESSEL_SOURCE_DIR=$PWD
L=$OUT/s18; mkdir -p $L
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $L/gpu.txt
ls -la /usr/local/cuda/bin/ptxas; /usr/local/cuda/bin/ptxas --version | tail -1
ptx() { env TESSEL_PTX=1 TESSEL_CACHE_DIR=/tmp/tc_ptx "$@"; }
cuda() { env TESSEL_PTX=0 TESSEL_CACHE_DIR=/tmp/tc_cuda "$@"; }
if [ "${PART:-all}" != bench ]; then
echo "== 1. GPU tests, PTX on"
for t in $S/tests/*/*gpu_test; do
  n=$(basename $t)
  ptx timeout 300 $t > $L/test_$n.log 2>&1; rc=$?
  echo "$n rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $L/test_$n.log | tr '\n' ' ')"
done
for seed in ${SEEDS:-}; do
  ptx TESSEL_FUZZ_SEED=$seed timeout 300 $S/tests/fuzz/tessel_random_gpu_test --gtest_filter='Random*' > $L/fuzz_$seed.log 2>&1
  echo "fuzz seed $seed rc=$? $(grep -E '^\[  (PASSED|FAILED)' $L/fuzz_$seed.log | tr '\n' ' ')"
done
echo "== 2. sample checks, PTX on"
for s in gemm flash_attention linear_attention rmsnorm layernorm softmax; do
  ptx timeout 200 $S/samples/$s --check > $L/check_$s.log 2>&1; rc=$?
  echo "$s rc=$rc pass=$(grep -c ' pass' $L/check_$s.log) fail=$(grep -ci 'fail' $L/check_$s.log)"
done
echo "== 3. sanitizers, PTX on"
ptx compute-sanitizer --tool memcheck --error-exitcode 9 $S/tests/fuzz/tessel_random_gpu_test --gtest_filter='FuzzFound*:Random*_1:Random*_2:Random*_3:Random*_4:Random*_5:Random*_6:Random*_7' > $L/memcheck_random.log 2>&1; echo "memcheck random rc=$? $(tail -1 $L/memcheck_random.log)"
for s in gemm rmsnorm flash_attention; do
  ptx compute-sanitizer --tool memcheck --error-exitcode 9 $S/samples/$s --check --size=small > $L/memcheck_$s.log 2>&1; echo "memcheck $s rc=$? $(tail -1 $L/memcheck_$s.log)"
done
ptx compute-sanitizer --tool racecheck --error-exitcode 9 $S/samples/gemm --check --size=small > $L/racecheck_gemm.log 2>&1; echo "racecheck gemm rc=$? $(tail -1 $L/racecheck_gemm.log)"
[ "${PART:-all}" = checks ] && { cd $OUT && tar czf s18.tgz s18 && rm -rf s18; exit 0; }
fi
echo "== 4. benchmarks, PTX off (cuda) and on (ptx), alternating"
for round in $(seq ${ROUNDS:-1}); do
  for mode in cuda ptx; do
    for s in gemm rmsnorm layernorm softmax flash_attention linear_attention; do
      $mode timeout 300 $S/samples/$s --bench --size=${SIZE:-bench} --json=$L/bench_${s}_${mode}_$round.json > $L/bench_${s}_${mode}_$round.log 2>&1
      echo "$round $mode $s rc=$?"
    done
  done
done
cd $OUT && tar czf s18.tgz s18 && rm -rf s18
