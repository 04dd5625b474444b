#!/usr/bin/env python3
"""Runs every benchmark on this (GPU) machine; writes one JSON and a chart.

  python3 bench/run_all.py [--build build/release] [--out DIR]
                           [--wheels .whl] [--skip tessel,cublas,peers]
                           [--quick]

Runs, skipping what is not built: tessel's benchmark binaries (the samples
run with `--bench --size bench --json FILE`, and jit_bench), cuBLAS GEMM
(bench/cublas_gemm) and the Python peers (bench/peers.py: torch SDPA,
flash-linear-attention, a PyTorch reference). Writes DIR/results.json
(every record, each run's status, tessel-vs-peer ratios), DIR/results.png
and DIR/results.svg (TFLOP/s against size per kernel, tessel against each
peer), and prints a table. DIR defaults to $OUT, else bench/results/latest.
See docs/benchmarks.md.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# tessel's own benchmarks: (name, binary under the build folder, arguments).
# "{json}" becomes the file the binary must write (tessel/bench_report.h).
TESSEL_BENCHES = [
    ("tessel_gemm", "samples/gemm", ["--bench", "--size", "bench", "--json",
                                     "{json}"]),
    ("tessel_splitk_gemm", "samples/splitk_gemm",
     ["--bench", "--size", "bench", "--json", "{json}"]),
    ("tessel_flash_attention", "samples/flash_attention",
     ["--bench", "--size", "bench", "--json", "{json}"]),
    ("tessel_flash_attention_fwd_bwd", "samples/flash_attention",
     ["--bench", "--size", "bench", "--pass", "fwd+bwd", "--json", "{json}"]),
    # Grouped-query heads (peers.py --gqa-shapes), forward and fwd+bwd.
    ("tessel_flash_attention_gqa", "samples/flash_attention",
     ["--bench", "--size", "8x4096x32x128", "--heads-kv", "8", "--json",
      "{json}"]),
    ("tessel_flash_attention_gqa_fwd_bwd", "samples/flash_attention",
     ["--bench", "--size", "8x4096x32x128", "--heads-kv", "8", "--pass",
      "fwd+bwd", "--json", "{json}"]),
    # Variable-length batch (peers.py --varlen-shapes), forward.
    ("tessel_flash_attention_varlen", "samples/flash_attention",
     ["--bench", "--varlen", "bench", "--json", "{json}"]),
    ("tessel_linear_attention", "samples/linear_attention",
     ["--bench", "--size", "bench", "--json", "{json}"]),
    ("tessel_rmsnorm", "samples/rmsnorm", ["--bench", "--size", "bench",
                                           "--json", "{json}"]),
    ("tessel_softmax", "samples/softmax", ["--bench", "--size", "bench",
                                           "--json", "{json}"]),
    ("tessel_layernorm", "samples/layernorm", ["--bench", "--size", "bench",
                                               "--json", "{json}"]),
]
# Raw reports kept in the JSON but not charted (another schema).
RAW_BENCHES = [("jit_bench", "bench/jit_bench", ["--out", "{json}"])]

# Goals (issues 6 and 15): tessel time relative to the peer's (peer_ms / tessel_ms).
GOALS = {
    ("gemm", "cublas"): 0.95,  # issue 15's bar at 4096^3 and 8192^3
    ("flash_attention", "torch_sdpa"): 0.5,
    ("linear_attention", "fla"): 1.0,
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build/release")
    p.add_argument("--out", default=os.environ.get("OUT") or
                   os.path.join(HERE, "results", "latest"))
    p.add_argument("--wheels", default=os.path.join(ROOT, ".whl"),
                   help="folder of wheels for the peers (fla) to install "
                   "offline when they do not import")
    p.add_argument("--skip", default="", help="comma list of: tessel, "
                   "cublas, peers")
    p.add_argument("--quick", action="store_true",
                   help="short budgets (warm-up 5 ms, 20 ms of runs)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds allowed to each benchmark command")
    return p.parse_args()


def run_step(name, cmd, env, out_dir, timeout):
    """Runs cmd; returns a status dict. Output goes to OUT/<name>.log."""
    log_path = os.path.join(out_dir, name + ".log")
    start = time.time()
    status = {"name": name, "cmd": cmd}
    print("== {}: {}".format(name, " ".join(cmd)), flush=True)
    try:
        with open(log_path, "w") as log:
            proc = subprocess.run(cmd, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=timeout,
                                  cwd=ROOT)
        status["rc"] = proc.returncode
    except subprocess.TimeoutExpired:
        status["rc"] = "timeout"
    except OSError as exc:
        status["rc"] = "not run: {}".format(exc)
    status["seconds"] = round(time.time() - start, 1)
    with open(log_path) as log:
        tail = log.read().splitlines()[-15:]
    status["log_tail"] = tail
    print("\n".join("   " + line for line in tail[-6:]), flush=True)
    return status


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ensure_peer_packages(args, env, out_dir):
    """Installs the wheels into OUT/site (offline) unless fla imports."""
    probe = subprocess.run([sys.executable, "-c", "import fla.ops.linear_attn"],
                           env=env, capture_output=True)
    if probe.returncode == 0:
        return "fla already importable"
    wheels = sorted(glob.glob(os.path.join(args.wheels, "*.whl")))
    if not wheels:
        return "fla not importable and no wheels in " + args.wheels
    # Outside OUT: the device tool would carry the installed tree back.
    site = "/tmp/tessel-peers-site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index",
         "--no-deps", "--no-compile", "--no-cache-dir", "--upgrade",
         "--target", site] + wheels, capture_output=True, text=True)
    if proc.returncode != 0:
        return "pip install of the wheels failed: " + proc.stderr[-500:]
    env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"]
                                if env.get("PYTHONPATH") else "")
    return "installed {} wheels into {}".format(len(wheels), site)


def compare(records):
    """tessel against each peer with the same kernel, pass, variant, dtype
    and size. ratio = peer_ms / tessel_ms (above 1: tessel is faster)."""
    def key(r):
        return (r["kernel"], r.get("pass", "fwd"), r.get("variant", ""),
                r.get("dtype", ""), r.get("size", ""))
    ok = [r for r in records if "error" not in r and r.get("ms")]
    out = []
    for t in (r for r in ok if r["impl"] == "tessel"):
        for p in ok:
            if p["impl"] == "tessel" or ":" in p["impl"] or key(p) != key(t):
                continue
            ratio = p["ms"] / t["ms"]
            c = {"kernel": t["kernel"], "pass": key(t)[1],
                 "variant": key(t)[2], "dtype": key(t)[3], "size": key(t)[4],
                 "peer": p["impl"], "tessel_ms": t["ms"], "peer_ms": p["ms"],
                 "tessel_tflops": t.get("tflops"),
                 "peer_tflops": p.get("tflops"), "ratio": ratio}
            goal = GOALS.get((t["kernel"], p["impl"]))
            if goal is not None:
                c["goal_ratio"] = goal
                c["meets_goal"] = ratio >= goal
            out.append(c)
    return out


def print_table(records, comparisons):
    print("\n{:<18} {:<20} {:<8} {:<7} {:<5} {:<20} {:>10} {:>9}".format(
        "kernel", "impl", "pass", "variant", "dtype", "size", "ms",
        "TFLOP/s"))
    for r in sorted(records, key=lambda r: (r["kernel"], r.get("pass", ""),
                                            r.get("size", ""), r["impl"])):
        if "error" in r:
            timing = "error: " + r["error"][:60]
        else:
            timing = "{:>10.4f} {:>9.1f}".format(r["ms"], r.get("tflops", 0))
        print("{:<18} {:<20} {:<8} {:<7} {:<5} {:<20} {}".format(
            r["kernel"], r["impl"], r.get("pass", ""), r.get("variant", ""),
            r.get("dtype", ""), r.get("size", ""), timing))
    if comparisons:
        print("\ntessel vs peer (ratio = peer_ms / tessel_ms)")
        for c in comparisons:
            goal = ""
            if "goal_ratio" in c:
                goal = "goal {:.2f}: {}".format(
                    c["goal_ratio"], "met" if c["meets_goal"] else "MISSED")
            print("{:<18} {:<8} {:<7} {:<5} {:<20} vs {:<12} {:6.3f}  {}".format(
                c["kernel"], c["pass"], c["variant"], c["dtype"], c["size"],
                c["peer"], c["ratio"], goal))


def draw(records, out_dir):
    """TFLOP/s against size, one panel per (kernel, pass), one line per
    implementation (per-backend details, impl names with ':', left out).
    Memory-bound kernels (no flops, row kernels and copies) plot GB/s."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return "no chart: {}".format(exc)
    def rate(r):
        return r.get("tflops") or r.get("gbps")

    ok = [r for r in records if "error" not in r and rate(r)
          and ":" not in r["impl"]]
    panels = sorted({(r["kernel"], r.get("pass", "fwd")) for r in ok})
    if not panels:
        return "no chart: no successful records"
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows),
                             squeeze=False)
    for ax, (kernel, pass_) in zip(axes.flat, panels):
        mine = [r for r in ok if r["kernel"] == kernel
                and r.get("pass", "fwd") == pass_]
        sizes = sorted({r["size"] for r in mine},
                       key=lambda s: min((r.get("flops", 0), r.get("bytes", 0))
                                         for r in mine if r["size"] == s))
        series = sorted({(r["impl"], r.get("dtype", ""), r.get("variant", ""))
                         for r in mine})
        for impl, dtype, variant in series:
            points = {r["size"]: rate(r) for r in mine
                      if (r["impl"], r.get("dtype", ""),
                          r.get("variant", "")) == (impl, dtype, variant)}
            xs = [i for i, s in enumerate(sizes) if s in points]
            ys = [points[sizes[i]] for i in xs]
            label = " ".join(x for x in (impl, dtype, variant) if x)
            ax.plot(xs, ys, marker="o",
                    linewidth=2.5 if impl == "tessel" else 1.2,
                    linestyle="-" if impl == "tessel" else "--", label=label)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels(sizes, rotation=15, fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("TFLOP/s" if any(r.get("tflops") for r in mine)
                      else "GB/s")
        ax.set_title("{} {}".format(kernel, pass_))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, "results." + ext), dpi=120)
    return "chart: {}/results.png and .svg".format(out_dir)


def main():
    args = parse_args()
    skip = set(filter(None, args.skip.split(",")))
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    build = os.path.join(ROOT, args.build) if not os.path.isabs(args.build) \
        else args.build
    env = dict(os.environ)
    # Bundled Debian libraries (tools/bundle-runtime-libs.sh), and the
    # toolkit's cuBLAS wherever this machine keeps it (the binary's RUNPATH
    # names the build machine's folder).
    lib_dirs = [os.path.join(build, "runtime-libs")] + [
        os.path.join(cuda, lib)
        for cuda in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda")
        if cuda for lib in ("lib64", "lib", "targets/x86_64-linux/lib")]
    lib_dirs = [d for d in lib_dirs if os.path.isdir(d)]
    if env.get("LD_LIBRARY_PATH"):
        lib_dirs.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(lib_dirs)
    env.setdefault("TESSEL_CACHE_DIR", "/tmp/tessel-cache")
    budget = ["--warmup-ms", "5", "--rep-ms", "20"] if args.quick else []

    merged = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "runs": [],
              "records": [], "raw": {}}
    steps = []  # (name, command, json path, charted)
    if "tessel" not in skip:
        for name, binary, argv in TESSEL_BENCHES + RAW_BENCHES:
            path = os.path.join(build, binary)
            json_path = os.path.join(out_dir, name + ".json")
            if not os.access(path, os.X_OK):
                merged["runs"].append({"name": name, "rc": "skipped: " + path +
                                       " not built"})
                continue
            steps.append((name, [path] + [a.format(json=json_path)
                                          for a in argv],
                          json_path, (name, binary, argv) in TESSEL_BENCHES))
    if "cublas" not in skip:
        path = os.path.join(build, "bench", "cublas_gemm")
        json_path = os.path.join(out_dir, "cublas_gemm.json")
        if os.access(path, os.X_OK):
            steps.append(("cublas_gemm", [path, "--out", json_path] + budget,
                          json_path, True))
        else:
            merged["runs"].append({"name": "cublas_gemm",
                                   "rc": "skipped: " + path + " not built"})
    if "peers" not in skip:
        merged["peer_packages"] = ensure_peer_packages(args, env, out_dir)
        print("peers: " + merged["peer_packages"], flush=True)
        json_path = os.path.join(out_dir, "peers.json")
        steps.append(("peers", [sys.executable, os.path.join(HERE, "peers.py"),
                                "--out", json_path] + budget, json_path, True))

    for name, cmd, json_path, charted in steps:
        status = run_step(name, cmd, env, out_dir, args.timeout)
        report = load_json(json_path)
        status["json"] = report is not None
        merged["runs"].append(status)
        if report is None:
            continue
        if not charted:
            merged["raw"][name] = report
            continue
        if "device" in report and "device" not in merged:
            merged["device"] = report["device"]
        for r in report.get("records", []):
            r["source"] = name
            merged["records"].append(r)
        for field in ("versions", "cublas_version", "timer", "errors"):
            if field in report:
                merged.setdefault("meta", {})[name + "." + field] = \
                    report[field]

    merged["comparisons"] = compare(merged["records"])
    merged["chart"] = draw(merged["records"], out_dir)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(merged, f, indent=2)
    print_table(merged["records"], merged["comparisons"])
    print("\nruns:")
    for run in merged["runs"]:
        print("  {:<26} rc={} {}".format(run["name"], run.get("rc"),
                                         "{}s".format(run["seconds"])
                                         if "seconds" in run else ""))
    print(merged["chart"])
    print("results: " + os.path.join(out_dir, "results.json"))
    failed = [r for r in merged["runs"] if r.get("rc") not in (0, None)
              and not str(r.get("rc")).startswith("skipped")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
