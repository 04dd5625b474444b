#!/usr/bin/env bash
# Session 8's first H200 call (~5 minutes): the row-kernel tile sweep
# (session8_rows_sweep.sh) and a GEMM tile sweep over the suite's weak
# shapes with cuBLAS in the same run. Argument: the staged build.
set -u
S=${1:?staged build folder}
export OUT=${OUT:-/tmp/explore_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt"
t=$SECONDS
bash tools/dev/session8_rows_sweep.sh "$S"
echo "rows sweep: $((SECONDS - t)) s" >>"$OUT/gemm_sweep.txt"
g=$S/samples/gemm
sweep() {  # sweep SIZE EXTRA-FLAGS CONFIG...
  local size=$1 extra=$2; shift 2
  for cfg in "$@"; do
    ((SECONDS > 500)) && return
    IFS=: read -r bm bn bk st th <<<"$cfg"
    flags=()
    [ "$bm" != d ] && flags=(--block-m="$bm" --block-n="$bn" --block-k="$bk"
      --stages="$st" --threads="$th")
    line=$(timeout 30 "$g" --bench --check=false --size="$size" $extra \
      "${flags[@]}" 2>&1 | grep " gpu " | head -1)
    printf '%-16s %-12s %-20s %s\n' "$size" "$extra" "$cfg" \
      "${line:-FAILED}" >>"$OUT/gemm_sweep.txt"
  done
}
sweep 3000x5000x4000 "" d 128:128:64:6:256 256:128:64:4:256 128:192:64:5:256 \
  128:256:64:3:256
sweep 1000x1000x1000 "" d 128:64:64:6:256 64:128:64:6:128 64:64:64:6:128 \
  128:128:64:4:256
sweep 4096x4096x1024 "" d 128:128:64:6:256 256:128:64:4:256 128:192:64:5:256
sweep 2048x2048x2048 "" d 128:128:64:6:256 128:192:64:5:256
sweep 4096x4096x4096 "--dtype=bf16" d 128:256:64:3:256 128:256:64:5:256 \
  256:128:64:4:256
sweep 8192x8192x8192 "" d 128:256:64:3:256 256:128:64:4:256
timeout 60 "$S/bench/cublas_gemm" \
  --sizes 3000x5000x4000,1000x1000x1000,4096x4096x1024,2048x2048x2048,4096,8192 \
  --dtypes f16,bf16 --layouts NN >"$OUT/cublas.log" 2>&1
grep -h cublas "$OUT/cublas.log" >>"$OUT/gemm_sweep.txt"
cat "$OUT/rows_sweep.txt" "$OUT/gemm_sweep.txt"
