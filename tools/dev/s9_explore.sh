#!/usr/bin/env bash
# Session 9's exploration call: each helper's device script in turn, under
# one deadline; every log tarred into $OUT/explore.tgz, the tables last.
set -u
S=${1:?staged build}; shift
export OUT=${OUT:-/tmp/x}/w
mkdir -p "$OUT"
for s in "$@"; do
  name=${s%%:*}; lim=${s##*:}
  t=$SECONDS
  DEADLINE=$((lim - 10)) timeout "$lim" bash "tools/dev/$name.sh" "$S" >"$OUT/$name.stdout" 2>&1
  echo "== $name rc=$? $((SECONDS - t))s" >>"$OUT/../summary.txt"
done
cd "$OUT" && tar -czf ../explore.tgz . 
cd ..
for f in w/*.stdout; do echo "######## $f"; tail -40 "$f"; done
cat summary.txt
