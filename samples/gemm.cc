#include "samples/gemm.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/gemm_k_slices.h"
#include "samples/gemm_padded_rows.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

absl::Status CheckConfig(const GemmConfig& c) {
  if (c.M <= 0 || c.N <= 0 || c.K <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemm: sizes must be positive, got M=", c.M, " N=", c.N, " K=", c.K));
  }
  if (c.in_dtype != f16 && c.in_dtype != bf16 && c.in_dtype != fp8_e4m3 &&
      c.in_dtype != fp8_e5m2) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemm: inputs must be f16, bf16, fp8_e4m3 or fp8_e5m2, "
                     "got ",
                     DtypeName(c.in_dtype)));
  }
  if (c.out_dtype != f16 && c.out_dtype != bf16 && c.out_dtype != f32) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemm: the output must be f16, bf16 or f32, got ",
                     DtypeName(c.out_dtype)));
  }
  const GemmTile& t = c.tile;
  if (t.block_m <= 0 || t.block_n <= 0 || t.block_k <= 0 || t.num_stages < 0 ||
      t.threads <= 0 || t.panel < 0) {
    return absl::InvalidArgumentError("gemm: the tile sizes must be positive");
  }
  // The tensor cores' instructions are issued by whole warps.
  if (t.threads % 32 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemm: threads=", t.threads,
                     " must be a multiple of 32 (whole warps)"));
  }
  return absl::OkStatus();
}

// The tensors of the gemm kernel; C is the [slices, M, N] f32 partial sums
// when K is split.
struct GemmOperands {
  std::optional<T::Buffer> A, B, Bias, C;
};

// One output tile (bx, by) of the kernel, over all of K, or over K slice
// `slice` (GemmKStepsPerSlice steps from slice * that many) when K is split.
void RecordTile(const GemmConfig& c, const GemmOperands& x, T::Expr bx,
                T::Expr by, std::optional<T::Expr> slice) {
  const GemmTile& t = c.tile;
  const bool ta = TransposedA(c.layout), tb = TransposedB(c.layout);
  const T::Buffer &A = *x.A, &B = *x.B, &C = *x.C;
  auto A_shared =
      ta ? T::alloc_shared({t.block_k, t.block_m}, c.in_dtype, "A_shared")
         : T::alloc_shared({t.block_m, t.block_k}, c.in_dtype, "A_shared");
  auto B_shared =
      tb ? T::alloc_shared({t.block_n, t.block_k}, c.in_dtype, "B_shared")
         : T::alloc_shared({t.block_k, t.block_n}, c.in_dtype, "B_shared");
  auto C_local = T::alloc_fragment({t.block_m, t.block_n}, f32, "C_local");
  if (t.panel > 0) T::use_swizzle(t.panel);
  T::clear(C_local);
  const int steps = GemmKStepsPerSlice(c);
  T::Expr k_steps = slice ? T::Expr(steps) : T::ceildiv(c.K, t.block_k);
  for (auto k :
       T::Pipelined(k_steps, {.num_stages = t.num_stages, .name = "k"})) {
    T::Expr k0 =
        slice ? *slice * (steps * t.block_k) + k * t.block_k : k * t.block_k;
    if (ta) {
      T::copy(A(k0, by * t.block_m), A_shared);
    } else {
      T::copy(A(by * t.block_m, k0), A_shared);
    }
    if (tb) {
      T::copy(B(bx * t.block_n, k0), B_shared);
    } else {
      T::copy(B(k0, bx * t.block_n), B_shared);
    }
    T::gemm(A_shared, B_shared, C_local,
            {.transpose_A = ta, .transpose_B = tb});
  }
  if (slice) {
    T::copy(C_local, C(*slice, T::slice(by * t.block_m, (by + 1) * t.block_m),
                       T::slice(bx * t.block_n, (bx + 1) * t.block_n)));
    return;
  }
  if (x.Bias) {
    // Each thread loads the bias columns its accumulator elements have.
    auto bias_f = T::alloc_fragment({t.block_n}, f32, "bias_f");
    T::copy((*x.Bias)(bx * t.block_n), bias_f);
    for (auto [i, j] : T::Parallel(t.block_m, t.block_n))
      C_local(i, j) = T::max(C_local(i, j) + bias_f(j), 0.0f);
  }
  T::copy(C_local, C(by * t.block_m, bx * t.block_n));
}

// Without tile params, the target's tile for the shape (DefaultGemmTile,
// what the sample runs there on a GPU of 132 SMs).
absl::StatusOr<Program> MakeGemm(const nlohmann::json& json,
                                 const Target& target) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  GemmConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.in_dtype, params.Dtype("in_dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.out_dtype, params.Dtype("out_dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(std::string layout, params.String("layout", "NN"));
  SAMPLES_ASSIGN_OR_RETURN(c.layout, ParseGemmLayout(layout));
  GemmTile& t = c.tile;
  SAMPLES_ASSIGN_OR_RETURN(t.block_m,
                           params.IntInRange("block_m", 1, 512, t.block_m));
  SAMPLES_ASSIGN_OR_RETURN(t.block_n,
                           params.IntInRange("block_n", 1, 512, t.block_n));
  SAMPLES_ASSIGN_OR_RETURN(t.block_k,
                           params.IntInRange("block_k", 1, 512, t.block_k));
  SAMPLES_ASSIGN_OR_RETURN(t.num_stages,
                           params.IntInRange("num_stages", 0, 8, t.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(t.threads,
                           params.IntInRange("threads", 32, 1024, t.threads));
  SAMPLES_ASSIGN_OR_RETURN(t.panel, params.IntInRange("panel", 0, 64, t.panel));
  SAMPLES_ASSIGN_OR_RETURN(t.split_k,
                           params.IntInRange("split_k", 1, 1024, t.split_k));
  SAMPLES_ASSIGN_OR_RETURN(c.bias_relu, params.Bool("bias_relu", c.bias_relu));
  SAMPLES_ASSIGN_OR_RETURN(t.pad_rows, params.Bool("pad_rows", t.pad_rows));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  if (!json.contains("block_m") && !json.contains("block_n") &&
      !json.contains("block_k") && !json.contains("num_stages") &&
      !json.contains("threads")) {
    const GemmTile fit =
        DefaultGemmTile(target.sm(), c.in_dtype, c.M, c.N, c.K);
    t.block_m = fit.block_m, t.block_n = fit.block_n, t.block_k = fit.block_k;
    t.num_stages = fit.num_stages, t.threads = fit.threads;
  }
  return GemmProgram(c);
}

}  // namespace

std::string_view GemmLayoutName(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::kNN:
      return "NN";
    case GemmLayout::kNT:
      return "NT";
    case GemmLayout::kTN:
      return "TN";
    case GemmLayout::kTT:
      return "TT";
  }
  return "?";
}

absl::StatusOr<GemmLayout> ParseGemmLayout(std::string_view name) {
  std::string upper = absl::AsciiStrToUpper(std::string(name));
  for (GemmLayout l :
       {GemmLayout::kNN, GemmLayout::kNT, GemmLayout::kTN, GemmLayout::kTT}) {
    if (upper == GemmLayoutName(l)) return l;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("gemm: unknown layout \"", std::string(name),
                   "\" (expected NN, NT, TN or TT)"));
}

absl::StatusOr<Program> GemmProgram(const GemmConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const GemmTile& t = c.tile;
  const int slices = GemmKSlices(c);
  const bool ta = TransposedA(c.layout), tb = TransposedB(c.layout);
  T::ProgramBuilder p(absl::StrCat("gemm_",
                                   std::string(GemmLayoutName(c.layout)),
                                   slices > 1 ? "_split_k" : ""));
  // Rows padded (tile.pad_rows) where the stored ones are not 16-byte
  // aligned: the gemm reads the padded copies.
  const int64_t a_cols = GemmPaddedCols(c, 'A'),
                b_cols = GemmPaddedCols(c, 'B');
  GemmOperands x{
      .A = ta ? p.tensor("A", {c.K, a_cols}, c.in_dtype)
              : p.tensor("A", {c.M, a_cols}, c.in_dtype),
      .B = tb ? p.tensor("B", {c.N, b_cols}, c.in_dtype)
              : p.tensor("B", {c.K, b_cols}, c.in_dtype),
  };
  // Split K: the bias + ReLU epilogue runs in the reduce kernel.
  if (c.bias_relu && slices == 1) x.Bias = p.tensor("bias", {c.N}, c.in_dtype);
  x.C = slices > 1 ? p.tensor("partials", {slices, c.M, c.N}, f32)
                   : p.tensor("C", {c.M, c.N}, c.out_dtype);
  if (slices > 1) {
    T::Kernel kernel(T::ceildiv(c.N, t.block_n), T::ceildiv(c.M, t.block_m),
                     slices, {.threads = t.threads});
    auto [bx, by, bz] = kernel.block_index();
    RecordTile(c, x, bx, by, bz);
  } else {
    T::Kernel kernel(T::ceildiv(c.N, t.block_n), T::ceildiv(c.M, t.block_m),
                     {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    RecordTile(c, x, bx, by, std::nullopt);
  }
  return p.finish();
}

HostTensor ReferenceGemm(const HostTensor& a, const HostTensor& b,
                         GemmLayout layout) {
  const bool ta = TransposedA(layout), tb = TransposedB(layout);
  const int64_t M = ta ? a.shape()[1] : a.shape()[0];
  const int64_t K = ta ? a.shape()[0] : a.shape()[1];
  const int64_t N = tb ? b.shape()[0] : b.shape()[1];
  // Row-major copies of op(A) [M, K] and op(B)^T [N, K]: unit-stride dots.
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  std::vector<double> at(M * K), bt(N * K);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      at[m * K + k] = ta ? av[k * M + m] : av[m * K + k];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      bt[n * K + k] = tb ? bv[n * K + k] : bv[k * N + n];
  std::vector<double> c(M * N);
  ParallelFor(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += at[m * K + k] * bt[n * K + k];
      c[m * N + n] = sum;
    }
  });
  return F64Tensor({M, N}, std::move(c));
}

double GemmTolerance(DataType out_dtype) {
  return out_dtype == f32 ? 1e-3 : 1e-2;
}

// fp8 gemms add in the tensor cores' fp8 accumulator, which keeps about 14
// bits (DeepSeek-V3 sec. 3.3.2; cuBLASLt adds its partial sums into f32
// every few k steps unless told use_fast_accum): the error grows with K.
// For inputs in [-1, 1] (sums of magnitude ~ sqrt(K) / 3), K / 4096 on top:
// measured on the H200 max 0.24 at K = 2048 and 0.09 at K = 1000, where a
// wrong tile or stage is off by the sum itself.
double Fp8AccumulationTolerance(int64_t K) { return double(K) / 4096; }

absl::StatusOr<Workload> GemmWorkload(const GemmConfig& c, uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, GemmProgram(c));
  const bool ta = TransposedA(c.layout), tb = TransposedB(c.layout);
  std::vector<int64_t> a_shape =
      ta ? std::vector<int64_t>{c.K, c.M} : std::vector<int64_t>{c.M, c.K};
  std::vector<int64_t> b_shape =
      tb ? std::vector<int64_t>{c.N, c.K} : std::vector<int64_t>{c.K, c.N};
  Workload w;
  w.kernel = "gemm";
  w.shape = absl::StrCat(
      c.M, "x", c.N, "x", c.K, " ", DtypeName(c.in_dtype), "->",
      DtypeName(c.out_dtype), " ", std::string(GemmLayoutName(c.layout)),
      " tile ", c.tile.block_m, "x", c.tile.block_n, "x", c.tile.block_k, " s",
      c.tile.num_stages, " t", c.tile.threads,
      c.tile.pingpong ? " pingpong" : "",
      c.tile.cluster > 1 ? absl::StrCat(" cluster", c.tile.cluster) : "");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["A"],
                           RandomInput(c.in_dtype, a_shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["B"],
                           RandomInput(c.in_dtype, b_shape, seed + 1));
  w.tensors["C"] = Zeros(c.out_dtype, {c.M, c.N});
  std::vector<Arg> args = {"A", "B", "C"};
  if (c.bias_relu) {
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["bias"],
                             RandomInput(c.in_dtype, {c.N}, seed + 2));
    args = {"A", "B", "bias", "C"};
    w.shape += " +bias+relu";
  }
  if (!c.tma_store) w.shape += " direct-stores";  // the default is TMA stores
  // The tile's schedule switches, on the gemm step (not the reduce).
  auto schedule = [&c](Step& gemm) {
    gemm.pass_config.pingpong_consumers = c.tile.pingpong;
    gemm.pass_config.cluster_size = c.tile.cluster;
    gemm.pass_config.disable_persistent_grid = !c.tile.persistent;
    gemm.pass_config.disable_tma_store_epilogue = !c.tma_store;
  };
  w.steps.push_back({.program = program, .args = args});
  schedule(w.steps[0]);
  // The gemm reads padded copies of the operands whose rows are not 16-byte
  // aligned, which copy kernels ahead of it write.
  std::vector<Step> pads;
  auto pad = [&](char operand, const std::vector<int64_t>& shape,
                 Arg& arg) -> absl::Status {
    if (!GemmPadsOperand(c, operand)) return absl::OkStatus();
    const int64_t padded = GemmPaddedCols(c, operand);
    SAMPLES_ASSIGN_OR_RETURN(
        Program copy, PadRowsProgram(shape[0], shape[1], padded, c.in_dtype));
    const std::string name = absl::StrCat(std::string(1, operand), "_padded");
    w.tensors[name] = Zeros(c.in_dtype, {shape[0], padded});
    pads.push_back({.program = copy, .args = {arg, name}});
    arg = name;
    w.shape += absl::StrCat(" ", name, "=", padded);
    return absl::OkStatus();
  };
  Arg a_arg = "A", b_arg = "B";
  SAMPLES_RETURN_IF_ERROR(pad('A', a_shape, a_arg));
  SAMPLES_RETURN_IF_ERROR(pad('B', b_shape, b_arg));
  w.steps[0].args[0] = a_arg, w.steps[0].args[1] = b_arg;
  if (const int slices = GemmKSlices(c); slices > 1) {
    // The gemm stores each K slice's partial sums, the reduce kernel adds
    // them (and the bias) into C.
    SAMPLES_ASSIGN_OR_RETURN(Program reduce, GemmSplitKReduceProgram(c));
    w.tensors["partials"] = Zeros(f32, {slices, c.M, c.N});
    args.erase(args.begin(), args.begin() + 2);  // [bias,] C
    args.insert(args.begin(), "partials");
    w.steps = {{.program = program, .args = {a_arg, b_arg, "partials"}},
               {.program = reduce, .args = args}};
    schedule(w.steps[0]);
    w.shape += absl::StrCat(" split_k=", slices);
  }
  w.main_step = static_cast<int>(pads.size());
  w.steps.insert(w.steps.begin(), pads.begin(), pads.end());
  w.outputs = {"C"};
  w.flops = 2.0 * c.M * c.N * c.K;
  w.bytes = double(dtype_bytes(c.in_dtype)) *
                (double(c.M) * c.K + double(c.K) * c.N) +
            double(dtype_bytes(c.out_dtype)) * c.M * c.N;
  w.label = {.kernel = c.bias_relu ? "gemm_bias_relu" : "gemm",
             .variant = std::string(GemmLayoutName(c.layout)),
             .dtype = DtypeName(c.in_dtype),
             .shape = {{"M", c.M}, {"N", c.N}, {"K", c.K}},
             .size = c.M == c.N && c.N == c.K
                         ? absl::StrCat(c.M, "^3")
                         : absl::StrCat(c.M, "x", c.N, "x", c.K)};
  const GemmLayout layout = c.layout;
  const double tol = GemmTolerance(c.out_dtype);
  const double atol =
      dtype_bytes(c.in_dtype) == 1 ? tol + Fp8AccumulationTolerance(c.K) : tol;
  const bool bias_relu = c.bias_relu;
  w.reference =
      [layout, tol, atol,
       bias_relu](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    HostTensor ref =
        ReferenceGemm(w.tensors.at("A"), w.tensors.at("B"), layout);
    if (bias_relu) {
      const HostTensor& bias = w.tensors.at("bias");
      const int64_t n = bias.num_elements();
      for (int64_t e = 0; e < ref.num_elements(); ++e)
        ref.set_flat(e, std::max(0.0, ref.get_flat(e) + bias.get_flat(e % n)));
    }
    return std::vector<Expected>{{"C", std::move(ref), tol, atol}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(gemm, MakeGemm);

}  // namespace tessel::samples
