# Sourced by the session-13 device scripts: how a step runs and is logged.
# Needs O (the log folder) and deadline (seconds since the script began).
#   step NAME LIMIT CMD...  alone on the GPU; skipped when fewer than 15 s
#                           are left before the deadline; the sample's
#                           table rows (" gpu ") go to $O/bench.txt
#   par NAME LIMIT CMD...   in the background (wait for them with `wait`)
# Both write "NAME rc=.. seconds" to $O/summary.txt and the output to
# $O/NAME.log.
step() {
  local n=$1 lim=$2 t=$SECONDS; shift 2
  if ((SECONDS + 15 > deadline)); then
    echo "$n skipped (deadline)" >>"$O/summary.txt"
    return
  fi
  timeout "$lim" "$@" >"$O/$n.log" 2>&1
  printf '%-40s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$O/summary.txt"
  grep -h " gpu " "$O/$n.log" | sed "s|^|$n: |" >>"$O/bench.txt"
}
par() {
  local n=$1 lim=$2; shift 2
  (t=$SECONDS; timeout "$lim" "$@" >"$O/$n.log" 2>&1
   printf '%-40s rc=%-3s %4ss\n' "$n" "$?" "$((SECONDS - t))" >>"$O/summary.txt") &
}
# use_stage STAGE CACHE: the staged build's libraries, the repo as tessel's
# source folder, CACHE as the kernel cache.
use_stage() {
  export LD_LIBRARY_PATH=$1/runtime-libs:/usr/local/cuda/lib64
  export TESSEL_SOURCE_DIR=$PWD TESSEL_CACHE_DIR=$2
}
# begin_call STAGE NAME CACHE: the call's log folder $O=$TOP/NAME (TOP:
# $OUT), the staged build's libraries and CACHE as the kernel cache, a fresh
# $O/summary.txt, $san (compute-sanitizer, errors exit 99; add the tool).
begin_call() {
  TOP=${OUT:-/tmp/out}
  O=$TOP/$2
  mkdir -p "$O"
  use_stage "$1" "$3"
  san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
  : >"$O/summary.txt"
}
# end_call NAME: the sample checks' pass / FAIL counts and the sanitizer
# summaries (logs chk-*, mem-*, race-*, sync-*), then NAME_table.txt (the
# summary, the checks, bench.txt) printed and the folder tarred.
end_call() {
  grep -h " gpu " "$O"/chk-*.log | awk '{print $NF}' | sort | uniq -c >"$O/checks.txt"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/mem-*.log "$O"/race-*.log \
    "$O"/sync-*.log >>"$O/checks.txt" 2>/dev/null
  cat "$O/summary.txt" "$O/checks.txt" "$O/bench.txt" >"$TOP/$1_table.txt"
  (cd "$TOP" && tar -czf "$1.tar.gz" "$1" && rm -rf "$1")
  cat "$TOP/$1_table.txt"
}
