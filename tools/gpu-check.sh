#!/usr/bin/env bash
# Runs tessel's GPU checks on a GPU machine over a build folder made on another
# machine (see tools/bundle-runtime-libs.sh): the gpu-labelled tests, the same
# binaries under compute-sanitizer (memcheck, racecheck, synccheck; API errors
# that tests provoke on purpose are not counted), then any
# extra commands given. Logs go to $OUT (default /tmp/tessel-gpu); a summary
# table is printed last.
#   tools/gpu-check.sh build/release "build/release/bench/jit_bench --out \$OUT/jit_bench.json"
set -uo pipefail
build=${1:-build/release}
shift || true
out=${OUT:-/tmp/tessel-gpu}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TESSEL_CACHE_DIR=${TESSEL_CACHE_DIR:-/tmp/tessel-cache}
export PATH="/usr/local/cuda/bin:$PATH"

# CTest files hold the absolute source and build paths of the machine that
# configured them: make those paths lead here.
src_root=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src_root" ] && [ ! -e "$src_root" ]; then
  mkdir -p "$(dirname "$src_root")" && ln -s "$PWD" "$src_root"
fi

summary=()
step() {  # step <name> <command...>
  local name=$1; shift
  local start=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-40s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - start))")")
  tail -n 5 "$out/$name.log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step ctest-gpu ctest --test-dir "$build" -L gpu --output-on-failure
mapfile -t gpu_tests < <(find "$build/tests" -type f -executable -name '*gpu_test')
for t in "${gpu_tests[@]}"; do
  for tool in memcheck racecheck synccheck; do
    step "sanitize-$tool-$(basename "$t")" \
      compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 "$t"
  done
done
i=0
for cmd in "$@"; do
  i=$((i + 1))
  step "extra-$i-$(basename "${cmd%% *}")" bash -c "$cmd"
done
echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
