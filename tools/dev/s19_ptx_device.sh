#!/usr/bin/env bash
# One device call for the PTX backend's default: unpack a staged build
# (xz tarball, so every GPU test and sample fits in one carry), run the
# checks (tools/dev/s18_ptx_device.sh PART=checks: GPU tests, fuzz seeds,
# sample --check, memcheck / racecheck, all with TESSEL_PTX=1), then
# alternating NVRTC / PTX bench rounds (tools/dev/s18_ptx_bench.sh) until
# TOTAL seconds; logs come back tarred either way.
#   (here)   tools/dev/stage_branch.sh /work/main s18 <tests/*/*gpu_test> \
#              samples/{gemm,flash_attention,linear_attention,rmsnorm,...}
#            mkdir -p .probe/s19 && tar cf - -C .probe/s18 build \
#              | xz -6 -T2 > .probe/s19/b.tar.xz        # ~12 MB
#   (device, carry .probe/s19)
#            TOTAL=560 bash tools/dev/s19_ptx_device.sh .probe/s19/b.tar.xz
set -u
T0=$(date +%s)
mkdir -p /tmp/s19 && tar xJf "${1:?staged build tarball}" -C /tmp/s19
S=/tmp/s19/build
echo "unpacked in $(($(date +%s) - T0)) s"
PART=checks SEEDS="${SEEDS:-2}" timeout "${CHECKS_LIMIT:-280}" \
  bash tools/dev/s18_ptx_device.sh $S
[ -d "$OUT/s18" ] && (cd "$OUT" && tar czf s18_partial.tgz s18 && rm -rf s18)
echo "checks done at $(($(date +%s) - T0)) s"
# BETWEEN: another script given the staged build, run before the bench
# rounds (tools/dev/s20_jit_device.sh: the JIT's numbers on this machine).
[ -n "${BETWEEN:-}" ] && bash "$BETWEEN" $S
left=$((${TOTAL:-560} - ($(date +%s) - T0)))
SAMPLES="${SAMPLES:-gemm linear_attention rmsnorm softmax layernorm splitk_gemm}" \
  ROUNDS=${ROUNDS:-3} timeout $left bash tools/dev/s18_ptx_bench.sh $S
[ -d "$OUT/b" ] && (cd "$OUT" && tar czf b_partial.tgz b && rm -rf b)
echo "bench done at $(($(date +%s) - T0)) s"
ls "$OUT"
