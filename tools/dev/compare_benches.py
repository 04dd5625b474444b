#!/usr/bin/env python3
"""Compares two bench/run_all.py results.json files record by record.

  tools/dev/compare_benches.py BEFORE/results.json AFTER/results.json

Prints, per tessel record (kernel, variant, pass, dtype, size), the median
milliseconds of each run and after/before; a refactoring that changes no
generated code should stay within noise (a few percent).
"""
import json
import sys


def records(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for r in data.get("records", []):
        if r.get("impl") != "tessel":
            continue
        key = (r.get("kernel"), r.get("variant", ""), r.get("pass", ""),
               r.get("dtype", ""), r.get("size", ""))
        out[key] = r.get("ms")
    return out


def main():
    before, after = records(sys.argv[1]), records(sys.argv[2])
    print(f"{'kernel':<20} {'variant':<10} {'pass':<8} {'dtype':<5} "
          f"{'size':<22} {'before':>9} {'after':>9} {'ratio':>6}")
    ratios = []
    for key in sorted(set(before) | set(after), key=str):
        b, a = before.get(key), after.get(key)
        ratio = a / b if a and b else None
        if ratio:
            ratios.append(ratio)
        fmt = lambda v: f"{v:9.4f}" if v else f"{'-':>9}"
        print(f"{key[0]:<20} {key[1]:<10} {key[2]:<8} {key[3]:<5} "
              f"{key[4]:<22} {fmt(b)} {fmt(a)} "
              f"{ratio if ratio is None else round(ratio, 3)!s:>6}")
    if ratios:
        g = 1.0
        for r in ratios:
            g *= r
        print(f"geomean after/before over {len(ratios)} records: "
              f"{g ** (1 / len(ratios)):.3f}; min {min(ratios):.3f}, "
              f"max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
