#!/usr/bin/env bash
# Session 13's GEMM call on the H200 (issue 15's must-shows in one call,
# ~6 minutes):
#   1. float64 checks: every pass-config combination, ragged suite shapes,
#      bf16, fp8, cluster pairs, one block per tile; the autotuner's GPU test;
#   2. compute-sanitizer memcheck / racecheck / synccheck;
#   3. SASS and resource usage (cuobjdump) of the default 4096^3 kernel;
#   4. ROUNDS rounds, each cuBLAS (f16 suite NN + NT, bf16), torch._scaled_mm
#      (fp8), then tessel on every point, so that clock and temperature
#      drift fall on both sides alike; the table takes each side's median.
# Logs and JSON under $OUT/gemm; the table (ratio = peer ms / tessel ms)
# prints last, with the geomean and the spread of the per-round ratios.
#   tools/dev/s13_gemm_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
OUT=$TOP/gemm
mkdir -p "$OUT"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc
export TESSEL_REQUIRE_GPU=1
g=$S/samples/gemm
deadline=${DEADLINE:-570}
rounds=${ROUNDS:-3}
: >"$OUT/summary.txt"
O=$OUT
suite="4096x4096x4096 8192x8192x8192 2048x2048x2048 4096x14336x4096
4096x4096x14336 4096x6144x4096 8192x28672x8192 8192x8192x28672 512x4096x4096
256x8192x8192 4096x4096x1024 16384x4096x4096 3000x5000x4000 4095x4097x4096
1000x1000x1000 6144x6144x6144"
checks() {
  local failed=0
  for combo in "" "--persistent=false" "--tma=false" "--warp-specialized=false" \
    "--tma=false --warp-specialized=false" "--wgmma=false" "--pingpong=true" \
    "--cluster=2" "--tma=false --wgmma=false"; do
    for l in NN NT; do $g --check --size=333x517x200 --layout=$l $combo || failed=1; done
  done
  for sz in 1000x1000x1000 4095x4097x4096 3000x5000x4000; do
    for l in NN NT; do $g --check --size=$sz --layout=$l || failed=1; done
  done
  $g --check --size=1000x1000x1000 --dtype=bf16 || failed=1
  $g --check --size=1000x1000x1000 --cluster=2 --layout=NT || failed=1
  $g --check --size=512x4096x1024 || failed=1     # the under-one-wave tile
  $g --check --size=1000x520x2048 --dtype=e4m3 --layout=NT || failed=1
  $g --check --size=1000x520x2048 --dtype=e5m2 --layout=NT --out-dtype=bf16 || failed=1
  $g --check --size=1000x1000x520 --bias-relu || failed=1
  return $failed
}
export -f checks; export g
step checks 200 bash -c checks
step autotune-gpu-test 120 "$S/tests/autotune/tessel_autotune_gpu_test"
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  step "$tool-gemm" 60 $san $tool $g --check --size=333x517x200
  step "$tool-gemm-NT" 60 $san $tool $g --check --size=333x517x200 --layout=NT
  step "$tool-gemm-pingpong" 60 $san $tool $g --check --size=2100x520x200 --layout=NT --pingpong=true
  step "$tool-gemm-pair" 60 $san $tool $g --check --size=512x512x256 --cluster=2
done
# SASS of the default kernel: a fresh cache holds only the 4096^3 cubin
# (this bench is a warm-up, not in the table).
sass() {
  local c=/tmp/tc_sass
  rm -rf $c && TESSEL_CACHE_DIR=$c $g --bench --size=4096x4096x4096 >/dev/null || return 1
  for f in $(find $c -name '*.cubin'); do
    python3 - "$f" /tmp/default.cubin <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d[d.find(b"\x7fELF"):])
PY
    cuobjdump -sass /tmp/default.cubin >/tmp/default.sass
    echo "$f: HGMMA $(grep -c HGMMA /tmp/default.sass) UTMALDG $(grep -c UTMALDG /tmp/default.sass)" \
      "UTMASTG $(grep -c UTMASTG /tmp/default.sass) SYNCS $(grep -c SYNCS /tmp/default.sass)" \
      "LDGSTS $(grep -c LDGSTS /tmp/default.sass) HMMA $(grep -c 'HMMA\.' /tmp/default.sass)"
    cuobjdump -res-usage /tmp/default.cubin
    grep -m3 HGMMA /tmp/default.sass
    grep -m2 UTMALDG /tmp/default.sass
  done
}
export -f sass
step sass 60 bash -c sass
for r in $(seq 1 "$rounds"); do
  step "cublas-r$r" 100 "$S/bench/cublas_gemm" --sizes "$(echo $suite | tr ' ' ',')" \
    --dtypes f16 --layouts NN,NT --out "$OUT/cublas_r$r.json"
  step "cublas-bf16-r$r" 40 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes bf16 \
    --layouts NN,NT --out "$OUT/cublasbf16_r$r.json"
  step "peers-fp8-r$r" 90 python3 bench/peers.py --only fp8_gemm --out "$OUT/fp8peer_r$r.json"
  for sz in $suite; do for l in NN NT; do
    step "gemm-f16-$l-$sz-r$r" 60 "$g" --bench --size=$sz --layout=$l --json="$OUT/run_f16_${l}_${sz}_r$r.json"
  done; done
  for sz in 4096x4096x4096 8192x8192x8192; do for l in NN NT; do
    step "gemm-bf16-$l-$sz-r$r" 40 "$g" --bench --size=$sz --dtype=bf16 --layout=$l --json="$OUT/run_bf16_${l}_${sz}_r$r.json"
  done; done
  step "gemm-fp8-8192-r$r" 60 "$g" --bench --size=8192x8192x8192 --dtype=e4m3 --layout=NT --json="$OUT/run_fp8_NT_8192x8192x8192_r$r.json"
  step "gemm-fp8-4096-r$r" 60 "$g" --bench --size=4096x4096x4096 --dtype=e4m3 --layout=NT --json="$OUT/run_fp8_NT_4096x4096x4096_r$r.json"
done
python3 tools/dev/s13_gemm_table.py "$OUT" | tee "$OUT/table.txt"
# At most 8 files come back from the device: the table, the summary and
# one archive of everything.
cp "$OUT/table.txt" "$OUT/summary.txt" "$TOP"
(cd "$TOP" && tar -czf gemm.tar.gz gemm && rm -rf gemm)
cat "$TOP/summary.txt" "$TOP/table.txt"
