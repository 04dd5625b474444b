#!/usr/bin/env bash
# Builds tools/dev/prelude_nvrtc_check (raw NVRTC, no GPU needed) into
# build/dev/ and runs it on the prelude of this checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
mkdir -p build/dev
g++ -O1 -std=c++17 -Wall -Wextra -I"$cuda/include" \
  -DTESSEL_PRELUDE_DIR="\"$PWD/src/codegen/prelude\"" \
  tools/dev/prelude_nvrtc_check.cc -o build/dev/prelude_nvrtc_check \
  -L"$cuda/lib64" -lnvrtc -Wl,-rpath,"$cuda/lib64"
if [ "${1:-}" != "--no-run" ]; then
  build/dev/prelude_nvrtc_check
fi
