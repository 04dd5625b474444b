#!/usr/bin/env bash
# One H200 call: every gpu test binary, compute-sanitizer on the generated
# kernels, the samples' GPU checks, and the benchmarks. Logs go to $OUT.
# Expects a staged folder (tools/dev/stage_device.sh) as its first argument.
set -u
S=${1:?staged folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
summary=()
step() {
  local n=$1; shift; local t=$SECONDS
  timeout 240 "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  summary+=("$(printf '%-30s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
}
# A command, not a function: `timeout` runs it.
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
if [ "${PHASES:-tests,sanitize,bench}" != "${PHASES/tests/}" ]; then
for t in jit_gpu_test profiler_gpu_test tessel_codegen_gpu_test \
         tessel_seed_gpu_test samples_gpu_test; do
  step "$t" "$S/bin/$t"
done
fi
if [ "${PHASES:-tests,sanitize,bench}" != "${PHASES/sanitize/}" ]; then
# The race test disables barriers on purpose: keep it out of racecheck.
step race-codegen $san racecheck "$S/bin/tessel_codegen_gpu_test" \
  --gtest_filter=-*WithoutThreadSync*
step mem-codegen $san memcheck "$S/bin/tessel_codegen_gpu_test"
step sync-codegen $san synccheck "$S/bin/tessel_codegen_gpu_test"
for tool in memcheck racecheck synccheck; do
  step "$tool-seeds" $san $tool "$S/bin/tessel_seed_gpu_test"
done
for s in gemm splitk_gemm linear_attention flash_attention rmsnorm softmax; do
  step "check-$s" "$S/bin/$s" --backend=gpu --check --size=small
  step "mem-$s" $san memcheck "$S/bin/$s" --backend=gpu --check --size=small
  step "race-$s" $san racecheck "$S/bin/$s" --backend=gpu --check --size=small
done
fi
if [ "${PHASES:-tests,sanitize,bench}" != "${PHASES/bench/}" ]; then
step gemm-vs-cublas "$S/bin/tessel_gemm_bench" 4096 8192
step cublas "$S/bin/cublas_gemm" --sizes 4096,8192
for s in gemm linear_attention flash_attention; do
  step "bench-$s" "$S/bin/$s" --bench --size=bench --json="$OUT/bench-$s.json"
done
step demo "$S/bin/tessel-demo"
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
