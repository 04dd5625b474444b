#!/usr/bin/env bash
# Session 9's GEMM call on the H200 (issue 15, ~7 minutes): the float64
# checks (pass configs, ragged suite shapes, fp8), compute-sanitizer, then
# the whole 16-shape suite NN and NT, bf16 and fp8 points, each against its
# peer in this same call (cuBLAS for f16 / bf16, torch._scaled_mm for fp8).
# One JSON per run and cublas.json / peers_fp8.json under $OUT/gemm; the
# table (ratio = peer ms / tessel ms) and the geomean print last.
#   tools/dev/s9_gemm_suite.sh .probe/stage/build [extra gemm flags]
set -u
S=${1:?staged build folder}; shift
EXTRA="$*"
OUT=${OUT:-/tmp/suite}/gemm
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-560}
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 5 > deadline)); then echo "$n skipped (deadline)" >>"$OUT/summary.txt"; return; fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-40s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
suite="4096x4096x4096 8192x8192x8192 2048x2048x2048 4096x14336x4096
4096x4096x14336 4096x6144x4096 8192x28672x8192 8192x8192x28672 512x4096x4096
256x8192x8192 4096x4096x1024 16384x4096x4096 3000x5000x4000 4095x4097x4096
1000x1000x1000 6144x6144x6144"
checks() {
  local failed=0
  for combo in "" "--persistent=false" "--tma=false" "--warp-specialized=false" \
    "--tma=false --warp-specialized=false" "--wgmma=false" "--pingpong=true"; do
    for l in NN NT; do $g --check --size=333x517x200 --layout=$l $combo $EXTRA || failed=1; done
  done
  for sz in 1000x1000x1000 4095x4097x4096; do
    for l in NN NT; do $g --check --size=$sz --layout=$l $EXTRA || failed=1; done
  done
  $g --check --size=1000x1000x1000 --dtype=bf16 $EXTRA || failed=1
  for l in NN NT; do  # the candidate tiles benched below
    $g --check --size=1000x1000x1000 --layout=$l --block-m=128 --block-n=128 --block-k=128 --stages=3 || failed=1
    $g --check --size=1000x1000x1000 --layout=$l --block-m=128 --block-n=64 --block-k=128 --stages=4 || failed=1
  done
  $g --check --size=4096x4096x1024 --block-m=128 --block-n=256 --block-k=128 --stages=2 || failed=1
  $g --check --size=1000x520x2048 --dtype=e4m3 --layout=NT || failed=1
  return $failed
}
export -f checks; export g EXTRA
step checks 120 bash -c checks
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  step "$tool-gemm" 60 $san $tool $g --check --size=333x517x200 $EXTRA
  step "$tool-gemm-pingpong" 60 $san $tool $g --check --size=2100x520x200 --layout=NT --pingpong=true
done
step cublas 200 "$S/bench/cublas_gemm" --sizes "$(echo $suite | tr ' ' ',')" \
  --dtypes f16 --layouts NN,NT --out "$OUT/cublas.json"
step cublas-bf16 40 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes bf16 \
  --layouts NN --out "$OUT/cublas_bf16.json"
step peers-fp8 90 python3 bench/peers.py --only fp8_gemm --out "$OUT/peers_fp8.json"
n=0
for sz in $suite; do for l in NN NT; do
  n=$((n + 1))
  step "gemm-$l-$sz" 60 "$g" --bench --size=$sz --layout=$l $EXTRA --json="$OUT/run_${l}_$sz.json"
done; done
for sz in 4096x4096x4096 8192x8192x8192; do
  step "gemm-bf16-$sz" 40 "$g" --bench --size=$sz --dtype=bf16 $EXTRA --json="$OUT/run_bf16_$sz.json"
done
# Candidate tiles for the weakest shapes (the table in samples/gemm_tile.cc
# can take a winner: same kernel, measured here beside the same cuBLAS).
step var-1000-k128 30 "$g" --bench --size=1000x1000x1000 --block-m=128 --block-n=128 --block-k=128 --stages=3 --json="$OUT/var_1000_k128.json"
step var-1000-k128-NT 30 "$g" --bench --size=1000x1000x1000 --layout=NT --block-m=128 --block-n=128 --block-k=128 --stages=3 --json="$OUT/var_1000_k128_NT.json"
step var-1000-n64-k128 30 "$g" --bench --size=1000x1000x1000 --block-m=128 --block-n=64 --block-k=128 --stages=4 --json="$OUT/var_1000_n64_k128.json"
step var-1024-pp 30 "$g" --bench --size=4096x4096x1024 --pingpong=true --json="$OUT/var_1024_pp.json"
step var-1024-k128 30 "$g" --bench --size=4096x4096x1024 --block-m=128 --block-n=256 --block-k=128 --stages=2 --json="$OUT/var_1024_k128.json"
step gemm-fp8-8192 60 "$g" --bench --size=8192x8192x8192 --dtype=e4m3 --layout=NT --json="$OUT/run_fp8_8192.json"
step gemm-fp8-4096 60 "$g" --bench --size=4096x4096x4096 --dtype=e4m3 --layout=NT --json="$OUT/run_fp8_4096.json"
python3 - "$OUT" <<'PY' | tee "$OUT/table.txt"
import glob, json, math, os, sys
out = sys.argv[1]
peer = {}
for f in ("cublas.json", "cublas_bf16.json"):
    try:
        for r in json.load(open(os.path.join(out, f)))["records"]:
            if "ms" in r:
                s = r["shape"]
                peer[(s["M"], s["N"], s["K"], r["dtype"], r.get("variant", r.get("layout", "NN")))] = r["ms"]
    except Exception as e:
        print("peer", f, e)
try:
    for r in json.load(open(os.path.join(out, "peers_fp8.json")))["records"]:
        if "ms" in r and "fast" not in json.dumps(r.get("label", r)):
            s = r["shape"]
            peer[(s["M"], s["N"], s["K"], "fp8_e4m3", "NT")] = r["ms"]
except Exception as e:
    print("peer fp8", e)
ratios = []
print(f"{'shape':18} {'dt':8} {'lay':3} {'tessel ms':>10} {'TFLOP/s':>8} {'peer ms':>9} {'ratio':>6}")
for f in sorted(glob.glob(os.path.join(out, "run_*.json"))) + sorted(glob.glob(os.path.join(out, "var_*.json"))):
    try:
        r = json.load(open(f))["records"][0]
    except Exception as e:
        print(os.path.basename(f), "no result", e); continue
    s = r["shape"]; m, n, k = s["M"], s["N"], s["K"]
    dt, lay = r.get("dtype"), r.get("variant", "NN")
    p = peer.get((m, n, k, dt, lay))
    ratio = p / r["ms"] if p else float("nan")
    if p and dt == "f16" and "/run_" in f: ratios.append(ratio)
    tag = os.path.basename(f)[:-5] if "/var_" in f else ""
    print(f"{m}x{n}x{k:<8} {dt:8} {lay:3} {r['ms']:10.4f} {2*m*n*k/r['ms']/1e9:8.1f} {p or 0:9.4f} {ratio:6.3f} {tag}")
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"f16 suite: {len(ratios)} points, geomean {g:.3f}, min {min(ratios):.3f}")
PY
(cd "$OUT" && tar -czf ../gemm_logs.tar.gz ./*.log ./*.json && rm -f ./*.log)
cat "$OUT/summary.txt" "$OUT/table.txt"
