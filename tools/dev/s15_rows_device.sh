#!/usr/bin/env bash
# Session 15's row-kernel call (issue 17, about 4 minutes): the row reduces
# that leave their scratch to the barrier planner (branch s15-rows: layernorm
# and softmax 4 -> 2 __syncthreads per row tile, rmsnorm 2 -> 1), A/B against
# a baseline build in the same call.
# 1. float64 checks of rmsnorm / layernorm / softmax (ragged 300x1000 and
#    64x4100, chunked rows 64x16384, a persistent grid, the bench sizes), the
#    row-reduce GPU test and the row cases of samples_gpu_test;
# 2. memcheck / racecheck / synccheck at small sizes where rows span warps
#    (one chunk, chunks in a loop, a persistent grid's loop over row tiles);
# 3. ROUNDS (2) rounds, each the peers (copy, torch eager, torch.compile;
#    events) at the three bench sizes, then the three kernels at 8192x1024,
#    4096x8192 and 16384x4096 for both builds, in alternating order; the
#    table takes each side's median over the rounds.
# From main's checkout (the baseline staged first: it bundles the runtime
# libraries stage_branch.sh copies), then in the device call (carry .probe):
#   tools/dev/stage_device.sh samples/rmsnorm samples/layernorm samples/softmax
#   tools/dev/stage_branch.sh /work/wt/rows rows samples/rmsnorm \
#     samples/layernorm samples/softmax tests/codegen/tessel_row_reduce_gpu_test \
#     tests/samples/samples_gpu_test
#   tools/dev/s15_rows_device.sh .probe/rows/build .probe/stage/build
# TILES="bm:threads ..." also times those tiles of the new build at
# 8192x1024 (round 1 checked).
set -u
S=$(realpath "${1:?staged build folder}")
B=${2:+$(realpath "$2")}
source tools/dev/device_steps.sh
begin_call "$S" rows15 /tmp/tc_rows15
deadline=${DEADLINE:-270}
rounds=${ROUNDS:-2}
kernels="rmsnorm layernorm softmax"
# `$(on BUILD) CMD...`: CMD with the build's libraries and its own kernel
# cache (an env prefix: step / par run commands through timeout).
on() {
  echo env LD_LIBRARY_PATH="$1/runtime-libs:/usr/local/cuda/lib64" \
    TESSEL_CACHE_DIR="/tmp/tc_rows15_$(basename "$(dirname "$1")")"
}

# 1-2. Checks and sanitizers, side by side (no timing runs yet).
for k in $kernels; do
  for size in 300x1000 64x4100 64x16384; do
    par chk-$k-$size 90 $(on "$S") "$S/samples/$k" --backend=gpu --check --size=$size
  done
  par chk-$k-grid 90 $(on "$S") "$S/samples/$k" --backend=gpu --check --size=300x1000 --grid=7
  par chk-$k-bench 120 $(on "$S") "$S/samples/$k" --backend=gpu --check --size=bench
done
par gtest-row-reduce 120 $(on "$S") "$S/tests/codegen/tessel_row_reduce_gpu_test"
par gtest-samples-rows 150 $(on "$S") "$S/tests/samples/samples_gpu_test" \
  --gtest_filter='*rmsnorm*:*layernorm*:*softmax*'
wait
for k in $kernels; do
  for tool in memcheck racecheck synccheck; do
    short=${tool%check}; [ "$tool" = memcheck ] && short=mem
    par $short-$k-300x1000 120 $(on "$S") $san $tool "$S/samples/$k" --backend=gpu --check --size=300x1000
    par $short-$k-64x16384 120 $(on "$S") $san $tool "$S/samples/$k" --backend=gpu --check --size=64x16384
  done
  par race-$k-grid 120 $(on "$S") $san racecheck "$S/samples/$k" --backend=gpu --check --size=300x1000 --grid=7
done
wait
grep -h "FAILED\|PASSED\|SKIPPED" "$O"/gtest-*.log >"$O/gtests.txt" 2>/dev/null
grep -H "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log \
  "$O"/sync-*.log 2>/dev/null | sed "s|^$O/||" >"$O/sanitizers.txt"

# 3. Timing, alone on the GPU: rounds of peers, then both builds in turn.
builds="$S"; [ -n "$B" ] && builds="$S $B"
for r in $(seq 1 "$rounds"); do
  step peers_r$r 100 python3 bench/peers.py --only norms --compile-norms \
    --norm-timing events --out "$O/peers_r$r.json"
  order=$builds; [ $((r % 2)) = 0 ] && [ -n "$B" ] && order="$B $S"
  for build in $order; do
    side=new; [ "$build" = "$B" ] && side=base
    for k in $kernels; do
      step ${k}_${side}_r$r 40 $(on "$build") "$build/samples/$k" --backend=gpu \
        --bench --check=false --size=bench --json="$O/${k}_${side}_r$r.json"
    done
  done
done
for t in ${TILES:-}; do
  IFS=: read -r bm th <<<"$t"
  for k in $kernels; do
    step ${k}_tile${bm}x${th} 40 $(on "$S") "$S/samples/$k" --backend=gpu --bench \
      --check --size=8192x1024 --block-m=$bm --threads=$th \
      --json="$O/${k}_tile${bm}x${th}.json"
  done
done

python3 - "$O" >"$O/table.txt" <<'PY'
import glob, os, re, statistics, sys
sys.path.insert(0, "tools/dev")
from device_records import peer_medians, records as recs
o = sys.argv[1]
peer, _ = peer_medians(os.path.join(o, "peers_r*.json"),
                       lambda r: (r["kernel"], r["impl"], r["size"]))
runs = {}
for f in glob.glob(os.path.join(o, "*_r*.json")):
    m = re.match(r"(rmsnorm|layernorm|softmax)_(new|base)_r(\d+)\.json", os.path.basename(f))
    if not m: continue
    for r in recs(f):
        if "ms" in r and r.get("variant", "") == "":
            runs.setdefault((m[1], r["size"], m[2]), []).append(r["ms"])
med = lambda v: statistics.median(v) if v else None
f = lambda x: f"{x:8.4f}" if x else f"{'-':>8}"
print(f"{'kernel':9} {'size':17} {'new':>8} {'base':>8} {'base/new':>8} {'eager':>8} "
      f"{'compile':>8} {'copy':>8} {'%copy':>6} {'best/new':>8}  (median of rounds, ms, events)")
for (k, s) in sorted({(k, s) for (k, s, _) in runs}):
    n, b = med(runs.get((k, s, "new"), [])), med(runs.get((k, s, "base"), []))
    e = med([v for (pk, pi, ps), v in peer.items() if (pk, pi) == (k, "torch") and s.startswith(ps)])
    c = med([v for (pk, pi, ps), v in peer.items() if (pk, pi) == (k, "torch_compile") and s.startswith(ps)])
    cp = med([v for (pk, pi, ps), v in peer.items() if (pk, pi) == ("copy", "torch") and s.startswith(ps)])
    best = min(x for x in (e, c) if x) if (e or c) else None
    print(f"{k:9} {s:17} {f(n)} {f(b)} {b / n if n and b else 0:8.3f} {f(e)} {f(c)} {f(cp)} "
          f"{100 * cp / n if cp and n else 0:6.0f} {best / n if best and n else 0:8.3f}"
          f"  new {sorted(round(x, 4) for x in runs.get((k, s, 'new'), []))}"
          f" base {sorted(round(x, 4) for x in runs.get((k, s, 'base'), []))}")
for f_ in sorted(glob.glob(os.path.join(o, "*_tile*.json"))):
    for r in recs(f_):
        if "ms" in r and r.get("variant", "") == "":
            print(f"tile {os.path.basename(f_)[:-5]:24} {r['size']:17} {r['ms']:8.4f} check {r.get('check', '-')}")
PY
cat "$O/gtests.txt" "$O/sanitizers.txt" "$O/table.txt" >>"$O/bench.txt"
end_call rows15
