S=/tmp/a/build
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64 TESSEL_CACHE_DIR=/tmp/tc
g=$S/samples/gemm
run() { echo "$* | $(timeout 60 $g --bench "$@" 2>&1 | grep ' gpu ' | sed 's/  */ /g')"; }
$S/bench/cublas_gemm --sizes 4096,8192 --dtypes f16,bf16 --layouts NN,NT --out $OUT/cublas.json 2>&1 | grep cublas
for dt in f16 bf16; do for sz in 4096x4096x4096 8192x8192x8192; do
  run --size=$sz --dtype=$dt --json=$OUT/ws_${dt}_${sz}.json
  run --size=$sz --dtype=$dt --layout=NT --json=$OUT/ws_nt_${dt}_${sz}.json
done; done
for sz in 1536x2816x4096 3072x2816x4096; do
  run --size=$sz; run --size=$sz --persistent
done
run --size=4096x4096x4096 --persistent --panel=0
run --size=4096x4096x4096 --persistent --stages=3
run --size=4096x4096x4096 --block-m=256 --block-n=128 --persistent
