#!/usr/bin/env bash
# Session 9, issue 18 (compile latency) on the H200, about 3 minutes:
#  1. jit_bench over samples/kernels.json for sm_90a, cold, one job: the
#     median / max the issue asks for (jit_bench_new.json).
#  2. The sample kernels whose SASS this session's codegen changed, after
#     --checks at small sizes (new code): one asm per run of wgmmas (linear
#     attention D64, flash attention's D64 backward, split-K) and fragment
#     nests printed unrolled (linear attention D128, flash attention's D128
#     backward), each benched with the new code and then the old
#     (TESSEL_WGMMA_ASM_EACH=1 TESSEL_UNROLL_FRAGMENT_LOOPS=0 print exactly
#     the old code). The gemms' and the flash forward's device tiles give
#     byte-identical cubins either way.
#  3. jit_bench again with the old code, for before/after on the same host
#     (jit_bench_old.json).
# Steps that would end past $DEADLINE (190 s) are skipped and say so.
#   tools/dev/s9_compile_device.sh .probe/stage/build   # writes $OUT/compile
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/explore}/compile
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention la=$S/samples/linear_attention
sk=$S/samples/splitk_gemm
deadline=${DEADLINE:-190}
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
step check-la-d64 50 "$la" --backend=gpu --check --size=1x512x2x64
step check-la-d128 50 "$la" --backend=gpu --check --size=1x512x2x128
step check-flash-d64 40 "$fa" --backend=gpu --check --pass=fwd+bwd \
  --size=1x600x2x64
step check-flash-d128 40 "$fa" --backend=gpu --check --pass=fwd+bwd \
  --size=1x600x2x128
old=(env TESSEL_WGMMA_ASM_EACH=1 TESSEL_UNROLL_FRAGMENT_LOOPS=0)
ab() {  # name, flags...: new, then old
  local n=$1; shift
  step "$n-new" 60 "$@"
  step "$n-old" 60 "${old[@]}" "$@"
}
ab la-d128 "$la" --backend=gpu --bench --check=false --size=8x4096x16x128
ab la-d64 "$la" --backend=gpu --bench --check=false --size=8x4096x32x64
ab flash-d128 "$fa" --backend=gpu --bench --check=false --pass=fwd+bwd \
  --causal=false --size=8x4096x16x128
ab flash-d64 "$fa" --backend=gpu --bench --check=false --pass=fwd+bwd \
  --causal=false --size=8x4096x32x64
ab splitk "$sk" --backend=gpu --bench --check=false --size=1024x1024x16384 \
  --split-k=8
# 3. Cold compile with the old code, same host.
step jit-old 90 "${old[@]}" "$S/bench/jit_bench" --manifest samples/kernels.json \
  --arch sm_90a --out "$OUT/jit_bench_old.json"
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
echo "== gpu rows (each new, then old; kernel ms in the table columns)"
cat "$OUT/bench.txt"
echo "== summary"
cat "$OUT/summary.txt"
