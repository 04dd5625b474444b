#!/usr/bin/env bash
# Session 10's row-kernel call (issue 17, ~60 s): the peers (copy, PyTorch
# eager, torch.compile; events and CUDA graphs), then rmsnorm, layernorm and
# softmax at the bench sizes, float64-checked, both timings. do_bench now
# flushes with zeros, as the peers' triton.testing.do_bench does.
set -u
S=${1:?staged build folder}
O=${OUT:-/tmp/s10}/rows
mkdir -p "$O"
export LD_LIBRARY_PATH=$S/runtime-libs:/usr/local/cuda/lib64
export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=/tmp/tc_s10_rows
timeout 60 python3 bench/peers.py --only norms --compile-norms \
  --norm-timing events,cuda_graph --out "$O/peers_norms.json" >"$O/peers_norms.log" 2>&1
for k in rmsnorm layernorm softmax; do
  timeout 30 "$S/samples/$k" --backend=gpu --bench --check --size=bench \
    --json="$O/${k}_events.json" >"$O/${k}_events.log" 2>&1 || echo "$k events rc=$?"
  timeout 30 "$S/samples/$k" --backend=gpu --bench --size=bench --cuda-graph \
    --json="$O/${k}_graph.json" >"$O/${k}_graph.log" 2>&1 || echo "$k graph rc=$?"
done
python3 - "$O" <<'PY'
import json, os, sys
o = sys.argv[1]
def recs(f):
    try:
        d = json.load(open(os.path.join(o, f)))
        return d["records"] if isinstance(d, dict) else d
    except Exception as e:
        print("no", f, e); return []
peer = {}
for r in recs("peers_norms.json"):
    if "ms" in r:
        peer[(r["kernel"], r["impl"], r.get("variant", ""), r["size"])] = r["ms"]
print(f"{'kernel':9} {'size':11} {'timing':10} {'tessel':>8} {'eager':>8} {'compile':>8} {'copy':>8} {'%copy':>6} {'best/t':>6}")
for k in ("rmsnorm", "layernorm", "softmax"):
    for mode, var in (("events", ""), ("graph", "cuda_graph")):
        for r in recs(f"{k}_{mode}.json"):
            if "ms" not in r: continue
            s = r["size"]
            e = peer.get((k, "torch", var, s)); c = peer.get((k, "torch_compile", var, s))
            cp = peer.get(("copy", "torch", var, s))
            best = min(x for x in (e, c) if x) if (e or c) else float("nan")
            pc = 100 * cp / r["ms"] if cp else float("nan")
            print(f"{k:9} {s:11} {mode:10} {r['ms']:8.4f} {e or 0:8.4f} {c or 0:8.4f} {cp or 0:8.4f} {pc:6.0f} {best / r['ms']:6.3f}")
PY
