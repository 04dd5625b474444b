#!/usr/bin/env bash
# One device call over several staged builds (tools/dev/stage_branch.sh):
# each entry NAME:LIMIT runs .probe/NAME/device.sh on .probe/NAME/build (or,
# where that script is absent, tools/dev/s10_NAME_device.sh on
# .probe/main/build) under its time limit; every log is tarred into
# $OUT/call.tgz and each script's last lines print at the end.
#   OUT=/tmp/o tools/dev/s10_call.sh cluster:110 rows:90 s9_gemm_suite:170
set -u
root=${OUT:-/tmp/call}
mkdir -p "$root/w"
for e in "$@"; do
  name=${e%%:*}; lim=${e##*:}
  if [ -f "tools/dev/$name.sh" ]; then  # a script of tools/dev by name
    script=tools/dev/$name.sh; S=.probe/main/build
  elif [ -f ".probe/$name/device.sh" ]; then
    script=.probe/$name/device.sh; S=.probe/$name/build
  else
    script=tools/dev/s10_${name}_device.sh; S=.probe/main/build
  fi
  t=$SECONDS
  OUT=$root/w DEADLINE=$((lim - 10)) timeout "$lim" bash "$script" "$S" >"$root/w/$name.stdout" 2>&1
  echo "== $name rc=$? $((SECONDS - t))s" >>"$root/summary.txt"
done
(cd "$root/w" && tar -czf ../call.tgz .)
for e in "$@"; do name=${e%%:*}; echo "######## $name"; tail -30 "$root/w/$name.stdout"; done
cat "$root/summary.txt"
