#!/usr/bin/env bash
# Session 15's descriptor call (issue 16, ~4 minutes): wgmma descriptors
# built once per operand and stepped by one add (tl::wgmma_desc_add) from
# a warp-uniform warpgroup index. Float64 checks of the flash forward,
# fwd+bwd (D128, D64, grouped heads) at ragged S and the gemm (NN, NT,
# 1000^3, ping-pong, cluster pair); memcheck / racecheck of a small backward; then the backward and
# the 4096^3 gemm timed, each beside its baseline on the same GPU
# (TESSEL_WGMMA_DESC_WHOLE=1: every descriptor built whole, as on main).
#   tools/dev/s15_desc_device.sh .probe/desc/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" desc /tmp/tc_desc
fa=$S/samples/flash_attention
g=$S/samples/gemm
deadline=${DEADLINE:-240}
chk="$fa --backend=gpu --check"
par chk-fwd-d128 90 $chk --size=1x333x2x128
par chk-fwd-d64 90 $chk --size=2x1000x3x64 --causal=true
par chk-fb-d128 120 $chk --pass=fwd+bwd --size=2x333x4x128
par chk-fb-d64 120 $chk --pass=fwd+bwd --size=2x333x4x64
par chk-fb-gqa 120 $chk --pass=fwd+bwd --size=1x333x4x128 --heads-kv=2
par chk-gemm-nn 60 $g --check --size=333x517x200
par chk-gemm-nt 60 $g --check --size=333x517x200 --layout=NT
par chk-gemm-1000 60 $g --check --size=1000x1000x1000
par chk-gemm-pingpong 60 $g --check --size=2100x520x200 --layout=NT --pingpong=true
par chk-gemm-pair 60 $g --check --size=512x512x256 --cluster=2
wait
par mem-bwd-d128 90 $san memcheck $chk --pass=bwd --size=1x200x2x128 --causal=true
par race-bwd-d128 90 $san racecheck $chk --pass=bwd --size=1x200x2x128 --causal=true
wait
OLD=(env TESSEL_WGMMA_DESC_WHOLE=1)
bwd="$fa --backend=gpu --bench --check=false --pass=bwd --causal=both"
step bwd-d128-new 45 $bwd --size=8x4096x16x128
step bwd-d128-old 45 "${OLD[@]}" $bwd --size=8x4096x16x128
step bwd-d64-new 45 $bwd --size=8x4096x32x64
step bwd-d64-old 45 "${OLD[@]}" $bwd --size=8x4096x32x64
step gemm-new 30 $g --bench --size=4096x4096x4096
step gemm-old 30 "${OLD[@]}" $g --bench --size=4096x4096x4096
grep -h "timed" "$O"/*.log >>"$O/bench.txt"
end_call desc
