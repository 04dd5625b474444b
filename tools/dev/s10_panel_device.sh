#!/usr/bin/env bash
# Session 10: the GEMM's rasterization panel (samples/gemm --panel; default 8,
# 0 = plain row-major tile order). Call 1 gave 4096^3 0.204 ms at panel 0
# against 0.212 at 8 (NN and NT), one run each. Here: alternating A/B, three
# rounds at 4096^3 NN and NT (~25 s).
# Then 1000^3 (0.755 in session 9: 64 tiles of 128x128 on 132 SMs) with
# 128-tile grids: 64x128 (one consumer warpgroup) and 128x64, checked first (~30 s).
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
for r in 1 2; do for l in NN NT; do for p in 0 8; do one 4096x4096x4096 $l $p $r; done; done; done
small() { # tag layout flags...
  local tag=$1 l=$2; shift 2
  timeout 30 $g --check --size=1000x1000x1000 --layout=$l "$@" >"$O/chk_${tag}_$l.log" 2>&1 || echo "CHECK FAILED $tag $l" >>"$O/t.txt"
  timeout 30 $g --bench --check=false --size=1000x1000x1000 --layout=$l "$@" --json="$O/s_${tag}_$l.json" >"$O/s_${tag}_$l.log" 2>&1
  printf '%-16s %s %-10s %s\n' 1000x1000x1000 "$l" "$tag" "$(grep -ho '[0-9.]* ms' "$O/s_${tag}_$l.log" | head -1)" >>"$O/t.txt"
}
for l in NN NT; do
  small default $l
  small m64n128 $l --block-m=64 --block-n=128 --stages=6 --threads=128
  small m128n64 $l --block-m=128 --block-n=64 --stages=6 --threads=256
done
timeout 30 $S/bench/cublas_gemm --sizes 1000,4096 --dtypes f16 --layouts NN,NT --out "$O/cublas.json" >"$O/cublas.log" 2>&1
grep -h "cublas" "$O/cublas.log" >>"$O/t.txt"
sort "$O/t.txt"
