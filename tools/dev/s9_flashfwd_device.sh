#!/usr/bin/env bash
# Session 9, helper flashfwd: the flash forward with FlashAttention-3's
# intra-warpgroup overlap (flash_attention --overlap=true: Pipelined order /
# stage lists issue P V of key block k-1 with Q K^T of block k, under the
# softmax of block k; three K/V stages) against today's schedule
# (--overlap=false) and SDPA, on the H200, in one call:
#   1. correctness against the float64 reference at ragged S (600 and 1000:
#      not multiples of the 128 / 192 row tiles), causal and full, D64 and
#      D128, overlapped (and today's at S=600 as a control), and the GPU
#      test's overlapped sample cases (samples_gpu_test); meanwhile the
#      bench-size kernels are compiled into the disk cache (one run each);
#   2. SDPA (all backends) forward at B8 S4096 H16 D128 and H32 D64;
#   3. tessel forward, overlap false / true, at those sizes, full and causal,
#      and the variable-length forward (--varlen=bench, 8 sequences, 32768
#      tokens, H16 D128; session 8's SDPA per-sequence: 3.102 ms full, 1.654
#      causal).
# Prints a table last: ms per variant, overlap's speedup, ratio to SDPA's
# fastest backend. Expected ~150 s; steps past DEADLINE (default 180 s) are
# skipped: DEADLINE=120 keeps the checks, SDPA and the four main benches.
#   OUT=/tmp/o tools/dev/s9_flashfwd_device.sh .probe/stage/build
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/s9_flashfwd_out}/flashfwd
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=${TESSEL_CACHE_DIR:-/tmp/tc_flashfwd}
fa=$S/samples/flash_attention
t0=$SECONDS
# Steps that would start past DEADLINE seconds are skipped (said in the
# summary), so the table always comes back; the benches run in order of
# importance.
DEADLINE=${DEADLINE:-180}
run() {  # name limit cmd...: log to $OUT/name.log, status to summary
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 15 > DEADLINE)); then
    echo "$n skipped (DEADLINE=$DEADLINE)" >>"$OUT/summary.txt"
    return
  fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  local rc=$?
  printf '%-28s rc=%-3s %4ss\n' "$n" "$rc" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
: >"$OUT/summary.txt"
# 1. Checks and warm compiles, side by side (NVRTC dominates; results of
# checks do not depend on the GPU being shared).
for D in 64 128; do
  for sz in 1x600x2x$D 2x1000x3x$D; do
    run "check-overlap-$sz" 90 "$fa" --backend=gpu --check --size=$sz --overlap=true &
  done
  run "check-today-1x600x2x$D" 90 "$fa" --backend=gpu --check --size=1x600x2x$D --overlap=false &
done
# D64 overlapped on two consumer warpgroups (128 x 128 tiles, 232
# registers each) instead of three (192 x 128, 160 registers).
d64_2wg="--block-m=128 --block-n=128 --threads=256 --stages=3"
run warm-d64-2wg 90 "$fa" --backend=gpu --check=false --size=8x4096x32x64 \
  --overlap=true $d64_2wg &
run check-overlap-d64-2wg 90 "$fa" --backend=gpu --check --size=1x600x2x64 \
  --overlap=true $d64_2wg &
# The overlapped sample cases of the GPU test (tests/samples/sample_cases.cc:
# D128 2 stages, D64 three warpgroups, varlen with padding; float64).
run gpu-test-overlap 120 env TESSEL_REQUIRE_GPU=1 \
  "$S/tests/samples/samples_gpu_test" --gtest_filter='*overlap*' &
# Variable length (the same body, the same lists): sequences shorter than a
# tile and ragged ones, D128, the device tile.
run check-overlap-varlen 90 "$fa" --backend=gpu --check --varlen=1,17,300,1000 \
  --size=2x128 --overlap=true &
for ov in false true; do
  run "warm-varlen-$ov" 90 "$fa" --backend=gpu --check=false --varlen=bench --overlap=$ov &
done
for sz in 8x4096x16x128 8x4096x32x64; do
  for ov in false true; do
    run "warm-$sz-$ov" 90 "$fa" --backend=gpu --check=false --size=$sz --overlap=$ov &
  done
done
wait
# 2. SDPA, alone on the GPU.
run peers-sdpa 100 python3 bench/peers.py --only sdpa --attention-passes fwd \
  --attention-shapes "8,4096,16,128;8,4096,32,64" --gqa-shapes "" \
  --out "$OUT/peers_sdpa.json"
# 3. tessel, alone on the GPU, kernels from the cache.
for sz in 8x4096x16x128 8x4096x32x64; do
  for ov in false true; do
    run "bench-$sz-overlap-$ov" 60 "$fa" --backend=gpu --bench --check=false \
      --size=$sz --overlap=$ov --json="$OUT/flash_fwd_${sz}_overlap_$ov.json"
  done
done
run bench-d64-overlap-2wg 60 "$fa" --backend=gpu --bench --check=false \
  --size=8x4096x32x64 --overlap=true $d64_2wg
for ov in false true; do
  run "bench-varlen-overlap-$ov" 60 "$fa" --backend=gpu --bench --check=false \
    --varlen=bench --overlap=$ov --json="$OUT/flash_varlen_overlap_$ov.json"
done
echo "total ${SECONDS}s (from ${t0}s)" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
echo "=== check failures (none listed: all passed)"
grep -l -i -E "fail|mismatch|error" "$OUT"/check-*.log 2>/dev/null | sed 's|.*/||'
grep -h -E "^flash_attention" "$OUT"/check-*.log | grep -v -w pass | head -20
python3 - "$OUT" <<'EOF'
import glob, os, re, sys
out = sys.argv[1]
ms = {}  # (size, variant, impl) -> ms
for f in glob.glob(os.path.join(out, "bench-*.log")):
    if "2wg" in f or "varlen" in f:
        continue
    ov = "overlap" if f.endswith("overlap-true.log") else "today"
    for line in open(f):
        m = re.match(r"(flash_attention\S*)\s+B=(\d+) S=(\d+) H=(\d+) D=(\d+).*?\bgpu\b\s+([\d.]+) ms", line)
        if m:
            var = "causal" if m.group(1).endswith("_causal") else "full"
            size = "B%s S%s H%s D%s" % m.group(2, 3, 4, 5)
            ms[(size, var, ov)] = float(m.group(6))
p = os.path.join(out, "peers-sdpa.log")
if os.path.exists(p):
    for line in open(p):
        m = re.match(r"flash_attention\s+(torch_sdpa\S*)\s+fwd\s+(\w+)\s+(B\d+ S\d+ H\d+ D\d+): ([\d.]+) ms", line)
        if m:
            ms[(m.group(3), m.group(2), m.group(1))] = float(m.group(4))
print("%-20s %-6s %9s %9s %7s %10s %9s %9s" % ("size", "var", "today", "overlap",
      "speedup", "sdpa_best", "today/x", "overlap/x"))
for size in ("B8 S4096 H16 D128", "B8 S4096 H32 D64"):
    for var in ("full", "causal"):
        t, o = ms.get((size, var, "today")), ms.get((size, var, "overlap"))
        s = ms.get((size, var, "torch_sdpa"))
        f = lambda x: "%9.3f" % x if x else "%9s" % "-"
        r = lambda x: "%9.3f" % (s / x) if x and s else "%9s" % "-"
        print("%-20s %-6s %s %s %7s %10s %s %s" % (size, var, f(t), f(o),
              "%.3f" % (t / o) if t and o else "-", f(s), r(t), r(o)))
for f in sorted(glob.glob(os.path.join(out, "bench-d64-overlap-2wg.log"))):
    for line in open(f):
        m = re.match(r"(flash_attention\S*)\s+B=.*?\bgpu\b\s+([\d.]+) ms", line)
        if m:
            print("%-28s %-8s %9.3f ms  (D64 overlap, 2 consumer warpgroups)" % (m.group(1), "overlap", float(m.group(2))))
for f in sorted(glob.glob(os.path.join(out, "bench-varlen-*.log"))):
    for line in open(f):
        m = re.match(r"(flash_attention_varlen\S*)\s.*?\bgpu\b\s+([\d.]+) ms", line)
        if m:
            print("%-28s %-8s %9.3f ms" % (m.group(1), "overlap" if "true" in f else "today", float(m.group(2))))
print("(ms; speedup = today / overlap; x/ = SDPA's fastest backend's ms / "
      "tessel's ms, >= 0.95 is the issue's bar)")
EOF
