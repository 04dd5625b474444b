#!/usr/bin/env python3
"""The row kernels' table from one device call's JSON files.

  python3 tools/dev/row_kernels_table.py DIR

DIR holds tessel_{rmsnorm,layernorm,softmax}.json (the samples' --json),
tessel_gemm_{plain,bias_relu}.json and peers_norms.json (bench/peers.py
--only norms). Prints, per kernel and
size: tessel's median time and bandwidth, its fraction of the copy bandwidth
measured in the same run, PyTorch eager and torch.compile, and the ratio to
the best peer (> 1: tessel is faster).
"""

import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f).get("records", [])
    except (OSError, ValueError) as exc:
        print("{}: {}".format(path, exc), file=sys.stderr)
        return []


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    peers = [r for r in load(os.path.join(d, "peers_norms.json"))
             if "error" not in r]
    copy = {r["size"]: r for r in peers if r["kernel"] == "copy"}
    print("{:<10} {:<11} {:>9} {:>8} {:>7} {:>9} {:>9} {:>7} {}".format(
        "kernel", "size", "tessel", "TB/s", "%copy", "torch", "compile",
        "vs best", "check"))
    for kernel in ("rmsnorm", "layernorm", "softmax"):
        for r in load(os.path.join(d, "tessel_{}.json".format(kernel))):
            if r.get("backend") != "gpu" or r.get("kernel") != kernel:
                continue
            size = r["size"]
            peer = {p["impl"]: p for p in peers
                    if p["kernel"] == kernel and p["size"] == size}
            c = copy.get(size)
            frac = r["gbps"] / c["gbps"] if c else float("nan")
            times = [p["ms"] for p in peer.values()]
            best = min(times) / r["ms"] if times else float("nan")

            def ms(impl):
                return "{:.4f}".format(peer[impl]["ms"]) if impl in peer else "-"

            print("{:<10} {:<11} {:>9.4f} {:>8.2f} {:>6.0%} {:>9} {:>9} "
                  "{:>6.2f}x {}".format(kernel, size, r["ms"],
                                        r["gbps"] / 1000, frac, ms("torch"),
                                        ms("torch_compile"), best,
                                        r.get("check", "")))
    gemm = {e: load(os.path.join(d, "tessel_gemm_{}.json".format(e)))
            for e in ("plain", "bias_relu")}
    if all(gemm.values()):
        p, b = gemm["plain"][0], gemm["bias_relu"][0]
        print("gemm 4096^3 f16: plain {:.4f} ms, +bias+relu {:.4f} ms "
              "({:+.1%})".format(p["ms"], b["ms"], b["ms"] / p["ms"] - 1))
    for size, c in sorted(copy.items()):
        print("copy {:<11} {:.4f} ms {:.2f} TB/s".format(size, c["ms"],
                                                        c["gbps"] / 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
