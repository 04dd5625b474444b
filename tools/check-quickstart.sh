#!/usr/bin/env bash
# Builds the quickstart (docs/quickstart.md) the way a user does: installs a
# build into a scratch prefix, configures the installed example
# (<prefix>/share/tessel/examples/quickstart) with find_package(tessel),
# builds it and runs it on the CPU target (or --target=gpu). Also checks that
# the program in docs/quickstart.md is examples/quickstart/quickstart.cc.
# Then the AOT quickstart (examples/quickstart_aot, docs/aot.md): its
# generated header compiles on its own, the program links no NVRTC, Abseil
# or libcuda, and its output is byte for byte the JIT kernel's (with
# --target=gpu on the GPU; else the CPU interpreter's, where a GPU runs the
# AOT kernel, and without one the AOT program must say so and exit 3).
#   tools/check-quickstart.sh build/release [--target=cpu|gpu]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: $0 <build-dir> [--target=cpu|gpu]}
target=${2:---target=cpu}

if ! diff -u <(sed -n '/^```cpp$/,/^```$/p' docs/quickstart.md | sed '1d;$d') \
    examples/quickstart/quickstart.cc; then
  echo "check-quickstart: the program in docs/quickstart.md differs from" \
    "examples/quickstart/quickstart.cc" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$scratch/prefix/share/tessel/examples/quickstart" -B "$scratch/build" \
  "${generator[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
"$scratch/build/quickstart" "$target"

aot="$scratch/build-aot"
cmake -S "$scratch/prefix/share/tessel/examples/quickstart_aot" -B "$aot" \
  "${generator[@]}" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
TESSEL_CACHE_DIR="$scratch/cache" cmake --build "$aot" >/dev/null
header="$aot/tessel_aot/quickstart_aot/quickstart_kernels.h"
"${CXX:-c++}" -std=c++20 -fsyntax-only -Wall -Werror -x c++ "$header" \
  -I"$scratch/prefix/include"
tests/aot/check_aot_program.sh "$aot/quickstart_aot" >/dev/null
"$aot/quickstart_jit" "$target" --output "$scratch/jit.bin"
set +e
"$aot/quickstart_aot" --output "$scratch/aot.bin"
status=$?
set -e
if [[ $status == 0 ]]; then
  cmp "$scratch/jit.bin" "$scratch/aot.bin"
  echo "check-quickstart: quickstart_aot's C is byte for byte quickstart_jit's" \
    "($target)"
elif [[ $status == 3 && $target == --target=cpu ]]; then
  echo "check-quickstart: quickstart_aot built and linked without NVRTC; no GPU" \
    "to run it"
else
  echo "check-quickstart: quickstart_aot exited $status" >&2
  exit 1
fi
