#!/usr/bin/env bash
# One H200 call for the row kernels (issue 17), ~3 minutes: the row-reduce
# and sample GPU tests against the interpreter / float64 references, the
# rmsnorm / layernorm / softmax benches at 4096x8192, 16384x4096 and
# 8192x1024 (f16, checked) with JSON, the PyTorch peers and the copy
# bandwidth of the same run (bench/peers.py --only norms), and memcheck /
# racecheck of the row-reduce cases (small sizes; every shared-memory path),
# and the GEMM with a fused bias + ReLU epilogue against the plain one at
# 4096^3. $OUT gets summary.txt, table.txt and the
# JSON files; logs are packed into logs.tar.gz.
#
#   tools/dev/stage_device.sh          # on the dev machine; carry .probe
#   tools/dev/row_kernels_device.sh .probe/stage/build     # on the H200
#
# BUILD_DIR is a build folder (or the staged copy) with runtime-libs/.
set -u
S=${1:?usage: tools/dev/row_kernels_device.sh BUILD_DIR}
OUT=${OUT:-/tmp/row_kernels_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
summary=()
# step NAME SECONDS COMMAND...: runs it with a time limit, logs to $OUT/NAME.log.
step() {
  local n=$1 limit=$2; shift 2; local t=$SECONDS
  timeout "$limit" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$n" "$rc" "$((SECONDS - t))")")
}
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
rows='*rmsnorm*:*layernorm*:*softmax*:*bias_relu*'
# The correctness runs side by side (NVRTC compiles dominate), the benches
# after them, alone on the GPU.
par() {
  local n=$1; shift
  (t=$SECONDS; timeout 90 "$@" >"$OUT/$n.log" 2>&1
   printf '%-28s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
par row-reduce-gpu "$S/tests/codegen/tessel_row_reduce_gpu_test"
par samples-gpu "$S/tests/samples/samples_gpu_test" --gtest_filter="$rows"
par codegen-gpu "$S/tests/codegen/tessel_codegen_gpu_test" \
  --gtest_filter='*Reduce*:*RowMax*'
wait
for f in "$OUT"/*.rc; do summary+=("$(cat "$f")"); rm -f "$f"; done
for s in rmsnorm layernorm softmax; do
  step "bench-$s" 60 "$S/samples/$s" --backend=gpu --bench --check \
    --size=bench --json="$OUT/tessel_$s.json"
done
# The fused GEMM epilogue against the plain GEMM, back to back.
for e in plain bias_relu; do
  flag=(); [ $e = bias_relu ] && flag=(--bias-relu)
  step "bench-gemm-$e" 60 "$S/samples/gemm" --backend=gpu --bench \
    --size=4096x4096x4096 "${flag[@]}" --json="$OUT/tessel_gemm_$e.json"
done
step peers-norms 75 python3 bench/peers.py --only norms --compile-norms \
  --out "$OUT/peers_norms.json"
python3 tools/dev/row_kernels_table.py "$OUT" | tee "$OUT/table.txt"
# The shared-memory paths: rows over warps, tail rows, one warp per row.
few='*rows_over_warps*:*multiwarp_tail*:*warp_rows*:*chunks_not_clear*'
step mem-row-reduce 60 $san memcheck \
  "$S/tests/codegen/tessel_row_reduce_gpu_test" --gtest_filter="$few"
step race-row-reduce 60 $san racecheck \
  "$S/tests/codegen/tessel_row_reduce_gpu_test" --gtest_filter="$few"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# Few files come back: keep the tables and the JSON, pack the logs.
(cd "$OUT" && tar -czf /tmp/row_logs.tar.gz ./*.log && rm -f ./*.log &&
  mv /tmp/row_logs.tar.gz logs.tar.gz)
