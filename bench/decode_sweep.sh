#!/usr/bin/env bash
# decode_attention's options on the GPU (issue 45), in parts that each fit
# one device call of 10 minutes. Stage first, here:
#   flock /tmp/tessel-build.lock cmake --build build/release \
#     --target sample_decode_attention && python3 bench/device.py stage decode
# then on the device (carry [".probe/stage", ".whl"]):
#   bench/decode_sweep.sh check     # float64 checks, TMA and cp.async paths
#   bench/decode_sweep.sh sweep     # torch's copy, then the options' sweep
#   bench/decode_sweep.sh large [GBPS]  # L16384 GQA, B128 MHA: TMA, cp.async
#   bench/decode_sweep.sh sanitize  # memcheck / racecheck / synccheck
# Each line of the sweep's summary reads "KV read N GB/s = x% of copy
# (copy_f16 of this run) = y% of given (torch's copy, same call)".
set -uo pipefail
cd "$(dirname "$0")/.."
part="${1:?usage: bench/decode_sweep.sh check|sweep|large|sanitize}"
stage=.probe/stage
if [ -f "$stage/build.tar.xz" ]; then
  mkdir -p /tmp/decode-stage
  tar -xJf "$stage/build.tar.xz" -C /tmp/decode-stage
  build=/tmp/decode-stage/build
else
  build="$stage/build"
fi
export LD_LIBRARY_PATH="$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
decode="$build/samples/decode_attention"
ragged=--lens=0,1,15,16,17,300,1000

run() {  # a command, its last lines and its status
  echo "=== $*"
  "$@" > /tmp/decode-step.log 2>&1
  local rc=$?
  grep -E "FAIL|rror|SUMMARY|max \|err\||KV read|copy:|given:|^timed" \
    /tmp/decode-step.log | tail -n 60
  echo "rc=$rc"
}

case "$part" in
  check)
    for ws in true false; do
      run "$decode" --check --size small --warp-specialized=$ws
      for extra in --splits=1 --splits=3 --splits=16 --page-size=64 \
                   --kv-dtype=e4m3 --dtype=bf16 --q-len=4; do
        run "$decode" --check "$ragged" --size=H=32,D=128 --heads-kv=8 \
          "$extra" --warp-specialized=$ws
      done
      for hkv in 32 1; do
        run "$decode" --check "$ragged" --size=H=32,D=128 --heads-kv=$hkv \
          --splits=5 --warp-specialized=$ws
      done
    done
    run "$decode" --check --size=64x4096x32x128 --heads-kv=8
    ;;
  sweep)
    # torch's copy (and SDPA on gathered keys) in this call: the ceiling.
    python3 bench/peers.py --only decode \
      --decode-shapes "64,4096,32,8,128;64,4096,32,32,128" \
      > /tmp/decode-peers.json 2> /tmp/decode-peers.log
    cat /tmp/decode-peers.log
    gbps=$(awk '$1 == "copy" && $2 == "torch" {print int($(NF-1))}' \
      /tmp/decode-peers.log)
    ceiling=${gbps:+--ceiling-gbps=$gbps}
    # The host fills each cache (~5-10 s a GB): 7.5 GB an invocation.
    shapes=--shapes=64:4096:8,128:4096:8,64:4096:32
    run "$decode" --bench "$shapes" $ceiling
    run "$decode" --bench "$shapes" $ceiling --copy=false \
      --warp-specialized=false
    run "$decode" --bench "$shapes" $ceiling --copy=false --block-n=32 \
      --stages=6
    run "$decode" --bench "$shapes" $ceiling --copy=false --splits=2
    # fp8 cache: 255 registers (spilling) on either path, so the TMA
    # path's 160 threads fit one block an SM, the cp.async path's 128 two.
    for ws in true false; do
      run "$decode" --bench --shapes=64:4096:8 --kv-dtype=e4m3 $ceiling \
        --copy=false --warp-specialized=$ws
    done
    ;;
  large)
    # Longer contexts and MHA at B128 (13 GB of caches an invocation).
    shapes=--shapes=64:16384:8,128:4096:32
    ceiling=${2:+--ceiling-gbps=$2}
    run "$decode" --bench "$shapes" $ceiling
    run "$decode" --bench "$shapes" $ceiling --copy=false \
      --warp-specialized=false
    ;;
  sanitize)
    # Once without a sanitizer, so the kernels are in the disk cache.
    run "$decode" --check --size small
    run "$decode" --check "$ragged" --size=H=32,D=128 --heads-kv=8 --splits=3
    for tool in memcheck racecheck synccheck; do
      run compute-sanitizer --tool $tool --error-exitcode 1 "$decode" \
        --check --size small
      run compute-sanitizer --tool $tool --error-exitcode 1 "$decode" \
        --check "$ragged" --size=H=32,D=128 --heads-kv=8 --splits=3
    done
    ;;
  *)
    echo "unknown part $part: check, sweep, large or sanitize" >&2
    exit 2
    ;;
esac
