#!/usr/bin/env bash
# Session 8's GEMM tile sweep on the H200 (one device call, ~5 minutes):
# for the shapes where the GEMM sample is weakest against cuBLAS, a handful
# of tiles / stages / K splits each through the sample's flags, cuBLAS in
# the same call, one table line per (shape, config): ms, TFLOP/s, ratio to
# cuBLAS. "default" is samples/gemm_tile.cc's choice; the table there is
# what the result sets. First checks the split-K path against float64 at
# ragged sizes and runs compute-sanitizer on it. Argument: the staged build
# (tools/dev/stage_device.sh). The two 28672 shapes, never timed before
# (their inputs took > 25 s to make), go first.
#
#   tools/dev/session8_gemm_sweep.sh .probe/stage/build   # writes $OUT
set -u
S=${1:?staged build folder}
OUT=${OUT:-/tmp/sweep}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-300}  # seconds; the sweep stops starting runs then

# Shape, dtype, then configs (flags; "default" = none), separated by ';'.
# L, Sm: the table's two tiles; M64: one consumer warpgroup (128 threads);
# M64s4 leaves room for two blocks an SM (off the persistent grid); N192,
# W: other shapes of the wgmma tile.
L="--block-m=128 --block-n=256 --stages=4"
Sm="--block-m=128 --block-n=128 --stages=6"
M64="--block-m=64 --block-n=128 --stages=8 --threads=128"
M64s4="--block-m=64 --block-n=128 --stages=4 --threads=128 --persistent=false"
N192="--block-m=128 --block-n=192 --stages=5"
W="--block-m=256 --block-n=128 --stages=4"
plan=(
  "8192x28672x8192 f16;default"
  "8192x8192x28672 f16;default"
  "1000x1000x1000 f16;default;$Sm;$M64;$M64 --split-k=2;$M64s4"
  "3000x5000x4000 f16;default;$Sm;$N192;$W;$L --persistent=false;$L --panel=16"
  "4096x4096x1024 f16;default;$Sm;$N192;$W;$L --persistent=false;$L --panel=4"
  "512x4096x4096 f16;default;$Sm --split-k=2;$L --split-k=2;$W --split-k=2;$M64"
  "256x8192x8192 f16;default;$L --split-k=2;$W --split-k=2;$W;$M64"
  "2048x2048x2048 f16;default;$L;$N192;$W;$M64"
  "4096x4096x4096 bf16;default;$L --panel=16;$W;$N192"
  "8192x8192x8192 f16;default;$L --panel=16;$W;$N192"
)

# The split-K path at ragged sizes and the heuristic's 1000^3 tile against
# float64, then compute-sanitizer on a split (reduce with the bias through
# shared memory) (~20 s).
sk="--size=300x200x1000 $Sm --split-k=3 --bias-relu"
checks=(
  "--size=1000x1000x1000"
  "--size=700x520x3000 $Sm --split-k=3"
  "$sk"
  "--size=300x200x1000 $M64 --split-k=2 --layout=NT"
  "--size=small"
)
for c in "${checks[@]}"; do
  # shellcheck disable=SC2086
  timeout 60 $g --check $c >>"$OUT/checks.log" 2>&1
  echo "check $c rc=$?" >>"$OUT/summary.txt"
done
for tool in memcheck racecheck synccheck; do
  # shellcheck disable=SC2086
  timeout 60 compute-sanitizer --report-api-errors no --error-exitcode 99 \
    --tool $tool $g --check $sk >"$OUT/$tool.log" 2>&1
  echo "$tool split-k rc=$?" >>"$OUT/summary.txt"
done

sizes=$(for p in "${plan[@]}"; do echo "${p%%;*}" | cut -d' ' -f1; done |
  sort -u | paste -sd,)
timeout 60 "$S/bench/cublas_gemm" --sizes "$sizes" --dtypes f16,bf16 \
  --layouts NN --out "$OUT/cublas.json" >"$OUT/cublas.log" 2>&1

n=0
for p in "${plan[@]}"; do
  IFS=';' read -ra parts <<<"$p"
  read -r size dtype <<<"${parts[0]}"
  for cfg in "${parts[@]:1}"; do
    ((SECONDS > deadline)) && break 2
    n=$((n + 1))
    flags=$cfg
    [ "$cfg" = default ] && flags=
    # shellcheck disable=SC2086
    t=25
    [[ $size == *28672* ]] && t=45  # 1.1-1.4 GB of inputs
    timeout $t $g --bench --size="$size" --dtype="$dtype" $flags \
      --json="$OUT/run$n.json" >"$OUT/run$n.log" 2>&1
    echo "$n|$size|$dtype|$cfg|$?" >>"$OUT/runs.txt"
  done
done

python3 - "$OUT" <<'EOF' | tee -a "$OUT/summary.txt"
import json, os, re, sys
out = sys.argv[1]
peer = {}
try:
    for r in json.load(open(os.path.join(out, "cublas.json")))["records"]:
        if "ms" in r:
            s = r["shape"]
            peer[(s["M"], s["N"], s["K"], r["dtype"])] = r["ms"]
except Exception as e:
    print("no cuBLAS results:", e)
print(f"{'shape':16} {'dt':4} {'config':62} {'ms':>8} {'TFLOP/s':>8} {'kern ms':>8} {'x cuBLAS':>8}")
for line in open(os.path.join(out, "runs.txt")):
    n, size, dtype, cfg, rc = line.strip().split("|")
    m, nn, k = map(int, size.split("x"))
    try:
        r = json.load(open(os.path.join(out, f"run{n}.json")))["records"][0]
        ms = r["ms"]
        kms = r.get("kernel_ms", ms)
        tf = 2.0 * m * nn * k / (ms * 1e9)
        c = peer.get((m, nn, k, dtype))
        ratio = f"{c / ms:8.3f}" if c else "       -"
        log = open(os.path.join(out, f"run{n}.log")).read()
        tile = re.search(r"tile (\d+x\d+x\d+ s\d+ t\d+)( split_k=\d+)?", log)
        cfg = cfg.replace("--block-", "").replace("--", "")
        if cfg == "default" and tile:
            cfg = "default: " + tile.group(1) + (tile.group(2) or "")
        print(f"{size:16} {dtype:4} {cfg:62} {ms:8.4f} {tf:8.1f} {kms:8.4f} {ratio}")
    except Exception as e:
        print(f"{size:16} {dtype:4} {cfg:62} rc={rc} no result ({e})")
for (m, nn, k, dt), ms in sorted(peer.items()):
    print(f"cuBLAS {m}x{nn}x{k} {dt}: {ms:.4f} ms, {2.0*m*nn*k/(ms*1e9):.1f} TFLOP/s")
EOF
echo "sweep done at ${SECONDS}s" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
