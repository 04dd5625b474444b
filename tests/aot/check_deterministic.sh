#!/usr/bin/env bash
# tessel-aot's output for a manifest is the same bytes every time: two runs,
# each compiling afresh (TESSEL_CACHE=off), write identical files.
#   tests/aot/check_deterministic.sh <tessel-aot> <manifest> <scratch dir>
set -euo pipefail
tool=${1:?usage: $0 <tessel-aot> <manifest> <scratch>}
manifest=${2:?}
scratch=${3:?}
rm -rf "$scratch"
for run in 1 2; do
  TESSEL_CACHE=off "$tool" --manifest "$manifest" --arch sm_90a,sm_80 \
    --out-dir "$scratch/$run" --name kernels
done
diff -r "$scratch/1" "$scratch/2"
echo "check_deterministic: two runs wrote the same $(cat "$scratch"/1/* | wc -c) bytes"
