#!/usr/bin/env bash
# Session 7's first H200 call (~9 minutes): flash attention on the
# warp-specialized path (correctness at ragged sizes, tile sweep, SDPA in the
# same call), linear attention with and without warp specialization, and
# GEMM tiles for the suite's shapes that fill too few SMs. Argument: the
# staged build.
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1
fa=$S/samples/flash_attention g=$S/samples/gemm la=$S/samples/linear_attention
par() {
  local n=$1; shift
  (t=$SECONDS; timeout 150 "$@" >"$OUT/$n.log" 2>&1
   printf '%-30s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >"$OUT/$n.rc") &
}
FLASH="128 128 128 256 2
128 128 64 256 2
128 128 32 128 2
128 128 32 128 2 --warp-specialized=false
64 128 128 256 2
64 128 64 256 2
64 128 32 128 2
64 128 32 128 2 --warp-specialized=false"
par samples-gpu "$S/tests/samples/samples_gpu_test"
par la-check "$la" --backend=gpu --check --size=small
cfg_checks() {
  local failed=0
  while read -r D bm bn th st extra; do
    echo "=== D$D m$bm n$bn t$th s$st $extra"
    "$fa" --backend=gpu --check --size="2x600x2x$D" --block-m="$bm" \
      --block-n="$bn" --threads="$th" --stages="$st" $extra || failed=1
  done <<<"$FLASH"
  return $failed
}
export -f cfg_checks; export fa FLASH
par flash-checks bash -c cfg_checks
wait
for f in "$OUT"/*.rc; do cat "$f" >>"$OUT/summary.txt"; rm -f "$f"; done
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck synccheck; do
  (t=$SECONDS; timeout 120 $san $tool "$fa" --backend=gpu --check \
     --size=1x300x2x128 --block-m=128 --block-n=128 --threads=256 \
     >"$OUT/$tool-flash.log" 2>&1
   printf '%-30s rc=%-3s %4ss\n' "$tool-flash" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt")
done
timeout 120 python3 bench/peers.py --only sdpa --out "$OUT/sdpa.json" >"$OUT/sdpa.log" 2>&1
t0=$SECONDS
while read -r D bm bn th st extra; do
  ((SECONDS - t0 > 230)) && break
  H=16; [ "$D" = 64 ] && H=32
  r=$(timeout 60 "$fa" --backend=gpu --bench --check=false --size="8x4096x${H}x$D" \
    --block-m="$bm" --block-n="$bn" --threads="$th" --stages="$st" $extra 2>&1 |
    grep " gpu ")
  echo "D$D m$bm n$bn t$th s$st $extra" >>"$OUT/flash.txt"
  echo "$r" >>"$OUT/flash.txt"
done <<<"$FLASH"
for ws in true false; do
  timeout 60 "$la" --backend=gpu --bench --check=false --size=bench \
    --warp-specialized=$ws 2>&1 | grep " gpu " | sed "s/^/ws=$ws /" >>"$OUT/la.txt"
done
shapes="512x4096x4096 256x8192x8192 1000x1000x1000 2048x2048x2048 4096x4096x14336 4096x4096x1024 3000x5000x4000"
timeout 60 "$S/bench/cublas_gemm" --sizes "$(echo $shapes | tr ' ' ',')" \
  --dtypes f16 --layouts NN --out "$OUT/cublas.json" 2>&1 | grep cublas >>"$OUT/gemm.txt"
t0=$SECONDS
for sz in $shapes; do
  while read -r tile; do
    ((SECONDS - t0 > 150)) && break
    r=$(timeout 30 $g --bench --size=$sz $tile 2>&1 | grep " gpu ")
    echo "$tile | $r" >>"$OUT/gemm.txt"
  done <<<"--block-m=128 --block-n=256 --stages=4
--block-m=128 --block-n=128 --stages=4
--block-m=128 --block-n=128 --stages=6
--block-m=64 --block-n=256 --stages=4 --threads=128"
done
grep -h "impl\|ms" "$OUT/sdpa.log" | tail -12 >"$OUT/sdpa.txt"
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude='*.txt' . && find . -mindepth 1 ! -name '*.txt' -delete && mv /tmp/logs.tar.gz logs.tar.gz)
cat "$OUT/summary.txt" "$OUT/flash.txt" "$OUT/la.txt" "$OUT/gemm.txt" "$OUT/sdpa.txt"
