#!/usr/bin/env bash
# Session 18: the samples' benchmarks with the PTX emitter off and on
# (TESSEL_PTX=0 / 1), alternating, ROUNDS rounds, in one device call.
#   (device) bash tools/dev/s18_ptx_bench.sh .probe/s18/build
set -u
S=$(realpath "${1:?staged build folder}")
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
L=$OUT/b; mkdir -p $L
nvidia-smi --query-gpu=name --format=csv,noheader
# Modes: 0 NVRTC, 1 the PTX emitter, rs the PTX emitter with wgmmas of A
# in registers spelled too (TESSEL_PTX_WGMMA_RS=1; flash_attention's
# forward, which mode 1 leaves to NVRTC). FLASH_MODE=1: flash_attention as
# the default compiles it.
for round in $(seq ${ROUNDS:-3}); do
  for s in ${SAMPLES:-gemm rmsnorm layernorm softmax linear_attention}; do
    modes="0 1"; [ $s = flash_attention ] && modes="0 ${FLASH_MODE:-rs}"
    for mode in $modes; do
      TESSEL_PTX=$([ $mode = 0 ] && echo 0 || echo 1) \
        TESSEL_PTX_WGMMA_RS=$([ $mode = rs ] && echo 1 || echo 0) \
        TESSEL_CACHE_DIR=/tmp/tcb$mode timeout 120 $S/samples/$s \
        --bench --size=bench --json=$L/${s}_${mode}_$round.json \
        > $L/${s}_${mode}_$round.log 2>&1 || echo "$s $mode $round rc=$?"
    done
  done
done
cd $OUT && tar czf b.tgz b && rm -rf b
