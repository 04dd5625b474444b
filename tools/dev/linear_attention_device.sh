#!/usr/bin/env bash
# One H200 call for the linear-attention work: every gpu test binary,
# compute-sanitizer on the sample, GPU checks of the split and fused
# backward at D=64 and D=128, tile sweeps (the --configs syntax of
# samples/linear_attention, in SW64 / SW128), and fla's kernels timed in the
# same call (FLA_SHAPES overrides its shapes). Expects the staged build folder (tools/dev/stage_device.sh) as
# its first argument, .whl (fla wheels) in the checkout, and optionally a
# pre-warmed cache in .probe/cache. Carry .probe/stage, .whl (and
# .probe/cache). Logs go to /tmp/la and come back as $OUT/la.tgz (the device
# tool returns few files); the last lines printed are the summary.
#
#   SW64="fwd/64:64:64:128:2,bwd/32:64:64:128:2" \
#     tools/dev/linear_attention_device.sh .probe/stage/build
set -u
S=${1:?staged build folder}
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1 TESSEL_SOURCE_DIR=$PWD
mkdir -p /tmp/tc
[[ -d .probe/cache ]] && cp -r .probe/cache/. /tmp/tc/
L=/tmp/la
mkdir -p $L
# run NAME SECONDS COMMAND...: logs to $L/NAME.log, a line in rc.txt.
run() {
  local n=$1 t=$2 s=$SECONDS
  shift 2
  timeout "$t" "$@" >"$L/$n.log" 2>&1
  echo "$n rc=$? $((SECONDS - s))s" >>$L/rc.txt
}
for t in "$S"/tests/*/*gpu_test; do run "$(basename "$t")" 200 "$t"; done
la=$S/samples/linear_attention
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
run mem-la 150 $san memcheck $la --backend=gpu --check --size=small
run race-la 150 $san racecheck $la --backend=gpu --check --size=small
for split in true false; do
  run check64-split-$split 100 $la --backend=gpu --check --size=2x1024x32x64 \
    --pass=all --split-bwd=$split
  run check128-split-$split 100 $la --backend=gpu --check \
    --size=2x512x4x128 --pass=all --split-bwd=$split
done
# Forward + backward: the state form (default at D <= 64) and the two
# sweeps, checked, sanitized and timed.
run mem-la-fb 150 $san memcheck $la --backend=gpu --check --size=small \
  --pass=fwd+bwd
run race-la-fb 150 $san racecheck $la --backend=gpu --check --size=small \
  --pass=fwd+bwd
for state in true false; do
  run check64-fb-state-$state 100 $la --backend=gpu --check \
    --size=2x1024x32x64 --pass=fwd+bwd --state-bwd=$state
  run time64-fb-state-$state 100 $la --backend=gpu --bench \
    --size=8x4096x32x64 --pass=fwd+bwd --state-bwd=$state
done
run time128-fb 100 $la --backend=gpu --bench --size=8x4096x16x128 \
  --pass=fwd+bwd
ct=$S/tests/codegen/tessel_codegen_gpu_test
run mem-wgmma 150 $san memcheck $ct --gtest_filter='*Wgmma*'
run race-wgmma 150 $san racecheck $ct --gtest_filter='*Wgmma*'
if [[ -n ${SW64:-} ]]; then
  run sweep64-check 120 $la --backend=gpu --check --size=2x512x8x64 \
    --pass=all --configs="$SW64"
  run sweep64 150 $la --backend=gpu --bench --size=8x4096x32x64 --pass=all \
    --configs="$SW64"
  # The same tiles on mma.sync only (--wgmma=false).
  run sweep64-mma 150 $la --backend=gpu --bench --size=8x4096x32x64 \
    --pass=all --configs="$SW64" --wgmma=false
fi
if [[ -n ${SW128:-} ]]; then
  run sweep128-check 120 $la --backend=gpu --check --size=2x512x4x128 \
    --pass=all --configs="$SW128"
  run sweep128 150 $la --backend=gpu --bench --size=8x4096x16x128 \
    --pass=all --configs="$SW128"
fi
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >$L/pip.log 2>&1
PYTHONPATH=/tmp/site run fla 240 python3 bench/peers.py --only fla \
  --linear-shapes "${FLA_SHAPES:-8,4096,32,64;8,4096,16,128}" --out $L/fla.json
tar czf "$OUT/la.tgz" -C /tmp la
paste -sd' ' $L/rc.txt
grep -h "^linear_attention_fwd_bwd " $L/time*-fb*.log | cut -c1-110
grep -H "^timed" $L/sweep*.log 2>/dev/null | sed 's|^.*/||;s|\.log:timed||' |
  sed 's/B=8 S=4096 //;s/ f16:/:/;s/ (kernel.*)//;s/linear_attention_//'
awk '$2 == "fla"' $L/fla.log | cut -c1-100
