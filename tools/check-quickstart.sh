#!/usr/bin/env bash
# Builds the quickstart (docs/quickstart.md) the way a user does: installs a
# build into a scratch prefix, configures the installed example
# (<prefix>/share/tessel/examples/quickstart) with find_package(tessel),
# builds it and runs it on the CPU target (or --target=gpu). Also checks that
# the program in docs/quickstart.md is examples/quickstart/quickstart.cc.
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
