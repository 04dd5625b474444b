#!/usr/bin/env bash
# The README's first command: installs what is missing, builds tessel
# (Release), and runs the demo. Works with or without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
.ci/setup
cmake --preset release >/dev/null
cmake --build --preset release
exec build/release/samples/tessel-demo "$@"
