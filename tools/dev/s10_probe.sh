#!/usr/bin/env bash
# Session 10's first call: where the last gaps come from (ncu), and the
# fwd+bwd baseline. From the repo root: OUT=/tmp/o tools/dev/s10_probe.sh STAGED
#  1. ncu Speed-of-Light + memory of the 4096^3 f16 GEMM: tessel's default
#     (NN, NT) and cuBLAS's (its kernel name gives its tile and cluster).
#  2. the rasterization panel at 4096^3 NN/NT (samples/gemm --panel) beside cuBLAS.
#  3. ncu of rmsnorm 4096x8192 f16: tessel's default and torch.compile's.
#  4. tools/dev/s9_fwdbwd.sh: flash fwd+bwd end to end beside SDPA.
set -u
S=${1:?staged build}
O=${OUT:-/tmp/p}/probe
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc
g=$S/samples/gemm
NCU="timeout 90 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis"
t=$SECONDS
$NCU -k regex:gemm -c 1 $g --bench --check=false --size=4096x4096x4096 >"$O/ncu_gemm_nn.txt" 2>&1
$NCU -k regex:gemm -c 1 $g --bench --check=false --size=4096x4096x4096 --layout=NT >"$O/ncu_gemm_nt.txt" 2>&1
$NCU -k regex:'gemm|nvjet|sm90|xmma|cutlass|Kernel' --launch-skip 3 -c 1 $S/bench/cublas_gemm --sizes 4096 --dtypes f16 --layouts NN --out /tmp/cb.json >"$O/ncu_cublas_nn.txt" 2>&1
echo "ncu gemm $((SECONDS - t))s" >>"$O/t.txt"
t=$SECONDS
timeout 60 $S/bench/cublas_gemm --sizes 4096 --dtypes f16,bf16 --layouts NN,NT --out "$O/cublas.json" >"$O/cublas.log" 2>&1
for p in 0 4 8 16 32; do for l in NN NT; do
  timeout 30 $g --bench --check=false --size=4096x4096x4096 --layout=$l --panel=$p >"$O/panel_${p}_$l.log" 2>&1
  echo "panel $p $l $(grep -ho '[0-9.]* ms' "$O/panel_${p}_$l.log" | head -1)" >>"$O/t.txt"
done; done
echo "panels $((SECONDS - t))s" >>"$O/t.txt"
grep -h "4096" "$O/cublas.log" >>"$O/t.txt"
t=$SECONDS
$NCU -k regex:rms -c 1 $S/samples/rmsnorm --bench --check=false --size=4096x8192 >"$O/ncu_rms_tessel.txt" 2>&1
cat >/tmp/rms_compile.py <<'PY'
import torch, torch.nn.functional as F
x = torch.randn(4096, 8192, device="cuda", dtype=torch.float16)
w = torch.randn(8192, device="cuda", dtype=torch.float16)
f = torch.compile(lambda t: F.rms_norm(t, (8192,), w, 1e-6))
for _ in range(20): f(x)
torch.cuda.synchronize()
PY
$NCU -k regex:triton --launch-skip 10 -c 1 python3 /tmp/rms_compile.py >"$O/ncu_rms_compile.txt" 2>&1
echo "ncu rms $((SECONDS - t))s" >>"$O/t.txt"
t=$SECONDS
OUT=$O timeout 150 bash tools/dev/s9_fwdbwd.sh "$S" >"$O/fwdbwd.stdout" 2>&1
echo "fwdbwd $((SECONDS - t))s" >>"$O/t.txt"
for f in "$O"/ncu_*.txt; do
  echo "## $f"; grep -E "^  [a-zA-Z_].*\(|Duration|Throughput|L2 Hit|Registers Per|Achieved Occupancy|Grid Size|Block Size|Cluster|Executed Ipc|Dynamic Shared|Mem Busy|Max Bandwidth|L1/TEX Hit" "$f" | head -30
done
cat "$O/fwdbwd.stdout" | tail -12
cat "$O/t.txt"
