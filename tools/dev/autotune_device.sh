#!/usr/bin/env bash
# The autotuner on a GPU, in two halves: stage on the development machine,
# run on the GPU machine (logs and the stored winners go to $OUT).
#   tools/dev/autotune_device.sh stage              # here: build/autotune-stage
#   tools/dev/autotune_device.sh run build/autotune-stage   # on the GPU
# The run: tessel_autotune_gpu_test (TESSEL_REQUIRE_GPU=1, so no silent
# skip), then `gemm --tune` at 4096^3 twice: the first tunes and benches the
# winner, the second must load the stored winner and compile nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
stage)
  set -e
  cmake --build --preset release -j2 --target tessel_autotune_gpu_test \
    sample_gemm
  tools/bundle-runtime-libs.sh build/release
  S=build/autotune-stage
  rm -rf "$S" && mkdir -p "$S/bin"
  cp build/release/tests/autotune/tessel_autotune_gpu_test \
     build/release/samples/gemm "$S/bin/"
  cp -r build/release/runtime-libs "$S/"
  du -sh "$S"
  ;;
run)
  S=${2:?usage: $0 run <staged folder>}
  OUT=${OUT:-/tmp/autotune-gpu}
  mkdir -p "$OUT"
  export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
  export TESSEL_CACHE_DIR=$OUT/cache TESSEL_REQUIRE_GPU=1
  summary=()
  step() {  # step <name> <command...>: log to $OUT/<name>.log
    local n=$1; shift; local t=$SECONDS
    timeout 280 "$@" >"$OUT/$n.log" 2>&1; local rc=$?
    summary+=("$(printf '%-26s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
  }
  step gpu-test "$S/bin/tessel_autotune_gpu_test"
  step gemm-tune "$S/bin/gemm" --tune --backend=gpu --size=4096x4096x4096 \
    --json="$OUT/gemm-tune-bench.json"
  step gemm-tune-again "$S/bin/gemm" --tune --backend=gpu \
    --size=4096x4096x4096
  cp "$OUT"/cache/autotune/*.json "$OUT/" 2>/dev/null
  rm -rf "$OUT/cache"
  tail -n 25 "$OUT/gemm-tune.log"
  grep -E "stored winner|winner:|^gemm " "$OUT/gemm-tune-again.log"
  printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
  ;;
*)
  echo "usage: $0 stage | run <staged folder>" >&2
  exit 2
  ;;
esac
