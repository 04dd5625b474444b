#include "samples/rmsnorm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/row_params.h"
#include "samples/row_tile.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

absl::StatusOr<Program> MakeRmsNorm(const nlohmann::json& json) {
  KernelParams params(json);
  RmsNormConfig c;
  SAMPLES_RETURN_IF_ERROR(ReadRowParams(params, c));
  SAMPLES_ASSIGN_OR_RETURN(c.eps, params.Number("eps", c.eps));
  SAMPLES_ASSIGN_OR_RETURN(c.keep_dtype,
                           params.Bool("keep_dtype", c.keep_dtype));
  SAMPLES_ASSIGN_OR_RETURN(c.prefetch, params.Bool("prefetch", c.prefetch));
  SAMPLES_ASSIGN_OR_RETURN(c.w_shared, params.Bool("w_shared", c.w_shared));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return RmsNormProgram(c);
}

}  // namespace

absl::StatusOr<Program> RmsNormProgram(const RmsNormConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckRowConfig("rmsnorm", c.M, c.N, c.dtype,
                                         c.block_m, c.block_n, c.threads));
  if (!(c.eps >= 0)) {
    return absl::InvalidArgumentError("rmsnorm: eps must be >= 0");
  }
  // A row that fits one chunk is loaded once and kept. Rows of 4096 and
  // more take 512 threads (16 elements each): H200, 4096x8192 0.03551 ->
  // 0.03454 ms, 16384x4096 0.06778 -> 0.06668 (CUDA graphs;
  // 8d2b18f:bench/results/h200_s10/call2_gemm/rows/).
  const int threads = c.threads > 0 ? c.threads : c.N >= 4096 ? 512 : 0;
  const RowTile tile = PickRowTile(c.N, c.block_m, c.block_n, threads);
  const int bm = tile.block_m, bn = tile.block_n, chunks = tile.chunks;
  if (c.prefetch && (c.grid <= 0 || chunks != 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rmsnorm: prefetch needs grid > 0 and a row in one chunk (block_n ", bn,
        ", N ", c.N, ", grid ", c.grid, ")"));
  }
  T::ProgramBuilder p("rmsnorm");
  auto X = p.tensor("X", {c.M, c.N}, c.dtype);
  std::optional<T::Buffer> R;
  if (c.residual) R = p.tensor("R", {c.M, c.N}, c.dtype);
  auto W = p.tensor("W", {c.N}, c.dtype);
  auto Y = p.tensor("Y", {c.M, c.N}, c.dtype);
  {
    T::Kernel kernel(RowBlocks(c.M, bm, c.grid), {.threads = tile.threads});
    auto [bx] = kernel.block_index();
    const DataType x_dtype = c.keep_dtype ? c.dtype : f32;
    auto x = T::alloc_fragment({bm, bn}, x_dtype, "x");
    auto sq = T::alloc_fragment({bm, bn}, f32, "sq");
    // W broadcasts over the rows: each thread loads the columns it holds,
    // kept in the input dtype (half the registers) and widened where used.
    auto w = T::alloc_fragment({bn}, c.dtype, "w");
    auto y = T::alloc_fragment({bm, bn}, c.dtype, "y");
    auto sum_sq = T::alloc_fragment({bm}, f32, "sum_sq");
    auto rstd = T::alloc_fragment({bm}, f32, "rstd");
    auto xf = [&](const T::Expr& r, const T::Expr& col) -> T::Expr {
      return c.keep_dtype ? T::cast(x(r, col), f32) : T::Expr(x(r, col));
    };
    // A persistent block loads a one-chunk W once for all its rows: into
    // the registers it keeps, or into shared memory read per row tile.
    const bool w_once = chunks == 1 && c.grid > 0;
    std::optional<T::Buffer> w_smem;
    if (c.w_shared) {
      w_smem = T::alloc_shared({bn}, c.dtype, "w_smem");
      T::copy(W(0), *w_smem);
    } else if (w_once) {
      T::copy(W(0), w);
    }
    // The rows of tile row0 from x (chunk j): sum of squares, then the
    // scaled store.
    auto normalize = [&](const T::Expr& row0) {
      T::clear(sum_sq);
      for (auto j : T::Serial(chunks, {.name = "j"})) {
        // Columns past N read as zeros and add nothing.
        if (!c.prefetch) LoadRows(X, R, row0, j * bn, x, bm, bn);
        // A row of one chunk loads W with X, so that W's latency hides
        // under X's rather than following the reduction's barrier.
        if (chunks == 1 && !w_once) T::copy(W(0), w);
        if (w_smem) T::copy(*w_smem, w);
        for (auto [r, col] : T::Parallel(bm, bn))
          sq(r, col) = xf(r, col) * xf(r, col);
        T::reduce_sum(sq, sum_sq, {.dim = 1, .clear = false});
      }
      for (auto r : T::Parallel(bm)) {
        rstd(r) = T::rsqrt(sum_sq(r) / static_cast<float>(c.N) +
                           static_cast<float>(c.eps));
      }
      for (auto j : T::Serial(chunks, {.name = "j"})) {
        if (chunks > 1) LoadRows(X, R, row0, j * bn, x, bm, bn);
        if (chunks > 1) T::copy(W(j * bn), w);
        for (auto [r, col] : T::Parallel(bm, bn)) {
          y(r, col) = xf(r, col) * rstd(r) * T::cast(w(col), f32);
        }
        T::copy(y, Y(row0, j * bn));
      }
    };
    if (!c.prefetch) {
      ForEachRowTile(bx, c.M, bm, c.grid, normalize);
    } else {
      // The next tile's loads are in flight while this one reduces and
      // stores; a tile past M reads zeros.
      const int tiles = (c.M + bm - 1) / bm;
      const int blocks = std::min(c.grid, tiles);
      auto x_next = T::alloc_fragment({bm, bn}, x_dtype, "x_next");
      LoadRows(X, R, bx * bm, 0, x, bm, bn);
      for (auto t : T::Serial((tiles + blocks - 1) / blocks, {.name = "t"})) {
        const T::Expr row0 = (t * blocks + bx) * bm;
        LoadRows(X, R, row0 + blocks * bm, 0, x_next, bm, bn);
        normalize(row0);
        for (auto [r, col] : T::Parallel(bm, bn)) x(r, col) = x_next(r, col);
      }
    }
  }
  return p.finish();
}

HostTensor ReferenceRmsNorm(const HostTensor& x, const HostTensor& w,
                            double eps) {
  const int64_t M = x.shape()[0], N = x.shape()[1];
  std::vector<double> xv = x.to_doubles(), wv = w.to_doubles();
  std::vector<double> out(M * N);
  ParallelFor(M, [&](int64_t i) {
    double ss = 0;
    for (int64_t j = 0; j < N; ++j) ss += xv[i * N + j] * xv[i * N + j];
    const double rstd = 1.0 / std::sqrt(ss / N + eps);
    for (int64_t j = 0; j < N; ++j)
      out[i * N + j] = xv[i * N + j] * rstd * wv[j];
  });
  return F64Tensor({M, N}, std::move(out));
}

absl::StatusOr<Workload> RmsNormWorkload(const RmsNormConfig& c,
                                         uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, RmsNormProgram(c));
  Workload w;
  w.kernel = "rmsnorm";
  w.shape = absl::StrCat(c.M, "x", c.N, " ", DtypeName(c.dtype),
                         c.residual ? " +residual" : "");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["X"],
                           RandomInput(c.dtype, {c.M, c.N}, seed));
  std::vector<Arg> args = {"X"};
  if (c.residual) {
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["R"],
                             RandomInput(c.dtype, {c.M, c.N}, seed + 3));
    args.push_back("R");
  }
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["W"],
                           RandomInput(c.dtype, {c.N}, seed + 1));
  w.tensors["Y"] = Zeros(c.dtype, {c.M, c.N});
  args.push_back("W");
  args.push_back("Y");
  w.steps.push_back({.program = program, .args = args});
  w.outputs = {"Y"};
  w.label = {.kernel = c.residual ? "rmsnorm_residual" : "rmsnorm",
             .dtype = DtypeName(c.dtype),
             .shape = {{"M", c.M}, {"N", c.N}},
             .size = absl::StrCat(c.M, "x", c.N)};
  w.bytes = double(dtype_bytes(c.dtype)) *
            ((c.residual ? 3.0 : 2.0) * c.M * c.N + c.N);
  const double eps = c.eps;
  const double tol = c.dtype == f32 ? 1e-4 : 1e-2;
  const bool residual = c.residual;
  w.reference =
      [eps, tol,
       residual](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const HostTensor& x = w.tensors.at("X");
    HostTensor h = residual ? AddResidual(x, w.tensors.at("R")) : x;
    return std::vector<Expected>{
        {"Y", ReferenceRmsNorm(h, w.tensors.at("W"), eps), tol, tol}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(rmsnorm, MakeRmsNorm);

}  // namespace tessel::samples
