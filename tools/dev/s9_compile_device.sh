#!/usr/bin/env bash
# Session 9, issue 18 (compile latency) on the H200, ~2 minutes:
#  1. jit_bench over samples/kernels.json for sm_90a, cold, one job: the
#     median / max the issue asks for (jit_bench_new.json).
#  2. The sample kernels whose SASS the one-asm-per-wgmma-run codegen
#     changed (linear attention D64, flash attention's D64 backward, split-K
#     gemm), each benched with the new code and with the old
#     ($TESSEL_WGMMA_ASM_EACH=1 prints one asm per wgmma, as before) in
#     turn; after --checks at small sizes (new code). The gemms' and the
#     flash forward's device tiles give byte-identical cubins either way.
#  3. jit_bench again with the old code, for before/after on the same host
#     (jit_bench_old.json).
# About 2 minutes; steps that would end past $DEADLINE (150 s) are skipped
# and say so (the flash D128 control comes last).
#   tools/dev/s9_compile_device.sh .probe/stage/build   # writes $OUT/compile
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/explore}/compile
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention la=$S/samples/linear_attention
sk=$S/samples/splitk_gemm
deadline=${DEADLINE:-150}
step() {  # name, limit, command...: its log, rc and gpu rows
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 15 > deadline)); then
    echo "$n skipped (deadline)" >>"$OUT/summary.txt"
    return
  fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-28s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
  grep -h " gpu " "$OUT/$n.log" | sed "s|^|$n: |" >>"$OUT/bench.txt"
}
# 1. Cold compile of the manifest, new code (an empty cache: jit_bench
# compiles through NVRTC directly).
step jit-new 90 "$S/bench/jit_bench" --manifest samples/kernels.json \
  --arch sm_90a --out "$OUT/jit_bench_new.json"
# 2. Correctness of the changed kernels (new code), then old/new benches.
export TESSEL_CACHE_DIR=/tmp/tc-s9-compile
step check-la-d64 60 "$la" --backend=gpu --check --size=1x512x2x64
step check-flash-d64-fwdbwd 40 "$fa" --backend=gpu --check --pass=fwd+bwd \
  --size=1x600x2x64
ab() {  # name, repetitions, flags...: new, old in turn
  local n=$1 reps=$2; shift 2
  for ((i = 1; i <= reps; i++)); do
    step "$n-new-$i" 40 "$@"
    TESSEL_WGMMA_ASM_EACH=1 step "$n-old-$i" 40 "$@"
  done
}
ab la-d64 2 "$la" --backend=gpu --bench --check=false --size=8x4096x32x64
ab flash-d64-fwdbwd 1 "$fa" --backend=gpu --bench --check=false \
  --pass=fwd+bwd --causal=false --size=8x4096x32x64
ab splitk 1 "$sk" --backend=gpu --bench --check=false --size=1024x1024x16384 \
  --split-k=8
# 3. Cold compile with the old code, same host.
TESSEL_WGMMA_ASM_EACH=1 step jit-old 90 "$S/bench/jit_bench" \
  --manifest samples/kernels.json --arch sm_90a --out "$OUT/jit_bench_old.json"
# The forward's device tiles compile to the same cubin both ways (checked
# without a GPU): a control.
ab flash-d128 1 "$fa" --backend=gpu --bench --check=false --size=8x4096x16x128
for f in "$OUT"/jit_bench_{new,old}.json; do
  [ -f "$f" ] || continue
  python3 - "$f" <<'EOF' >>"$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))["manifest"]["summary"]["sm_90a"]
m = d["median_phase_ms"]
print("%s: median %.0f ms max %.0f ms (%s) | median front end %.0f NVVM %.0f "
      "ptxas %.0f" % (sys.argv[1].split("/")[-1], d["median_ms"], d["max_ms"],
                      d["slowest"][0]["name"], m["frontend_ms"], m["nvvm_ms"],
                      m["ptxas_ms"]))
EOF
done
echo "== gpu rows (new/old in turn; kernel ms in the table columns)"
cat "$OUT/bench.txt"
echo "== summary"
cat "$OUT/summary.txt"
