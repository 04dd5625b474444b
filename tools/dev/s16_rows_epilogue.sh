#!/usr/bin/env bash
# Session 16's issue-17 call (~2.5 minutes): the fused GEMM + bias + ReLU
# epilogue beside the plain GEMM (4096^3 and 8192^3, f16, interleaved in
# ROUNDS rounds, float64 checks of the fused one first); then ROUNDS rounds
# of the row kernels beside their peers (copy, eager, torch.compile; CUDA
# events); last, layernorm's float64 checks and sanitizers on small sizes
# (its default: 256 threads a row), and the random tile programs on the GPU
# (FUZZ_SEEDS, default "1 2 3"; empty: none).
#   tools/dev/s16_rows_epilogue.sh .probe/m16/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" s16 /tmp/tc_s16
deadline=${DEADLINE:-230}
rounds=${ROUNDS:-3}
g=$S/samples/gemm
ln=$S/samples/layernorm
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
step chk-ln 60 $ln --backend=gpu --check --size=1000x4096
step chk-ln-res 60 $ln --backend=gpu --check --size=333x8000 --residual
step mem-ln 90 $san memcheck $ln --backend=gpu --check --size=64x4096
step race-ln 90 $san racecheck $ln --backend=gpu --check --size=64x4096
# The random tile programs on the GPU against the interpreter (f32 gemms
# now among them: the FMA path's k-outer loop), three seeds.
for seed in ${FUZZ_SEEDS-1 2 3}; do
  TESSEL_FUZZ_SEED=$seed step fuzz-gpu-s$seed 150 $S/tests/fuzz/tessel_random_gpu_test
done
grep -h "norm\|softmax\|copy" "$O"/peers_r*.log >>"$O/bench.txt" 2>/dev/null
end_call s16
