"""What each device suite runs, in order: tessel's steps first, then its
peers', the same order on every card, so that two runs compare step by step.

A step's argv may name {build} (the staged build folder), {root} (this
checkout), {py} (this Python) and {json} (the JSON report the step writes
into the run's log folder). `quick` replaces the argv under --quick;
`quick=SKIP` leaves the step out then.

Rough times on an H100 (session logs of 2026-11-30..12-06; "est." where no
log timed that step alone), default / --quick:
  gemm              ~70 s / ~35 s (the sample's bench sizes 40 s, cuBLAS 3 s)
  attention         ~330 s est. / ~80 s (forward 45 s; SDPA's three
                    backends; FA3's shapes and fp8 ~130 s est.)
  rows              ~45 s / ~25 s
  linear-attention  ~150 s / ~90 s (Triton compiles fla's kernels first)
  fuzz              ~100 s / ~20 s (one seed at scale 3: ~40 s)
  sanitizers        ~200 s est. / ~60 s est.
  tests             ~90 s (every *gpu_test binary; samples_gpu_test 35 s)
  jit               ~5 s
  decode            ~150 s est. / ~50 s est. (not by default: run it by name)
  w4a16             ~120 s est. / ~40 s est. (not by default: run it by name)
  fp8               ~90 s est. / ~40 s est. (not by default: run it by name)
The default `run` (gemm attention rows linear-attention fuzz sanitizers) is
held to --budget seconds (default 530): steps that would start later are
recorded as skipped, so a 10-minute device call always returns its JSON.
"""

import dataclasses
import glob
import os

SKIP = "skip"
SANITIZER = ["compute-sanitizer", "--report-api-errors", "no",
             "--error-exitcode", "99", "--tool"]
SHORT_BUDGET = ["--warmup-ms", "5", "--rep-ms", "20"]
# FlashAttention-3's benchmark: 16k tokens a batch, H16 D128 and H32 D64.
FA3_SHAPES = ("4,4096,16,128;2,8192,16,128;1,16384,16,128;"
              "4,4096,32,64;2,8192,32,64;1,16384,32,64")


@dataclasses.dataclass
class Step:
    name: str
    kind: str  # bench, peers, gtest, sanitizer, check or raw (see steps.py)
    argv: list
    quick: object = None  # argv under --quick, SKIP, or None (the same)
    env: dict = dataclasses.field(default_factory=dict)
    timeout: int = 300

    def command(self, quick):
        if quick and self.quick is not None:
            return None if self.quick == SKIP else self.quick
        return self.argv


def _sample_bench(name, sample, args, quick_args, timeout=240):
    base = ["{build}/samples/" + sample, "--bench"]
    tail = ["--json", "{json}"]
    quick = SKIP if quick_args == SKIP else base + quick_args + tail
    return Step(name, "bench", base + args + tail, quick, timeout=timeout)


def _peers(name, only, quick_args, quick_only=None, timeout=400):
    base = ["{py}", "{root}/bench/peers.py", "--out", "{json}", "--only"]
    return Step(name, "peers", base + [only],
                base + [quick_only or only] + quick_args + SHORT_BUDGET,
                timeout=timeout)


def _gemm():
    return [
        _sample_bench("tessel_gemm", "gemm", ["--size", "bench"],
                      ["--size=4096x4096x4096"]),
        _sample_bench("tessel_splitk_gemm", "splitk_gemm", ["--size", "bench"],
                      ["--size", "bench"]),
        _sample_bench("tessel_gemm_fp8", "gemm",
                      ["--size=8192x8192x8192", "--dtype=e4m3", "--layout=NT"],
                      ["--size=4096x4096x4096", "--dtype=e4m3",
                       "--layout=NT"]),
        Step("cublas_gemm", "bench",
             ["{build}/bench/cublas_gemm", "--out", "{json}"],
             ["{build}/bench/cublas_gemm", "--out", "{json}", "--sizes",
              "4096"] + SHORT_BUDGET, timeout=200),
        _peers("peers_fp8_gemm", "fp8_gemm",
               ["--gemm-shapes", "4096,4096,4096"], timeout=200),
    ]


def _attention():
    small = ["--size=8x4096x16x128"]
    gqa = ["--size", "8x4096x32x128", "--heads-kv", "8"]
    return [
        _sample_bench("tessel_flash_attention", "flash_attention",
                      ["--size", "bench"], small),
        _sample_bench("tessel_flash_attention_fwd_bwd", "flash_attention",
                      ["--size", "bench", "--pass", "fwd+bwd"],
                      small + ["--pass", "fwd+bwd"]),
        _sample_bench("tessel_flash_attention_gqa", "flash_attention", gqa,
                      SKIP),
        _sample_bench("tessel_flash_attention_gqa_fwd_bwd", "flash_attention",
                      gqa + ["--pass", "fwd+bwd"], SKIP),
        _sample_bench("tessel_flash_attention_varlen", "flash_attention",
                      ["--varlen", "bench"], SKIP),
        # issue 47: FlashAttention-3's shapes (16k tokens at S 4k/8k/16k,
        # H16 D128 and H32 D64), forward and fwd+bwd, SDPA beside them.
        _sample_bench("tessel_flash_attention_fa3", "flash_attention",
                      ["--size", "fa3"], SKIP),
        _sample_bench("tessel_flash_attention_fa3_fwd_bwd", "flash_attention",
                      ["--size", "fa3", "--pass", "fwd+bwd"], SKIP),
        # issue 47: fp8 e4m3 forward at FA3's 16k-token shapes, D128 and
        # D256 (its bar is in TFLOP/s: no fp8 attention peer is installed;
        # SDPA below runs f16 at the same shapes).
        Step("flash_attention_fp8_gpu_test", "gtest",
             ["{build}/tests/samples/flash_attention_fp8_gpu_test"], SKIP,
             timeout=240),
        _sample_bench("tessel_flash_attention_fp8", "flash_attention_fp8",
                      ["--size", "bench"], SKIP),
        _peers("peers_sdpa", "sdpa,sdpa_varlen",
               ["--attention-shapes", "8,4096,16,128", "--gqa-shapes", ""],
               quick_only="sdpa"),
        Step("peers_sdpa_fa3", "peers",
             ["{py}", "{root}/bench/peers.py", "--out", "{json}", "--only",
              "sdpa", "--attention-shapes", FA3_SHAPES, "--gqa-shapes", ""],
             SKIP, timeout=400),
    ]


def _rows():
    steps = [_sample_bench("tessel_" + k, k, ["--size", "bench"],
                           ["--size=4096x8192"], timeout=120)
             for k in ("rmsnorm", "softmax", "layernorm")]
    peers = _peers("peers_norms", "norms", ["--row-shapes", "4096,8192"],
                   timeout=300)
    peers.argv = peers.argv + ["--compile-norms"]  # not under --quick
    return steps + [peers]


def _linear_attention():
    return [
        _sample_bench("tessel_linear_attention", "linear_attention",
                      ["--size", "bench"], ["--size=8x4096x16x128"]),
        _peers("peers_fla", "fla,torch_ref",
               ["--linear-shapes", "8,4096,16,128"], timeout=420),
    ]


def _decode():
    # The sample's bench shapes (f16, H32 D128, GQA 4:1 and MHA, batch
    # 1-128, context 1k-32k) and a 512 MiB copy; SDPA on the same shapes
    # and torch's copy, in the same run.
    quick = ["--size=64x4096x32x128", "--heads-kv", "8"]
    return [
        _sample_bench("tessel_decode_attention", "decode_attention",
                      ["--size", "bench"], quick),
        # DeepSeek MLA decode, bf16, B64 / B128 at 4k-32k (no peer there:
        # FlashMLA is not installed).
        _sample_bench("tessel_mla_decode", "mla_decode", ["--size", "bench"],
                      ["--size=64x4096"]),
        _peers("peers_decode", "decode",
               ["--decode-shapes", "64,4096,32,8,128"]),
    ]


def _fp8():
    # issue 46: the GPU test against float64 at ragged sizes, then fp8 e4m3
    # with DeepGEMM's 1x128 / 128x128 scales at
    # 4096x7168x16384 and 8192^3 and grouped contiguous (8 x 4096 rows, N
    # 4096, K 7168), torch._scaled_mm (block-wise and row-wise scales; per
    # group, and _scaled_grouped_mm) in the same run, and the sample's
    # memcheck at its small sizes
    # (see _sanitizers for the warm run).
    return [
        Step("fp8_blockscaled_gemm_gpu_test", "gtest",
             ["{build}/tests/samples/fp8_blockscaled_gemm_gpu_test"],
             timeout=240),
        _sample_bench("tessel_fp8_blockscaled_gemm", "fp8_blockscaled_gemm",
                      ["--size", "bench"], ["--size=4096x7168x16384"]),
        _peers("peers_fp8_blockscaled", "fp8_blockscaled,fp8_grouped",
               ["--blockscaled-shapes", "4096,7168,16384"],
               quick_only="fp8_blockscaled", timeout=300),
        # Warm first: compute-sanitizer over cold compiles crashed (above).
        Step("warm_fp8_blockscaled_gemm", "warm",
             ["{build}/samples/fp8_blockscaled_gemm", "--check",
              "--size=small"], SKIP, timeout=240),
        Step("memcheck_fp8_blockscaled_gemm", "sanitizer",
             SANITIZER + ["memcheck", "{build}/samples/fp8_blockscaled_gemm",
                          "--check", "--size=small"], SKIP, timeout=240),
    ]


def _w4a16():
    # issue 46: int4 weights, a scale per 128 of K, M = 1, 16, 64, 256 at
    # N = K = 8192 and 28672x8192; torch f16 matmul on the dequantized
    # weights in the same run (goal 3.0x at M <= 16, 1.0x at 256); the
    # sample warm, then memcheck at its small sizes.
    return [
        _sample_bench("tessel_w4a16_gemm", "w4a16_gemm", ["--size", "bench"],
                      ["--size=16x8192x8192"]),
        _peers("peers_w4a16", "w4a16",
               ["--w4a16-shapes", "16,8192,8192"], timeout=200),
        Step("warm_w4a16_gemm", "warm",
             ["{build}/samples/w4a16_gemm", "--check", "--size=small"], SKIP,
             timeout=240),
        Step("memcheck_w4a16_gemm", "sanitizer",
             SANITIZER + ["memcheck", "{build}/samples/w4a16_gemm", "--check",
                          "--size=small"], SKIP, timeout=240),
    ]


def _random(seed, scale):
    return Step("random_programs_seed_{}".format(seed), "gtest",
                ["{build}/tests/fuzz/tessel_random_gpu_test"], SKIP,
                env={"TESSEL_FUZZ_SEED": str(seed),
                     "TESSEL_FUZZ_SCALE": str(scale)}, timeout=240)


def _fuzz():
    return [
        # The CI seed: random GEMM, row and staged element-wise programs
        # against the interpreter (tests/fuzz/random_gpu_test.cc).
        Step("random_programs", "gtest",
             ["{build}/tests/fuzz/tessel_random_gpu_test"], timeout=240),
        Step("strided_views", "gtest",
             ["{build}/tests/runtime/tessel_strided_view_gpu_test",
              "--gtest_filter=StridedViewGpu.*"], timeout=120),
        _random(20261201, 3),
        _random(11, 3),
    ]


def _grouped():
    # issue 46: MoE grouped GEMM, f16, B [G, N, K], 8 and 64 experts at
    # ragged sizes (a quarter of the groups 0 or 1 row); one cuBLAS matmul
    # per group (and torch._grouped_mm) in the same run; the sample's
    # memcheck at its small sizes after a warm run.
    return [
        _sample_bench("tessel_grouped_gemm", "grouped_gemm",
                      ["--size", "bench"],
                      ["--experts=64", "--mean-rows=128", "--size=2048x2048"]),
        _peers("peers_grouped_gemm", "grouped_gemm",
               ["--grouped-shapes", "64,128,2048"], timeout=300),
        Step("warm_grouped_gemm", "warm",
             ["{build}/samples/grouped_gemm", "--check", "--size=small"],
             SKIP, timeout=240),
        Step("memcheck_grouped_gemm", "sanitizer",
             SANITIZER + ["memcheck", "{build}/samples/grouped_gemm",
                          "--check", "--size=small"], SKIP, timeout=240),
    ]


def _sanitizers():
    def check(tool, sample, quick):
        argv = SANITIZER + [tool, "{build}/samples/" + sample, "--check",
                            "--size=small"]
        return Step("{}_{}".format(tool, sample), "sanitizer", argv,
                    None if quick else SKIP, timeout=240)
    quick = {("memcheck", "gemm"), ("memcheck", "flash_attention"),
             ("memcheck", "rmsnorm"), ("racecheck", "gemm")}
    plan = [("memcheck", s) for s in ("gemm", "splitk_gemm", "flash_attention",
                                      "linear_attention", "rmsnorm",
                                      "layernorm", "softmax",
                                      "decode_attention")]
    plan += [("racecheck", s) for s in ("gemm", "flash_attention",
                                        "linear_attention", "rmsnorm",
                                        "decode_attention")]
    plan += [("synccheck", s) for s in ("gemm", "flash_attention",
                                        "decode_attention")]
    # Each sample runs once without a sanitizer first, so the kernels are in
    # the disk cache: on a fresh machine compute-sanitizer over the cold
    # compiles (ptxas children) crashed memcheck_gemm with SIGSEGV (H100,
    # 2026-12-07) before any kernel ran.
    samples = sorted({s for _, s in plan})
    steps = [Step("warm_" + s, "warm",
                  ["{build}/samples/" + s, "--check", "--size=small"],
                  timeout=240) for s in samples]
    steps += [check(tool, s, (tool, s) in quick) for tool, s in plan]
    steps.append(Step("memcheck_staged_programs", "sanitizer",
                      SANITIZER + ["memcheck",
                                   "{build}/tests/fuzz/tessel_random_gpu_test",
                                   "--gtest_filter=Staged/*"], SKIP,
                      timeout=240))
    return steps


def _tests(build):
    """Every GPU test binary the staged build holds, whole."""
    found = sorted(glob.glob(os.path.join(build, "tests", "*", "*gpu_test")))
    rel = [os.path.relpath(p, build) for p in found]
    return [Step(os.path.basename(r), "gtest", ["{build}/" + r], timeout=300)
            for r in rel]


def _jit():
    return [Step("jit_bench", "raw", ["{build}/bench/jit_bench", "--out",
                                      "{json}"], timeout=120)]


# The suites `run` takes with no names, in this order.
DEFAULT = ["gemm", "attention", "rows", "linear-attention", "fuzz",
           "sanitizers"]
_BUILDERS = {"gemm": _gemm, "attention": _attention, "rows": _rows,
             "linear-attention": _linear_attention, "fuzz": _fuzz,
             "sanitizers": _sanitizers, "jit": _jit, "decode": _decode,
             "w4a16": _w4a16,
             "fp8": _fp8, "grouped": _grouped}
NAMES = DEFAULT + ["tests", "jit", "decode", "w4a16", "fp8", "grouped"]
# Binaries (relative to the build folder) a suite needs staged.
TESTS_GLOB = "tests/*/*gpu_test"


def steps(suite, build):
    if suite == "tests":
        return _tests(build)
    if suite not in _BUILDERS:
        raise KeyError(suite)
    return _BUILDERS[suite]()


def binaries(suite):
    """The build-relative paths a suite's steps run (for staging)."""
    if suite == "tests":
        return [TESTS_GLOB]
    out = []
    for step in steps(suite, ""):
        for arg in step.argv:
            if arg.startswith("{build}/") and arg[8:] not in out:
                out.append(arg[8:])
    return out
