#!/usr/bin/env bash
# On a GPU machine, from .probe/aot (tests/aot/stage_for_device.sh): the AOT
# quickstart against its JIT twin byte for byte, the AOT gtest (JIT vs AOT
# bit for bit), compute-sanitizer memcheck of the AOT program, and the AOT
# program's dynamic dependencies (no NVRTC, Abseil or libcuda).
set -uo pipefail
cd "$(dirname "$0")"
fail=0
step() { echo "== $*"; "$@" || { echo "FAILED: $*"; fail=1; }; }
export PATH="/usr/local/cuda/bin:$PATH"
export TESSEL_REQUIRE_GPU=1  # a skipped GPU test fails here
export LD_LIBRARY_PATH="$PWD/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step ./aot_quickstart_jit --output /tmp/aot_check_jit.bin
step ./aot_quickstart --output /tmp/aot_check_aot.bin
step cmp /tmp/aot_check_jit.bin /tmp/aot_check_aot.bin
step ./aot_quickstart_jit --target=cpu --output /tmp/aot_check_cpu.bin
step cmp /tmp/aot_check_cpu.bin /tmp/aot_check_aot.bin
step ./aot_gpu_test
step compute-sanitizer --tool memcheck --error-exitcode 1 ./aot_quickstart
step compute-sanitizer --tool memcheck --error-exitcode 1 ./aot_gpu_test \
  --gtest_filter='GpuAot.*'
echo "== ldd aot_quickstart"
ldd ./aot_quickstart
if ldd ./aot_quickstart | grep -Ei 'nvrtc|absl|libcuda'; then
  echo "FAILED: aot_quickstart links the above"; fail=1
fi
[[ $fail == 0 ]] && echo "run_on_device: all AOT checks passed"
exit $fail
