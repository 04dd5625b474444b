#!/usr/bin/env bash
# Session 8's benches on the H200, tessel and its peers in the same call,
# each section alone on the GPU:
#   rows:  rmsnorm / layernorm / softmax at the bench sizes (checked), the
#          fused GEMM + bias + ReLU against the plain GEMM, PyTorch eager and
#          torch.compile and the copy bandwidth (issue 17; ~3 minutes)
#   gemm:  the suite shapes this session changed or never timed, and the
#          headline points, f16 NN / NT and bf16, against cuBLAS (issue 15)
#   flash: the forward at B8 S4096 H16 D128, H32 D64 and grouped heads
#          (Hq 32, Hkv 8, D128) against SDPA, fwd and fwd+bwd (issue 16)
#   flash_bwd: fwd+bwd at those sizes; varlen: the variable-length forward
#          against SDPA per sequence, nested and padded
#   host:  the context and strided-view GPU tests (issue 19)
#   jit:   bench/jit_bench over the manifest, cold, one job (issue 18)
#   DEADLINE=560 tools/dev/session8_bench.sh STAGED_BUILD host rows gemm flash
set -u
S=${1:?staged build folder}; shift
OUT=${OUT:-/tmp/bench_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
fa=$S/samples/flash_attention g=$S/samples/gemm
deadline=${DEADLINE:-560}
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 10 > deadline)); then echo "$n skipped (deadline)" >>"$OUT/summary.txt"; return; fi
  timeout "$lim" "$@" >"$OUT/$n.log" 2>&1
  printf '%-36s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$OUT/summary.txt"
  grep -h " gpu " "$OUT/$n.log" | sed "s|^|$n: |" >>"$OUT/bench.txt"
}
rows() {
  for s in rmsnorm layernorm softmax; do
    step "bench-$s" 90 "$S/samples/$s" --backend=gpu --bench --check \
      --size=bench --json="$OUT/tessel_$s.json"
  done
  step bench-gemm-plain 60 "$g" --bench --size=4096x4096x4096 --json="$OUT/tessel_gemm_plain.json"
  step bench-gemm-bias_relu 60 "$g" --bench --size=4096x4096x4096 --bias-relu \
    --json="$OUT/tessel_gemm_bias_relu.json"
  step peers-norms 150 python3 bench/peers.py --only norms --compile-norms \
    --out "$OUT/peers_norms.json"
  python3 tools/dev/row_kernels_table.py "$OUT" >"$OUT/rows_table.txt" 2>&1
}
gemm() {
  # The suite's shapes this session changed or never timed, the four
  # headline points and their NT forms where B is a linear layer's weight.
  local nn="4096x4096x4096 8192x8192x8192 3000x5000x4000 1000x1000x1000
8192x28672x8192 8192x8192x28672 4096x4096x1024 2048x2048x2048 512x4096x4096
256x8192x8192"
  local nt="4096x4096x4096 8192x8192x8192 3000x5000x4000 1000x1000x1000"
  step cublas-suite 120 "$S/bench/cublas_gemm" --sizes "$(echo $nn | tr ' ' ',')" \
    --dtypes f16 --layouts NN,NT --out "$OUT/cublas_suite.json"
  step cublas-bf16 40 "$S/bench/cublas_gemm" --sizes 4096,8192 --dtypes bf16 \
    --layouts NN --out "$OUT/cublas_bf16.json"
  grep -h cublas "$OUT"/cublas-*.log >>"$OUT/bench.txt"
  for sz in 4096x4096x4096 8192x8192x8192; do
    step "gemm-bf16-$sz" 40 "$g" --bench --size=$sz --dtype=bf16 --json="$OUT/gemm_bf16_$sz.json"
  done
  # This session's default choices against the tiles they replaced.
  step gemm-1000-nosplit 30 "$g" --bench --size=1000x1000x1000 --split-k=1
  step gemm-3000-128x256 30 "$g" --bench --size=3000x5000x4000 --block-m=128 \
    --block-n=256 --stages=4
  for sz in $nn; do
    step "gemm-NN-$sz" 40 "$g" --bench --size=$sz --layout=NN --json="$OUT/gemm_NN_$sz.json"
  done
  for sz in $nt; do
    step "gemm-NT-$sz" 40 "$g" --bench --size=$sz --layout=NT --json="$OUT/gemm_NT_$sz.json"
  done
}
flash() {
  step peers-sdpa 200 python3 bench/peers.py --only sdpa --attention-passes fwd,fwd+bwd \
    --out "$OUT/peers_sdpa.json"
  grep -h "torch_sdpa" "$OUT/peers-sdpa.log" >>"$OUT/bench.txt"
  P=fwd flash_pass
}
flash_pass() {
  for sz in 8x4096x16x128 8x4096x32x64 "8x4096x32x128 --heads-kv=8"; do
    set -- $sz
    step "flash-$P-$1${2:+-gqa}" 60 "$fa" --backend=gpu --bench --check=false \
      --pass=$P --size=$1 ${2:-} --json="$OUT/flash_${P}_$1${2:+_gqa}.json"
  done
}
flash_bwd() { P=fwd+bwd flash_pass; }
varlen() {
  step peers-varlen 60 python3 bench/peers.py --only sdpa_varlen \
    --out "$OUT/peers_varlen.json"
  grep -h "varlen" "$OUT/peers-varlen.log" >>"$OUT/bench.txt"
  step flash-varlen 40 "$fa" --backend=gpu --bench --check=false \
    --varlen=bench --json="$OUT/flash_varlen.json"
}
host() {  # issue 19: launches through other contexts, strided views
  export TESSEL_REQUIRE_GPU=1
  step context-gpu-test 60 "$S/tests/runtime/tessel_runtime_context_gpu_test"
  step strided-gpu-test 90 "$S/tests/runtime/tessel_strided_view_gpu_test"
  unset TESSEL_REQUIRE_GPU
}
jit() {  # issue 18: every manifest kernel cold, one job, on the idle host
  local cache=$TESSEL_CACHE_DIR
  export TESSEL_CACHE_DIR=/tmp/tc_jit_$RANDOM
  step jit-bench 150 "$S/bench/jit_bench" --manifest samples/kernels.json \
    --arch sm_90a,sm_80 --out "$OUT/jit_bench.json"
  export TESSEL_CACHE_DIR=$cache
}
for section in "$@"; do "$section"; done
cat "$OUT/summary.txt" "$OUT/bench.txt" "$OUT/rows_table.txt" 2>/dev/null
