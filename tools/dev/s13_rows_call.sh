#!/usr/bin/env bash
# Session 13's row-kernel call (issue 17, ~3 minutes): the tiles of rmsnorm,
# layernorm and softmax at 8192x1024, where torch.compile was ahead under
# events (one call with a cold, zero-flushed L2). ROUNDS rounds, each the
# peers (copy, eager, torch.compile; events), then every candidate tile
# (float64-checked in round 1), so drift falls on both sides; the table
# takes medians. The bench sizes (defaults) run once at the end (BENCH_SIZES=
# leaves them out). SIZE (default 8192x1024), KERNELS and TILES
# ("block_m:threads[:grid] ...") pick other candidates.
#   tools/dev/s13_rows_call.sh .probe/stage/build
set -u
S=${1:?staged build folder}
size=${SIZE:-8192x1024}
kernels=${KERNELS:-"rmsnorm layernorm softmax"}
name=rows_$size
O=${OUT:-/tmp/out}/$name
mkdir -p "$O"
source tools/dev/device_steps.sh
use_stage "$S" /tmp/tc_rows
rounds=${ROUNDS:-3}
# block_m:threads[:grid]
tiles=${TILES:-"8:256 1:128 2:128 2:256 4:128 4:256 8:512 16:512 16:256 32:512"}
for r in $(seq 1 "$rounds"); do
  timeout 120 python3 bench/peers.py --only norms --compile-norms --row-shapes "${size/x/,}" \
    --norm-timing events --out "$O/peers_r$r.json" >"$O/peers_r$r.log" 2>&1 ||
    echo "peers r$r rc=$?"
  for k in $kernels; do
    for t in $tiles; do
      IFS=: read -r bm th grid <<<"$t"
      extra=""; [ -n "$grid" ] && extra="--grid=$grid"
      chk=""; [ "$r" = 1 ] && chk="--check"
      timeout 30 "$S/samples/$k" --backend=gpu --bench $chk --size=$size \
        --block-m=$bm --threads=$th $extra \
        --json="$O/${k}_${bm}_${th}_${grid:-0}_r$r.json" >"$O/${k}_${bm}_${th}_${grid:-0}_r$r.log" 2>&1 ||
        echo "$k $t r$r rc=$?"
    done
  done
done
if [ -n "${BENCH_SIZES-1}" ]; then
  timeout 120 python3 bench/peers.py --only norms --compile-norms \
    --norm-timing events --out "$O/peers_bench.json" >"$O/peers_bench.log" 2>&1
  for k in rmsnorm layernorm softmax; do
    timeout 30 "$S/samples/$k" --backend=gpu --bench --check --size=bench \
      --json="$O/${k}_bench.json" >"$O/${k}_bench.log" 2>&1 || echo "$k bench rc=$?"
  done
fi
python3 - "$O" >"$O/table.txt" <<'PY'
import glob, os, re, statistics, sys
sys.path.insert(0, "tools/dev")
from device_records import peer_medians, records as recs
o = sys.argv[1]
med, _ = peer_medians(os.path.join(o, "peers_r*.json"), lambda r: (r["kernel"], r["impl"]))
print("peers (median ms):", {f"{k[0]}/{k[1]}": round(v, 4) for k, v in sorted(med.items())})
runs, checks = {}, {}
for f in glob.glob(os.path.join(o, "*_r*.json")):
    m = re.match(r"(rmsnorm|layernorm|softmax)_(\d+)_(\d+)_(\d+)_r(\d+)\.json", os.path.basename(f))
    if not m: continue
    for r in recs(f)[:1]:
        runs.setdefault(m.groups()[:4], []).append(r["ms"])
        if "check" in r: checks[m.groups()[:4]] = r["check"]
copy = med.get(("copy", "torch"))
print(f"{'kernel':9} {'bm':>3} {'thr':>4} {'grid':>5} {'ms':>8} {'eager':>8} {'compile':>8} {'best/t':>6} {'%copy':>6} check")
for key in sorted(runs, key=lambda k: (k[0], statistics.median(runs[k]))):
    k, bm, th, grid = key
    t = statistics.median(runs[key])
    e, c = med.get((k, "torch")), med.get((k, "torch_compile"))
    best = min(x for x in (e, c) if x) if (e or c) else float("nan")
    print(f"{k:9} {bm:>3} {th:>4} {grid:>5} {t:8.4f} {e or 0:8.4f} {c or 0:8.4f} {best / t:6.3f} "
          f"{100 * copy / t if copy else 0:6.0f} {checks.get(key, '-')}")
pb = {}
for r in recs(os.path.join(o, "peers_bench.json")):
    if "ms" in r and r.get("variant", "") == "":
        pb[(r["kernel"], r["impl"], r["size"])] = r["ms"]
for k in ("rmsnorm", "layernorm", "softmax"):
    for r in recs(os.path.join(o, f"{k}_bench.json")):
        if "ms" not in r: continue
        s = r["size"]; e = pb.get((k, "torch", s)); c = pb.get((k, "torch_compile", s)); cp = pb.get(("copy", "torch", s))
        best = min(x for x in (e, c) if x) if (e or c) else float("nan")
        print(f"bench {k:9} {s:11} {r['ms']:8.4f} eager {e or 0:8.4f} compile {c or 0:8.4f} "
              f"best/t {best / r['ms']:6.3f} %copy {100 * cp / r['ms'] if cp else 0:4.0f} check {r.get('check', '-')}")
PY
# At most 8 files come back from the device: the table and one archive.
cp "$O/table.txt" "${OUT:-/tmp/out}/$name.txt"
(cd "${OUT:-/tmp/out}" && tar -czf $name.tar.gz $name && rm -rf $name)
cat "${OUT:-/tmp/out}/$name.txt"
