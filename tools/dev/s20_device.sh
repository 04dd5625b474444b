#!/usr/bin/env bash
# Session 20's device call: session 19's (PTX checks, then NVRTC / PTX bench
# rounds) with the JIT's own numbers on the GPU machine between them:
# compile_bench cold and warm-disk (fresh processes) for sm_90a, NVRTC and
# PTX, and jit_bench's disk hit to a callable kernel (module load included).
#   (here)   tools/dev/stage_branch.sh /work/main s18 <tests/*/*gpu_test> \
#              samples/{gemm,...} bench/{compile_bench,jit_bench}
#            tar cf - -C .probe/s18 build | xz -6 -T2 > .probe/s19/b.tar.xz
#   (device, carry .probe/s19)
#            TOTAL=560 bash tools/dev/s20_device.sh .probe/s19/b.tar.xz
set -u
T0=$(date +%s)
mkdir -p /tmp/s19 && tar xJf "${1:?staged build tarball}" -C /tmp/s19
S=/tmp/s19/build
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
echo "unpacked in $(($(date +%s) - T0)) s"
PART=checks SEEDS="${SEEDS:-2}" timeout "${CHECKS_LIMIT:-280}" \
  bash tools/dev/s18_ptx_device.sh $S
[ -d "$OUT/s18" ] && (cd "$OUT" && tar czf s18_partial.tgz s18 && rm -rf s18)
echo "checks done at $(($(date +%s) - T0)) s"
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
echo "jit_bench rc=$?"; grep -E '"(disk|memory|launch)[a-z_]*": [0-9]' $J/jit_bench.json | head -12
(cd "$OUT" && tar czf jit.tgz jit && rm -rf jit)
echo "jit numbers done at $(($(date +%s) - T0)) s"
left=$((${TOTAL:-560} - ($(date +%s) - T0)))
SAMPLES="${SAMPLES:-gemm linear_attention rmsnorm softmax layernorm splitk_gemm}" \
  ROUNDS=${ROUNDS:-3} timeout $left bash tools/dev/s18_ptx_bench.sh $S
[ -d "$OUT/b" ] && (cd "$OUT" && tar czf b_partial.tgz b && rm -rf b)
echo "bench done at $(($(date +%s) - T0)) s"
ls "$OUT"
