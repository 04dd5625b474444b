#!/usr/bin/env bash
# Session 22 on the GPU machine: a warm disk hit per manifest kernel before
# and after the hit path's changes (compile_bench's first compile in fresh
# processes, the cache filled first), the two builds alternating, ROUNDS
# rounds, with the cache on its disk and on /dev/shm; jit_bench's disk hit
# to a launchable kernel; the GPU tests and the samples' checks twice on one
# cache (the second run's kernels come through the program index), memcheck
# on an indexed kernel; then, where the GPU is an H200, the samples'
# benchmarks with the PTX emitter off and on (tools/dev/s18_ptx_bench.sh).
#   tar cJf .probe/s22.tar.xz -C .probe s22   # s22/{before,after}/...
#   (device, carry .probe/s22.tar.xz) bash tools/dev/s22_warm_device.sh
set -u
here=$(realpath "$(dirname "$0")")
tar xJf .probe/s22.tar.xz -C /tmp
P=/tmp/s22
export LD_LIBRARY_PATH=$P/after/runtime-libs:/usr/local/cuda/lib64
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu; $(lscpu | grep 'Model name' | sed 's/  */ /g')"
J=$OUT/warm; mkdir -p $J
if [ "${AB_ONLY:-0}" = 1 ]; then  # the speed A/B alone, on an H200
  case "$gpu" in *H200*) ;; *) echo "not an H200: no A/B"; exit 0 ;; esac
  ROUNDS=${ROUNDS:-3} SAMPLES="gemm rmsnorm layernorm softmax linear_attention flash_attention" \
    bash "$here/s18_ptx_bench.sh" $P/after
  exit 0
fi
median() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); ks=r['kernels']; print(sys.argv[2], 'first_ms', round(r['median_first_compile_ms'],3), 'max', round(r['max_first_compile_ms'],2), 'repeat_us', round(r['median_repeat_compile_us'],2), 'lower_us', round(r.get('median_lower_us',0)), 'origins', sorted(set(k.get('first_origin','err') for k in ks)))" "$@"; }
for dir in /tmp/w22 /dev/shm/w22; do
  rm -rf $dir
  TESSEL_CACHE_DIR=$dir timeout 120 $P/after/bench/compile_bench --reps 1 \
    --lower-reps 0 --out $J/fill.json > /dev/null 2>&1
  median $J/fill.json "fill $dir"
  for round in $(seq ${ROUNDS:-4}); do
    for v in before after; do
      extra=""; [ $v = after ] && extra="--lower-reps 10"
      f=$J/${v}_$(basename $(dirname $dir))_$round.json
      TESSEL_CACHE_DIR=$dir timeout 120 $P/$v/bench/compile_bench --reps 200 \
        $extra --out $f > /dev/null 2>&1
      median $f "$v $dir $round"
    done
  done
done
TESSEL_CACHE_DIR=/tmp/jb22 timeout 60 $P/after/bench/jit_bench \
  --out $J/jit_bench.json > $J/jit_bench.log 2>&1
echo "jit_bench rc=$?"
grep -E '"(disk|memory)_hit[a-z_]*": [0-9]' $J/jit_bench.json | head -4
G=/tmp/g22; rm -rf $G
for run in 1 2; do
  for t in codegen/tessel_codegen_gpu_test codegen/tessel_seed_gpu_test \
           fuzz/tessel_random_gpu_test runtime/tessel_strided_view_gpu_test \
           runtime/tessel_runtime_context_gpu_test; do
    log=$J/$(basename $t)_$run.log
    TESSEL_CACHE_DIR=$G timeout 240 $P/after/tests/$t > $log 2>&1
    echo "$(basename $t) run$run rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $log | tr '\n' ' ')"
  done
  for s in gemm rmsnorm layernorm softmax linear_attention flash_attention; do
    TESSEL_CACHE_DIR=$G timeout 200 $P/after/samples/$s --check \
      > $J/${s}_check_$run.log 2>&1
    echo "$s --check run$run rc=$? pass=$(grep -c ' pass' $J/${s}_check_$run.log) fail=$(grep -ci 'fail' $J/${s}_check_$run.log)"
  done
  echo "records after run $run: $(find $G/programs -type f | wc -l)"
done
TESSEL_CACHE_DIR=$G compute-sanitizer --tool memcheck --error-exitcode 9 \
  $P/after/samples/gemm --check --size=small > $J/memcheck.log 2>&1
echo "memcheck gemm (indexed) rc=$? $(tail -1 $J/memcheck.log)"
(cd "$OUT" && tar czf warm.tgz warm && rm -rf warm)
echo "elapsed ${SECONDS}s"
case "$gpu" in
  *H200*)
    [ $SECONDS -gt ${AB_AFTER:-330} ] && { echo "no time left for the A/B"; exit 0; }
    ROUNDS=2 SAMPLES="gemm rmsnorm layernorm softmax linear_attention flash_attention" \
      bash "$here/s18_ptx_bench.sh" $P/after ;;
  *) echo "not an H200: no speed A/B" ;;
esac
