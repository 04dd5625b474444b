#!/usr/bin/env bash
# Session 21's BETWEEN hook for tools/dev/s19_ptx_device.sh: flash
# attention's check with the PTX emitter spelling wgmmas of A in registers
# too (TESSEL_PTX_WGMMA_RS=1, plus memcheck on the small size), then (JIT=0: not) the
# JIT's numbers (tools/dev/s20_jit_device.sh).
#   BETWEEN=tools/dev/s21_device.sh SAMPLES="flash_attention gemm ..." \
#     bash tools/dev/s19_ptx_device.sh .probe/s19/b.tar.xz
set -u
S=$(realpath "${1:?staged build folder}")
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
R=$OUT/rs; mkdir -p $R
rs() { env TESSEL_PTX=1 TESSEL_PTX_WGMMA_RS=1 TESSEL_CACHE_DIR=/tmp/tc_rs "$@"; }
rs timeout 200 $S/samples/flash_attention --check > $R/check.log 2>&1
echo "flash rs check rc=$? pass=$(grep -c ' pass' $R/check.log) fail=$(grep -ci 'fail' $R/check.log)"
rs compute-sanitizer --tool memcheck --error-exitcode 9 $S/samples/flash_attention \
  --check --size=small > $R/memcheck.log 2>&1
echo "flash rs memcheck rc=$? $(tail -1 $R/memcheck.log)"
(cd "$OUT" && tar czf rs.tgz rs && rm -rf rs)
[ "${JIT:-1}" = 1 ] && bash "$(dirname "$0")/s20_jit_device.sh" "$S"
