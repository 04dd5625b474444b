#!/ usr / bin / env bash
#Issue 16's H200 call(~6 minutes) : the flash attention GPU gtest cases
#(GQA, LSE, backward, fwd + bwd against float64), the sample's checks at
#ragged sizes, compute - sanitizer memcheck / racecheck on small sizes, then
#the benches with the SDPA peers(GQA and fwd + bwd included).
#Argument : the staged build(tools / dev / stage_device.sh); writes into $OUT.
set - u S = $ { 1 : ? staged build folder }
export LD_LIBRARY_PATH =
    $S / runtime -
    libs : / usr / local / cuda / lib64 export TESSEL_SOURCE_DIR =
        $PWD TESSEL_CACHE_DIR = / tmp / tc TESSEL_REQUIRE_GPU = 1 fa =
                                    $S / samples / flash_attention log() {
  printf '%-34s rc=%-3s %4ss\n' "$1" "$2" "$3" >>"$OUT/summary.txt";
}
run() {
#name timeout command... local n = $1 lim = $2 t = $SECONDS;
  shift 2 timeout
      "$lim"
      "$@" > "$OUT/$n.log" 2 > &1;
  log "$n" $ ? $((SECONDS - t))
}
run gpu_test 240 $S/tests/samples/samples_gpu_test --gtest_filter='*flash*'
for p in fwd bwd fwd+bwd;
do
  for
    D in 64 128;
do
    run "check-$p-D$D" 60 $fa --backend=gpu --check --pass=$p --size=2x333x4x$D
    run "check-$p-D$D-gqa" 60 $fa --backend=gpu --check --pass=$p --size=2x333x4x$D --heads-kv=2
  done
done
san="compute-sanitizer --report-api-errors no --error-exitcode 99 --tool"
for tool in memcheck racecheck;
do
  for
    p in fwd + bwd bwd;
do
    run "$tool-$p-D128-gqa" 90 $san $tool $fa --backend=gpu --check --pass=$p --causal=both --size=1x200x2x128 --heads-kv=1
    run "$tool-$p-D64" 90 $san $tool $fa --backend=gpu --check --pass=$p --size=1x200x2x64
  done
done
echo "benches start at ${SECONDS}s" >>"$OUT/summary.txt"
timeout 150 python3 bench/peers.py --only sdpa --attention-passes fwd,fwd+bwd \
  --out "$OUT/peers.json" >"$OUT/peers.log" 2>&1
for p in fwd bwd fwd+bwd;
do
  for
    sz in 8x4096x16x128 8x4096x32x64 "8x4096x32x128 --heads-kv=8";
do
  set-- $sz timeout 60 "$fa" --backend = gpu-- bench-- check = false --pass =
      $p-- size = $1 $ {
    2 : -
  }
--json = "$OUT/flash_${p}_$(echo " $sz " | tr -c 'a-z0-9' _).json" 2 > &1 |
         grep " gpu " | sed "s|^|$p |" >> "$OUT/bench.txt" done done
