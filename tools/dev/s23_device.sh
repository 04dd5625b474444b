#!/usr/bin/env bash
# Session 23 on the GPU machine: the occupancy fit and the emitter's loop-
# invariant hoisting (jit/occupancy_fit.h, PtxEmitOptions). STEPS (any of):
#   checks  every GPU suite and every sample's --check with the PTX emitter
#           (the default), memcheck on kernels the change touched, and the
#           registers ptxas gave the samples' kernels;
#   jit     bench/jit_bench --manifest: cold compiles on this host;
#   ab      the samples' benchmarks, NVRTC against PTX alternating, ROUNDS
#           rounds (tools/dev/s18_ptx_bench.sh; flash_attention as the
#           default compiles it).
#   tools/dev/stage_device.sh <binaries>; tar cJf .probe/s23.tar.xz -C .probe/stage build
#   (device, carry .probe/s23.tar.xz) STEPS="checks" bash tools/dev/s23_device.sh
set -u
here=$(realpath "$(dirname "$0")")
rm -rf /tmp/s23 && mkdir -p /tmp/s23 && tar xJf ${TAR:-.probe/s23.tar.xz} -C /tmp/s23
B=/tmp/s23/build
export LD_LIBRARY_PATH=$B/runtime-libs:/usr/local/cuda/lib64
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
J=$OUT/checks; mkdir -p $J
SAMPLES_ALL="gemm splitk_gemm rmsnorm layernorm softmax linear_attention flash_attention"
if [[ " ${STEPS:-checks} " == *" checks "* ]]; then
  C=/tmp/c23; rm -rf $C
  for t in $(cd $B && ls tests/*/*gpu_test); do
    log=$J/$(basename $t).log
    TESSEL_CACHE_DIR=$C timeout 300 $B/$t > $log 2>&1
    echo "$(basename $t) rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $log | tr '\n' ' ')"
  done
  for s in $SAMPLES_ALL; do
    TESSEL_CACHE_DIR=$C timeout 200 $B/samples/$s --check > $J/${s}_check.log 2>&1
    echo "$s --check rc=$? pass=$(grep -c ' pass' $J/${s}_check.log) fail=$(grep -ci 'fail' $J/${s}_check.log)"
  done
  python3 $here/cubin_registers.py $C > $J/registers.txt 2>&1
  echo "PTX entries: $(grep -l 'maxntid' $C/v2/*/*.cu 2>/dev/null | wc -l); blocks asked: $(grep -l 'minnctapersm [2-9]' $C/v2/*/*.cu 2>/dev/null | wc -l); entries $(ls $C/v2/*/*.cubin | wc -l)"
  for s in linear_attention gemm rmsnorm; do
    TESSEL_CACHE_DIR=$C compute-sanitizer --tool memcheck --error-exitcode 9 \
      $B/samples/$s --check --size=small > $J/memcheck_$s.log 2>&1
    echo "memcheck $s rc=$? $(tail -1 $J/memcheck_$s.log)"
  done
  echo "checks done ${SECONDS}s"
fi
if [[ " ${STEPS:-checks} " == *" jit "* ]]; then
  # Cold compiles of the manifest on this host's CPU, with the fit's compiles.
  TESSEL_CACHE_DIR=/tmp/jb23 timeout 300 $B/bench/jit_bench --manifest \
    $here/../../samples/kernels.json --arch sm_90a,sm_80 \
    --out $J/jit_bench.json > $J/jit_bench.log 2>&1
  echo "jit_bench rc=$? $(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['manifest']['summary']; print({a: (round(v['median_ms'],1), round(v['max_ms'],1)) for a,v in s.items()})" $J/jit_bench.json)"
fi
if [[ " ${STEPS:-checks} " == *" ab "* ]]; then
  ROUNDS=${ROUNDS:-3} FLASH_MODE=1 SAMPLES=${SAMPLES:-"gemm rmsnorm layernorm softmax linear_attention flash_attention"} \
    bash "$here/s18_ptx_bench.sh" $B
  echo "ab done ${SECONDS}s"
fi
(cd "$OUT" && tar czf checks.tgz checks && rm -rf checks)
