#!/usr/bin/env bash
# Session 9: forward + backward with the backward's new D128 schedule, beside
# SDPA's fwd+bwd in the same call (~100 s), after float64 checks at S=333.
set -u
S=${1:?staged build}
OUT=${OUT:-/tmp/fb}/fwdbwd
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64 TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
fa=$S/samples/flash_attention
$fa --backend=gpu --check --pass=fwd+bwd --size=1x333x2x128 >"$OUT/chk1.log" 2>&1; echo "chk d128 rc=$?" >>"$OUT/t.txt"
$fa --backend=gpu --check --pass=fwd+bwd --size=1x333x4x128 --heads-kv=2 >"$OUT/chk2.log" 2>&1; echo "chk gqa d128 rc=$?" >>"$OUT/t.txt"
timeout 60 python3 bench/peers.py --only sdpa --attention-passes fwd+bwd --gqa-shapes '' \
  --out "$OUT/peers.json" >"$OUT/peers.log" 2>&1; grep -h "cudnn" "$OUT/peers.log" >>"$OUT/t.txt"
for sz in 8x4096x16x128 8x4096x32x64; do
  timeout 60 $fa --backend=gpu --bench --check=false --pass=fwd+bwd --size=$sz \
    --json="$OUT/fb_$sz.json" >"$OUT/fb_$sz.log" 2>&1
  grep -h " gpu " "$OUT/fb_$sz.log" >>"$OUT/t.txt"
done
cat "$OUT/t.txt"
