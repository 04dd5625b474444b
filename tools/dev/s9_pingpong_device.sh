#!/usr/bin/env bash
# Session 9, ping-pong GEMM schedule (issue 15) on the H200, one device call
# (~2 minutes). Argument: the staged build (tools/dev/stage_device.sh);
# logs go to $OUT/pingpong/.
#   1. correctness: the GPU test against the interpreter
#      (tessel_pingpong_gpu_test: ragged and tile-multiple sizes, NN and NT),
#      the gemm sample --check (float64 reference) with --pingpong=true at
#      ragged sizes (7 stages; 64x256 tiles), the small set (every layout,
#      fp8, split K), then compute-sanitizer memcheck on a ping-pong run
#      with up to 3 tiles a block.
#   2. bench: ping-pong (128x128x64 per consumer warpgroup, 6 stages; then
#      at 4096^3 and 8192^3 also 7 stages, and 64x256x64 in 5) against today's
#      cooperative default (samples/gemm_tile.cc) and cuBLAS
#      (bench/cublas_gemm, as tools/dev/session8_*.sh time it), f16 NN at
#      4096^3, 8192^3, 4096x4096x1024, 2048^3, 1000^3, and NT at 4096^3.
# Last it prints one table: shape, config, ms, TFLOP/s, x cuBLAS.
#
#   tools/dev/s9_pingpong_device.sh .probe/stage/build
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/out}/pingpong
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-120}  # seconds; no run starts after it
step() {
  local n=$1 lim=$2 t=$SECONDS
  shift 2
  if ((SECONDS + 5 > deadline)); then
    echo "$n skipped (deadline)" >>"$OUT/summary.txt"
    return
  fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  last_rc=$?
  printf '%-40s rc=%-3s %4ss\n' "$n" "$last_rc" "$((SECONDS - t))" >>"$OUT/summary.txt"
}

# 1. correctness (rc=0: every output within tolerance).
pp="--pingpong=true"
# Up to 3 tiles a block first: a hang (rc 124) stops the script.
step check-2100x2200x200-NT 25 "$g" --check $pp --size=2100x2200x200 --layout=NT
if ((last_rc == 124)); then
  echo "ping-pong hangs: stopped" | tee -a "$OUT/summary.txt"
  exit 1
fi
step gpu-test 60 "$S/tests/codegen/tessel_pingpong_gpu_test"
step check-s7-2056x1800x520 25 "$g" --check $pp --stages=7 --size=2056x1800x520
# 64x256 per warpgroup (one m64n256k16 a k16 step), 5 stages.
w64="--block-m=64 --block-n=256 --threads=128 --stages=5"
step check-64x256-2100x2200x200 25 "$g" --check $pp $w64 --size=2100x2200x200
step check-small 40 "$g" --check $pp --size=small
step memcheck 40 compute-sanitizer --report-api-errors no --error-exitcode 99 \
  --tool memcheck "$g" --check $pp --size=2100x2200x200

# 2. bench, the most wanted first (the deadline may cut the tail).
sizes="4096x4096x4096 4096x4096x1024 8192x8192x8192 2048x2048x2048 1000x1000x1000"
step cublas 60 "$S/bench/cublas_gemm" --sizes "$(echo $sizes | tr ' ' ',')" \
  --dtypes f16 --layouts NN,NT --out "$OUT/cublas.json"
n=0
run() {  # size layout config-name flags...
  local size=$1 layout=$2 name=$3
  shift 3
  n=$((n + 1))
  step "bench$n-$size-$layout-$name" 30 "$g" --bench --check=false \
    --size="$size" --layout="$layout" "$@" --json="$OUT/run$n.json"
  echo "$n|$size|$layout|$name" >>"$OUT/runs.txt"
}
for sz in $sizes; do
  run "$sz" NN cooperative
  run "$sz" NN pingpong-s6 $pp
done
for sz in 4096x4096x4096 8192x8192x8192; do
  run "$sz" NN pingpong-s7 $pp --stages=7
  run "$sz" NN pp-64x256-s5 $pp $w64
done
run 4096x4096x4096 NT cooperative
run 4096x4096x4096 NT pingpong-s6 $pp

python3 - "$OUT" <<'EOF' | tee -a "$OUT/summary.txt"
import json, os, re, sys
out = sys.argv[1]
peer = {}
try:
    for r in json.load(open(os.path.join(out, "cublas.json")))["records"]:
        if "ms" in r:
            s = r["shape"]
            peer[(s["M"], s["N"], s["K"], r.get("variant", r.get("layout", "NN")))] = r["ms"]
except Exception as e:
    print("no cuBLAS results:", e)
print(f"{'shape':16} {'lay':3} {'config':14} {'tile':18} {'ms':>8} {'TFLOP/s':>8} {'x cuBLAS':>8}")
for line in open(os.path.join(out, "runs.txt")):
    n, size, lay, cfg = line.strip().split("|")
    m, nn, k = map(int, size.split("x"))
    try:
        r = json.load(open(os.path.join(out, f"run{n}.json")))["records"][0]
        ms = r["ms"]
        tf = 2.0 * m * nn * k / (ms * 1e9)
        c = peer.get((m, nn, k, lay))
        ratio = f"{c / ms:8.3f}" if c else "       -"
        log = open(os.path.join(out, f"bench{n}-{size}-{lay}-{cfg}.log")).read()
        tile = re.search(r"tile (\d+x\d+x\d+ s\d+ t\d+)", log)
        print(f"{size:16} {lay:3} {cfg:14} {tile.group(1) if tile else '?':18} {ms:8.4f} {tf:8.1f} {ratio}")
    except Exception as e:
        print(f"{size:16} {lay:3} {cfg:14} no result ({e})")
for key, ms in sorted(peer.items()):
    m, nn, k, lay = key
    print(f"cuBLAS {m}x{nn}x{k} {lay}: {ms:.4f} ms, {2.0*m*nn*k/(ms*1e9):.1f} TFLOP/s")
EOF
echo "done at ${SECONDS}s" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
