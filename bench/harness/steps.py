"""Running one step on the GPU machine: its environment, its log, and the
verdict (rc, passed, what its log says) recorded in the suite's JSON."""

import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PEER_SITE = "/tmp/tessel-peers-site"  # outside $OUT: it would travel back


def gpu_kind(name):
    """'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA H200' -> 'h200'."""
    m = re.search(r"\b([A-Z]{1,2}\d{2,4})\b", name or "")
    if m:
        return m.group(1).lower()
    slug = re.sub(r"[^a-z0-9]+", "-", (name or "").lower()).strip("-")
    return slug.replace("nvidia-", "") or "unknown-gpu"


def query_device():
    """The first GPU's name, driver and memory from nvidia-smi, or {}."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
             "--format=csv,noheader"], capture_output=True, text=True,
            timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if not out:
        return {}
    name, driver, memory = (list(map(str.strip, out[0].split(","))) +
                            ["", ""])[:3]
    return {"name": name, "driver": driver, "memory": memory}


def environment(build):
    """The staged build's bundled libraries, the toolkit's (cuBLAS,
    compute-sanitizer), one kernel cache, GPU skips turned into failures."""
    env = dict(os.environ)
    cudas = [c for c in (env.get("CUDA_HOME", ""), "/usr/local/cuda") if c]
    libs = [os.path.join(build, "runtime-libs")] + [
        os.path.join(c, d) for c in cudas
        for d in ("lib64", "lib", "targets/x86_64-linux/lib")]
    libs = [d for d in libs if os.path.isdir(d)]
    if env.get("LD_LIBRARY_PATH"):
        libs.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(libs)
    env["PATH"] = os.pathsep.join([os.path.join(c, "bin") for c in cudas] +
                                  [env.get("PATH", "/usr/bin:/bin")])
    env.setdefault("TESSEL_CACHE_DIR", "/tmp/tessel-cache")
    env.setdefault("TESSEL_REQUIRE_GPU", "1")
    env.setdefault("TESSEL_SOURCE_DIR", ROOT)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def ensure_fla(env, wheels):
    """Installs the wheels (offline) unless fla imports; says what it did."""
    probe = subprocess.run(
        [sys.executable, "-c", "import fla.ops.linear_attn"], env=env,
        capture_output=True)
    if probe.returncode == 0:
        return "fla already importable"
    found = sorted(glob.glob(os.path.join(wheels, "*.whl")))
    if not found:
        return "fla not importable and no wheels in " + wheels
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index",
         "--no-deps", "--no-compile", "--no-cache-dir", "--upgrade",
         "--target", PEER_SITE] + found, capture_output=True, text=True)
    if proc.returncode != 0:
        return "pip install of the wheels failed: " + proc.stderr[-500:]
    env["PYTHONPATH"] = PEER_SITE + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    return "installed {} wheels into {}".format(len(found), PEER_SITE)


def expand(argv, build, json_path):
    values = {"build": build, "root": ROOT, "py": sys.executable,
              "json": json_path}
    return [a.format(**values) for a in argv]


def gtest_counts(text):
    """PASSED / FAILED / SKIPPED counts of a gtest log (0 where absent)."""
    def count(word):
        m = re.findall(r"^\[  {} *\] (\d+) tests?".format(word), text, re.M)
        return int(m[-1]) if m else 0
    return {"passed": count("PASSED"), "failed": count("FAILED"),
            "skipped": count("SKIPPED")}


def sanitizer_errors(text):
    """compute-sanitizer's error count, None where it printed none: memcheck
    and synccheck end in "ERROR SUMMARY: N errors", racecheck in
    "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"."""
    m = re.findall(r"ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: .*?\((\d+) "
                   r"error", text)
    return int(next(g for g in m[-1] if g)) if m else None


def verdict(step, rc, text, report):
    """What the step's kind takes as a pass, and the facts behind it."""
    facts = {}
    passed = rc == 0
    if step.kind == "gtest":
        facts["tests"] = gtest_counts(text)
        passed = passed and facts["tests"]["failed"] == 0 and \
            facts["tests"]["passed"] > 0
    elif step.kind == "sanitizer":
        facts["errors"] = sanitizer_errors(text)
        passed = passed and facts["errors"] == 0
    elif step.kind in ("bench", "peers", "raw"):
        facts["json"] = report is not None
        records = (report or {}).get("records", [])
        facts["records"] = len(records)
        facts["error_records"] = sum(1 for r in records if "error" in r)
        passed = passed and report is not None
    return passed, facts


def run(step, argv, env, log_dir, json_path, timeout):
    """Runs argv (output to LOG_DIR/<name>.log); returns the step's record."""
    log_path = os.path.join(log_dir, step.name + ".log")
    env = dict(env, **step.env)
    start = time.time()
    print("== {}: {}".format(step.name, " ".join(argv)), flush=True)
    try:
        with open(log_path, "w") as log:
            rc = subprocess.run(argv, env=env, stdout=log,
                                stderr=subprocess.STDOUT, timeout=timeout,
                                cwd=ROOT).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout after {}s".format(timeout)
    except OSError as exc:
        rc = "not run: {}".format(exc)
    with open(log_path, errors="replace") as log:
        text = log.read()
    report = load_json(json_path) if json_path else None
    passed, facts = verdict(step, rc, text, report)
    record = {"name": step.name, "kind": step.kind, "cmd": argv, "rc": rc,
              "passed": passed, "seconds": round(time.time() - start, 1),
              "log": os.path.basename(log_path)}
    if step.env:
        record["env"] = step.env
    record.update(facts)
    record["log_tail"] = text.splitlines()[-12:]
    print("   rc={} {} {}s".format(rc, "pass" if passed else "FAIL",
                                   record["seconds"]), flush=True)
    return record, report


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
