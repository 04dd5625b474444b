#include "samples/softmax.h"

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

constexpr double kLog2e = 1.4426950408889634;

absl::StatusOr<Program> MakeSoftmax(const nlohmann::json& json) {
  KernelParams params(json);
  SoftmaxConfig c;
  SAMPLES_RETURN_IF_ERROR(ReadRowParams(params, c));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return SoftmaxProgram(c);
}

}  // namespace

absl::StatusOr<Program> SoftmaxProgram(const SoftmaxConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckRowConfig("softmax", c.M, c.N, c.dtype,
                                         c.block_m, c.block_n, c.threads));
  // Narrow rows: 16 elements a thread (exp and two reductions an element;
  // 8192x1024 0.0144 ms at 8, 0.0137 at 16,
  // 8d2b18f:bench/results/h200_s13/rows/).
  const RowTile tile = PickRowTile(c.N, c.block_m, c.block_n, c.threads,
                                   /*narrow_per_thread=*/16);
  const int bm = tile.block_m, bn = tile.block_n, chunks = tile.chunks;
  const bool ragged = tile.ragged;
  T::ProgramBuilder p("softmax");
  auto X = p.tensor("X", {c.M, c.N}, c.dtype);
  std::optional<T::Buffer> R;
  if (c.residual) R = p.tensor("R", {c.M, c.N}, c.dtype);
  auto Y = p.tensor("Y", {c.M, c.N}, c.dtype);
  {
    T::Kernel kernel(RowBlocks(c.M, bm, c.grid), {.threads = tile.threads});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({bm, bn}, f32, "x");
    auto e = T::alloc_fragment({bm, bn}, f32, "e");
    auto y = T::alloc_fragment({bm, bn}, c.dtype, "y");
    auto row_max = T::alloc_fragment({bm}, f32, "row_max");
    auto prev_max = T::alloc_fragment({bm}, f32, "prev_max");
    auto chunk_sum = T::alloc_fragment({bm}, f32, "chunk_sum");
    auto row_sum = T::alloc_fragment({bm}, f32, "row_sum");
    auto inv_sum = T::alloc_fragment({bm}, f32, "inv_sum");
    const T::Expr neg_inf = -T::infinity(f32);
    // Loads chunk j of the rows; columns past N become -inf (weight 0).
    auto load = [&](const T::Expr& row0, const T::Expr& j) {
      LoadRows(X, R, row0, j * bn, x, bm, bn);
      if (ragged) {
        for (auto [r, col] : T::Parallel(bm, bn)) {
          x(r, col) = T::select(j * bn + col < c.N, x(r, col), neg_inf);
        }
      }
    };
    ForEachRowTile(bx, c.M, bm, c.grid, [&](const T::Expr& row0) {
      T::fill(row_max, neg_inf);
      T::clear(row_sum);
      for (auto j : T::Serial(chunks, {.name = "j"})) {
        load(row0, j);
        T::copy(row_max, prev_max);
        T::reduce_max(x, row_max, {.dim = 1, .clear = false});
        for (auto [r, col] : T::Parallel(bm, bn)) {
          e(r, col) = T::exp2((x(r, col) - row_max(r)) * kLog2e);
        }
        T::reduce_sum(e, chunk_sum, {.dim = 1});
        // The sum so far was taken against the old max: rescale it.
        for (auto r : T::Parallel(bm)) {
          row_sum(r) =
              row_sum(r) * T::exp2((prev_max(r) - row_max(r)) * kLog2e) +
              chunk_sum(r);
        }
      }
      // One division per row, not per element.
      for (auto r : T::Parallel(bm)) inv_sum(r) = 1.0f / row_sum(r);
      for (auto j : T::Serial(chunks, {.name = "j"})) {
        if (chunks > 1) {
          load(row0, j);
          for (auto [r, col] : T::Parallel(bm, bn)) {
            e(r, col) = T::exp2((x(r, col) - row_max(r)) * kLog2e);
          }
        }
        for (auto [r, col] : T::Parallel(bm, bn)) {
          y(r, col) = e(r, col) * inv_sum(r);
        }
        T::copy(y, Y(row0, j * bn));
      }
    });
  }
  return p.finish();
}

HostTensor ReferenceSoftmax(const HostTensor& x) {
  const int64_t M = x.shape()[0], N = x.shape()[1];
  std::vector<double> xv = x.to_doubles();
  std::vector<double> out(M * N);
  ParallelFor(M, [&](int64_t i) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < N; ++j) m = std::max(m, xv[i * N + j]);
    double sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += std::exp(xv[i * N + j] - m);
    for (int64_t j = 0; j < N; ++j)
      out[i * N + j] = std::exp(xv[i * N + j] - m) / sum;
  });
  return F64Tensor({M, N}, std::move(out));
}

absl::StatusOr<Workload> SoftmaxWorkload(const SoftmaxConfig& c,
                                         uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, SoftmaxProgram(c));
  Workload w;
  w.kernel = "softmax";
  w.shape = absl::StrCat(c.M, "x", c.N, " ", DtypeName(c.dtype),
                         c.residual ? " +residual" : "");
  // Spread logits (|x| up to 8) so the max matters.
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["X"],
                           RandomInput(c.dtype, {c.M, c.N}, seed, 8.0));
  std::vector<Arg> args = {"X"};
  if (c.residual) {
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["R"],
                             RandomInput(c.dtype, {c.M, c.N}, seed + 3));
    args.push_back("R");
  }
  w.tensors["Y"] = Zeros(c.dtype, {c.M, c.N});
  args.push_back("Y");
  w.steps.push_back({.program = program, .args = args});
  w.outputs = {"Y"};
  w.label = {.kernel = c.residual ? "softmax_residual" : "softmax",
             .dtype = DtypeName(c.dtype),
             .shape = {{"M", c.M}, {"N", c.N}},
             .size = absl::StrCat(c.M, "x", c.N)};
  w.bytes = double(dtype_bytes(c.dtype)) * (c.residual ? 3.0 : 2.0) * c.M * c.N;
  const double rtol = c.dtype == f32 ? 1e-4 : 1e-2;
  const bool residual = c.residual;
  w.reference =
      [rtol,
       residual](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const HostTensor& x = w.tensors.at("X");
    HostTensor h = residual ? AddResidual(x, w.tensors.at("R")) : x;
    // Probabilities are small: a tight absolute tolerance.
    return std::vector<Expected>{{"Y", ReferenceSoftmax(h), rtol, 1e-5}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(softmax, MakeSoftmax);

}  // namespace tessel::samples
