#!/usr/bin/env bash
# Fails when a file includes a header its layer may not see (docs/ir.md,
# "Layers"). Checks the quoted includes of every tracked C++ file against
# the rules below: for each folder, what it may include besides itself.
# A rule names a folder ("src/ir/") or one header ("tessel/target.h");
# third-party includes (absl/, nlohmann/, ...) are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

# The public headers (include/tessel/) by the layer that implements them.
pub_ir="tessel/dtype.h tessel/status_macros.h"
pub_base="$pub_ir tessel/target.h"
pub_dsl="tessel/builder.h tessel/expr.h tessel/program.h"
pub_interp="tessel/host_tensor.h tessel/interpret.h"
pub_runtime="tessel/compile.h tessel/device.h tessel/runtime.h tessel/version.h"
# The lowered IR and the plans the passes hand to the codegen.
passes_output="src/passes/lowering_state.h src/passes/fragment_layout.h
  src/passes/intrinsics.h"

# folder | what it may include (besides its own folder)
rules="
jit/            |
include/tessel/ | tessel/
src/ir/         | $pub_ir
src/dsl/        | src/ir/ $pub_ir $pub_dsl
src/interp/     | src/ir/ $pub_ir tessel/program.h $pub_interp
src/passes/     | src/ir/ $pub_base
src/codegen/    | src/ir/ $passes_output jit/ $pub_base
src/runtime/    | src/ir/ src/dsl/ src/interp/ src/passes/ src/codegen/ jit/
                  $pub_base $pub_dsl $pub_interp $pub_runtime
src/profiler/   | jit/ $pub_base $pub_runtime tessel/profiler.h
                  tessel/bench_report.h
src/registry/   | tessel/
src/autotune/   | jit/ tessel/
src/testing/    | tessel/
src/aot_runtime/ | tessel/aot_runtime.h
samples/        | tessel/
bench/          | jit/ tessel/ tools/lowering.h tools/manifest.h
                  tools/warmup_driver.h tools/shard.h
tools/          | jit/ tessel/ src/runtime/lower.h src/runtime/aot_plan.h
                  tests/dsl/seed_programs.h
"
# Roots an include can name; anything else is a third-party header.
roots="src/ jit/ tessel/ samples/ tools/ bench/ tests/"

declare -A allowed
folders=()
while IFS= read -r line; do
  [[ -z "${line// /}" ]] && continue
  if [[ "$line" == *"|"* ]]; then
    folder="${line%%|*}"
    folder="${folder// /}"
    folders+=("$folder")
    allowed[$folder]="${line#*|}"
  else
    allowed[$folder]+=" $line"
  fi
done <<<"$rules"

# The rule of a file: its longest matching folder.
rule_of() {
  local best=""
  for f in "${folders[@]}"; do
    [[ "$1" == "$f"* && ${#f} -gt ${#best} ]] && best="$f"
  done
  echo "$best"
}

# The folder's own headers: include/tessel/ is included as tessel/.
own_prefix() {
  [[ "$1" == "include/tessel/" ]] && echo "tessel/" || echo "$1"
}

is_rooted() {
  for r in $roots; do [[ "$1" == "$r"* ]] && return 0; done
  return 1
}

failures=0
checked=0
while IFS= read -r file; do
  folder=$(rule_of "$file")
  [[ -z "$folder" ]] && continue
  own=$(own_prefix "$folder")
  checked=$((checked + 1))
  while IFS=: read -r lineno header; do
    is_rooted "$header" || continue
    [[ "$header" == "$own"* ]] && continue
    ok=0
    for a in ${allowed[$folder]}; do
      [[ "$header" == "$a"* ]] && ok=1 && break
    done
    if ((!ok)); then
      echo "$file:$lineno: includes \"$header\"; $folder may include" \
        "only itself and:" ${allowed[$folder]:-nothing}
      failures=$((failures + 1))
    fi
  done < <(grep -noE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' \
    "$file" | sed -E 's/^([0-9]+):.*"([^"]+)"/\1:\2/')
done < <(git ls-files '*.h' '*.cc' '*.cpp' '*.cu' '*.cuh')

if ((failures)); then
  echo "check-layers: $failures forbidden includes"
  exit 1
fi
echo "check-layers: $checked files keep to their layers"
