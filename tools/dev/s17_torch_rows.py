"""The row kernels' torch peers for ncu (session 17): torch.compile of
rms_norm, layer_norm and softmax, and a copy-like elementwise kernel
(torch.neg: as many bytes as a copy, as a kernel ncu can time), at the
issue's sizes, f16. Compiles and warms up first; only the timed launches
run between cudaProfilerStart and Stop (ncu --profile-from-start off)."""
import os
import sys

import torch
import torch.nn.functional as F

sizes = [(4096, 8192), (16384, 4096), (8192, 1024)]
reps = int(os.environ.get("REPS", "7"))
cases = []
for m, n in sizes:
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=torch.float16, generator=g)
    w = torch.randn(n, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(n, device="cuda", dtype=torch.float16, generator=g)
    y = torch.empty_like(x)
    # Defaults bind this shape's n, w and b (the lambdas run after the loop).
    rms = torch.compile(lambda t, n=n, w=w: F.rms_norm(t, (n,), w, 1e-6),
                        dynamic=False)
    ln = torch.compile(lambda t, n=n, w=w, b=b: F.layer_norm(t, (n,), w, b, 1e-5),
                       dynamic=False)
    sm = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
    for name, fn in (("neg", lambda x=x, y=y: torch.neg(x, out=y)), ("rmsnorm", rms),
                     ("layernorm", ln), ("softmax", sm)):
        for _ in range(10):
            fn() if name == "neg" else fn(x)
        cases.append((f"{name} {m}x{n}", name, fn, x))
# Once more over all cases: any recompile happens before the range.
for label, name, fn, x in cases:
    fn() if name == "neg" else fn(x)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for label, name, fn, x in cases:
    # A marker kernel between cases keeps ncu's rows easy to split.
    torch.cuda.nvtx.range_push(label)
    for _ in range(reps):
        fn() if name == "neg" else fn(x)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print("order:", [c[0] for c in cases], file=sys.stderr)
