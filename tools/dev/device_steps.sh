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
