#!/usr/bin/env bash
# One H200 call: every gpu test binary, compute-sanitizer on the generated
# kernels, the samples' GPU checks, and the benchmarks (tessel, cuBLAS and
# the Python peers in the same run). Logs go to $OUT; PHASES picks a subset
# of tests,sanitize,bench,compare. Expects the staged build folder
# (tools/dev/stage_device.sh: .probe/stage/build) as its first argument.
# compare: BEFORE (a tarball of another staged build's samples/, bench/ and
# runtime-libs/) and this build run tessel's benchmarks back to back, and
# tools/dev/compare_benches.py prints after/before per record.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
phases=${PHASES:-tests,sanitize,bench}
summary=()
# step NAME SECONDS COMMAND...: runs it with a time limit, logs to $OUT/NAME.log.
step() {
  local n=$1 limit=$2; shift 2; local t=$SECONDS
  timeout "$limit" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  summary+=("$(printf '%-30s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
}
# A command, not a function: `timeout` runs it.
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
if [[ $phases == *tests* ]]; then
  for t in "$S"/tests/*/*gpu_test; do
    step "$(basename "$t")" 240 "$t"
  done
fi
if [[ $phases == *sanitize* ]]; then
  codegen=$S/tests/codegen/tessel_codegen_gpu_test
  seeds=$S/tests/codegen/tessel_seed_gpu_test
  # The race test disables barriers on purpose: keep it out of racecheck.
  step race-codegen 240 $san racecheck "$codegen" \
    --gtest_filter=-*WithoutThreadSync*
  step mem-codegen 240 $san memcheck "$codegen"
  step sync-codegen 240 $san synccheck "$codegen"
  for tool in memcheck racecheck synccheck; do
    step "$tool-seeds" 240 $san $tool "$seeds"
  done
  for s in gemm splitk_gemm linear_attention flash_attention rmsnorm layernorm \
    softmax; do
    step "check-$s" 120 "$S/samples/$s" --backend=gpu --check --size=small
    step "mem-$s" 180 $san memcheck "$S/samples/$s" --backend=gpu --check \
      --size=small
    step "race-$s" 180 $san racecheck "$S/samples/$s" --backend=gpu --check \
      --size=small
  done
fi
if [[ $phases == *bench* ]]; then
  # The peers alone take ~4 min (Triton compiles fla's kernels): give the
  # bench phase a device call of its own (PHASES=bench).
  step run_all 560 python3 bench/run_all.py --build "$S" --out "$OUT/bench" \
    --wheels .whl --timeout 400
  step demo 60 "$S/samples/tessel-demo"
fi
if [[ $phases == *compare* ]]; then
  mkdir -p /tmp/before && tar -xJf "${BEFORE:?tarball of the build to compare}" -C /tmp/before
  for side in before after; do
    b=$S skip=peers; [ $side = before ] && b=/tmp/before/build skip=peers,cublas
    LD_LIBRARY_PATH=$b/runtime-libs:/usr/local/cuda/lib64 step "bench-$side" 400 \
      python3 bench/run_all.py --build "$b" --out "$OUT/$side" --skip $skip
  done
  python3 tools/dev/compare_benches.py "$OUT/before/results.json" \
    "$OUT/after/results.json" | tee "$OUT/compare.txt"
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# The device tool brings back at most 8 files: keep the two tables, pack the rest.
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude=summary.txt --exclude=compare.txt . &&
  find . -mindepth 1 ! -name summary.txt ! -name compare.txt -delete &&
  mv /tmp/logs.tar.gz logs.tar.gz)
