#!/usr/bin/env python3
"""The table of tools/dev/s13_gemm_call.sh: per point the median over the
rounds of tessel's ms and of its peer's (cuBLAS for f16 / bf16,
torch._scaled_mm for fp8), their ratio (peer / tessel), the lowest and
highest per-round ratio, and the f16 suite's geomean and minimum. Writes
tessel_median.json and peers_median.json (the records with the median ms)
for bench/merge_reports.py's chart.

  tools/dev/s13_gemm_table.py OUT_DIR
"""

import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from device_records import records  # noqa: E402


def main():
    out = sys.argv[1]
    peer, peer_rec = {}, {}
    for f in glob.glob(os.path.join(out, "cublas*_r*.json")):
        rnd = int(re.search(r"_r(\d+)\.json$", f).group(1))
        for r in records(f):
            if "ms" in r:
                s = r["shape"]
                key = (r["dtype"], r.get("variant", "NN"), s["M"], s["N"], s["K"])
                peer.setdefault(key, {})[rnd] = r["ms"]
                peer_rec[key] = r
    for f in glob.glob(os.path.join(out, "fp8peer_r*.json")):
        rnd = int(re.search(r"_r(\d+)\.json$", f).group(1))
        for r in records(f):
            if "ms" in r and r.get("impl") == "torch_scaled_mm":
                s = r["shape"]
                key = ("fp8_e4m3", "NT", s["M"], s["N"], s["K"])
                peer.setdefault(key, {})[rnd] = r["ms"]
                peer_rec[key] = r
    runs, run_rec = {}, {}
    for f in glob.glob(os.path.join(out, "run_*_r*.json")):
        rnd = int(re.search(r"_r(\d+)\.json$", f).group(1))
        for r in records(f)[:1]:
            s = r["shape"]
            key = (r["dtype"], r.get("variant", "NN"), s["M"], s["N"], s["K"])
            runs.setdefault(key, {})[rnd] = r["ms"]
            run_rec[key] = r
    print(f"{'shape':18} {'dtype':8} {'lay':3} {'tessel ms':>10} {'TFLOP/s':>8} "
          f"{'peer ms':>9} {'ratio':>6} {'lo':>6} {'hi':>6}  (median of rounds)")
    suite, medians = [], ([], [])
    order = {"f16": 0, "bf16": 1, "fp8_e4m3": 2}
    for key in sorted(runs, key=lambda k: (order.get(k[0], 9), k[1], k[2:])):
        dt, lay, m, n, k = key
        t = statistics.median(runs[key].values())
        p_rounds = peer.get(key, {})
        p = statistics.median(p_rounds.values()) if p_rounds else None
        per = [p_rounds[r] / runs[key][r] for r in runs[key] if r in p_rounds]
        ratio = p / t if p else float("nan")
        if p and dt == "f16":
            suite.append(ratio)
        lo = min(per) if per else float("nan")
        hi = max(per) if per else float("nan")
        print(f"{m}x{n}x{k:<8} {dt:8} {lay:3} {t:10.4f} {2*m*n*k/t/1e9:8.1f} "
              f"{p or 0:9.4f} {ratio:6.3f} {lo:6.3f} {hi:6.3f}")
        medians[0].append(dict(run_rec[key], ms=t, rounds=sorted(runs[key].values())))
        if p:
            medians[1].append(dict(peer_rec[key], ms=p, rounds=sorted(p_rounds.values())))
    if suite:
        g = math.exp(sum(map(math.log, suite)) / len(suite))
        print(f"f16 suite: {len(suite)} points, geomean {g:.3f}, min {min(suite):.3f}")
    meta = {"benchmark": "s13_gemm_call", "note": "ms: median over rounds"}
    json.dump(dict(meta, records=medians[0]),
              open(os.path.join(out, "tessel_median.json"), "w"), indent=1)
    json.dump(dict(meta, records=medians[1]),
              open(os.path.join(out, "peers_median.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
