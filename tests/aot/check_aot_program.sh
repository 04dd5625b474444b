#!/usr/bin/env bash
# An ahead-of-time program: its dynamic dependencies name no NVRTC, Abseil
# or libcuda (the driver is dlopen'd); it runs and matches (exit 0) on a GPU,
# and without one says so and exits 3.
#   tests/aot/check_aot_program.sh build/release/tests/aot/aot_quickstart
set -uo pipefail
program=${1:?usage: $0 <aot program>}
if deps=$(ldd "$program" 2>&1) && grep -Ei 'nvrtc|absl|libcuda' <<<"$deps"; then
  echo "check_aot_program: $program links the above" >&2
  exit 1
fi
if readelf -d "$program" | grep NEEDED | grep -Ei 'nvrtc|absl|libcuda'; then
  echo "check_aot_program: $program needs the above" >&2
  exit 1
fi
out=$("$program" 2>&1)
status=$?
echo "$out"
if [[ $status == 0 ]]; then exit 0; fi
if [[ $status == 3 && "$out" == *"no GPU to run on"* ]]; then exit 0; fi
echo "check_aot_program: $program exited $status" >&2
exit 1
