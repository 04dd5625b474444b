"""Session 10: does the L2 flush's fill value change a timed kernel's time?

tessel's do_bench flushes with cuMemsetD32Async(++value) and triton's
do_bench with cache.zero_(); the same rmsnorm kernel measured 33.3 us under
ncu for both, yet 0.0396 against 0.0366 ms under events. This times
torch.compile's rms_norm and a copy at 4096x8192 f16 with each flush.
"""
import torch
import torch.nn.functional as F

x = torch.randn(4096, 8192, device="cuda", dtype=torch.float16)
w = torch.randn(8192, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
rms = torch.compile(lambda t: F.rms_norm(t, (8192,), w, 1e-6))
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
flush32 = flush.view(torch.int32)
counter = [0]


def zero():
    flush.zero_()


def ones():
    flush32.fill_(1)


def counting():
    counter[0] += 1
    flush32.fill_(counter[0])


def none():
    pass


def bench(fn, flusher, reps=400):
    for _ in range(50):
        flusher()
        fn()
    torch.cuda.synchronize()
    s = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flusher()
        s[i].record()
        fn()
        e[i].record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) for a, b in zip(s, e))
    return t[len(t) // 2]


cases = {"rmsnorm compile": lambda: rms(x), "copy": lambda: y.copy_(x)}
print(f"{'kernel':18} {'zero_':>9} {'fill 1':>9} {'fill n':>9} {'none':>9}")
for name, fn in cases.items():
    r = [bench(fn, f) for f in (zero, ones, counting, none)]
    print(f"{name:18} " + " ".join(f"{v:9.4f}" for v in r))
