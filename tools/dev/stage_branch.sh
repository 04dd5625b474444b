#!/usr/bin/env bash
# Stages a helper worktree's build for one device call beside main's:
# the named build outputs (stripped) and the runtime libraries under
# .probe/<name>/build, and the branch's tools/dev/s10_<name>_device.sh as
# .probe/<name>/device.sh. Several branches then travel in one `carry`
# (.probe) without merging them first.
#   tools/dev/stage_branch.sh /work/wt/cluster cluster samples/gemm bench/cublas_gemm
set -euo pipefail
wt=${1:?worktree}; name=${2:?name}; shift 2
cd "$(dirname "$0")/../.."
dst=.probe/$name/build
rm -rf ".probe/$name" && mkdir -p "$dst"
b=$wt/build/release
(cd "$b" && cp --parents "$@" "$OLDPWD/$dst/")
# The same Debian libraries as main's build (tools/bundle-runtime-libs.sh).
cp -r build/release/runtime-libs "$dst/"
for f in "$@"; do strip "$dst/$f" 2>/dev/null || true; done
cp "$wt/tools/dev/s10_${name}_device.sh" ".probe/$name/device.sh" 2>/dev/null || true
du -sh ".probe/$name"
