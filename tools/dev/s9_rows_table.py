#!/usr/bin/env python3
"""The table of tools/dev/s9_rows_device.sh, from its output folder.

  python3 tools/dev/s9_rows_table.py DIR          # the table
  python3 tools/dev/s9_rows_table.py --best DIR [KERNEL]
      # "kernel tag flags" of the fastest checked non-default variant at
      # 4096x8192 (of each kernel, or of KERNEL)

DIR holds KERNEL__TAG.json (the samples' --json), variants.txt ("kernel tag
flags" per run) and peers_norms.json (bench/peers.py --norm-timing
events,cuda_graph). Per kernel and size, for each timing (events: do_bench
with the launch; graph: CUDA graph replays, no launch cost): tessel's
default and fastest variant in ms and % of the copy bandwidth of the same
timing, PyTorch eager and torch.compile, and best peer / tessel's best
(> 1: tessel is faster).
"""

import json
import os
import sys

KERNELS = ("rmsnorm", "layernorm", "softmax")
SIZES = ("4096x8192", "16384x4096", "8192x1024")


def load(path):
    try:
        with open(path) as f:
            return json.load(f).get("records", [])
    except (OSError, ValueError):
        return []


def variants(d):
    out = []
    try:
        with open(os.path.join(d, "variants.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    out.append((parts[0], parts[1], parts[2:]))
    except OSError:
        pass
    return out


def tessel(d):
    """{(kernel, size, timing): [(tag, record)]}; timing events / graph."""
    out = {}
    for k, tag, _ in variants(d):
        for r in load(os.path.join(d, "{}__{}.json".format(k, tag))):
            if r.get("backend") != "gpu" or "error" in r or not r.get("ms"):
                continue
            timing = "graph" if "cuda_graph" in r.get("variant", "") else \
                "events"
            name = tag[:-len("_graph")] if tag.endswith("_graph") else tag
            out.setdefault((r["kernel"], r["size"], timing), []).append(
                (name, r))
    return out


def best(d, kernels):
    flags = {(k, tag): f for k, tag, f in variants(d)}
    runs = tessel(d)
    for k in kernels:
        ok = [(r["ms"], tag) for tag, r in runs.get((k, SIZES[0], "events"), [])
              if r.get("check") == "pass" and tag != "default"]
        if ok:
            tag = min(ok)[1]
            kept = [f for f in flags[(k, tag)]
                    if not f.startswith("--size") and f != "--check"]
            print(k, tag, " ".join(kept))


def table(d):
    runs = tessel(d)
    peers = [r for r in load(os.path.join(d, "peers_norms.json"))
             if "error" not in r and r.get("ms")]

    def peer(kernel, impl, size, timing):
        v = "cuda_graph" if timing == "graph" else ""
        for p in peers:
            if (p["kernel"], p["impl"], p["size"], p.get("variant", "")) == (
                    kernel, impl, size, v):
                return p
        return None

    fails = [(k, s, tag) for (k, s, _), rs in runs.items() for tag, r in rs
             if r.get("check") == "fail"]
    print("float64 checks failed: {}".format(fails or "none"))
    head = "{:<9} {:<10} {:>7} {:>5} {:<12} {:>7} {:>5} {:>7} {:>7} {:>6}"
    for timing in ("events", "graph"):
        print("\n{} timing ({}), ms, % of the copy's bandwidth:".format(
            timing, "do_bench, launch included" if timing == "events" else
            "CUDA graph replays, no launch"))
        print(head.format("kernel", "size", "default", "%copy", "best",
                          "ms", "%copy", "eager", "compile", "peer/t"))
        for k in KERNELS:
            for s in SIZES:
                rs = runs.get((k, s, timing), [])
                if not rs:
                    continue
                copy = peer("copy", "torch", s, timing)

                def pct(r):
                    return "{:.0f}".format(100 * r["gbps"] / copy["gbps"]) \
                        if copy else "-"
                default = dict(rs).get("default")
                tag, fast = min(rs, key=lambda tr: tr[1]["ms"])
                eager = peer(k, "torch", s, timing)
                comp = peer(k, "torch_compile", s, timing)
                ps = [p["ms"] for p in (eager, comp) if p]
                print(head.format(
                    k, s, "{:.4f}".format(default["ms"]) if default else "-",
                    pct(default) if default else "-", tag[:12],
                    "{:.4f}".format(fast["ms"]), pct(fast),
                    "{:.4f}".format(eager["ms"]) if eager else "-",
                    "{:.4f}".format(comp["ms"]) if comp else "-",
                    "{:.2f}x".format(min(ps) / fast["ms"]) if ps else "-"))
        copies = ["{} {:.4f} ms {:.2f} TB/s".format(
            s, c["ms"], c["gbps"] / 1000) for s in SIZES
            for c in [peer("copy", "torch", s, timing)] if c]
        print("copy: " + "; ".join(copies))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--best":
        best(args[1] if len(args) > 1 else ".",
             args[2:] if len(args) > 2 else KERNELS)
    else:
        table(args[0] if args else ".")


if __name__ == "__main__":
    main()
