#!/usr/bin/env bash
# Session 9, issue 17: the row kernels against the copy bandwidth and PyTorch,
# one H200 call (~160 s; a deadline skips what is left), from the repo root:
#
#   OUT=/tmp/out tools/dev/s9_rows_device.sh .probe/stage/build
#
# 1. rmsnorm / layernorm / softmax, f16, at 4096x8192, 16384x4096 and
#    8192x1024 (--size=bench), every variant float64-checked and timed with
#    do_bench (CUDA events around each launch: the default, launch included):
#      default       the tile table (samples/row_tile.cc), one block per tile
#      grid          --grid=G: G persistent blocks loop over the row tiles, W
#                    (and B) loaded once per block into registers
#      wsh           rmsnorm --grid --w-shared: W in shared memory instead
#      wsh_pf        rmsnorm --grid --w-shared --prefetch: and the next row
#                    tile's loads in flight while this one reduces and stores
#      pf            rmsnorm --grid --prefetch (W in registers)
#      t512_wsh_pf   the same at 512 threads (16 elements a thread)
#      wbsh          layernorm --grid --wb-shared: W and B in shared memory
#    G = SMs x the blocks that fit an SM by registers at 4096x8192 (sm_90a,
#    ptxas of CUDA 13: grid 80 regs -> 3, wsh 62 -> 4, wsh_pf 102 -> 2,
#    pf 120 -> 2, t512_wsh_pf 64 at 512 threads -> 2, layernorm grid 120
#    -> 2, layernorm wbsh 80 -> 3, softmax grid 56 -> 4), so the grid is one wave.
# 2. the defaults, and each kernel's fastest variant at 4096x8192, again
#    with --cuda-graph (graph replays of back-to-back calls: no launch cost;
#    L2 flushed between replays only).
# 3. (run first) bench/peers.py: the copy, PyTorch eager and torch.compile, each timed
#    both ways (--norm-timing events,cuda_graph; the graph timing mirrors
#    tessel's do_bench(use_cuda_graph)).
# 4. tools/dev/s9_rows_table.py prints the table (last).
# Logs and JSON in $OUT/rows/.
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s9_out}/rows
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s9_rows
SMS=${SMS:-132}
deadline=${DEADLINE:-160}
: >"$O/summary.txt"
: >"$O/variants.txt"
run() { # kernel tag sample-flags...: one run, its JSON in $O/kernel__tag.json
  local k=$1 tag=$2 t=$SECONDS
  shift 2
  if ((SECONDS + 12 > deadline)); then
    echo "$k $tag skipped (deadline)" >>"$O/summary.txt"
    return
  fi
  echo "$k $tag $*" >>"$O/variants.txt"
  timeout 40 "$S/samples/$k" --backend=gpu --bench "$@" \
    --json="$O/${k}__${tag}.json" >"$O/${k}__${tag}.log" 2>&1
  printf '%-10s %-22s rc=%-3s %3ss\n' "$k" "$tag" "$?" "$((SECONDS - t))" \
    >>"$O/summary.txt"
}
best_graph() { # kernel: its fastest checked variant at 4096x8192, graph-timed
  local k tag flags
  python3 tools/dev/s9_rows_table.py --best "$O" "$1" >"$O/best_$1.txt" 2>&1
  while read -r k tag flags; do
    # shellcheck disable=SC2086 # flags are words
    run "$k" "${tag}_graph" --size=4096x8192 --cuda-graph $flags
  done <"$O/best_$1.txt"
}
# 3 (first: the baseline every ratio needs). The peers, both timings.
t=$SECONDS
timeout 60 python3 bench/peers.py --only norms --compile-norms \
  --norm-timing events,cuda_graph --out "$O/peers_norms.json" \
  >"$O/peers_norms.log" 2>&1
echo "peers rc=$? $((SECONDS - t))s" >>"$O/summary.txt"
# 1 and 2, in the order they matter should the deadline cut the list.
B=(--size=bench --check)
for k in rmsnorm layernorm softmax; do run "$k" default "${B[@]}"; done
for k in rmsnorm layernorm softmax; do
  run "$k" default_graph --size=bench --cuda-graph
done
run rmsnorm wsh "${B[@]}" --grid=$((SMS * 4)) --w-shared
run rmsnorm wsh_pf "${B[@]}" --grid=$((SMS * 2)) --w-shared --prefetch
run rmsnorm t512_wsh_pf "${B[@]}" --grid=$((SMS * 2)) --threads=512 --w-shared --prefetch
run rmsnorm grid "${B[@]}" --grid=$((SMS * 3))
best_graph rmsnorm
run softmax grid "${B[@]}" --grid=$((SMS * 4))
best_graph softmax
run layernorm grid "${B[@]}" --grid=$((SMS * 2))
run layernorm wbsh "${B[@]}" --grid=$((SMS * 3)) --wb-shared
best_graph layernorm
run rmsnorm pf "${B[@]}" --grid=$((SMS * 2)) --prefetch
cat "$O/summary.txt"
python3 tools/dev/s9_rows_table.py "$O"
