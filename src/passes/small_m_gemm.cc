#include "src/passes/small_m_gemm.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

constexpr int64_t kMaxSmallM = 64;  // from here the plain tiles fit

bool Is16Bit(DataType t) { return t == DataType::kF16 || t == DataType::kBF16; }

struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
};

// Whether r's matrix dims are its last two (a unit M squeezed away).
bool LastTwoDims(const ir::Region& r) {
  return NonUnitDims(r).size() < 2 && r.rank() >= 2;
}

// M, N and K of a gemm whose C and A are 2-D constant regions.
std::optional<GemmDims> DimsOf(const ir::GemmNode& g) {
  auto ce = GemmMatrixExtents(g.c);
  auto ae = GemmMatrixExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) return std::nullopt;
  return GemmDims{(*ce)[0], (*ce)[1], g.transpose_a ? (*ae)[0] : (*ae)[1]};
}

// Why the gemm is not a small-M one; "" when it is (or M is not small).
std::string Refusal(const ir::GemmNode& g, int threads) {
  std::optional<GemmDims> d = DimsOf(g);
  if (!d || d->m >= kMaxSmallM) return "";
  const int warps = threads / 32;
  if (threads % 32 != 0 || d->m >= 16 * warps) return "";
  const DataType a = g.a.buffer->dtype, b = g.b.buffer->dtype;
  if (a != b || !Is16Bit(a)) {
    return absl::StrCat("A and B are ", std::string(dtype_name(a)), " and ",
                        std::string(dtype_name(b)),
                        "; small-M tiles (M = ", d->m,
                        ") take the tensor cores for f16 or bf16 only");
  }
  if (g.c.buffer->dtype != DataType::kF32) {
    return absl::StrCat("the accumulator ", g.c.buffer->name, " is ",
                        std::string(dtype_name(g.c.buffer->dtype)),
                        ", not f32");
  }
  if (g.transpose_a) {
    return absl::StrCat("A ", g.a.buffer->name,
                        " is transposed ([K, M]) and M = ", d->m,
                        " is below the 16 rows of an mma tile: store A as "
                        "[M, K]");
  }
  if (g.a.buffer->scope != ir::Scope::kShared &&
      g.a.buffer->scope != ir::Scope::kFragment) {
    return "A is neither a shared tile nor a fragment";
  }
  if (g.b.buffer->scope != ir::Scope::kShared) return "B is not a shared tile";
  if (d->n < 8) {
    return absl::StrCat("N = ", d->n,
                        " is below the 8 columns of the smallest tensor-core "
                        "tile");
  }
  if (d->n % 16 != 0) {
    return absl::StrCat("N = ", d->n,
                        " is not a multiple of 16 (B is read in 16-column "
                        "ldmatrix pieces)");
  }
  if (d->k % 16 != 0) {
    return absl::StrCat("K = ", d->k, " is not a multiple of 16");
  }
  return "";
}

}  // namespace

std::optional<std::vector<int64_t>> GemmMatrixExtents(const ir::Region& r) {
  if (!LastTwoDims(r)) return ConstSqueezedExtents(r);
  std::vector<int64_t> out;
  for (int d = r.rank() - 2; d < r.rank(); ++d) {
    auto c = ir::AsConstInt(r.extent[d]);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::vector<ir::Expr> GemmMatrixIndices(const ir::Region& r,
                                        const ir::Expr& row,
                                        const ir::Expr& col) {
  if (!LastTwoDims(r)) return RegionIndices(r, {row, col});
  std::vector<ir::Expr> out = r.start;
  const int rank = r.rank();
  out[rank - 2] = r.start[rank - 2] + row;
  out[rank - 1] = r.start[rank - 1] + col;
  return out;
}

int64_t SmallMPaddedRows(const ir::GemmNode& g, int threads) {
  std::optional<GemmDims> d = DimsOf(g);
  if (!d || d->m >= kMaxSmallM || threads % 32 != 0 ||
      d->m >= 16 * (threads / 32) || !Refusal(g, threads).empty()) {
    return 0;
  }
  return 16 * (threads / 32);
}

std::string SmallMRefusal(const ir::GemmNode& g, int threads) {
  return Refusal(g, threads);
}

}  // namespace tessel::passes
