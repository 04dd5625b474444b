#!/usr/bin/env bash
# Copies the shared libraries a build's binaries need but a bare GPU machine
# lacks (Debian's Abseil, xxHash) into <build>/runtime-libs, so that the build
# folder runs there with LD_LIBRARY_PATH=<build>/runtime-libs.
#   tools/bundle-runtime-libs.sh build/release
set -euo pipefail
build=${1:?usage: $0 <build-dir>}
out="$build/runtime-libs"
mkdir -p "$out"
find "$build" -type f -executable ! -path "$out/*" ! -name '*.so*' -print0 |
  xargs -0 -r ldd 2>/dev/null |
  awk '/libabsl|libxxhash|libgtest|libgmock|libbenchmark/ && $3 ~ /^\// {print $3}' |
  sort -u | xargs -r -I{} cp -L {} "$out/"
echo "$(ls "$out" | wc -l) libraries in $out ($(du -sh "$out" | cut -f1))"
