#!/usr/bin/env bash
# Session 11, issue 15: GEMM blocks in cluster pairs (gemm --cluster=2,
# PassConfig::cluster_size) on the H200, ~6 minutes:
#   1. the cluster GPU test (against the interpreter) and float64 checks:
#      pairs along M (B multicast) and along N (A multicast), ragged, NN and
#      NT, bf16, bias+ReLU, the 256x128 tile;
#   2. compute-sanitizer memcheck / racecheck / synccheck on a small pair;
#   3. the headline points in ROUNDS interleaved rounds: cuBLAS, then tessel
#      without and with clusters (and 256x128 pairs along N), so that clock
#      and temperature drift fall on both sides alike;
#   4. SASS of the pair kernel: UTMALDG (multicast) and HGMMA counts.
# Logs and JSON under $OUT/cluster; the table (median over rounds; ratio =
# cuBLAS ms / tessel ms) prints last.
#   tools/dev/s11_cluster_device.sh .probe/stage/build
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/out}/cluster
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-540}
rounds=${ROUNDS:-3}
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 5 > deadline)); then echo "$n skipped (deadline)" >>"$OUT/summary.txt"; return; fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-40s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
}
: >"$OUT/summary.txt"
C="--cluster=2"
step cluster-gpu-test 120 "$S/tests/codegen/tessel_cluster_gpu_test"
for l in NN NT; do
  step "check-1000-$l" 40 "$g" --check --size=1000x1000x1000 --layout=$l $C
  step "check-1100x1000x520-$l" 40 "$g" --check --size=1100x1000x520 --layout=$l $C
  step "check-4096x4096x1024-$l" 60 "$g" --check --size=4096x4096x1024 --layout=$l $C
  step "check-256x128-$l" 40 "$g" --check --size=1000x1000x1000 --layout=$l --block-m=256 --block-n=128 --stages=4 $C
done
step check-bf16 40 "$g" --check --size=1000x1000x1000 --dtype=bf16 $C
step check-bias-relu 40 "$g" --check --size=1000x1000x520 --bias-relu $C
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  step "$tool-512x512x256" 90 $san $tool "$g" --check --size=512x512x256 $C
done
# SASS of the pair kernel (the cache holds the cubins compiled above).
step sass 60 bash -c "for f in \$(grep -rl cluster_sync $TESSEL_CACHE_DIR 2>/dev/null | head -1); do :; done;
  for c in \$(find $TESSEL_CACHE_DIR -type f -size +20k | head -40); do
    cuobjdump -sass \"\$c\" 2>/dev/null > /tmp/sass.txt || continue
    if grep -q MULTICAST /tmp/sass.txt; then
      echo \"\$c: UTMALDG \$(grep -c UTMALDG /tmp/sass.txt) multicast \$(grep -c 'UTMALDG.*MULTICAST' /tmp/sass.txt) HGMMA \$(grep -c HGMMA /tmp/sass.txt) UBLKCP \$(grep -c UTMASTG /tmp/sass.txt)\"
      break
    fi
  done"
points="4096x4096x4096:NN:f16 4096x4096x4096:NT:f16 8192x8192x8192:NN:f16
8192x8192x8192:NT:f16 4096x4096x4096:NN:bf16 8192x8192x8192:NN:bf16"
for r in $(seq 1 "$rounds"); do
  step "cublas-r$r" 120 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes f16,bf16 \
    --layouts NN,NT --out "$OUT/cublas_r$r.json"
  for p in $points; do
    IFS=: read -r sz l dt <<<"$p"
    step "base-$dt-$l-$sz-r$r" 60 "$g" --bench --size=$sz --layout=$l --dtype=$dt --json="$OUT/base_${dt}_${l}_${sz}_r$r.json"
    step "pair-$dt-$l-$sz-r$r" 60 "$g" --bench --size=$sz --layout=$l --dtype=$dt $C --json="$OUT/pair_${dt}_${l}_${sz}_r$r.json"
    step "pairn-$dt-$l-$sz-r$r" 60 "$g" --bench --size=$sz --layout=$l --dtype=$dt $C --block-m=256 --block-n=128 --stages=4 --json="$OUT/pairn_${dt}_${l}_${sz}_r$r.json"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/table.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
peer = {}
for f in glob.glob(os.path.join(out, "cublas_r*.json")):
    try:
        for r in json.load(open(f))["records"]:
            if "ms" in r:
                s = r["shape"]
                key = (s["M"], s["N"], s["K"], r.get("variant", "NN"), r.get("dtype", "f16"))
                peer.setdefault(key, []).append(r["ms"])
    except Exception as e:
        print(f, e)
runs = {}
for f in glob.glob(os.path.join(out, "*_r*.json")):
    name = os.path.basename(f)[:-5]
    if name.startswith("cublas"):
        continue
    kind, dt, lay, sz, _ = name.split("_")
    try:
        ms = json.load(open(f))["records"][0]["ms"]
    except Exception:
        continue
    runs.setdefault((kind, dt, lay, sz), []).append(ms)
med = lambda v: statistics.median(v) if v else None
print(f"{'shape':16} {'dt':5} {'lay':3} {'cuBLAS':>8} {'base':>8} {'pair':>8} {'pairN':>8} "
      f"{'r base':>7} {'r pair':>7} {'r pairN':>7}  (median of rounds, ms)")
for (kind, dt, lay, sz) in sorted(k for k in runs if k[0] == "base"):
    m, n, k = map(int, sz.split("x"))
    p = med(peer.get((m, n, k, lay, dt), []))
    b = med(runs.get(("base", dt, lay, sz), []))
    c = med(runs.get(("pair", dt, lay, sz), []))
    d = med(runs.get(("pairn", dt, lay, sz), []))
    f = lambda x: f"{x:8.4f}" if x else f"{'-':>8}"
    r = lambda x: f"{p / x:7.3f}" if p and x else f"{'-':>7}"
    print(f"{sz:16} {dt:5} {lay:3} {f(p)} {f(b)} {f(c)} {f(d)} {r(b)} {r(c)} {r(d)}")
PY
(cd "$OUT" && tar -czf ../cluster_logs.tar.gz ./*.log ./*.json && rm -f ./*.log)
cat "$OUT/summary.txt" "$OUT/table.txt"
