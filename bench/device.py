#!/usr/bin/env python3
"""The device-run harness: stage here, run on the GPU machine, save here.

  python3 bench/device.py stage [SUITE...]        # here, after the build
  python3 bench/device.py run [SUITE...] [--out $OUT] [--quick]
                              [--budget 530] [--dry-run]   # on the GPU
  python3 bench/device.py save DIR                # here: DIR = $OUT/<gpu>

Suites (no names: gemm attention rows linear-attention fuzz sanitizers):
  gemm              samples gemm (f16/bf16, fp8 e4m3) and splitk_gemm;
                    cuBLAS, torch._scaled_mm
  attention         flash_attention fwd, fwd+bwd, grouped heads, varlen;
                    torch SDPA (flash, efficient, cuDNN)
  rows              rmsnorm, softmax, layernorm; torch eager, a copy
  linear-attention  linear_attention fwd, fwd+bwd; fla, a torch reference
  fuzz              random tile programs against the interpreter (the CI
                    seed and two more at scale 3), strided views
  sanitizers        compute-sanitizer memcheck / racecheck / synccheck over
                    the samples' --check --size=small runs
  tests             every tests/*/*gpu_test binary, whole (not by default)
  jit               bench/jit_bench (not by default)
  decode            decode_attention (paged split-KV, GQA 4:1 and MHA) and a
                    copy, mla_decode (bf16, B64/128); torch SDPA per sequence
                    and batched, torch's copy (not by default)
  fp8               fp8_blockscaled_gemm (e4m3, 1x128 / 128x128 scales);
                    torch._scaled_mm block-wise and row-wise, memcheck
                    (not by default)
  w4a16             w4a16_gemm (int4 weights, g128, M 1..256); torch f16
                    matmul on the dequantized weights, memcheck (not by
                    default)
  grouped           grouped_gemm (MoE, f16, 8 and 64 experts, ragged
                    sizes); one torch.matmul per group and
                    torch._grouped_mm, memcheck (not by default)
Each suite's steps run tessel first, then its peers, in the order of
bench/harness/suites.py (which also gives rough times per suite).

stage copies the suites' binaries and the Abseil libraries into
.probe/stage/build (packed as .probe/stage/build.tar.xz when large) and
prints the carry path and the device command. run writes
$OUT/<gpu>/results.json (every step's rc, verdict and log tail; the records
and tessel-vs-peer ratios per suite; rewritten after every step),
results.svg (and .png with matplotlib) and logs.tgz, and prints a short
table last. save files each suite of such a run as
bench/results/<gpu>/<suite>.json (+ .svg) and refreshes the index in
bench/results/README.md. See docs/benchmarks.md.
"""

import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import chart, report, stage, steps as step_runner  # noqa: E402
from harness import suites as suite_table  # noqa: E402
from harness import results_index  # noqa: E402

ROOT = step_runner.ROOT


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[2:]))
    sub = p.add_subparsers(dest="action", required=True)
    s = sub.add_parser("stage", help="here: copy the suites' binaries")
    s.add_argument("suites", nargs="*")
    s.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    s.add_argument("--max-mib", type=float, default=40,
                   help="pack the stage as a .tar.xz above this size")
    r = sub.add_parser("run", help="on the GPU machine: run the suites")
    r.add_argument("suites", nargs="*")
    r.add_argument("--out", default=os.environ.get("OUT") or
                   "/tmp/tessel-device")
    r.add_argument("--build", default="",
                   help="build folder (default: the stage, else "
                   "build/release)")
    r.add_argument("--quick", action="store_true",
                   help="one size per kernel, short timing budgets, fewer "
                   "seeds and sanitizer runs")
    r.add_argument("--budget", type=float, default=530,
                   help="seconds; steps that would start later are skipped")
    r.add_argument("--wheels", default=os.path.join(ROOT, ".whl"),
                   help="wheels of fla to install offline when it does not "
                   "import")
    r.add_argument("--dry-run", action="store_true",
                   help="print the commands, run nothing")
    v = sub.add_parser("save", help="here: file a run under bench/results")
    v.add_argument("dir", help="the run's $OUT/<gpu> folder")
    v.add_argument("--into", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    suites = args.suites if getattr(args, "suites", None) else \
        list(suite_table.DEFAULT)
    unknown = [s for s in suites if s not in suite_table.NAMES]
    if unknown:
        p.error("unknown suite {} (suites: {})".format(
            ", ".join(unknown), ", ".join(suite_table.NAMES)))
    args.suites = suites
    return args


def find_build(args):
    if args.build:
        return os.path.abspath(args.build)
    staged = stage.unpack(stage.STAGE, "/tmp/tessel-stage")
    return staged or os.path.join(ROOT, "build", "release")


def write_json(path, data):
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def dry_run(args, build):
    print("# build: {}".format(build))
    for suite in args.suites:
        print("# suite {}".format(suite))
        for step in suite_table.steps(suite, build):
            argv = step.command(args.quick)
            if argv is None:
                print("#   {}: left out under --quick".format(step.name))
                continue
            env = " ".join("{}={}".format(k, v) for k, v in step.env.items())
            json_path = "LOGS/{}.json".format(step.name)
            cmd = step_runner.expand(argv, build, json_path)
            print("  " + (env + " " if env else "") +
                  " ".join(shlex.quote(a) for a in cmd))
    return 0


def run_suite(name, args, build, env, log_dir, deadline):
    suite = {"status": "pass", "steps": [], "records": [], "left_out": []}
    start = time.time()
    for step in suite_table.steps(name, build):
        argv = step.command(args.quick)
        if argv is None:
            suite["left_out"].append(step.name)
            continue
        left = deadline - time.time()
        if left < 20:
            suite["steps"].append({"name": step.name, "kind": step.kind,
                                   "rc": "skipped: budget", "passed": False})
            continue
        if step.name == "peers_fla":
            suite["peer_packages"] = step_runner.ensure_fla(env, args.wheels)
            print("peers: " + suite["peer_packages"], flush=True)
        json_path = os.path.join(log_dir, step.name + ".json")
        if os.path.exists(json_path):
            os.remove(json_path)
        record, rep = step_runner.run(
            step, step_runner.expand(argv, build, json_path), env, log_dir,
            json_path if "{json}" in argv else None,
            int(min(step.timeout, left)))
        suite["steps"].append(record)
        if rep and step.kind != "raw":
            for r in rep.get("records", []):
                suite["records"].append(dict(r, source=step.name))
            for field in ("versions", "cublas_version", "timer", "errors"):
                if field in rep:
                    suite.setdefault("meta", {})[step.name + "." + field] = \
                        rep[field]
        elif rep:
            suite.setdefault("raw", {})[step.name] = rep
        yield suite
    suite["comparisons"] = report.compare(suite["records"])
    suite["seconds"] = round(time.time() - start, 1)
    verdicts = [s for s in suite["steps"] if not s.get("passed")]
    if any(not str(s.get("rc")).startswith("skipped") for s in verdicts):
        suite["status"] = "FAIL"
    elif verdicts:
        suite["status"] = "incomplete"
    yield suite


def run(args):
    build = find_build(args)
    if args.dry_run:
        return dry_run(args, build)
    device = step_runner.query_device()
    gpu = step_runner.gpu_kind(device.get("name"))
    out_dir = os.path.join(os.path.abspath(args.out), gpu)
    log_dir = os.path.join("/tmp/tessel-device-logs", gpu)
    shutil.rmtree(log_dir, ignore_errors=True)  # logs.tgz: this run's only
    for d in (out_dir, log_dir):
        os.makedirs(d, exist_ok=True)
    env = step_runner.environment(build)
    stamp = step_runner.load_json(os.path.join(build, stage.STAMP)) or {}
    started = time.time()
    results = {"harness": "bench/device.py", "command": " ".join(
        ["bench/device.py", "run"] + args.suites +
        (["--quick"] if args.quick else [])), "gpu": gpu, "device": device,
        "started": datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S"),
        "quick": args.quick, "stage": stamp, "suites": {}}
    path = os.path.join(out_dir, "results.json")
    print("{} ({}), build {}, commit {}".format(
        gpu, device.get("name", "no nvidia-smi"), build,
        stamp.get("commit", "?")[:12]), flush=True)
    for name in args.suites:
        for suite in run_suite(name, args, build, env, log_dir,
                               started + args.budget):
            results["suites"][name] = suite
            results["seconds"] = round(time.time() - started, 1)
            write_json(path, results)
    records = [r for s in results["suites"].values() for r in s["records"]]
    results["chart"] = chart.draw(records, os.path.join(out_dir, "results"),
                                  "{} {}".format(gpu, device.get("name", "")))
    write_json(path, results)
    subprocess.run(["tar", "-czf", os.path.join(out_dir, "logs.tgz"), "-C",
                    os.path.dirname(log_dir), gpu])
    print(report.summary(results))
    print(results["chart"])
    print("results: " + path)
    return 1 if any(s["status"] == "FAIL"
                    for s in results["suites"].values()) else 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.action == "stage":
        return stage.stage(args.suites, os.path.abspath(args.build),
                           args.max_mib)
    if args.action == "run":
        return run(args)
    return results_index.save(args.dir, args.into)


if __name__ == "__main__":
    sys.exit(main())
