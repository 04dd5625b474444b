"""The peers of `samples/grouped_gemm --bench --size bench` (bench/peers.py
grouped_gemm): a MoE grouped GEMM, C[rows of g] = A[rows of g] B[g]^T, f16,
B [G, N, K], ragged group sizes (a quarter of the groups 0 or 1 row).

- "torch_matmul_per_group": one torch.matmul (cuBLAS) per non-empty group
  into C's rows, all G calls timed as one step, as a MoE layer without a
  grouped kernel runs (the group sizes read on the host first, which a real
  layer pays too but is not timed here). The issue-46 peer.
- "torch_grouped_mm": torch._grouped_mm (one grouped kernel, offsets on the
  device) where this torch has it; an error record where not.

The group sizes are samples/grouped_gemm.cc's RaggedGroupRows (the same
32-bit LCG), so the records pair with tessel's on (kernel, pass, variant,
dtype, size).
"""

BENCH = [(8, 2048, 4096), (8, 128, 4096), (64, 1024, 2048), (64, 128, 2048)]


def ragged_group_rows(groups, mean, with_empty=True, seed=1):
    """samples/grouped_gemm.cc RaggedGroupRows, step for step."""
    mask = 0xFFFFFFFF
    x = (seed * 2654435761 + 12345) & mask
    rows = []
    for g in range(groups):
        x = (x * 1664525 + 1013904223) & mask
        r = x >> 8
        if with_empty and g % 4 == 1:
            rows.append((g // 4) % 2)
            continue
        n = mean // 2 + r % (mean + 1)
        if n % 64 == 0:
            n += 1
        rows.append(n)
    return rows


def parse_grouped_shapes(text):
    """"G,mean,N;..." (K = N) -> [(G, mean, N)]."""
    out = []
    for item in filter(None, text.split(";")):
        g, mean, n = (int(x) for x in item.split(","))
        out.append((g, mean, n))
    return out


def bench_grouped_gemm(torch, timer, shapes, record, error_record, log):
    out = []
    for groups, mean, n in shapes:
        k = n
        rows = ragged_group_rows(groups, mean)
        total = sum(rows)
        used = sum(1 for r in rows if r > 0)
        shape = {"G": groups, "rows": total, "max_rows": max(rows), "N": n,
                 "K": k}
        size = "G{} rows{} N{} K{}".format(groups, total, n, k)
        flops = 2.0 * total * n * k
        bytes_ = 2.0 * (total * k + used * n * k + total * n)
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = torch.rand(total, k, device="cuda", generator=gen,
                       dtype=torch.float16) * 2 - 1
        b = torch.rand(groups, n, k, device="cuda", generator=gen,
                       dtype=torch.float16) * 2 - 1
        c = torch.empty(total, n, device="cuda", dtype=torch.float16)
        starts = [0]
        for r in rows:
            starts.append(starts[-1] + r)
        offsets = torch.tensor(starts[1:], device="cuda", dtype=torch.int32)

        def per_group():
            for g in range(groups):
                lo, hi = starts[g], starts[g + 1]
                if hi > lo:
                    torch.matmul(a[lo:hi], b[g].t(), out=c[lo:hi])

        def grouped_mm():
            return torch._grouped_mm(a, b.transpose(-2, -1), offs=offsets)

        for impl, fn in (("torch_matmul_per_group", per_group),
                         ("torch_grouped_mm", grouped_mm)):
            args = ("grouped_gemm", impl, "fwd", "NT", shape, flops, bytes_)
            try:
                if impl == "torch_grouped_mm":
                    ref = torch.empty_like(c)
                    per_group()
                    ref.copy_(c)
                    got = grouped_mm()
                    err = (got.float() - ref.float()).abs().max().item()
                    if err > 0.5:
                        raise RuntimeError("max |error| {} against the "
                                           "per-group matmuls".format(err))
                r = record(*args, timer(fn))
            except Exception as exc:  # no _grouped_mm in this torch
                r = error_record(*args, exc)
            r["size"] = size
            log(r)
            out.append(r)
        del a, b, c
        torch.cuda.empty_cache()
    return out
