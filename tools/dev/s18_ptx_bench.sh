#!/usr/bin/env bash
# Session 18: the samples' benchmarks with the PTX emitter off and on
# (TESSEL_PTX=0 / 1), alternating, ROUNDS rounds, in one device call.
#   (device) bash tools/dev/s18_ptx_bench.sh .probe/s18/build
set -u
S=$(realpath "${1:?staged build folder}")
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
L=$OUT/b; mkdir -p $L
nvidia-smi --query-gpu=name --format=csv,noheader
for round in $(seq ${ROUNDS:-3}); do
  for s in ${SAMPLES:-gemm rmsnorm layernorm softmax linear_attention}; do
    for mode in 0 1; do
      TESSEL_PTX=$mode TESSEL_CACHE_DIR=/tmp/tcb$mode timeout 120 $S/samples/$s \
        --bench --size=bench --json=$L/${s}_${mode}_$round.json \
        > $L/${s}_${mode}_$round.log 2>&1 || echo "$s $mode $round rc=$?"
    done
  done
done
cd $OUT && tar czf b.tgz b && rm -rf b
