#include "samples/layernorm.h"

#include <cmath>
#include <limits>
#include <string>
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

absl::StatusOr<Program> MakeLayerNorm(const nlohmann::json& json) {
  KernelParams params(json);
  LayerNormConfig c;
  SAMPLES_RETURN_IF_ERROR(ReadRowParams(params, c));
  SAMPLES_ASSIGN_OR_RETURN(c.eps, params.Number("eps", c.eps));
  SAMPLES_ASSIGN_OR_RETURN(c.wb_shared, params.Bool("wb_shared", c.wb_shared));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return LayerNormProgram(c);
}

}  // namespace

absl::StatusOr<Program> LayerNormProgram(const LayerNormConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckRowConfig("layernorm", c.M, c.N, c.dtype,
                                         c.block_m, c.block_n, c.threads));
  if (!(c.eps >= 0)) {
    return absl::InvalidArgumentError("layernorm: eps must be >= 0");
  }
  const RowTile tile = PickRowTile(c.N, c.block_m, c.block_n, c.threads);
  const int bm = tile.block_m, bn = tile.block_n, chunks = tile.chunks;
  if (c.wb_shared && (c.grid <= 0 || chunks != 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "layernorm: wb_shared needs grid > 0 and a row in one chunk (block_n ",
        bn, ", N ", c.N, ", grid ", c.grid, ")"));
  }
  const float inv_n = 1.0f / static_cast<float>(c.N);
  T::ProgramBuilder p("layernorm");
  auto X = p.tensor("X", {c.M, c.N}, c.dtype);
  std::optional<T::Buffer> R;
  if (c.residual) R = p.tensor("R", {c.M, c.N}, c.dtype);
  auto W = p.tensor("W", {c.N}, c.dtype);
  auto B = p.tensor("B", {c.N}, c.dtype);
  auto Y = p.tensor("Y", {c.M, c.N}, c.dtype);
  {
    T::Kernel kernel(RowBlocks(c.M, bm, c.grid), {.threads = tile.threads});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({bm, bn}, f32, "x");
    auto d = T::alloc_fragment({bm, bn}, f32, "d");
    auto y = T::alloc_fragment({bm, bn}, c.dtype, "y");
    // W and B broadcast over the rows: each thread loads its columns, kept
    // in the input dtype (half the registers) and widened where used.
    auto w = T::alloc_fragment({bn}, c.dtype, "w");
    auto b = T::alloc_fragment({bn}, c.dtype, "b");
    auto sum = T::alloc_fragment({bm}, f32, "sum");
    auto sum_sq = T::alloc_fragment({bm}, f32, "sum_sq");
    auto mean = T::alloc_fragment({bm}, f32, "mean");
    auto rstd = T::alloc_fragment({bm}, f32, "rstd");
    // h = X (+ R) of chunk j; columns past N read as zeros.
    auto load = [&](const T::Expr& row0, const T::Expr& j) {
      LoadRows(X, R, row0, j * bn, x, bm, bn);
    };
    // A persistent block loads a one-chunk W and B once for all its rows:
    // into the registers it keeps, or into shared memory read per row tile.
    const bool wb_once = chunks == 1 && c.grid > 0;
    std::optional<T::Buffer> w_smem, b_smem;
    if (c.wb_shared) {
      w_smem = T::alloc_shared({bn}, c.dtype, "w_smem");
      b_smem = T::alloc_shared({bn}, c.dtype, "b_smem");
      T::copy(W(0), *w_smem);
      T::copy(B(0), *b_smem);
    } else if (wb_once) {
      T::copy(W(0), w);
      T::copy(B(0), b);
    }
    ForEachRowTile(bx, c.M, bm, c.grid, [&](const T::Expr& row0) {
      if (chunks == 1) {
        load(row0, 0);
        // W and B load with X: their latency hides under X's rather than
        // following the reductions' barriers.
        if (!wb_once) {
          T::copy(W(0), w);
          T::copy(B(0), b);
        }
        if (c.wb_shared) {
          T::copy(*w_smem, w);
          T::copy(*b_smem, b);
        }
        T::reduce_sum(x, sum, {.dim = 1});
        for (auto i : T::Parallel(bm)) mean(i) = sum(i) * inv_n;
        // Around the mean; the masked columns past N must add nothing.
        for (auto [i, col] : T::Parallel(bm, bn)) {
          d(i, col) = T::select(col < c.N, x(i, col) - mean(i), 0.0f);
          d(i, col) = d(i, col) * d(i, col);
        }
        T::reduce_sum(d, sum_sq, {.dim = 1});
        for (auto i : T::Parallel(bm))
          rstd(i) = T::rsqrt(sum_sq(i) * inv_n + static_cast<float>(c.eps));
      } else {
        T::clear(sum);
        T::clear(sum_sq);
        for (auto j : T::Serial(chunks, {.name = "j"})) {
          load(row0, j);
          for (auto [i, col] : T::Parallel(bm, bn))
            d(i, col) = x(i, col) * x(i, col);
          T::reduce_sum(x, sum, {.dim = 1, .clear = false});
          T::reduce_sum(d, sum_sq, {.dim = 1, .clear = false});
        }
        for (auto i : T::Parallel(bm)) {
          mean(i) = sum(i) * inv_n;
          rstd(i) =
              T::rsqrt(T::max(sum_sq(i) * inv_n - mean(i) * mean(i), 0.0f) +
                       static_cast<float>(c.eps));
        }
      }
      for (auto j : T::Serial(chunks, {.name = "j"})) {
        if (chunks > 1) load(row0, j);
        if (chunks > 1) {
          T::copy(W(j * bn), w);
          T::copy(B(j * bn), b);
        }
        for (auto [i, col] : T::Parallel(bm, bn)) {
          y(i, col) = (x(i, col) - mean(i)) * rstd(i) * T::cast(w(col), f32) +
                      T::cast(b(col), f32);
        }
        T::copy(y, Y(row0, j * bn));
      }
    });
  }
  return p.finish();
}

HostTensor ReferenceLayerNorm(const HostTensor& x, const HostTensor* r,
                              const HostTensor& w, const HostTensor& b,
                              double eps) {
  const int64_t M = x.shape()[0], N = x.shape()[1];
  std::vector<double> xv = x.to_doubles(), wv = w.to_doubles(),
                      bv = b.to_doubles();
  if (r != nullptr) {
    std::vector<double> rv = r->to_doubles();
    for (size_t i = 0; i < xv.size(); ++i) xv[i] += rv[i];
  }
  std::vector<double> out(M * N);
  ParallelFor(M, [&](int64_t i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < N; ++j) mean += xv[i * N + j];
    mean /= N;
    for (int64_t j = 0; j < N; ++j)
      var += (xv[i * N + j] - mean) * (xv[i * N + j] - mean);
    const double rstd = 1.0 / std::sqrt(var / N + eps);
    for (int64_t j = 0; j < N; ++j)
      out[i * N + j] = (xv[i * N + j] - mean) * rstd * wv[j] + bv[j];
  });
  return F64Tensor({M, N}, std::move(out));
}

absl::StatusOr<Workload> LayerNormWorkload(const LayerNormConfig& c,
                                           uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, LayerNormProgram(c));
  Workload w;
  w.kernel = "layernorm";
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
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["B"],
                           RandomInput(c.dtype, {c.N}, seed + 2));
  w.tensors["Y"] = Zeros(c.dtype, {c.M, c.N});
  for (const char* a : {"W", "B", "Y"}) args.push_back(a);
  w.steps.push_back({.program = program, .args = args});
  w.outputs = {"Y"};
  w.label = {.kernel = c.residual ? "layernorm_residual" : "layernorm",
             .dtype = DtypeName(c.dtype),
             .shape = {{"M", c.M}, {"N", c.N}},
             .size = absl::StrCat(c.M, "x", c.N)};
  w.bytes = double(dtype_bytes(c.dtype)) *
            ((c.residual ? 3.0 : 2.0) * c.M * c.N + 2.0 * c.N);
  const double eps = c.eps;
  const double tol = c.dtype == f32 ? 1e-4 : 2e-2;
  const bool residual = c.residual;
  w.reference =
      [eps, tol,
       residual](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const HostTensor* r = residual ? &w.tensors.at("R") : nullptr;
    return std::vector<Expected>{
        {"Y",
         ReferenceLayerNorm(w.tensors.at("X"), r, w.tensors.at("W"),
                            w.tensors.at("B"), eps),
         tol, tol}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(layernorm, MakeLayerNorm);

}  // namespace tessel::samples
