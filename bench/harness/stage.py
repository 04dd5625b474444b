"""Copies the binaries some suites run out of the build folder into
.probe/stage/build (git-ignored), laid out as the build folder is, with the
shared libraries a bare GPU machine lacks (tools/bundle-runtime-libs.sh), so
that the device tool can carry it (64 MiB for the whole working tree).
Over --max-mib the folder is packed as .probe/stage/build.tar.xz instead;
`run` unpacks it. Either way the carry path is .probe/stage."""

import datetime
import glob
import json
import os
import shutil
import subprocess

from harness import suites as suite_table
from harness.steps import ROOT

STAGE = os.path.join(ROOT, ".probe", "stage")
STAMP = "STAGED.json"  # what was staged, from which commit


def wanted(names, build):
    """Build-relative paths of the binaries the suites need, and those the
    build folder lacks."""
    found, missing = [], []
    for name in names:
        for pattern in suite_table.binaries(name):
            hits = sorted(glob.glob(os.path.join(build, pattern)))
            if not hits:
                missing.append(pattern)
            for hit in hits:
                rel = os.path.relpath(hit, build)
                if rel not in found:
                    found.append(rel)
    return found, missing


def tree_mib(path):
    total = 0
    for base, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(base, f)) for f in files
                     if not os.path.islink(os.path.join(base, f)))
    return total / 2**20


def git(*args):
    proc = subprocess.run(["git"] + list(args), cwd=ROOT, capture_output=True,
                          text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def stage(names, build, max_mib):
    found, missing = wanted(names, build)
    if missing:
        targets = sorted({os.path.basename(m) for m in missing})
        print("not built: " + ", ".join(missing))
        print("build them: flock /tmp/tessel-build.lock cmake --build {} "
              "--target {}".format(os.path.relpath(build, ROOT),
                                   " ".join(targets)))
        return 1
    subprocess.run([os.path.join(ROOT, "tools", "bundle-runtime-libs.sh"),
                    build], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(STAGE, ignore_errors=True)
    dst = os.path.join(STAGE, "build")
    for rel in found:
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(os.path.join(build, rel), os.path.join(dst, rel))
    shutil.copytree(os.path.join(build, "runtime-libs"),
                    os.path.join(dst, "runtime-libs"))
    stamp = {"suites": names, "files": found,
             "commit": git("rev-parse", "HEAD"),
             "uncommitted_changes": bool(git("status", "--porcelain",
                                             "--untracked-files=no")),
             "staged": datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")}
    with open(os.path.join(dst, STAMP), "w") as f:
        json.dump(stamp, f, indent=1)
    size = tree_mib(dst)
    print("staged {} binaries + {} libraries for {}: {:.1f} MiB in {}".format(
        len(found), len(os.listdir(os.path.join(dst, "runtime-libs"))),
        " ".join(names), size, os.path.relpath(dst, ROOT)))
    if size > max_mib:
        packed = os.path.join(STAGE, "build.tar.xz")
        subprocess.run(["tar", "-cJf", packed, "-C", STAGE, "build"],
                       check=True)
        shutil.rmtree(dst)
        size = os.path.getsize(packed) / 2**20
        print("over {} MiB: packed as {} ({:.1f} MiB); run unpacks it".format(
            max_mib, os.path.relpath(packed, ROOT), size))
    whl = os.path.join(ROOT, ".whl")
    extra = ""
    if os.path.isdir(whl):
        extra = ' + .whl ({:.1f} MiB)'.format(tree_mib(whl))
    print("carry: .probe/stage ({:.1f} MiB){}; the device tool's limit is 64 "
          "MiB with the working tree".format(size, extra))
    print("device command: python3 bench/device.py run {} --out $OUT".format(
        " ".join(names)))
    return 0


def unpack(stage_dir, where):
    """The staged build folder: stage_dir/build, else stage_dir's tarball
    unpacked into WHERE; None when neither is there."""
    if os.path.isdir(os.path.join(stage_dir, "build")):
        return os.path.join(stage_dir, "build")
    packed = os.path.join(stage_dir, "build.tar.xz")
    if not os.path.isfile(packed):
        return None
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    subprocess.run(["tar", "-xJf", packed, "-C", where], check=True)
    return os.path.join(where, "build")
