#!/usr/bin/env bash
# Session 15's last call (issue 17, ~2 minutes): the fused GEMM + bias + ReLU
# epilogue beside the plain GEMM (4096^3 and 8192^3, f16, interleaved in
# ROUNDS rounds, float64 check of the fused one first), then ROUNDS rounds
# of the row kernels beside their peers (copy, eager, torch.compile; events).
#   tools/dev/s15_epilogue_rows.sh .probe/m15/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" last15 /tmp/tc_last15
deadline=${DEADLINE:-200}
rounds=${ROUNDS:-3}
g=$S/samples/gemm
step chk-bias-relu 60 $g --check --size=1000x1000x520 --bias-relu
step chk-bias-relu-ragged 60 $g --check --size=333x517x200 --bias-relu --layout=NT
for r in $(seq 1 "$rounds"); do
  for sz in 4096x4096x4096 8192x8192x8192; do
    step gemm-plain-$sz-r$r 40 $g --bench --size=$sz --json="$O/plain_${sz}_r$r.json"
    step gemm-bias-relu-$sz-r$r 40 $g --bench --size=$sz --bias-relu --json="$O/biasrelu_${sz}_r$r.json"
  done
done
for r in $(seq 1 "$rounds"); do
  step peers_r$r 100 python3 bench/peers.py --only norms --compile-norms \
    --norm-timing events --out "$O/peers_r$r.json"
  for k in rmsnorm layernorm softmax; do
    step ${k}_r$r 40 "$S/samples/$k" --backend=gpu --bench --check=false \
      --size=bench --json="$O/${k}_r$r.json"
  done
done
grep -h "norm\|softmax\|copy" "$O"/peers_r*.log >>"$O/bench.txt" 2>/dev/null
end_call last15
