#!/usr/bin/env bash
# Session 26 on the GPU machine: issue 18's last check on the build at HEAD.
# STEPS (any of):
#   extra   what session 25 changed and no GPU ran: the 99 KB archs' GEMM
#           tile (128x128x32, 4 stages) and flash attention's varlen forward
#           with the sample's own tiles, --check and memcheck;
#   checks  tools/dev/s23_device.sh's checks (GPU suites, --check, memcheck);
#   ab      tools/dev/s24_device.sh's A/B, NVRTC against the PTX emitter.
#   tools/dev/stage_device.sh <binaries>; tar cJf .probe/s26.tar.xz -C .probe/stage build
#   (device, carry .probe/s26.tar.xz) STEPS="extra checks" bash tools/dev/s26_device.sh
set -u
here=$(realpath "$(dirname "$0")")
export TAR=${TAR:-.probe/s26.tar.xz}
rm -rf /tmp/s26 && mkdir -p /tmp/s26 && tar xJf $TAR -C /tmp/s26
B=/tmp/s26/build
export LD_LIBRARY_PATH=$B/runtime-libs:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name --format=csv,noheader
X=$OUT/extra; mkdir -p $X
if [[ " ${STEPS:-extra} " == *" extra "* ]]; then
  export TESSEL_CACHE_DIR=/tmp/c26
  small="--block-m 128 --block-n 128 --block-k 32 --stages 4"
  runs=("gemm_small:gemm --check $small"
        "gemm_small_odd:gemm --check --size=1000x1000x992 $small"
        "varlen:flash_attention --check --varlen=1,17,300 --size=16x128"
        "varlen_causal:flash_attention --check --varlen=1,17,300,64 --size=16x128 --causal=true")
  for r in "${runs[@]}"; do
    name=${r%%:*}; cmd=${r#*:}
    timeout 200 $B/samples/$cmd > $X/$name.log 2>&1
    echo "$name rc=$? pass=$(grep -c ' pass' $X/$name.log) fail=$(grep -ci 'fail' $X/$name.log)"
  done
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/samples/gemm --check \
    --size=small $small > $X/memcheck_gemm_small.log 2>&1
  echo "memcheck gemm_small rc=$? $(tail -1 $X/memcheck_gemm_small.log)"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/samples/flash_attention \
    --check --varlen=1,17,300 --size=4x128 > $X/memcheck_varlen.log 2>&1
  echo "memcheck varlen rc=$? $(tail -1 $X/memcheck_varlen.log)"
  timeout 120 $B/samples/gemm --bench $small --size=4096x4096x4096 > $X/gemm_small_bench.log 2>&1
  echo "gemm_small bench rc=$? $(grep -iE 'tflop|cublas' $X/gemm_small_bench.log | tail -2 | tr '\n' ' ')"
  unset TESSEL_CACHE_DIR
  echo "extra done ${SECONDS}s"
fi
(cd "$OUT" && tar czf extra.tgz extra && rm -rf extra)
if [[ " ${STEPS:-extra} " == *" checks "* ]]; then
  STEPS=checks bash "$here/s23_device.sh"
fi
if [[ " ${STEPS:-extra} " == *" ab "* ]]; then
  STEPS=ab bash "$here/s24_device.sh"
fi
