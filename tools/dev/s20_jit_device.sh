#!/usr/bin/env bash
# The JIT's own numbers on the GPU machine, for session 19's device call
# (BETWEEN=tools/dev/s20_jit_device.sh bash tools/dev/s19_ptx_device.sh ...):
# compile_bench cold then warm-disk (fresh processes) for sm_90a, NVRTC and
# PTX, and jit_bench's disk hit to a callable kernel (module load included).
# Stage bench/compile_bench and bench/jit_bench with the rest.
set -u
S=$(realpath "${1:?staged build folder}")
J=$OUT/jit; mkdir -p $J
for mode in 0 1; do
  c=/tmp/cb$mode; rm -rf $c
  for run in cold warm1 warm2 warm3; do
    TESSEL_PTX=$mode TESSEL_CACHE_DIR=$c timeout 120 $S/bench/compile_bench \
      --arch sm_90a --reps 50 --out $J/compile_${mode}_$run.json > /dev/null 2>&1
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('compile_bench ptx=$mode $run', 'median_ms', round(r['median_first_compile_ms'],3), 'max_ms', round(r['max_first_compile_ms'],1), 'repeat_us', round(r['median_repeat_compile_us'],1))" $J/compile_${mode}_$run.json
  done
done
TESSEL_CACHE_DIR=/tmp/jb timeout 60 $S/bench/jit_bench --out $J/jit_bench.json > $J/jit_bench.log 2>&1
echo "jit_bench rc=$?"
grep -E '"(disk|memory|launch)[a-z_]*": [0-9]' $J/jit_bench.json | head -12
(cd "$OUT" && tar czf jit.tgz jit && rm -rf jit)
