#!/usr/bin/env bash
# Session 13's closing row-kernel call (issue 17, ~3 minutes): ROUNDS rounds,
# each the peers (copy, eager, torch.compile; events) at the three bench
# sizes, then rmsnorm, layernorm and softmax with their default tiles
# (float64-checked in round 1); memcheck and racecheck on the small sizes.
# The table takes each side's median over the rounds.
#   tools/dev/s13_rows_final.sh .probe/stage/build
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/out}/rowsfinal
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_rowsfinal
rounds=${ROUNDS:-3}
for r in $(seq 1 "$rounds"); do
  timeout 150 python3 bench/peers.py --only norms --compile-norms \
    --norm-timing events --out "$O/peers_r$r.json" >"$O/peers_r$r.log" 2>&1 ||
    echo "peers r$r rc=$?"
  for k in rmsnorm layernorm softmax; do
    chk=""; [ "$r" = 1 ] && chk="--check"
    timeout 60 "$S/samples/$k" --backend=gpu --bench $chk --size=bench \
      --json="$O/${k}_r$r.json" >"$O/${k}_r$r.log" 2>&1 || echo "$k r$r rc=$?"
  done
done
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for k in rmsnorm layernorm softmax; do
  for tool in memcheck racecheck; do
    for size in 300x1000 64x4100; do
      timeout 60 $san $tool "$S/samples/$k" --backend=gpu --check --size=$size \
        >"$O/$tool-$k-$size.log" 2>&1
      echo "$tool $k $size rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/$tool-$k-$size.log")" >>"$O/sanitizers.txt"
    done
  done
done
python3 - "$O" >"$O/table.txt" <<'PY'
import glob, os, re, statistics, sys
sys.path.insert(0, "tools/dev")
from device_records import peer_medians, records as recs
o = sys.argv[1]
_, peer = peer_medians(os.path.join(o, "peers_r*.json"),
                       lambda r: (r["kernel"], r["impl"], r["size"]))
runs, checks = {}, {}
for f in glob.glob(os.path.join(o, "*_r*.json")):
    m = re.match(r"(rmsnorm|layernorm|softmax)_r\d+\.json", os.path.basename(f))
    if not m: continue
    for r in recs(f):
        if "ms" in r:
            runs.setdefault((m[1], r["size"]), []).append(r["ms"])
            if "check" in r: checks[(m[1], r["size"])] = r["check"]
med = lambda v: statistics.median(v) if v else None
print(f"{'kernel':9} {'size':11} {'tessel':>8} {'eager':>8} {'compile':>8} {'copy':>8} {'%copy':>6} {'/eager':>6} {'/compile':>8} check  (median of rounds, ms, events)")
for (k, s) in sorted(runs):
    t = med(runs[(k, s)])
    e, c, cp = (med(peer.get((k, "torch", s), [])), med(peer.get((k, "torch_compile", s), [])),
                med(peer.get(("copy", "torch", s), [])))
    f = lambda x: f"{x:8.4f}" if x else f"{'-':>8}"
    print(f"{k:9} {s:11} {t:8.4f} {f(e)} {f(c)} {f(cp)} {100 * cp / t if cp else 0:6.0f} "
          f"{e / t if e else 0:6.3f} {c / t if c else 0:8.3f} {checks.get((k, s), '-')}"
          f"  compile rounds {sorted(round(x, 4) for x in peer.get((k, 'torch_compile', s), []))}"
          f" tessel rounds {sorted(round(x, 4) for x in runs[(k, s)])}")
PY
cat "$O/sanitizers.txt" >>"$O/table.txt"
# At most 8 files come back from the device: the table and one archive.
cp "$O/table.txt" "$OUT/rowsfinal_table.txt"
(cd "$OUT" && tar -czf rowsfinal.tar.gz rowsfinal && rm -rf rowsfinal)
cat "$OUT/rowsfinal_table.txt"
