#!/usr/bin/env bash
# Where a warm-disk hit goes on the GPU machine (session 21): compile_bench
# in fresh processes after a warmup, with the cache on its disk and on
# /dev/shm, each under perf stat where there is one, and the CPU it ran on.
#   tools/dev/stage_device.sh bench/compile_bench bench/jit_bench
#   (device, carry .probe/stage) bash tools/dev/s21_warm_device.sh
set -u
S=$(realpath .probe/stage/build)
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64 TESSEL_PTX=1
lscpu | grep -E "Model name|MHz|^CPU\(s\)" ; nproc; df -h /tmp /dev/shm | tail -2
for dir in /tmp/w21 /dev/shm/w21; do
  rm -rf $dir
  TESSEL_CACHE_DIR=$dir $S/bench/compile_bench --arch sm_90a --reps 20 --out /dev/null > /dev/null 2>&1
  for i in 1 2 3; do
    TESSEL_CACHE_DIR=$dir $S/bench/compile_bench --arch sm_90a --reps 200 --out $OUT/w.json > /dev/null 2>&1
    python3 -c "import json; r=json.load(open('$OUT/w.json')); print('$dir', 'median_ms', round(r['median_first_compile_ms'],3), 'max', round(r['max_first_compile_ms'],1), 'repeat_us', round(r['median_repeat_compile_us'],2))"
  done
done
command -v perf > /dev/null && TESSEL_CACHE_DIR=/dev/shm/w21 perf stat -e task-clock,context-switches,page-faults \
  $S/bench/compile_bench --arch sm_90a --reps 1 --out /dev/null 2>&1 | tail -8
/usr/bin/time -v env TESSEL_CACHE_DIR=/dev/shm/w21 $S/bench/compile_bench --arch sm_90a --reps 1 --out /dev/null 2>&1 | grep -E "Elapsed|Maximum resident|faults|context" 
TESSEL_CACHE_DIR=/tmp/jb21 $S/bench/jit_bench --out $OUT/jit_bench.json > /dev/null 2>&1
grep -E '"(disk|memory)_hit[a-z_]*": [0-9]' $OUT/jit_bench.json | head -4
