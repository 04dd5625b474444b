#include "samples/row_params.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "samples/sample_util.h"

namespace tessel::samples {

absl::Status CheckRowConfig(const std::string& kernel, int M, int N,
                            DataType dtype, int block_m, int block_n,
                            int threads) {
  if (M <= 0 || N <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel, ": sizes must be positive, got M=", M, " N=", N));
  }
  if (dtype != f16 && dtype != bf16 && dtype != f32) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel, ": dtype must be f16, bf16 or f32, got ", DtypeName(dtype)));
  }
  if (block_m < 0 || block_n < 0 || threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel, ": block_m, block_n, threads must be >= 0 (0: default)"));
  }
  return absl::OkStatus();
}

absl::Status ReadEpsFlag(const Flags& flags, double& eps) {
  if (!flags.Has("eps")) return absl::OkStatus();
  std::string text = flags.String("eps", "");
  if (!absl::SimpleAtod(text, &eps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--eps=", text, ": expected a number"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<int, int>>> RowSizes(
    const std::string& size) {
  if (size == "small") {
    return std::vector<std::pair<int, int>>{{64, 256}, {37, 1000}};
  }
  // The sizes of the table (docs/benchmarks.md).
  if (size == "bench") {
    return std::vector<std::pair<int, int>>{
        {4096, 8192}, {16384, 4096}, {8192, 1024}};
  }
  SAMPLES_ASSIGN_OR_RETURN(auto dims, ParseDims(size, {"M", "N"}));
  return std::vector<std::pair<int, int>>{
      {static_cast<int>(dims["M"]), static_cast<int>(dims["N"])}};
}

void LoadRows(const Buffer& X, const std::optional<Buffer>& R, const Expr& row0,
              const Expr& col0, const Buffer& x, int bm, int bn) {
  namespace T = tessel;
  T::copy(X(row0, col0), x);
  if (!R) return;
  auto r = T::alloc_fragment({bm, bn}, X.dtype(), "r");
  T::copy((*R)(row0, col0), r);
  for (auto [i, j] : T::Parallel(bm, bn)) x(i, j) = x(i, j) + r(i, j);
}

Expr RowBlocks(int M, int bm, int grid) {
  if (grid <= 0) return tessel::ceildiv(M, bm);
  return Expr(std::min(grid, (M + bm - 1) / bm));
}

void ForEachRowTile(const Expr& bx, int M, int bm, int grid,
                    const std::function<void(const Expr& row0)>& body) {
  namespace T = tessel;
  if (grid <= 0) {
    body(bx * bm);
    return;
  }
  const int tiles = (M + bm - 1) / bm;
  const int blocks = std::min(grid, tiles);
  for (auto t : T::Serial((tiles + blocks - 1) / blocks, {.name = "t"})) {
    body((t * blocks + bx) * bm);
  }
}

HostTensor AddResidual(const HostTensor& x, const HostTensor& r) {
  std::vector<double> v = x.to_doubles(), rv = r.to_doubles();
  for (size_t i = 0; i < v.size(); ++i) v[i] += rv[i];
  return F64Tensor(x.shape(), std::move(v));
}

}  // namespace tessel::samples
