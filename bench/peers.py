#!/usr/bin/env python3
"""Times tessel's peers on the GPU machine and writes one JSON report.

  python3 bench/peers.py [--out FILE] [--only sdpa,fla,torch_ref,norms]
                         [--warmup-ms 25] [--rep-ms 100]

- flash attention forward and forward+backward (autograd, o.backward(do)):
  torch.nn.functional.scaled_dot_product_attention with each backend
  (flash, efficient, cudnn), causal and full, also with grouped-query heads
  (--gqa-shapes, enable_gqa=True); the fastest backend is also reported as
  impl "torch_sdpa".
- variable-length flash attention forward ("sdpa_varlen", --varlen-shapes
  H,D:S1,S2,...): sequences packed along one token axis (tessel's
  `flash_attention --varlen`). flash_attn_varlen_func is not installed
  there, so three SDPA forms stand in, each timed causal and full:
  "torch_sdpa_nested" (a jagged nested tensor, which PyTorch runs through
  its varlen kernels), "torch_sdpa_per_seq" (one SDPA call per sequence,
  the same useful work) and "torch_sdpa_padded" (the batch padded to the
  longest sequence, fastest backend: more work, no mask, a timing bound
  only). FLOPs count the useful work, sum of S_i^2, for all three.
- row kernels ("norms", sizes M,N): F.rms_norm, F.layer_norm (weight and
  bias) and torch.softmax in f16 (impl "torch"), torch.compile of each,
  static shapes (impl "torch_compile", with --compile-norms), and a
  device-to-device copy of the same tensor (kernel "copy"): the bandwidth
  ceiling of the same run. --norm-timing events,cuda_graph also times each
  one as tessel's `--cuda-graph` samples do (records of variant
  "cuda_graph"; see Timing).
- paged decode attention ("decode", --decode-shapes B,L,H,Hkv,D): one
  query token per sequence against L cached keys, f16, the peers of
  `samples/decode_attention --bench --size bench`. flash_attn_with_kvcache
  and FlashInfer are not installed there, so SDPA on keys and values
  already gathered into contiguous [B, Hkv, L, D] tensors stands in (the
  gather is not timed): one call per sequence ("torch_sdpa_per_seq", as a
  serving loop without a paged kernel would), and the whole batch in one
  call per backend (flash, efficient, cuDNN, math; the fastest as
  "torch_sdpa"); enable_gqa=True where Hkv < H, and also each kv head's
  group of query heads as that many query rows of one head (":NAME_grouped",
  the same result, which every backend takes). Bytes count the keys and
  values read once. A device-to-device copy of 512 MiB (kernel "copy",
  impl "torch") is the bandwidth ceiling of the same run.
- fp8 GEMM ("fp8_gemm", sizes M,N,K): torch._scaled_mm on e4m3 inputs,
  A [M, K] row-major, B an [N, K] row-major tensor passed as b.t() (the
  column-major operand cuBLASLt's fp8 path needs), unit float32 scales,
  f16 output (impl "torch_scaled_mm"): the peer of
  `samples/gemm --dtype=e4m3 --layout=NT`.
- fp8 block-scaled GEMM ("fp8_blockscaled", --blockscaled-shapes M,N,K):
  torch._scaled_mm with 1x128 / 128x128 block scales and with row-wise
  scales, bf16 output, the peers of `samples/fp8_blockscaled_gemm`.
- grouped fp8 GEMM ("fp8_grouped", --fp8-grouped-shapes G,M,N,K): one
  torch._scaled_mm per group with block scales, and torch._scaled_grouped_mm
  with row-wise scales over offsets: the peers of the sample's grouped
  contiguous record.
- MoE grouped GEMM ("grouped_gemm", --grouped-shapes G,mean,N with K = N):
  one torch.matmul per group and torch._grouped_mm, ragged sizes drawn as
  samples/grouped_gemm draws them (bench/grouped_gemm_peer.py).
- w4a16 GEMM ("w4a16", --w4a16-shapes M,N,K): torch f16 matmul
  A [M, K] @ W^T with W [N, K] the dequantized int4 weights (random 4-bit
  values minus 8 times a random f16 scale per 128 of K, dequantized on the
  device once, outside the timing; impl "torch_f16_matmul"): the peer of
  `samples/w4a16_gemm --bench --size bench`. Bytes count W in f16.
- linear attention (causal, unnormalised, q scaled by 1/sqrt(D), layout
  [B, S, H, D]): flash-linear-attention's chunk_linear_attn and
  fused_chunk_linear_attn (impl "fla:chunk", "fla:fused_chunk", and the
  faster as "fla"), and a plain PyTorch chunked reference ("torch_ref"),
  forward and forward+backward.

Timing: triton.testing.do_bench (L2 flushed before each run; the median of
the runs that fill rep-ms), else CUDA events with a 256 MiB flush. Either
times the host's launch too: a kernel shorter than its caller's host
overhead (torch.compile's guards) is timed as that overhead. "cuda_graph"
timing (row kernels) mirrors tessel's do_bench(use_cuda_graph): as many
calls as fill ~1 ms captured back to back in one CUDA graph, L2 flushed
between replays only, the median replay / calls; no launch cost on either
side (triton.testing.do_bench_cudagraph flushes nothing, so it is not
used). The JSON schema is tessel/bench_report.h's (docs/benchmarks.md). The
GPU machine has no network: fla comes from wheels (see docs/benchmarks.md).
"""

import argparse
import json
import math
import sys
import time
import traceback

QUANTILES = [0.2, 0.5, 0.8]
CHUNK = 64  # the chunk size of the seed's linear attention


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="", help="JSON file (default: stdout)")
    p.add_argument("--only",
                   default="sdpa,sdpa_varlen,fla,torch_ref,norms,fp8_gemm",
                   help="comma list of: sdpa, sdpa_varlen, fla, torch_ref, "
                   "norms, fp8_gemm, decode, fp8_blockscaled, fp8_grouped, w4a16, "
                   "grouped_gemm")
    p.add_argument("--row-shapes", default="4096,8192;16384,4096;8192,1024",
                   help="M,N;... for the row kernels (norms)")
    p.add_argument("--compile-norms", action="store_true",
                   help="also time torch.compile of rms_norm / layer_norm")
    p.add_argument("--norm-timing", default="events",
                   help="row kernels: comma list of events (do_bench), "
                   "cuda_graph (graph replays, variant \"cuda_graph\")")
    p.add_argument("--warmup-ms", type=float, default=25)
    p.add_argument("--rep-ms", type=float, default=100)
    p.add_argument("--attention-shapes",
                   default="8,4096,16,128;8,4096,32,64;2,16384,16,128",
                   help="B,S,H,D;... for flash attention")
    p.add_argument("--gqa-shapes", default="8,4096,32,8,128",
                   help="B,S,H,Hkv,D;... for grouped-query flash attention "
                   "('' for none)")
    p.add_argument("--varlen-shapes",
                   default="16,128:333,1000,2047,3333,4096,5500,7000,9459",
                   help="H,D:S1,S2,...;... for variable-length flash "
                   "attention (tessel's --varlen=bench)")
    p.add_argument("--attention-passes", default="fwd,fwd+bwd",
                   help="comma list of fwd, fwd+bwd for flash attention")
    p.add_argument("--linear-shapes", default="8,4096,16,128;8,4096,32,64",
                   help="B,S,H,D;... for linear attention")
    p.add_argument("--decode-shapes",
                   default="1,32768,32,8,128;16,8192,32,8,128;"
                   "64,4096,32,8,128;128,4096,32,8,128;16,32768,32,8,128;"
                   "1,32768,32,32,128;16,4096,32,32,128;64,2048,32,32,128;"
                   "128,1024,32,32,128",
                   help="B,L,H,Hkv,D;... for decode attention (tessel's "
                   "decode_attention --size bench)")
    p.add_argument("--gemm-shapes", default="8192,8192,8192;4096,4096,4096",
                   help="M,N,K;... for the fp8 GEMM")
    p.add_argument("--blockscaled-shapes",
                   default="4096,7168,16384;8192,8192,8192",
                   help="M,N,K;... for the fp8 block-scaled GEMM "
                   "(fp8_blockscaled)")
    p.add_argument("--fp8-grouped-shapes", default="8,4096,4096,7168",
                   help="G,M,N,K;... for the grouped fp8 GEMM (fp8_grouped): "
                   "G groups of M rows")
    p.add_argument("--grouped-shapes",
                   default="8,2048,4096;8,128,4096;64,1024,2048;64,128,2048",
                   help="G,mean_rows,N;... (K = N) for grouped_gemm")
    p.add_argument("--w4a16-shapes",
                   default="1,8192,8192;16,8192,8192;64,8192,8192;"
                   "256,8192,8192;1,28672,8192;16,28672,8192;"
                   "64,28672,8192;256,28672,8192",
                   help="M,N,K;... for the w4a16 GEMM's f16 peer (w4a16)")
    p.add_argument("--no-check", action="store_true",
                   help="skip comparing fla against the torch reference")
    return p.parse_args()


def parse_shapes(text):
    shapes = []
    for item in text.split(";"):
        b, s, h, d = (int(x) for x in item.split(","))
        shapes.append({"B": b, "S": s, "H": h, "D": d})
    return shapes


def size_label(shape):
    if "L" in shape:  # decode: B sequences of L cached keys
        return "B{B} L{L} H{H} Hkv{Hkv} D{D}".format(**shape)
    if "bytes" in shape:  # a copy
        return "{}MiB".format(shape["bytes"] >> 20)
    if "T" in shape:  # packed variable-length sequences
        return "B{B} T{T} H{H} D{D}".format(**shape)
    if "G" in shape:  # grouped GEMM: G groups of `rows` rows in all
        return "G{G} rows{rows} N{N} K{K}".format(**shape)
    if "K" in shape:
        if shape["M"] == shape["N"] == shape["K"]:
            return "{}^3".format(shape["M"])
        return "{M}x{N}x{K}".format(**shape)
    if "M" in shape:
        return "{M}x{N}".format(**shape)
    if "Hkv" in shape:
        return "B{B} S{S} H{H} Hkv{Hkv} D{D}".format(**shape)
    return "B{B} S{S} H{H} D{D}".format(**shape)


def parse_varlen_shapes(text):
    shapes = []
    for item in filter(None, text.split(";")):
        heads, lens = item.split(":")
        h, d = (int(x) for x in heads.split(","))
        seqlens = [int(x) for x in lens.split(",")]
        shapes.append({"B": len(seqlens), "T": sum(seqlens), "H": h, "D": d,
                       "seqlens": seqlens})
    return shapes


def parse_gqa_shapes(text):
    shapes = []
    for item in filter(None, text.split(";")):
        b, s, h, hkv, d = (int(x) for x in item.split(","))
        shapes.append({"B": b, "S": s, "H": h, "Hkv": hkv, "D": d})
    return shapes


def parse_gemms(text):
    shapes = []
    for item in text.split(";"):
        m, n, k = (int(x) for x in item.split(","))
        shapes.append({"M": m, "N": n, "K": k})
    return shapes


def parse_grouped(text):
    shapes = []
    for item in text.split(";"):
        g, m, n, k = (int(x) for x in item.split(","))
        shapes.append({"G": g, "M": m, "N": n, "K": k})
    return shapes


def parse_rows(text):
    shapes = []
    for item in text.split(";"):
        m, n = (int(x) for x in item.split(","))
        shapes.append({"M": m, "N": n})
    return shapes


class Timer:
    """do_bench with triton when present, else CUDA events."""

    def __init__(self, torch, warmup_ms, rep_ms):
        self.torch = torch
        self.warmup_ms = warmup_ms
        self.rep_ms = rep_ms
        try:
            import triton.testing
            self.triton_bench = triton.testing.do_bench
            self.name = "triton.testing.do_bench"
        except ImportError:
            self.triton_bench = None
            self.name = "cuda events"

    def graph(self, fn):
        """tessel's do_bench(use_cuda_graph) in PyTorch (module docstring)."""
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        per_call = max(start.elapsed_time(end) / 5, 1e-4)
        calls = max(1, min(1000, int(round(1.0 / per_call))))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                fn()
        torch.cuda.synchronize()
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size",
                     50 << 20)
        flush = torch.empty(max(256 << 20, 4 * l2), dtype=torch.int8,
                            device="cuda")
        start.record()
        for _ in range(5):
            flush.zero_()
            g.replay()
        end.record()
        torch.cuda.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(self.warmup_ms / estimate))):
            flush.zero_()
            g.replay()
        reps = min(10000, max(5, int(self.rep_ms / estimate)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            flush.zero_()
            starts[i].record()
            g.replay()
            ends[i].record()
        torch.cuda.synchronize()
        times = sorted(a.elapsed_time(b) / calls for a, b in zip(starts, ends))
        del g, flush
        qs = [quantile(times, q) for q in QUANTILES]
        return {"ms": qs[1], "quantiles_ms": qs, "calls_per_sample": calls}

    def __call__(self, fn, grad_to_none=None):
        fn()  # first call: autotuning and compilation stay out of the timing
        self.torch.cuda.synchronize()
        if self.triton_bench is not None:
            q = self.triton_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms,
                                  grad_to_none=grad_to_none,
                                  quantiles=QUANTILES)
            return {"ms": q[1], "quantiles_ms": list(q)}
        return self._events(fn, grad_to_none)

    def _events(self, fn, grad_to_none):
        torch = self.torch
        flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            flush.zero_()
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(self.warmup_ms / estimate))):
            fn()
        reps = min(10000, max(5, int(self.rep_ms / estimate)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            if grad_to_none:
                for t in grad_to_none:
                    t.grad = None
            flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
        qs = [quantile(times, q) for q in QUANTILES]
        return {"ms": qs[1], "quantiles_ms": qs}


def quantile(times, q):
    """The q quantile of sorted times, interpolated."""
    pos = q * (len(times) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(times) - 1)
    return times[lo] + (times[hi] - times[lo]) * (pos - lo)


def record(kernel, impl, pass_, variant, shape, flops, bytes_, timing,
           dtype="f16"):
    r = {"kernel": kernel, "impl": impl, "pass": pass_, "variant": variant,
         "dtype": dtype, "shape": shape, "size": size_label(shape),
         "flops": flops, "bytes": bytes_, "quantiles": QUANTILES}
    r.update(timing)
    ms = timing.get("ms")
    if ms:
        r["tflops"] = flops / (ms * 1e-3) / 1e12
        r["gbps"] = bytes_ / (ms * 1e-3) / 1e9
    return r


def error_record(kernel, impl, pass_, variant, shape, flops, bytes_, exc,
                 dtype="f16"):
    r = record(kernel, impl, pass_, variant, shape, flops, bytes_, {}, dtype)
    r["error"] = "{}: {}".format(type(exc).__name__, str(exc).splitlines()[0]
                                 if str(exc) else "")
    return r


def best_of(records, impl):
    """A copy of the fastest successful record, renamed `impl`."""
    ok = [r for r in records if "error" not in r]
    if not ok:
        return None
    best = dict(min(ok, key=lambda r: r["ms"]))
    best["best_of"] = best["impl"]
    best["impl"] = impl
    return best


def bench_sdpa(torch, timer, shapes, passes, log):
    """SDPA per backend, forward and forward+backward (autograd).

    A shape with "Hkv" has grouped-query heads (k, v with Hkv heads,
    enable_gqa=True).
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    out = []
    for shape in shapes:
        b, s, h, d = shape["B"], shape["S"], shape["H"], shape["D"]
        hkv = shape.get("Hkv", h)
        gqa = hkv != h
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.float16,
                        generator=gen)
        k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.float16,
                            generator=gen) for _ in range(2))
        do = torch.randn_like(q)
        for pass_, causal in [(p, c) for p in passes for c in (True, False)]:
            variant = "causal" if causal else "full"
            fwd_flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            # Backward: five gemms against the forward's two.
            flops = fwd_flops * (3.5 if pass_ == "fwd+bwd" else 1.0)
            bytes_ = 2.0 * b * s * d * (2 * h + 2 * hkv)
            if pass_ == "fwd+bwd":
                bytes_ += 2.0 * b * s * d * (3 * h + 2 * hkv)
            extra = {"enable_gqa": True} if gqa else {}
            found = []
            for name, backend in backends:
                impl = "torch_sdpa:" + name
                try:
                    if pass_ == "fwd":
                        grads = None

                        def fn(causal=causal):
                            return F.scaled_dot_product_attention(
                                q, k, v, is_causal=causal, **extra)
                    else:
                        grads = [t.detach().requires_grad_()
                                 for t in (q, k, v)]

                        def fn(causal=causal, g=grads):
                            o = F.scaled_dot_product_attention(
                                *g, is_causal=causal, **extra)
                            o.backward(do)
                    with sdpa_kernel(backend):  # only this backend may run
                        timing = timer(fn, grad_to_none=grads)
                    r = record("flash_attention", impl, pass_, variant, shape,
                               flops, bytes_, timing)
                except Exception as exc:  # a backend that does not apply
                    r = error_record("flash_attention", impl, pass_, variant,
                                     shape, flops, bytes_, exc)
                log(r)
                found.append(r)
            out += found
            best = best_of(found, "torch_sdpa")
            if best:
                log(best)
                out.append(best)
        del q, k, v, do
        torch.cuda.empty_cache()
    return out


def bench_sdpa_varlen(torch, timer, shapes, log):
    """Variable-length forward: nested (jagged), per sequence, padded."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    out = []
    for full in shapes:
        seqlens, h, d = full["seqlens"], full["H"], full["D"]
        shape = {k: v for k, v in full.items() if k != "seqlens"}
        gen = torch.Generator(device="cuda").manual_seed(0)
        # Per sequence [1, H, S_i, D]; the padded batch [B, H, max S, D].
        q, k, v = ([torch.randn(1, h, s, d, device="cuda",
                                dtype=torch.float16, generator=gen)
                    for s in seqlens] for _ in range(3))
        longest = max(seqlens)

        def padded(ts):
            return torch.cat([F.pad(t, (0, 0, 0, longest - t.shape[2]))
                              for t in ts])

        qp, kp, vp = padded(q), padded(k), padded(v)

        def nested(ts):  # [B, j, H, D] jagged, seen as [B, H, j, D]
            return torch.nested.nested_tensor(
                [t[0].transpose(0, 1) for t in ts],
                layout=torch.jagged).transpose(1, 2)

        qn, kn, vn = nested(q), nested(k), nested(v)
        pairs = sum(s * s for s in seqlens)
        bytes_ = 2.0 * shape["T"] * h * d * 4
        for causal in (True, False):
            variant = "varlen_" + ("causal" if causal else "full")
            flops = 4.0 * h * d * pairs * (0.5 if causal else 1.0)

            def run(impl, fn, backend=None):
                try:
                    if backend is None:
                        timing = timer(fn)
                    else:
                        with sdpa_kernel(backend):
                            timing = timer(fn)
                    r = record("flash_attention", impl, "fwd", variant, shape,
                               flops, bytes_, timing)
                except Exception as exc:
                    r = error_record("flash_attention", impl, "fwd", variant,
                                     shape, flops, bytes_, exc)
                log(r)
                return r

            def per_seq(causal=causal):
                return [F.scaled_dot_product_attention(
                    q[i], k[i], v[i], is_causal=causal)
                    for i in range(len(seqlens))]

            def nested_fn(causal=causal):
                return F.scaled_dot_product_attention(qn, kn, vn,
                                                      is_causal=causal)

            out.append(run("torch_sdpa_per_seq", per_seq))
            r = run("torch_sdpa_nested", nested_fn)
            if "error" not in r:  # the same numbers as per sequence
                ref = per_seq()
                got = nested_fn().transpose(1, 2).unbind()
                r["max_abs_diff_vs_per_seq"] = max(
                    float((g.transpose(0, 1) - e[0]).abs().max())
                    for g, e in zip(got, ref))
            out.append(r)
            found = []
            for name, backend in backends:
                found.append(run("torch_sdpa_padded:" + name,
                                 lambda causal=causal:
                                 F.scaled_dot_product_attention(
                                     qp, kp, vp, is_causal=causal),
                                 backend))
            out += found
            best = best_of(found, "torch_sdpa_padded")
            if best:
                log(best)
                out.append(best)
        del q, k, v, qp, kp, vp, qn, kn, vn
        torch.cuda.empty_cache()
    return out


def parse_decode_shapes(text):
    shapes = []
    for item in filter(None, text.split(";")):
        b, l, h, hkv, d = (int(x) for x in item.split(","))
        shapes.append({"B": b, "L": l, "H": h, "Hkv": hkv, "D": d})
    return shapes


def bench_decode(torch, timer, shapes, log):
    """Decode attention peers: SDPA on gathered keys, and a copy."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("math", SDPBackend.MATH)]
    out = []

    def run(impl, shape, fn, flops, bytes_, backend=None):
        try:
            if backend is None:
                timing = timer(fn)
            else:
                with sdpa_kernel(backend):
                    timing = timer(fn)
            r = record("decode_attention", impl, "fwd", "", shape, flops,
                       bytes_, timing)
        except Exception as exc:  # a backend that does not apply
            r = error_record("decode_attention", impl, "fwd", "", shape,
                             flops, bytes_, exc)
        log(r)
        return r

    for shape in shapes:
        b, l, h, hkv, d = (shape[k] for k in ("B", "L", "H", "Hkv", "D"))
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(b, h, 1, d, device="cuda", dtype=torch.float16,
                        generator=gen)
        k, v = (torch.randn(b, hkv, l, d, device="cuda", dtype=torch.float16,
                            generator=gen) for _ in range(2))
        extra = {"enable_gqa": True} if hkv != h else {}
        flops = 0.0  # rated by GB/s, as tessel's records
        bytes_ = 2.0 * b * l * hkv * d * 2

        def per_seq():
            return [F.scaled_dot_product_attention(
                q[i:i + 1], k[i:i + 1], v[i:i + 1], **extra)
                for i in range(b)]

        out.append(run("torch_sdpa_per_seq", shape, per_seq, flops, bytes_))
        found = [run("torch_sdpa:" + name, shape,
                     lambda: F.scaled_dot_product_attention(q, k, v, **extra),
                     flops, bytes_, backend)
                 for name, backend in backends]
        if hkv != h:
            # One query token: a kv head's group of query heads is the same
            # as `group` query rows of one head, which every backend takes
            # (no enable_gqa; the same result).
            grouped = q.view(b, hkv, h // hkv, d)
            found += [run("torch_sdpa:" + name + "_grouped", shape,
                          lambda: F.scaled_dot_product_attention(
                              grouped, k, v), flops, bytes_, backend)
                      for name, backend in backends]
        out += found
        best = best_of(found, "torch_sdpa")
        if best:
            log(best)
            out.append(best)
        del q, k, v
        torch.cuda.empty_cache()
    n = 256 << 20  # f16 elements: 512 MiB, as tessel's copy
    x = torch.randn(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    try:
        r = record("copy", "torch", "fwd", "", {"bytes": 2 * n}, 0.0,
                   2.0 * 2 * n, timer(lambda: y.copy_(x)))
    except Exception as exc:
        r = error_record("copy", "torch", "fwd", "", {"bytes": 2 * n}, 0.0,
                         2.0 * 2 * n, exc)
    log(r)
    out.append(r)
    del x, y
    torch.cuda.empty_cache()
    return out


def bench_fp8_gemm(torch, timer, shapes, log):
    """C = A B^T in e4m3 with f16 output: A [M, K], B stored [N, K].

    Twice: cuBLASLt's default, which adds the tensor cores' partial sums
    into an f32 accumulator every few k steps, and use_fast_accum=True
    (impl "torch_scaled_mm:fast_accum"), which keeps them in the tensor
    cores' own accumulator as tessel's fp8 gemm does.
    """
    out = []
    for shape, fast in [(s, f) for s in shapes for f in (False, True)]:
        m, n, k = shape["M"], shape["N"], shape["K"]
        flops = 2.0 * m * n * k
        bytes_ = 1.0 * (m * k + n * k) + 2.0 * m * n
        impl = "torch_scaled_mm:fast_accum" if fast else "torch_scaled_mm"
        args = ("gemm", impl, "fwd", "NT", shape, flops, bytes_)
        try:
            gen = torch.Generator(device="cuda").manual_seed(0)
            a = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
            b = torch.rand(n, k, device="cuda", generator=gen) * 2 - 1
            a = a.to(torch.float8_e4m3fn)
            b = b.to(torch.float8_e4m3fn)
            one = torch.ones((), device="cuda", dtype=torch.float32)
            bt = b.t()  # [K, N] column-major, as _scaled_mm requires

            def fn():
                return torch._scaled_mm(a, bt, scale_a=one, scale_b=one,
                                        out_dtype=torch.float16,
                                        use_fast_accum=fast)
            r = record(*args, timer(fn), dtype="fp8_e4m3")
            del a, b, bt
        except Exception as exc:  # no fp8 path on this GPU or torch
            r = error_record(*args, exc, dtype="fp8_e4m3")
        log(r)
        out.append(r)
        torch.cuda.empty_cache()
    return out


def bench_fp8_blockscaled(torch, timer, shapes, log):
    """D = (A sa)(B sb)^T in bf16, A [M, K] and B [N, K] e4m3: the peers of
    `samples/fp8_blockscaled_gemm --bench --size bench`.

    torch._scaled_mm twice: with DeepGEMM's scales (impl
    "torch_scaled_mm_blockwise": sa 1x128 per row and 128 of K, an [M, K/128]
    tensor stored outer-dim-major, i.e. tessel's [K/128, M] bytes; sb one per
    128x128 block of B, [N/128, K/128] passed transposed), which cuBLASLt
    takes on sm_90 from CUDA 12.9; and with row-wise scales (impl
    "torch_scaled_mm_rowwise": [M, 1] and [1, N], less work, the fallback
    where a torch lacks block scales). A torch without the form records its
    error.
    """
    out = []
    for shape in shapes:
        m, n, k = shape["M"], shape["N"], shape["K"]
        flops = 2.0 * m * n * k
        bytes_ = 1.0 * (m * k + n * k) + 2.0 * m * n
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = (torch.rand(m, k, device="cuda", generator=gen) * 2 - 1).to(
            torch.float8_e4m3fn)
        b = (torch.rand(n, k, device="cuda", generator=gen) * 2 - 1).to(
            torch.float8_e4m3fn)

        def scales(rows, cols):
            return torch.rand(rows, cols, device="cuda", generator=gen) + 0.5
        forms = {
            "blockwise": (scales(k // 128, m).t(),  # [M, K/128] outer-major
                          scales(-(-n // 128), k // 128).t()),
            "rowwise": (scales(m, 1), scales(1, n)),
        }
        for form, (sa, sb) in forms.items():
            args = ("fp8_blockscaled_gemm", "torch_scaled_mm_" + form, "fwd",
                    "NT", shape, flops, bytes_)
            try:
                def fn(sa=sa, sb=sb):
                    return torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb,
                                            out_dtype=torch.bfloat16)
                fn()
                r = record(*args, timer(fn), dtype="fp8_e4m3")
            except Exception as exc:  # this torch lacks the form
                r = error_record(*args, exc, dtype="fp8_e4m3")
            r["scales"] = form
            log(r)
            out.append(r)
        del a, b, forms
        torch.cuda.empty_cache()
    return out


def bench_w4a16(torch, timer, shapes, log):
    """C = A W^T in f16, W [N, K] the int4 weights dequantized to f16 (the
    same formula as samples/w4a16_gemm: (u - 8) * scale[k / 128, n])."""
    out = []
    for shape in shapes:
        m, n, k = shape["M"], shape["N"], shape["K"]
        flops = 2.0 * m * n * k
        bytes_ = 2.0 * (m * k + n * k + m * n)
        args = ("w4a16_gemm", "torch_f16_matmul", "fwd", "g128", shape,
                flops, bytes_)
        try:
            gen = torch.Generator(device="cuda").manual_seed(0)
            a = (torch.rand(m, k, device="cuda", generator=gen) * 2 - 1).half()
            u = torch.randint(0, 16, (n, k), device="cuda", generator=gen)
            groups = -(-k // 128)
            s = (torch.rand(groups, n, device="cuda", generator=gen) - 0.5) / 8
            w = ((u - 8).float() * s.repeat_interleave(128, 0)[:k].t()).half()
            del u, s

            def fn():
                return torch.matmul(a, w.t())
            r = record(*args, timer(fn))
            del a, w
        except Exception as exc:
            r = error_record(*args, exc)
        log(r)
        out.append(r)
        torch.cuda.empty_cache()
    return out


def bench_fp8_grouped(torch, timer, shapes, log):
    """The grouped contiguous fp8 GEMM (MoE prefill): G groups of M rows, each
    D_g = (A_g sa_g)(B_g sb_g)^T, bf16 out; the peers of
    `samples/fp8_blockscaled_gemm --bench --size bench`'s grouped record
    (kernel fp8_blockscaled_gemm_grouped, variant contiguous).

    torch has no block-scaled grouped GEMM: one torch._scaled_mm per group
    with block scales ("torch_scaled_mm_blockwise_per_group"), and
    torch._scaled_grouped_mm with row-wise scales, one call over offsets
    ("torch_scaled_grouped_mm_rowwise", less scale work). A torch without a
    form records its error.
    """
    out = []
    for shape in shapes:
        g, m, n, k = shape["G"], shape["M"], shape["N"], shape["K"]
        flops = 2.0 * g * m * n * k
        bytes_ = 1.0 * g * (m * k + n * k) + 2.0 * g * m * n
        size = "G{} M{} N{} K{}".format(g, g * m, n, k)
        label = {"M": g * m, "N": n, "K": k, "G": g}
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = (torch.rand(g * m, k, device="cuda", generator=gen) * 2 - 1).to(
            torch.float8_e4m3fn)
        b = (torch.rand(g, n, k, device="cuda", generator=gen) * 2 - 1).to(
            torch.float8_e4m3fn)

        def scales(*shape):
            return torch.rand(*shape, device="cuda", generator=gen) + 0.5
        sa_block = scales(k // 128, g * m).t()  # [G M, K/128] outer-major
        sb_block = scales(g, -(-n // 128), k // 128)
        sa_row, sb_row = scales(g * m), scales(g, n)
        offs = torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * m

        def per_group():
            return [torch._scaled_mm(a[i * m:(i + 1) * m], b[i].t(),
                                     scale_a=sa_block[i * m:(i + 1) * m],
                                     scale_b=sb_block[i].t(),
                                     out_dtype=torch.bfloat16)
                    for i in range(g)]

        def grouped():
            return torch._scaled_grouped_mm(a, b.transpose(-2, -1), sa_row,
                                            sb_row, offs=offs,
                                            out_dtype=torch.bfloat16)
        for impl, fn in (("torch_scaled_mm_blockwise_per_group", per_group),
                         ("torch_scaled_grouped_mm_rowwise", grouped)):
            args = ("fp8_blockscaled_gemm_grouped", impl, "fwd", "contiguous",
                    label, flops, bytes_)
            try:
                fn()
                r = record(*args, timer(fn), dtype="fp8_e4m3")
            except Exception as exc:  # this torch lacks the form
                r = error_record(*args, exc, dtype="fp8_e4m3")
            r["size"] = size
            log(r)
            out.append(r)
        del a, b, sa_block, sb_block, sa_row, sb_row
        torch.cuda.empty_cache()
    return out


def bench_norms(torch, timer, shapes, compile_norms, timings, log):
    """Row kernels in f16, as tessel's samples: bytes = inputs + outputs."""
    import torch.nn.functional as F
    out = []
    for shape in shapes:
        m, n = shape["M"], shape["N"]
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(m, n, device="cuda", dtype=torch.float16,
                        generator=gen)
        w = torch.randn(n, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(n, device="cuda", dtype=torch.float16, generator=gen)
        y = torch.empty_like(x)
        rows = 2.0 * m * n * 2
        cases = [
            ("copy", "torch", rows, lambda: y.copy_(x)),
            ("rmsnorm", "torch", rows + 2 * n,
             lambda: F.rms_norm(x, (n,), w, 1e-6)),
            ("layernorm", "torch", rows + 4 * n,
             lambda: F.layer_norm(x, (n,), w, b, 1e-5)),
            ("softmax", "torch", rows, lambda: torch.softmax(x, dim=-1)),
        ]
        if compile_norms:
            # A static kernel per shape, as a tuned deployment compiles it:
            # without the reset, a later shape recompiles for dynamic
            # shapes, a slower kernel than torch.compile's best.
            torch._dynamo.reset()
            rms = torch.compile(lambda t: F.rms_norm(t, (n,), w, 1e-6),
                                dynamic=False)
            ln = torch.compile(lambda t: F.layer_norm(t, (n,), w, b, 1e-5),
                               dynamic=False)
            sm = torch.compile(lambda t: torch.softmax(t, dim=-1),
                               dynamic=False)
            cases += [("rmsnorm", "torch_compile", rows + 2 * n,
                       lambda: rms(x)),
                      ("layernorm", "torch_compile", rows + 4 * n,
                       lambda: ln(x)),
                      ("softmax", "torch_compile", rows, lambda: sm(x))]
        for (kernel, impl, bytes_, fn), timing in (
                (c, t) for c in cases for t in timings):
            # variant "" / "cuda_graph" as the samples' records
            # (bench/device.py pairs them).
            graph = timing == "cuda_graph"
            variant = "cuda_graph" if graph else ""
            try:
                r = record(kernel, impl, "fwd", variant, shape, 0.0, bytes_,
                           timer.graph(fn) if graph else timer(fn))
            except Exception as exc:
                r = error_record(kernel, impl, "fwd", variant, shape, 0.0,
                                 bytes_, exc)
            r["timing"] = "cuda_graph" if graph else timer.name
            log(r)
            out.append(r)
        del x, w, b, y
        torch.cuda.empty_cache()
    return out


def linear_attention_torch(torch, q, k, v, scale):
    """Causal unnormalised linear attention, chunked, in plain PyTorch.

    Per chunk c: o_c = mask(q_c k_c^T) v_c + q_c h_c with h_c the sum of
    k_j^T v_j over earlier chunks; states in f32.
    """
    b, s, h, d = q.shape
    n = s // CHUNK
    qc = (q * scale).view(b, n, CHUNK, h, d).permute(0, 3, 1, 2, 4)
    kc = k.view(b, n, CHUNK, h, d).permute(0, 3, 1, 2, 4)
    vc = v.view(b, n, CHUNK, h, v.shape[-1]).permute(0, 3, 1, 2, 4)
    mask = torch.ones(CHUNK, CHUNK, device=q.device, dtype=torch.bool).tril()
    scores = (qc @ kc.transpose(-1, -2)).masked_fill(~mask, 0)
    intra = scores @ vc
    kv = (kc.transpose(-1, -2).float() @ vc.float())  # [b, h, n, d, dv]
    states = kv.cumsum(dim=2) - kv  # exclusive prefix sum: earlier chunks
    inter = qc.float() @ states
    o = (intra.float() + inter).to(q.dtype)
    return o.permute(0, 2, 3, 1, 4).reshape(b, s, h, v.shape[-1])


def linear_flops(shape, pass_):
    # The chunked algorithm: per chunk q k^T, s v (C x C x D each), q h and
    # k^T v (C x D x D each): 4 S D (C + D) per (batch, head). Backward is
    # counted as twice the forward (the usual convention).
    b, s, h, d = shape["B"], shape["S"], shape["H"], shape["D"]
    fwd = 4.0 * b * h * s * d * (CHUNK + d)
    return fwd if pass_ == "fwd" else 3 * fwd


def linear_bytes(shape, pass_):
    # Minimum traffic in f16: q, k, v read and o written; backward also reads
    # q, k, v, dO and writes dq, dk, dv.
    b, s, h, d = shape["B"], shape["S"], shape["H"], shape["D"]
    tensor = 2.0 * b * s * h * d
    return 4 * tensor if pass_ == "fwd" else 11 * tensor


def bench_linear(torch, timer, shapes, which, check, log):
    impls = []
    if "fla" in which:
        from fla.ops.linear_attn import (chunk_linear_attn,
                                         fused_chunk_linear_attn)
        impls += [("fla:chunk", chunk_linear_attn),
                  ("fla:fused_chunk", fused_chunk_linear_attn)]
    out = []
    for shape in shapes:
        b, s, h, d = shape["B"], shape["S"], shape["H"], shape["D"]
        scale = d ** -0.5
        gen = torch.Generator(device="cuda").manual_seed(0)
        q, k, v, do = (torch.randn(b, s, h, d, device="cuda",
                                   dtype=torch.float16, generator=gen) * 0.5
                       for _ in range(4))

        def fla_call(f):
            return lambda q, k, v: f(q, k, v, scale=scale, normalize=False,
                                     output_final_state=False)[0]

        calls = [(name, fla_call(f)) for name, f in impls]
        if "torch_ref" in which:
            calls.append(("torch_ref", lambda q, k, v:
                          linear_attention_torch(torch, q, k, v, scale)))
        reference = None
        if check and impls:
            reference = linear_attention_torch(torch, q.float(), k.float(),
                                               v.float(), scale)
        for pass_ in ("fwd", "fwd+bwd"):
            flops = linear_flops(shape, pass_)
            bytes_ = linear_bytes(shape, pass_)
            found = []
            for name, call in calls:
                try:
                    if pass_ == "fwd":
                        def fn(call=call):
                            return call(q, k, v)
                        timing = timer(fn)
                    else:
                        qg, kg, vg = (t.detach().clone().requires_grad_()
                                      for t in (q, k, v))

                        def fn(call=call, qg=qg, kg=kg, vg=vg):
                            call(qg, kg, vg).backward(do)
                        timing = timer(fn, grad_to_none=[qg, kg, vg])
                    r = record("linear_attention", name, pass_, "causal",
                               shape, flops, bytes_, timing)
                    if reference is not None and pass_ == "fwd":
                        with torch.no_grad():
                            err = (call(q, k, v).float() - reference).abs()
                        r["check_max_abs_error"] = err.max().item()
                        r["check_reference_max_abs"] = \
                            reference.abs().max().item()
                except Exception as exc:
                    r = error_record("linear_attention", name, pass_, "causal",
                                     shape, flops, bytes_, exc)
                log(r)
                found.append(r)
                torch.cuda.empty_cache()
            out += found
            best = best_of([r for r in found if r["impl"].startswith("fla:")],
                           "fla")
            if best:
                log(best)
                out.append(best)
        del q, k, v, do, reference
        torch.cuda.empty_cache()
    return out


def main():
    args = parse_args()
    which = set(args.only.split(","))
    bad = set(args.norm_timing.split(",")) - {"events", "cuda_graph"}
    if bad:
        print("peers.py: --norm-timing: unknown {} (expected events, "
              "cuda_graph)".format(",".join(sorted(bad))), file=sys.stderr)
        return 2
    report = {"benchmark": "peers", "records": [], "errors": []}
    measured = []

    def log(r):
        # Each record is also saved at once: a run cut short by a time limit
        # still leaves what it measured (marked partial) for bench/device.py.
        measured.append(r)
        if args.out:
            write(dict(report, records=measured, partial=True), args.out)
        if "error" in r:
            print("{:<18} {:<22} {:<8} {:<7} {}: {}".format(
                r["kernel"], r["impl"], r["pass"], r["variant"], r["size"],
                r["error"]), file=sys.stderr)
        else:
            print("{:<18} {:<22} {:<8} {:<7} {}: {:.4f} ms {:7.1f} TFLOP/s "
                  "{:7.1f} GB/s".format(r["kernel"], r["impl"], r["pass"],
                                        r["variant"], r["size"], r["ms"],
                                        r["tflops"], r["gbps"]),
                  file=sys.stderr)

    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
    except Exception as exc:
        report["error"] = "{}: {}".format(type(exc).__name__, exc)
        write(report, args.out)
        print("peers.py: " + report["error"], file=sys.stderr)
        return 1
    report["device"] = {"name": torch.cuda.get_device_name(0),
                        "capability": list(torch.cuda.get_device_capability(0))}
    versions = {"torch": torch.__version__, "python": sys.version.split()[0]}
    try:
        import triton
        versions["triton"] = triton.__version__
    except ImportError:
        pass
    timer = Timer(torch, args.warmup_ms, args.rep_ms)
    report["timer"] = timer.name
    start = time.time()
    sections = []
    if "sdpa" in which:
        sections.append(("sdpa", lambda: bench_sdpa(
            torch, timer, parse_shapes(args.attention_shapes) +
            parse_gqa_shapes(args.gqa_shapes),
            args.attention_passes.split(","), log)))
    if "sdpa_varlen" in which:
        sections.append(("sdpa_varlen", lambda: bench_sdpa_varlen(
            torch, timer, parse_varlen_shapes(args.varlen_shapes), log)))
    if "norms" in which:
        sections.append(("norms", lambda: bench_norms(
            torch, timer, parse_rows(args.row_shapes), args.compile_norms,
            args.norm_timing.split(","), log)))
    if "decode" in which:
        sections.append(("decode", lambda: bench_decode(
            torch, timer, parse_decode_shapes(args.decode_shapes), log)))
    if "fp8_blockscaled" in which:
        sections.append(("fp8_blockscaled", lambda: bench_fp8_blockscaled(
            torch, timer, parse_gemms(args.blockscaled_shapes), log)))
    if "fp8_grouped" in which:
        sections.append(("fp8_grouped", lambda: bench_fp8_grouped(
            torch, timer, parse_grouped(args.fp8_grouped_shapes), log)))
    if "fp8_gemm" in which:
        sections.append(("fp8_gemm", lambda: bench_fp8_gemm(
            torch, timer, parse_gemms(args.gemm_shapes), log)))
    if "grouped_gemm" in which:
        import grouped_gemm_peer
        sections.append(("grouped_gemm", lambda: (
            grouped_gemm_peer.bench_grouped_gemm(
                torch, timer,
                grouped_gemm_peer.parse_grouped_shapes(args.grouped_shapes),
                record, error_record, log))))
    if "w4a16" in which:
        sections.append(("w4a16", lambda: bench_w4a16(
            torch, timer, parse_gemms(args.w4a16_shapes), log)))
    if which & {"fla", "torch_ref"}:
        if "fla" in which:
            try:
                import fla
                versions["fla"] = getattr(fla, "__version__", "?")
            except ImportError as exc:
                report["errors"].append("fla: {}".format(exc))
                which.discard("fla")
        sections.append(("linear", lambda: bench_linear(
            torch, timer, parse_shapes(args.linear_shapes), which,
            not args.no_check, log)))
    for name, run in sections:
        try:
            report["records"] += run()
        except Exception:
            report["errors"].append("{}: {}".format(name,
                                                    traceback.format_exc()))
            print(report["errors"][-1], file=sys.stderr)
    report["versions"] = versions
    report["seconds"] = time.time() - start
    write(report, args.out)
    return 0 if not report["errors"] else 1


def write(report, path):
    text = json.dumps(report, indent=2) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())
