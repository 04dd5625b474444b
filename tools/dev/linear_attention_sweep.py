#!/usr/bin/env python3
"""The linear attention tile sweep for one H200 call (issue #6).

  tools/dev/linear_attention_sweep.py stage   # here: binaries, Abseil libs,
                                              # warmed kernel cache, run.sh
  device run: bash .probe/linattn/run.sh      carry [".probe/linattn"]

`stage` (no GPU) copies build/release's linear_attention and
samples_gpu_test with their runtime libraries into .probe/linattn (git-ignored),
compiles every kernel of the sweep with tessel-warmup into .probe/linattn/cache
(the device then compiles nothing) and writes run.sh. run.sh checks every
config against the float64 reference at a ragged small size, times every
config at the issue's sizes (B=8 S=4096: H=16 D=128, H=32 D=64; one process
per size, so the inputs are made once), runs samples_gpu_test's linear
attention cases, and leaves $OUT/summary.txt (ms per config; whole workload
and kernel) and $OUT/logs.tgz. About 3 minutes on the H200.
Entries: PASS/chunk:block_k:block_v:threads:stages[+backward tiles], as
samples/linear_attention --configs takes them.
"""
import json
import os
import shutil
import subprocess
import sys

B, S = 8, 4096
CHECK = (2, 300, 3)  # B, S, H of the GPU checks (S ragged)
SWEEP = {  # (H, D) -> entries
    (16, 128): [
        'fwd/64:128:64:128:2', 'fwd/64:128:64:128:3', 'fwd/64:128:128:256:2',
        'fwd/64:128:64:256:2', 'fwd/64:128:32:128:2', 'fwd/32:128:64:128:3',
        'fwd/64:64:64:128:2', 'fwd/64:64:64:128:1',
        'fwd_mbarrier/64:128:64:128:2',
        'fwd_chunked/64:128:64:128:2', 'fwd_chunked/64:64:64:128:2',
        'fwd_chunked/64:128:128:256:2',
        'bwd/64:64:64:128:2', 'bwd/64:128:64:128:2', 'bwd/64:128:128:256:2',
        'bwd/64:64:128:128:2', 'bwd/64:128:128:256:1', 'bwd/64:64:64:128:1',
        'fwd+bwd/64:128:64:128:2+128:128:256:2',
        'fwd+bwd/64:128:64:128:2+64:64:128:2',
    ],
    (32, 64): [
        'fwd/64:64:64:128:2', 'fwd/64:64:64:128:3', 'fwd/64:64:64:128:4',
        'fwd/64:64:32:128:2', 'fwd/64:64:64:256:2', 'fwd/32:64:64:128:3',
        'fwd/32:64:32:128:3',
        'fwd_mbarrier/64:64:64:128:2',
        'fwd_chunked/64:64:64:128:2', 'fwd_chunked/64:64:32:128:2',
        'bwd/64:64:64:128:2', 'bwd/64:64:64:256:2', 'bwd/64:64:64:128:3',
        'bwd/64:64:32:128:2', 'bwd/32:64:64:128:2',
        'fwd+bwd/64:64:64:128:2+64:64:128:2',
        'fwd+bwd/64:64:32:128:2+64:64:128:2',
    ],
}
KERNELS = {
    'fwd': ['linear_attention_fwd'],
    'fwd_mbarrier': ['linear_attention_fwd_mbarrier'],
    'fwd_chunked': ['linear_attention_chunk_states',
                    'linear_attention_chunk_output'],
    'bwd': ['linear_attention_bwd'],
}


def parse(entry):
    """(pass, chunk, [(block_k, block_v, threads, stages) per kernel pass])."""
    pass_, tiles = entry.split('/')
    halves = [list(map(int, h.split(':'))) for h in tiles.split('+')]
    chunk = halves[0][0]
    fwd = tuple(halves[0][1:])
    bwd = tuple(halves[1]) if len(halves) > 1 else fwd
    if pass_ == 'fwd+bwd':
        return chunk, [('fwd', fwd), ('bwd', bwd)]
    return chunk, [(pass_, fwd)]


def manifest():
    kernels = []

    def add(name, **params):
        if {'name': name, 'params': params} not in kernels:
            kernels.append({'name': name, 'params': params})

    def config(pass_, b, s, h, d, chunk, tiles):
        bk, bv, threads, stages = tiles
        for name in KERNELS[pass_]:
            add(name, B=b, S=s, H=h, DK=d, DV=d, chunk=chunk, block_k=bk,
                block_v=bv, threads=threads, num_stages=stages)
        atomic = bk < d if pass_ in ('fwd', 'fwd_mbarrier') else (
            pass_ == 'bwd' and (bk < d or bv < d))
        if atomic:
            add('zero_tensor', n=b * s * h * d, dtype='f32')
            add('cast_tensor', n=b * s * h * d, **{'from': 'f32', 'to': 'f16'})

    for (h, d), entries in SWEEP.items():
        for entry in entries:
            chunk, parts = parse(entry)
            for b, s, hh in ((B, S, h), CHECK):
                for pass_, tiles in parts:
                    config(pass_, b, s, hh, d, chunk, tiles)
    # samples_gpu_test's linear attention cases (tests/samples/sample_cases.cc)
    three = ('fwd', 'fwd_mbarrier', 'bwd')
    cases = [(three, 1, 128, 2, 64, (64, 64, 128, 2)),
             (('fwd', 'bwd'), 1, 128, 1, 64, (64, 64, 128, 2)),
             (three, 2, 100, 1, 64, (64, 64, 128, 2)),
             (three, 1, 64, 1, 128, (64, 64, 128, 2)),
             (three, 1, 150, 1, 128, (128, 64, 128, 2)),
             (three, 1, 200, 1, 64, (64, 64, 128, 3)),
             (three, 1, 128, 1, 64, (32, 32, 128, 1)),
             (('fwd_chunked',), 1, 150, 2, 64, (64, 64, 128, 2)),
             (('fwd_chunked',), 1, 128, 1, 128, (64, 64, 128, 2))]
    for passes, b, s, h, d, tiles in cases:
        for pass_ in passes:
            config(pass_, b, s, h, d, 64, tiles)
    return {'version': 1, 'kernels': kernels}


def run_script():
    lines = [
        '#!/usr/bin/env bash', 'set -u',
        'R=$PWD; P=$PWD/.probe/linattn; L=/tmp/linattn_logs',
        'export LD_LIBRARY_PATH=$P/runtime-libs:/usr/local/cuda/lib64',
        'export TESSEL_CACHE_DIR=/tmp/tc TESSEL_REQUIRE_GPU=1 '
        'TESSEL_SOURCE_DIR=$PWD',
        'mkdir -p /tmp/tc $L && cp -r $P/cache/. /tmp/tc/',
        'LA=$P/bin/linear_attention',
        'nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader '
        '> $L/gpu.txt 2>&1',
        # $OUT keeps two files at any time (summary, logs): what is there
        # when a step runs out of time still comes back.
        'pack() { python3 $P/summary.py $L > $OUT/summary.txt; '
        'tar czf $OUT/logs.tgz -C $L .; }',
    ]
    cb, cs, ch = CHECK
    for (h, d), entries in SWEEP.items():
        for part in range(3):
            sub = ','.join(entries[part::3])
            log = f'$L/check_{d}_{part}.log'
            lines.append(
                f'( timeout 150 $LA --backend=gpu --check '
                f'--size={cb}x{cs}x{ch}x{d} --configs={sub} > {log} 2>&1; '
                f'echo "rc=$?" >> {log} ) &')
    lines.append('wait; echo "checks done at ${SECONDS}s" >> $L/times.txt; pack')
    for (h, d), entries in SWEEP.items():
        log = f'$L/bench_{d}.log'
        lines.append(
            f'timeout 95 $LA --backend=gpu --bench --size={B}x{S}x{h}x{d} '
            f'--configs={",".join(entries)} > {log} 2>&1; '
            f'echo "bench D{d} rc=$? at ${{SECONDS}}s" >> $L/times.txt; pack')
    lines.append(
        'timeout $((228 - SECONDS)) $P/bin/samples_gpu_test '
        '--gtest_filter="*inear*" > $L/gtest.log 2>&1; '
        'echo "gtest rc=$? at ${SECONDS}s" >> $L/times.txt; pack')
    lines.append('cat $OUT/summary.txt')
    return '\n'.join(lines) + '\n'


SUMMARY = r'''# One line per timed config; checks; times.
import glob, os, re, sys
os.chdir(sys.argv[1])
for f in sorted(glob.glob('bench_*.log')):
    text = open(f).read()
    for m in re.finditer(r'^timed linear_attention_(\S+) B=\d+ S=\d+ H=(\d+) '
                         r'DK=(\d+) \S+ f16: (\S+) ms \(kernel (\S+) ms\)',
                         text, re.M):
        print('%-44s H%-3s D%-4s %8.4f ms  kernel %8.4f ms' % (
            m.group(1), m.group(2), m.group(3), float(m.group(4)),
            float(m.group(5))))
    if 'kernel ' not in text.split('timed')[-1]:
        print(f, 'tail:', text[-300:].replace('\n', ' | '))
for f in sorted(glob.glob('check_*.log')):
    text = open(f).read()
    print(f, 'pass', len(re.findall(r' pass$', text, re.M)), 'FAIL',
          len(re.findall(r' FAIL$', text, re.M)), text.strip().split('\n')[-1])
for f in ('times.txt', 'gpu.txt'):
    if os.path.exists(f): print(open(f).read().strip())
if os.path.exists('gtest.log'):
    print('\n'.join(l for l in open('gtest.log') if 'PASSED' in l or 'FAILED' in l))
'''


def stage(root):
    build = os.path.join(root, 'build/release')
    out = os.path.join(root, '.probe/linattn')
    # The kernel cache stays: warmup compiles only what it lacks.
    for old in ('bin', 'runtime-libs'):
        shutil.rmtree(os.path.join(out, old), ignore_errors=True)
    os.makedirs(os.path.join(out, 'bin'))
    subprocess.run([os.path.join(root, 'tools/bundle-runtime-libs.sh'), build],
                   check=True, stdout=subprocess.DEVNULL)
    for b in ('samples/linear_attention', 'tests/samples/samples_gpu_test'):
        shutil.copy2(os.path.join(build, b), os.path.join(out, 'bin'))
    shutil.copytree(os.path.join(build, 'runtime-libs'),
                    os.path.join(out, 'runtime-libs'))
    with open(os.path.join(out, 'manifest.json'), 'w') as f:
        json.dump(manifest(), f, indent=1)
    with open(os.path.join(out, 'run.sh'), 'w') as f:
        f.write(run_script())
    with open(os.path.join(out, 'summary.py'), 'w') as f:
        f.write(SUMMARY)
    subprocess.run([os.path.join(build, 'tools/tessel-warmup'), '--manifest',
                    os.path.join(out, 'manifest.json'), '--arch', 'sm_90a',
                    '--cache-dir', os.path.join(out, 'cache')], check=True)
    print('staged', out)


if __name__ == '__main__':
    if sys.argv[1:] != ['stage']:
        sys.exit(__doc__)
    stage(os.path.abspath(os.path.join(os.path.dirname(__file__), '../..')))
