#!/usr/bin/env bash
# Session 17's first call: the row kernels timed by ncu, tessel's samples
# and torch.compile's kernels alike (caches flushed, clocks free, the same
# metrics), so the comparison leaves both harnesses' launch paths out; one
# detailed profile of each side's rmsnorm 4096x8192 and layernorm 8192x1024;
# then the f32-gemm random programs on the GPU and under memcheck. (The
# session's runs used an earlier copy of bench/row_kernel_times.py's
# --torch-peers, with the same cases in the same order.)
#   tools/dev/s17_rows_ncu.sh .probe/m17/build
set -u
S=${1:?staged build folder}
source tools/dev/device_steps.sh
begin_call "$S" s17 /tmp/tc_s17
deadline=${DEADLINE:-400}
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct
nc="ncu --clock-control none --cache-control all --csv --print-units base --metrics $M"
for k in ${KERNELS-rmsnorm layernorm softmax}; do
  for sz in 4096x8192 16384x4096 8192x1024; do
    step ncu-$k-$sz 60 $nc -k regex:"^$k" --launch-skip 3 --launch-count 7 \
      --log-file "$O/ncu_${k}_$sz.csv" "$S/samples/$k" --backend=gpu --bench \
      --check=false --size=$sz
  done
done
# Block shapes at the widest rows, timed the same way (VARIANTS: "kernel
# size flags;..." with flags joined by commas).
IFS=';' read -ra vs <<<"${VARIANTS-}"
for v in "${vs[@]}"; do
  read -r k sz fl <<<"$v"
  step ncu-$k-$sz-${fl//[,=-]/} 60 $nc -k regex:"^$k" --launch-skip 3 \
    --launch-count 7 --log-file "$O/ncu_${k}_${sz}_${fl//[,=-]/}.csv" \
    "$S/samples/$k" --backend=gpu --bench --check=false --size=$sz ${fl//,/ }
done
[ -z "${SKIP_TORCH-}" ] && TORCHINDUCTOR_CACHE_DIR=/tmp/ind TORCH_LOGS=output_code step ncu-torch 240 \
  $nc --profile-from-start off --log-file "$O/ncu_torch.csv" \
  python3 bench/row_kernel_times.py --torch-peers --launches=${REPS:-7}
d="ncu --clock-control none --cache-control all --set detailed"
if [ -z "${SKIP_TORCH-}" ]; then
step det-tessel-rms 60 $d -k regex:^rmsnorm --launch-skip 3 --launch-count 1 \
  "$S/samples/rmsnorm" --backend=gpu --bench --check=false --size=4096x8192
step det-tessel-ln 60 $d -k regex:^layernorm --launch-skip 3 --launch-count 1 \
  "$S/samples/layernorm" --backend=gpu --bench --check=false --size=8192x1024
TORCHINDUCTOR_CACHE_DIR=/tmp/ind step det-torch 240 $d --profile-from-start off \
  -k regex:triton python3 bench/row_kernel_times.py --torch-peers --launches=1
fi
for seed in ${FUZZ_SEEDS-1 2 3}; do
  TESSEL_FUZZ_SEED=$seed step fuzz-gpu-s$seed 150 $S/tests/fuzz/tessel_random_gpu_test
done
# The f32 -> f32 gemms (the FMA path) of seeds 1-3 under memcheck.
for c in ${FMA_CASES-1:random_1_17 2:random_2_10 3:random_3_2:random_3_19}; do
  seed=${c%%:*} f=${c#*:}
  TESSEL_FUZZ_SEED=$seed step mem-fma-s$seed 120 $san memcheck \
    $S/tests/fuzz/tessel_random_gpu_test --gtest_filter="*/${f//:/:*/}"
done
for f in "$O"/ncu_*.csv; do
  python3 - "$f" >>"$O/bench.txt" <<'PY'
import csv, sys, statistics, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: sys.exit()
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
per = collections.OrderedDict()
for r in rows[1:]:
    per.setdefault((r[ii], r[ki][:40]), {})[r[mi]] = r[vi]
groups = collections.OrderedDict()
for (i, k), m in per.items():
    key = (k, m.get("launch__grid_size"), m.get("launch__block_size"), m.get("launch__registers_per_thread"))
    groups.setdefault(key, []).append(m)
for (k, g, b, reg), ms in groups.items():
    t = [float(m["gpu__time_duration.sum"].replace(",", "")) for m in ms]
    dr = [float(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"]) for m in ms]
    occ = [float(m["sm__warps_active.avg.pct_of_peak_sustained_active"]) for m in ms]
    print(f"{sys.argv[1].split('/')[-1]:28s} {k:40s} grid {g:>6} block {b:>5} regs {reg:>4} n {len(t):2d} "
          f"us {statistics.median(t)/1000:8.2f} min {min(t)/1000:8.2f} dram% {statistics.median(dr):5.1f} occ% {statistics.median(occ):5.1f}")
PY
done
end_call s17
