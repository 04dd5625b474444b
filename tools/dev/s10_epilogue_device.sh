#!/usr/bin/env bash
# Session 10, issue 15: the TMA-store epilogue (gemm --tma-store=true,
# PassConfig::tma_store_epilogue) on the H200, ~2-3 minutes:
#   1. float64 checks with --tma-store=true: ragged 333x520x200 (the path
#      taken: TMA loads + stores), 333x517x200 (N*2 bytes not 16-byte rows:
#      the plain stores stay), 1000^3, 4096x4096x1024, NN and NT, bias+ReLU,
#      bf16, the 256x128 tile (one staging buffer per warpgroup), and the
#      default path once more;
#   2. --bench without and with the flag, and cuBLAS, same shapes, same call;
#   3. compute-sanitizer memcheck / racecheck / synccheck on 333x520x200
#      (TMA stores) and memcheck on 333x517x200 (plain stores there).
# Logs and JSON under $OUT/epilogue; the table prints last:
#   ratio = cuBLAS ms / tessel ms (>= 0.95 is the goal), speedup = default
#   ms / tma-store ms (> 1: the TMA stores win; then flip the default of
#   PassConfig::tma_store_epilogue in include/tessel/target.h, or of
#   --tma-store in samples/gemm_main.cc).
#   tools/dev/s10_epilogue_device.sh .probe/stage/build
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/out}/epilogue
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-280}
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 5 > deadline)); then echo "$n skipped (deadline)" >>"$OUT/summary.txt"; return; fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-34s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
: >"$OUT/summary.txt"
T="--tma-store=true"
for l in NN NT; do
  step "check-333x520x200-$l" 40 "$g" --check --size=333x520x200 --layout=$l $T
  step "check-333x517x200-$l" 40 "$g" --check --size=333x517x200 --layout=$l $T
  step "check-1000-$l" 40 "$g" --check --size=1000x1000x1000 --layout=$l $T
  step "check-4096x4096x1024-$l" 60 "$g" --check --size=4096x4096x1024 --layout=$l $T
done
step check-bias-relu 40 "$g" --check --size=1000x1000x1000 --bias-relu $T
step check-bias-relu-ragged 40 "$g" --check --size=333x520x200 --layout=NT --bias-relu $T
step check-bf16 40 "$g" --check --size=1000x1000x1000 --dtype=bf16 $T
step check-bf16-NT 40 "$g" --check --size=333x520x200 --dtype=bf16 --layout=NT $T
step check-tile-256x128 40 "$g" --check --size=600x520x256 --block-m=256 --block-n=128 --stages=4 $T
step check-persistent-off 40 "$g" --check --size=333x520x200 --persistent=false $T
step check-default 40 "$g" --check --size=333x520x200
sizes="4096x4096x4096 8192x8192x8192 6144x6144x6144 2048x2048x2048 4096x4096x1024 1000x1000x1000"
step cublas 90 "$S/bench/cublas_gemm" --sizes "$(echo $sizes | tr ' ' ',')" \
  --dtypes f16 --layouts NN,NT --out "$OUT/cublas.json"
for sz in $sizes; do
  layouts=NN
  [ "$sz" = 4096x4096x4096 ] && layouts="NN NT"
  for l in $layouts; do
    step "bench-default-$l-$sz" 40 "$g" --bench --size=$sz --layout=$l --json="$OUT/default_${l}_$sz.json"
    step "bench-tma-$l-$sz" 40 "$g" --bench --size=$sz --layout=$l $T --json="$OUT/tma_${l}_$sz.json"
  done
done
# Sanitizers last: past DEADLINE (s) they are skipped, the timings kept.
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  step "$tool-333x520x200" 40 $san $tool "$g" --check --size=333x520x200 $T
done
step memcheck-333x517x200 40 $san memcheck "$g" --check --size=333x517x200 $T
python3 - "$OUT" <<'PY' | tee "$OUT/table.txt"
import json, os, sys
out = sys.argv[1]
peer = {}
try:
    for r in json.load(open(os.path.join(out, "cublas.json")))["records"]:
        if "ms" in r:
            s = r["shape"]
            peer[(s["M"], s["N"], s["K"], r.get("variant", r.get("layout", "NN")))] = r["ms"]
except Exception as e:
    print("cublas.json:", e)
def ms(f):
    try:
        return json.load(open(os.path.join(out, f)))["records"][0]["ms"]
    except Exception:
        return None
print(f"{'shape':16} {'lay':3} {'default ms':>10} {'tma ms':>8} {'cuBLAS ms':>9} "
      f"{'ratio def':>9} {'ratio tma':>9} {'speedup':>7}")
for f in sorted(os.listdir(out)):
    if not (f.startswith("default_") and f.endswith(".json")):
        continue
    _, lay, sz = f[:-5].split("_")
    m, n, k = map(int, sz.split("x"))
    d, t, p = ms(f), ms(f"tma_{lay}_{sz}.json"), peer.get((m, n, k, lay))
    r = lambda a, b: f"{a / b:9.3f}" if a and b else f"{'-':>9}"
    print(f"{sz:16} {lay:3} {d or 0:10.4f} {t or 0:8.4f} {p or 0:9.4f} "
          f"{r(p, d)} {r(p, t)} {r(d, t)[2:]:>7}")
PY
(cd "$OUT" && tar -czf ../epilogue_logs.tar.gz ./*.log ./*.json && rm -f ./*.log)
cat "$OUT/summary.txt" "$OUT/table.txt"
