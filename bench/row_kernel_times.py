#!/usr/bin/env python3
"""Row kernels against torch.compile's, both timed by Nsight Compute.

  python3 bench/row_kernel_times.py [--build build/release] [--out DIR]
                                    [--launches 11]

The event timings of bench/device.py include each side's launch path: a
torch.compile call's guards can take longer than a 10 us kernel, and its
times moved by up to 6 % from round to round on the H200 (session 16). Here
ncu times the kernels alone, both sides the same way: caches flushed before
each launch, clocks left free (--clock-control none), the median of
--launches launches after three warm ones. Per size (f16, the issue-17
sizes): tessel's rmsnorm, layernorm and softmax samples; torch.compile of
F.rms_norm, F.layer_norm and torch.softmax (one static kernel per shape);
and torch.neg into another tensor, an elementwise kernel moving a copy's
bytes (a copy through cudaMemcpy is no kernel, so ncu cannot time it).

Writes DIR/row_kernel_times.json (one record per kernel: the median and
quantiles in ms, GB/s, DRAM % of peak, grid, block, registers, achieved
occupancy), DIR/row_kernel_times.png when matplotlib is there, the raw
ncu CSVs, and prints a table with tessel / torch.compile and tessel / copy.
DIR defaults to $OUT, else /tmp/tessel-row-kernel-times. Needs a GPU, ncu and
PyTorch (docs/benchmarks.md).
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = [(4096, 8192), (16384, 4096), (8192, 1024)]
KERNELS = ["rmsnorm", "layernorm", "softmax"]
METRICS = ("gpu__time_duration.sum,"
           "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
           "launch__registers_per_thread,launch__block_size,"
           "launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active")
WARM = 3  # launches left unprofiled before the timed ones


def torch_peers(launches):
    """Run under ncu --profile-from-start off: the peers' timed launches."""
    import torch
    import torch.nn.functional as F
    cases = []
    for m, n in SIZES:
        g = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(m, n, device="cuda", dtype=torch.float16, generator=g)
        w = torch.randn(n, device="cuda", dtype=torch.float16, generator=g)
        b = torch.randn(n, device="cuda", dtype=torch.float16, generator=g)
        y = torch.empty_like(x)
        # Defaults bind this shape's tensors: the lambdas run after the loop.
        cases += [
            (lambda x=x, y=y: torch.neg(x, out=y)),
            torch.compile(lambda x=x, n=n, w=w: F.rms_norm(x, (n,), w, 1e-6),
                          dynamic=False),
            torch.compile(
                lambda x=x, n=n, w=w, b=b: F.layer_norm(x, (n,), w, b, 1e-5),
                dynamic=False),
            torch.compile(lambda x=x: torch.softmax(x, dim=-1), dynamic=False),
        ]
    for fn in cases:  # compile, autotune and warm up outside the range
        for _ in range(WARM + 2):
            fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for fn in cases:
        for _ in range(launches):
            fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def ncu(args, csv_path, profiled, launches):
    cmd = [args.ncu, "--clock-control", "none", "--cache-control", "all",
           "--csv", "--print-units", "base", "--metrics", METRICS,
           "--log-file", csv_path] + profiled
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: rc {r.returncode}\n"
                           f"{r.stdout[-2000:]}")
    return read_ncu_csv(csv_path)


def read_ncu_csv(path):
    """Kernel launches in order: (name, {metric: value})."""
    rows = [r for r in csv.reader(
        line for line in open(path) if line.startswith('"'))]
    if not rows:
        return []
    h = rows[0]
    ii, ki = h.index("ID"), h.index("Kernel Name")
    mi, vi = h.index("Metric Name"), h.index("Metric Value")
    launches = {}
    for r in rows[1:]:
        name, metrics = launches.setdefault(int(r[ii]), (r[ki], {}))
        metrics[r[mi]] = float(r[vi].replace(",", ""))
    return [launches[i] for i in sorted(launches)]


def record(kernel, impl, m, n, launches):
    times = sorted(x["gpu__time_duration.sum"] * 1e-6 for _, x in launches)
    q = statistics.quantiles(times, n=10) if len(times) > 1 else times * 9
    ms = statistics.median(times)
    first = launches[0][1]
    extra = 2 * n if kernel == "rmsnorm" else 4 * n if kernel == "layernorm" else 0
    bytes_ = 2.0 * 2 * m * n + extra
    return {
        "kernel": kernel, "impl": impl, "dtype": "f16", "timing": "ncu",
        "shape": {"M": m, "N": n}, "size": f"{m}x{n}", "bytes": bytes_,
        "ms": ms, "quantiles_ms": [q[1], ms, q[7]], "launches": len(times),
        "gbps": bytes_ / (ms * 1e-3) / 1e9,
        "dram_pct": statistics.median(
            x["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
            for _, x in launches),
        "achieved_occupancy_pct": statistics.median(
            x["sm__warps_active.avg.pct_of_peak_sustained_active"]
            for _, x in launches),
        "grid": int(first["launch__grid_size"]),
        "block": int(first["launch__block_size"]),
        "registers": int(first["launch__registers_per_thread"]),
        "ncu_kernel": launches[0][0][:80],
    }


def chart(records, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    impls = ["tessel", "torch_compile", "copy_kernel"]
    fig, axes = plt.subplots(1, len(KERNELS), figsize=(13, 3.8), sharey=True)
    for ax, k in zip(axes, KERNELS):
        for j, impl in enumerate(impls):
            ys = []
            for m, n in SIZES:
                kk = "copy" if impl == "copy_kernel" else k
                r = [r for r in records if r["kernel"] == kk and
                     r["impl"] == impl and r["size"] == f"{m}x{n}"]
                ys.append(r[0]["gbps"] / 1e3 if r else 0)
            ax.bar([i + 0.27 * (j - 1) for i in range(len(SIZES))], ys,
                   width=0.27, label=impl)
        ax.set_xticks(range(len(SIZES)), [f"{m}x{n}" for m, n in SIZES])
        ax.set_title(f"{k} (f16), ncu kernel time")
    axes[0].set_ylabel("TB/s (bytes read + written)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--out", default=os.environ.get(
        "OUT", "/tmp/tessel-row-kernel-times"))
    p.add_argument("--launches", type=int, default=11)
    p.add_argument("--ncu", default="ncu")
    p.add_argument("--torch-peers", action="store_true",
                   help=argparse.SUPPRESS)  # the profiled child
    args = p.parse_args()
    if args.torch_peers:
        torch_peers(args.launches)
        return 0
    os.makedirs(args.out, exist_ok=True)
    records = []
    for k in KERNELS:
        for m, n in SIZES:
            launches = ncu(
                args, os.path.join(args.out, f"ncu_{k}_{m}x{n}.csv"),
                ["-k", f"regex:^{k}$", "--launch-skip", str(WARM),
                 "--launch-count", str(args.launches),
                 os.path.join(args.build, "samples", k), "--backend=gpu",
                 "--bench", "--check=false", f"--size={m}x{n}"],
                args.launches)
            records.append(record(k, "tessel", m, n, launches))
    peers = ncu(args, os.path.join(args.out, "ncu_torch.csv"),
                ["--profile-from-start", "off", sys.executable,
                 os.path.abspath(__file__), "--torch-peers",
                 f"--launches={args.launches}"], args.launches)
    # In torch_peers' order: per size, the copy kernel then the three.
    each = args.launches
    names = [("copy", "copy_kernel")] + [(k, "torch_compile") for k in KERNELS]
    if len(peers) != each * len(names) * len(SIZES):
        raise RuntimeError(f"ncu timed {len(peers)} peer launches, expected "
                           f"{each * len(names) * len(SIZES)} (one kernel a "
                           "call): see ncu_torch.csv")
    for s, (m, n) in enumerate(SIZES):
        for c, (k, impl) in enumerate(names):
            at = (s * len(names) + c) * each
            records.append(record(k, impl, m, n, peers[at:at + each]))
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    out = {"benchmark": "row_kernel_times", "gpu": gpu, "records": records}
    with open(os.path.join(args.out, "row_kernel_times.json"), "w") as f:
        json.dump(out, f, indent=1)
    charted = chart(records, os.path.join(args.out, "row_kernel_times.png"))
    by = {(r["kernel"], r["impl"], r["size"]): r for r in records}
    print(f"{gpu}; ncu kernel times, median of {each} launches, us")
    print(f"{'kernel':10s} {'size':11s} {'tessel':>8s} {'compile':>8s} "
          f"{'copy':>8s} {'tessel/compile':>15s} {'copy/tessel':>12s}")
    for k in KERNELS:
        for m, n in SIZES:
            sz = f"{m}x{n}"
            t, c, cp = (by[(k, "tessel", sz)]["ms"] * 1e3,
                        by[(k, "torch_compile", sz)]["ms"] * 1e3,
                        by[("copy", "copy_kernel", sz)]["ms"] * 1e3)
            print(f"{k:10s} {sz:11s} {t:8.2f} {c:8.2f} {cp:8.2f} "
                  f"{t / c:15.3f} {cp / t:12.3f}")
    print("wrote", os.path.join(args.out, "row_kernel_times.json"),
          "and the chart" if charted else "(no matplotlib: no chart)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
