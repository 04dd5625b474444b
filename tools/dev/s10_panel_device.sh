#!/usr/bin/env bash
# Session 10: the GEMM's rasterization panel (samples/gemm --panel; default 8,
# 0 = plain row-major tile order). Call 1 gave 4096^3 0.204 ms at panel 0
# against 0.212 at 8 (NN and NT), one run each. Here: alternating A/B, three
# rounds at 4096^3 NN and NT, one at 8192^3, 6144^3 and 4096x14336x4096 (~70 s).
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s10}/panel
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_panel
g=$S/samples/gemm
: >"$O/t.txt"
one() { # size layout panel round
  local f="$O/p$3_$2_$1_r$4"
  timeout 30 $g --bench --check=false --size=$1 --layout=$2 --panel=$3 --json="$f.json" >"$f.log" 2>&1
  printf '%-16s %s panel %-2s r%s %s\n' "$1" "$2" "$3" "$4" "$(grep -ho '[0-9.]* ms' "$f.log" | head -1)" >>"$O/t.txt"
}
for r in 1 2 3; do for l in NN NT; do for p in 0 8; do one 4096x4096x4096 $l $p $r; done; done; done
for sz in 8192x8192x8192 6144x6144x6144 4096x14336x4096; do for p in 0 8; do one $sz NN $p 1; done; done
sort "$O/t.txt"
