#!/usr/bin/env bash
# Session 24 on the GPU machine: issue 18's last check, the samples' speed
# with the PTX emitter against NVRTC on an H200, and why the linear
# attention backward at D = 128 lags. STEPS (any of):
#   ab      tools/dev/s18_ptx_bench.sh, ROUNDS rounds, SAMPLES;
#   ncu     Nsight Compute (--set full), NVRTC and PTX, of NCU_CASES:
#           la_bwd (linear attention's backward at D = 128, the default)
#           and fa_fwd (flash attention's forward, its P V wgmma spelled);
#           reports and their details pages in $OUT/ncu.tgz;
#   rs      wgmmas with A in registers, NVRTC against the PTX emitter
#           (TESSEL_PTX_WGMMA_RS=1), alternating, ROUNDS rounds: GEMM with
#           32-wide k tiles (A through ldmatrix), split-k GEMM, flash
#           attention's backward and forward (RS_CASES names some);
#   checks  tools/dev/s23_device.sh's checks (GPU suites, --check, memcheck) on TAR.
#   tools/dev/stage_device.sh <binaries>; tar cJf .probe/s24.tar.xz -C .probe/stage build
#   (device, carry .probe/s24.tar.xz) STEPS="ab ncu checks" bash tools/dev/s24_device.sh
set -u
here=$(realpath "$(dirname "$0")")
T=${TAR:-.probe/s24.tar.xz}
rm -rf /tmp/s24 && mkdir -p /tmp/s24 && tar xJf $T -C /tmp/s24
B=/tmp/s24/build
export LD_LIBRARY_PATH=$B/runtime-libs:/usr/local/cuda/lib64
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
# REQUIRE=H200: stop at once on another card (the device time is scarce).
[[ -n "${REQUIRE:-}" && "$gpu" != *"$REQUIRE"* ]] && { echo "not an $REQUIRE"; exit 0; }
if [[ " ${STEPS:-ab} " == *" ab "* ]]; then
  ROUNDS=${ROUNDS:-3} FLASH_MODE=1 SAMPLES=${SAMPLES:-"gemm rmsnorm layernorm softmax linear_attention flash_attention"} \
    bash "$here/s18_ptx_bench.sh" $B
  echo "ab done ${SECONDS}s"
fi
if [[ " ${STEPS:-ab} " == *" rs "* ]]; then
  R=$OUT/rs; mkdir -p $R
  cases=("gemm32a:gemm --size=4096x4096x4096 --block-m 128 --block-n 128 --block-k 32 --stages 3 --threads 256"
         "gemm32b:gemm --size=8192x8192x8192 --block-m 128 --block-n 256 --block-k 32 --stages 4 --threads 256"
         "splitk:splitk_gemm --size=bench"
         "fa_bwd:flash_attention --size=bench --pass=bwd"
         "fa_fwd:flash_attention --size=bench")
  for round in $(seq ${ROUNDS:-3}); do
    for c in "${cases[@]}"; do
      name=${c%%:*}; cmd=${c#*:}
      [[ " ${RS_CASES:-gemm32a gemm32b splitk fa_bwd fa_fwd} " == *" $name "* ]] || continue
      for mode in 0 rs; do
        TESSEL_PTX=$([ $mode = 0 ] && echo 0 || echo 1) TESSEL_PTX_WGMMA_RS=$([ $mode = rs ] && echo 1 || echo 0) \
          TESSEL_CACHE_DIR=/tmp/rs$mode timeout 150 $B/samples/$cmd --bench \
          --json=$R/${name}_${mode}_$round.json > $R/${name}_${mode}_$round.log 2>&1 \
          || echo "$name $mode $round rc=$?"
      done
    done
  done
  export TESSEL_PTX=1 TESSEL_PTX_WGMMA_RS=1 TESSEL_CACHE_DIR=/tmp/rsc
  for cmd in "gemm --block-m 128 --block-n 128 --block-k 32 --stages 3 --threads 256" \
      "gemm --block-m 128 --block-n 256 --block-k 32 --stages 4 --threads 256" \
      "splitk_gemm" "flash_attention --pass=fwd+bwd --causal=both"; do
    log=$R/check_$(echo $cmd | tr ' =' '__').log
    timeout 200 $B/samples/$cmd --check --size=small > $log 2>&1
    echo "rs check $cmd rc=$? pass=$(grep -c ' pass' $log) fail=$(grep -ci 'fail' $log)"
  done
  compute-sanitizer --tool memcheck --error-exitcode 9 $B/samples/gemm --check --size=small \
    --block-m 128 --block-n 128 --block-k 32 --stages 3 --threads 256 > $R/memcheck_gemm32.log 2>&1
  echo "rs memcheck gemm32 rc=$? $(tail -1 $R/memcheck_gemm32.log)"
  unset TESSEL_PTX TESSEL_PTX_WGMMA_RS TESSEL_CACHE_DIR
  (cd "$OUT" && tar czf rs.tgz rs && rm -rf rs)
  echo "rs done ${SECONDS}s"
fi
if [[ " ${STEPS:-ab} " == *" ncu "* ]]; then
  N=$OUT/ncu; mkdir -p $N
  profiles=("la_bwd:linear_attention --size=8x4096x16x128 --pass=bwd"
            "fa_fwd:flash_attention --size=8x4096x16x128 --causal=true")
  for p in "${profiles[@]}"; do
    name=${p%%:*}; cmd=${p#*:}
    [[ " ${NCU_CASES:-la_bwd} " == *" $name "* ]] || continue
    for mode in 0 1; do
      # Mode 1 spells flash attention's register-A wgmmas too.
      TESSEL_PTX=$mode TESSEL_PTX_WGMMA_RS=$mode TESSEL_CACHE_DIR=/tmp/ncu$mode \
        timeout 240 ncu --set full --import-source no -c ${NCU_COUNT:-4} -f \
        -o $N/${name}_$mode $B/samples/$cmd --bench > $N/${name}_$mode.log 2>&1
      echo "ncu $name mode $mode rc=$?"
      ncu -i $N/${name}_$mode.ncu-rep --page details --csv > $N/${name}_$mode.csv 2>&1
      ncu -i $N/${name}_$mode.ncu-rep --page raw --csv > $N/${name}_${mode}_raw.csv 2>&1
    done
  done
  (cd "$OUT" && tar czf ncu.tgz ncu && rm -rf ncu)
  echo "ncu done ${SECONDS}s"
fi
if [[ " ${STEPS:-ab} " == *" checks "* ]]; then
  TAR=$T STEPS=checks bash "$here/s23_device.sh"
fi
