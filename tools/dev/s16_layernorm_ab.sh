#!/usr/bin/env bash
# Session 16's last call: layernorm's default (256 threads a row) against 512
# threads, interleaved, beside the peers, two rounds (the 512-thread default
# tried this session was 1 % faster on the H100 and 5 % slower on the H200).
#   tools/dev/s16_layernorm_ab.sh .probe/m16/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" lnab16 /tmp/tc_lnab16
deadline=${DEADLINE:-110}
ln=$S/samples/layernorm
for r in 1 2; do
  step peers_r$r 60 python3 bench/peers.py --only norms --compile-norms \
    --norm-timing events --out "$O/peers_r$r.json"
  step layernorm_r$r 30 $ln --backend=gpu --bench --check=false --size=bench \
    --json="$O/layernorm_r$r.json"
  for sz in 4096x8192 16384x4096; do
    step t512_${sz}_r$r 30 $ln --backend=gpu --bench --check=false --size=$sz \
      --threads=512 --json="$O/t512_${sz}_r$r.json"
  done
done
grep -h "layernorm\|copy" "$O"/peers_r*.log >>"$O/bench.txt" 2>/dev/null
end_call lnab16
