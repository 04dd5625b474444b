#!/usr/bin/env bash
# Session 10, issue 18 (compile latency) on the H200, about 150 s:
#  1. (first) jit_bench over samples/kernels.json for sm_90a, cold, one
#     job, with this session's code (jit_new.json), then with the old code
#     (jit_old.json): the median / max the issue asks for, before and after
#     on the same host. Both sides set each switch explicitly; the old side
#     is exactly the previous generated code and options:
#       TESSEL_REBASE_UNROLLED=0     every access in an unrolled nest prints
#                                    its whole index (new, =1: a base pointer
#                                    before the nest, constant offsets in it;
#                                    off by default until this A/B)
#       TESSEL_CUMSUM_CARRY_REDUCE=1 the row cumsum's carry is a warp
#                                    reduction (new: one shuffle from the
#                                    group's last lane)
#       TESSEL_NVRTC_MINIMAL=0       NVRTC without -minimal (new: with; the
#                                    same SASS, less front end)
#  2. Correctness of the new code: the row reduce / scan GPU tests (cumsum on
#     the device against the interpreter: its summation order changed), the
#     seed cases on the GPU (row softmax cumsum, the seed gemms), and --check
#     at small sizes of the samples whose code changed (gemm, flash attention
#     fwd+bwd).
#  3. The kernels whose code changed, benched with the new code, then the old
#     (same flags): the gemm (its device tile's epilogue), flash attention
#     fwd+bwd D128 / D64. Base pointers go only where an unrolled nest copies
#     an access 32 times or more (epilogues); the manifest's sm_90a gemms and
#     seed gemms give the same SASS, flash attention other SASS.
# A step that could end past $DEADLINE (135 s) is skipped and says so; the
# benches of step 3 come last.
#   OUT=/tmp/out tools/dev/s10_compile_device.sh .probe/stage/build
# writes $OUT/compile/ and prints the table last.
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/explore}/compile
mkdir -p "$O"
: >"$O/summary.txt"
: >"$O/bench.txt"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention
deadline=${DEADLINE:-135}
new=(env TESSEL_REBASE_UNROLLED=1 TESSEL_CUMSUM_CARRY_REDUCE=0 TESSEL_NVRTC_MINIMAL=1)
old=(env TESSEL_REBASE_UNROLLED=0 TESSEL_CUMSUM_CARRY_REDUCE=1 TESSEL_NVRTC_MINIMAL=0)
step() { # name, limit, command...: its log, rc and gpu rows
  local n=$1 lim=$2 t=$SECONDS
  shift 2
  if ((SECONDS + lim / 2 > deadline)); then
    echo "$n skipped (deadline)" >>"$O/summary.txt"
    return
  fi
  timeout "$lim" "$@" >"$O/$n.log" 2>&1
  printf '%-26s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$O/summary.txt"
  grep -h " gpu " "$O/$n.log" | sed "s|^|$n: |" >>"$O/bench.txt"
}
# 1. Cold compile of the manifest, new code (jit_bench compiles through
# NVRTC directly: no cache).
step jit-new 60 "${new[@]}" "$S/bench/jit_bench" --manifest samples/kernels.json \
  --arch sm_90a --out "$O/jit_new.json"
# 1b. Cold compile with the old code, same host.
step jit-old 60 "${old[@]}" "$S/bench/jit_bench" \
  --manifest samples/kernels.json --arch sm_90a --out "$O/jit_old.json"
# 2. Correctness of the new code.
export TESSEL_CACHE_DIR=/tmp/tc-s10-compile
rm -rf "$TESSEL_CACHE_DIR"
step test-row-reduce 40 "${new[@]}" "$S/tests/codegen/tessel_row_reduce_gpu_test"
step test-seeds 60 "${new[@]}" "$S/tests/codegen/tessel_seed_gpu_test"
step check-gemm 30 "${new[@]}" "$S/samples/gemm" --backend=gpu --check \
  --size=333x517x200
step check-gemm-big 30 "${new[@]}" "$S/samples/gemm" --backend=gpu --check \
  --size=1000x1000x1000 --dtype=bf16
step check-flash-d64 30 "${new[@]}" "$fa" --backend=gpu --check --pass=fwd+bwd \
  --size=1x600x2x64
step check-flash-d128 30 "${new[@]}" "$fa" --backend=gpu --check --pass=fwd+bwd \
  --size=1x600x2x128
# 3. New, then old.
ab() { # name, limit, flags...
  local n=$1 lim=$2
  shift 2
  step "$n-new" "$lim" "${new[@]}" "$@"
  step "$n-old" "$lim" "${old[@]}" "$@"
}
ab gemm 25 "$S/samples/gemm" --backend=gpu --bench --check=false \
  --size=4096x4096x4096
ab gemm-8192 30 "$S/samples/gemm" --backend=gpu --bench --check=false \
  --size=8192x8192x8192
ab flash-d128 25 "$fa" --backend=gpu --bench --check=false --pass=fwd+bwd \
  --causal=false --size=8x4096x16x128
ab flash-d64 25 "$fa" --backend=gpu --bench --check=false --pass=fwd+bwd \
  --causal=false --size=8x4096x32x64
python3 - "$O" <<'EOF' >"$O/table.txt" 2>&1
import json, os, sys
o = sys.argv[1]
runs = {}
for tag in ("new", "old"):
    p = os.path.join(o, "jit_%s.json" % tag)
    if os.path.exists(p):
        runs[tag] = json.load(open(p))["manifest"]
for tag, m in runs.items():
    d = m["summary"]["sm_90a"]
    ph = d["median_phase_ms"]
    print("jit_%s: median %.0f ms max %.0f ms (%s) | median front end %.0f "
          "NVVM %.0f ptxas %.0f | %d kernels, %d errors" % (
              tag, d["median_ms"], d["max_ms"], d["slowest"][0]["name"],
              ph["frontend_ms"], ph["nvvm_ms"], ph["ptxas_ms"], d["kernels"],
              d["errors"]))
if "new" in runs:
    old = {(k["index"], k["name"]): k
           for k in runs.get("old", {}).get("kernels", [])}
    ks = sorted(runs["new"]["kernels"], key=lambda k: -k.get("total_ms", 0))
    print("%-3s %-32s %8s %8s %6s %6s %6s" % (
        "#", "kernel (new, slowest first)", "new ms", "old ms", "fe", "nvvm",
        "ptxas"))
    for k in ks[:12]:
        print("%-3d %-32s %8.0f %8s %6.0f %6.0f %6.0f" % (
            k["index"], k["name"], k["total_ms"],
            "%.0f" % old[(k["index"], k["name"])]["total_ms"]
            if (k["index"], k["name"]) in old else "-",
            k["frontend_ms"], k["nvvm_ms"], k["ptxas_ms"]))
EOF
echo "== gpu rows (each new, then old; kernel ms in the table columns)"
cat "$O/bench.txt"
echo "== steps"
cat "$O/summary.txt"
echo "== compile latency, sm_90a, cold (table)"
cat "$O/table.txt"
