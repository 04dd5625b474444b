#!/usr/bin/env python3
"""Merges the record JSON a device call left into one results.json with the
tessel-against-peer ratios and bench/run_all.py's chart (results.png/.svg).

  tools/dev/s15_results.py OUT_DIR FILE.json [FILE.json ...]

Files holding several records of one (impl, kernel, pass, variant, dtype,
size), one per round, keep the median."""
import json
import os
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_all  # noqa: E402
from device_records import records  # noqa: E402


def key(r):
    return (r["impl"], r["kernel"], r.get("pass", "fwd"), r.get("variant", ""),
            r.get("dtype", ""), r.get("size", ""))


def main():
    out, files = sys.argv[1], sys.argv[2:]
    groups, device = {}, None
    for f in files:
        data = json.load(open(f))
        device = device or data.get("device")
        for r in records(f):
            if r.get("ms"):
                groups.setdefault(key(r), []).append(r)
    merged = []
    for rs in groups.values():
        rs.sort(key=lambda r: r["ms"])
        r = dict(rs[len(rs) // 2])
        r["ms_rounds"] = [x["ms"] for x in rs]
        merged.append(r)
    comparisons = run_all.compare(merged)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"device": device, "records": merged,
                   "comparisons": comparisons}, f, indent=1)
    run_all.print_table(merged, comparisons)
    print(run_all.draw(merged, out))


if __name__ == "__main__":
    main()
