#!/usr/bin/env bash
# Session 8's benches on the H200, tessel and its peers in the same call,
# each section alone on the GPU:
#   rows:  rmsnorm / layernorm / softmax at the bench sizes (checked), the
#          fused GEMM + bias + ReLU against the plain GEMM, PyTorch eager and
#          torch.compile and the copy bandwidth (issue 17; ~3 minutes)
#   gemm:  the 16-shape suite NN / NT and bf16 4096^3 / 8192^3 against
#          cuBLAS (issue 15; ~4 minutes)
#   flash: forward, backward and fwd+bwd at B8 S4096 H16 D128, H32 D64 and
#          grouped heads (Hq 32, Hkv 8, D128), variable length, against SDPA
#          (issue 16; ~4 minutes)
#   tools/dev/session8_bench.sh STAGED_BUILD rows gemm flash
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
  local shapes="4096x4096x4096 8192x8192x8192 2048x2048x2048 4096x14336x4096
4096x4096x14336 4096x6144x4096 8192x28672x8192 8192x8192x28672 512x4096x4096
256x8192x8192 4096x4096x1024 16384x4096x4096 3000x5000x4000 4095x4097x4096
1000x1000x1000 6144x6144x6144"
  step cublas-suite 120 "$S/bench/cublas_gemm" --sizes "$(echo $shapes | tr ' ' ',')" \
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
  for l in NN NT; do for sz in $shapes; do
    step "gemm-$l-$sz" 40 "$g" --bench --size=$sz --layout=$l --json="$OUT/gemm_${l}_$sz.json"
  done; done
}
flash() {
  step peers-sdpa 200 python3 bench/peers.py --only sdpa --attention-passes fwd,fwd+bwd \
    --out "$OUT/peers_sdpa.json"
  grep -h "torch_sdpa" "$OUT/peers-sdpa.log" >>"$OUT/bench.txt"
  for p in fwd fwd+bwd bwd; do
    for sz in 8x4096x16x128 8x4096x32x64 "8x4096x32x128 --heads-kv=8"; do
      set -- $sz
      step "flash-$p-$1${2:+-gqa}" 60 "$fa" --backend=gpu --bench --check=false \
        --pass=$p --size=$1 ${2:-} --json="$OUT/flash_${p}_$1${2:+_gqa}.json"
    done
  done
  if "$fa" --help 2>&1 | grep -q -- --varlen; then
    step peers-varlen 60 python3 bench/peers.py --only sdpa_varlen \
      --out "$OUT/peers_varlen.json"
    grep -h "varlen" "$OUT/peers-varlen.log" >>"$OUT/bench.txt"
    step flash-varlen 40 "$fa" --backend=gpu --bench --check=false \
      --varlen=bench --json="$OUT/flash_varlen.json"
  fi
}
for section in "$@"; do "$section"; done
cat "$OUT/summary.txt" "$OUT/bench.txt" "$OUT/rows_table.txt" 2>/dev/null
