#!/usr/bin/env bash
# Session 13's second call (~5 minutes): the closing row-kernel call
# (s13_rows_final.sh), then where the flash backward's time goes: ncu of
# tessel's D128 backward (B8 S4096 H16, full) and of cuDNN's (SDPA's
# backward, same size), Speed-of-Light, warp states, scheduler, occupancy.
#   tools/dev/s13_probe.sh .probe/stage/build
set -u
S=${1:?staged build folder}
TOP=${OUT:-/tmp/out}
bash tools/dev/s13_rows_final.sh "$S"
O=$TOP/ncu
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_probe
NCU="ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
  --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
f=$S/samples/flash_attention
timeout 120 $NCU -k regex:flash_attention_bwd -c 2 $f --pass=bwd --causal=false \
  --size=8x4096x16x128 --check=false --bench >"$O/ncu_tessel_bwd_d128.txt" 2>&1
echo "ncu tessel rc=$?"
cat >/tmp/cudnn_bwd.py <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(8, 16, 4096, 128, device="cuda", dtype=torch.float16,
                       requires_grad=True) for _ in range(3))
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(3):
        o = F.scaled_dot_product_attention(q, k, v)
        o.backward(torch.ones_like(o))
torch.cuda.synchronize()
PY
timeout 150 $NCU -k 'regex:(?i)bprop|bwd|backward|dgrad' --launch-skip 2 -c 2 python3 /tmp/cudnn_bwd.py \
  >"$O/ncu_cudnn_bwd_d128.txt" 2>&1
echo "ncu cudnn rc=$?"
# The kernels' names and durations, then the headline metrics.
for x in "$O"/ncu_*.txt; do
  echo "== $(basename "$x")"
  grep -E "^\s+[a-zA-Z_].*\(\d*|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Executed Ipc A|Dynamic Shared|Block Size|Grid Size" "$x" | head -40
done >"$TOP/ncu_summary.txt"
(cd "$TOP" && tar -czf ncu.tar.gz ncu && rm -rf ncu)
cat "$TOP/ncu_summary.txt"
