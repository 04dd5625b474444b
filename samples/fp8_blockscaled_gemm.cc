#include "samples/fp8_blockscaled_gemm.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;
constexpr int kBlock = kFp8ScaleBlock;

absl::Status Refuse(const std::source_location& loc, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(
      loc.file_name(), ":", loc.line(), ": fp8_blockscaled_gemm: ", what));
}

absl::Status CheckConfig(const Fp8BlockScaledGemmConfig& c,
                         const std::source_location& loc) {
  if (c.M <= 0 || c.N <= 0 || c.K <= 0) {
    return Refuse(loc, absl::StrCat("sizes must be positive, got M=", c.M,
                                    " N=", c.N, " K=", c.K));
  }
  if (c.K % kBlock != 0) {
    return Refuse(loc, absl::StrCat("K=", c.K, " is not a multiple of ", kBlock,
                                    " (sa and sb scale blocks of 128 along K; "
                                    "pad K with zeros to ",
                                    (c.K + kBlock - 1) / kBlock * kBlock, ")"));
  }
  if (c.block_m <= 0 || c.block_n <= 0 || c.num_stages < 0 || c.panel < 0 ||
      c.threads <= 0 || c.threads % 32 != 0) {
    return Refuse(
        loc, absl::StrCat("bad tile: block_m=", c.block_m,
                          " block_n=", c.block_n, " num_stages=", c.num_stages,
                          " threads=", c.threads, " (threads whole warps)"));
  }
  if (c.groups < 0 || (c.groups > 0 && c.M % c.block_m != 0)) {
    return Refuse(
        loc, absl::StrCat("groups=", c.groups, " with M=", c.M,
                          ": grouped rows come in whole tiles of "
                          "block_m=",
                          c.block_m, " (pad each group to a multiple of it)"));
  }
  if (c.cluster != 1 && c.cluster != 2) {
    return Refuse(loc, absl::StrCat("cluster=", c.cluster,
                                    ": clusters of 1 or 2 blocks"));
  }
  return absl::OkStatus();
}

// The grid {N tiles, M tiles}; for cluster pairs with one dimension of an
// even tile count: the pass pairs along M where B's tile is shared there
// (dense) and along N otherwise (the grouped kernel's B tile is its M
// tile's group's). A tile added past the edge loads zeros (the TMA's
// boundary, m_indices untouched: grouped grids grow along N only) and its
// stores fall outside D.
std::pair<int, int> Grid(const Fp8BlockScaledGemmConfig& c) {
  int n_tiles = (c.N + c.block_n - 1) / c.block_n;
  int m_tiles = (c.M + c.block_m - 1) / c.block_m;
  if (c.cluster == 2) {
    if (c.groups > 0) {
      n_tiles += n_tiles % 2;
    } else if (m_tiles % 2 != 0 && n_tiles % 2 != 0) {
      ++m_tiles;
    }
  }
  return {n_tiles, m_tiles};
}

// The rows of sb an output tile's columns use (at most): tiles start at
// multiples of block_n, so within an sb row at most 128 - gcd(block_n, 128)
// columns in.
int ScaleRowsOfTile(int block_n) {
  const int offset = kBlock - std::gcd(block_n, kBlock);
  return (offset + block_n - 1) / kBlock + 1;
}

absl::StatusOr<Program> MakeFp8BlockScaledGemm(const nlohmann::json& json,
                                               const Target& target) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  Fp8BlockScaledGemmConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.groups,
                           params.IntInRange("groups", 0, 1 << 16, c.groups));
  SAMPLES_ASSIGN_OR_RETURN(c.block_m,
                           params.IntInRange("block_m", 1, 512, c.block_m));
  SAMPLES_ASSIGN_OR_RETURN(c.block_n,
                           params.IntInRange("block_n", 1, 512, c.block_n));
  SAMPLES_ASSIGN_OR_RETURN(c.num_stages,
                           params.IntInRange("num_stages", 0, 8, c.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(c.threads,
                           params.IntInRange("threads", 32, 1024, c.threads));
  SAMPLES_ASSIGN_OR_RETURN(c.panel, params.IntInRange("panel", 0, 64, c.panel));
  SAMPLES_ASSIGN_OR_RETURN(c.cluster,
                           params.IntInRange("cluster", 1, 2, c.cluster));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  if (target.arch() != "sm_90a") {
    return absl::FailedPreconditionError(absl::StrCat(
        "fp8_blockscaled_gemm: built for sm_90a only, not ", target.arch(),
        ": fp8 tensor cores need sm_89 or later and tessel's fp8 gemms take "
        "wgmma (sm_90a); elsewhere they would run as FMA loops"));
  }
  return Fp8BlockScaledGemmProgram(c);
}

}  // namespace

int64_t Fp8ScaleRows(int64_t M) { return (M + 3) / 4 * 4; }

absl::StatusOr<Program> Fp8BlockScaledGemmProgram(
    const Fp8BlockScaledGemmConfig& c, std::source_location loc) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c, loc));
  const int bm = c.block_m, bn = c.block_n;
  const int kb = c.K / kBlock;  // K blocks
  const int sb_rows = ScaleRowsOfTile(bn);
  const bool grouped = c.groups > 0;
  const int sb_n = (c.N + kBlock - 1) / kBlock;
  T::ProgramBuilder p(grouped ? "fp8_blockscaled_gemm_grouped"
                              : "fp8_blockscaled_gemm");
  auto A = p.tensor("A", {c.M, c.K}, fp8_e4m3);
  auto SA = p.tensor("sa", {kb, Fp8ScaleRows(c.M)}, f32);
  auto B = grouped ? p.tensor("B", {c.groups, c.N, c.K}, fp8_e4m3)
                   : p.tensor("B", {c.N, c.K}, fp8_e4m3);
  auto SB = grouped ? p.tensor("sb", {c.groups, sb_n, kb}, f32)
                    : p.tensor("sb", {sb_n, kb}, f32);
  std::optional<T::Buffer> m_indices;
  if (grouped) m_indices = p.tensor("m_indices", {c.M}, i32);
  auto D = p.tensor("D", {c.M, c.N}, bf16);
  {
    const auto [n_tiles, m_tiles] = Grid(c);
    T::Kernel kernel(n_tiles, m_tiles, {.threads = c.threads});
    auto [bx, by] = kernel.block_index();
    auto A_shared = T::alloc_shared({bm, kBlock}, fp8_e4m3, "A_shared");
    auto B_shared = T::alloc_shared({bn, kBlock}, fp8_e4m3, "B_shared");
    auto sa_shared = T::alloc_shared({1, bm}, f32, "sa_shared");
    auto sb_shared = T::alloc_shared({sb_rows, kb}, f32, "sb_shared");
    auto acc = T::alloc_fragment({bm, bn}, f32, "acc");
    auto acc_step = T::alloc_fragment({bm, bn}, f32, "acc_step");
    auto row_scale = T::alloc_fragment({bm}, f32, "row_scale");
    std::optional<T::Buffer> row_scale_1_buf;
    if (sb_rows == 2)
      row_scale_1_buf = T::alloc_fragment({bm}, f32, "row_scale_1");
    if (c.panel > 0) T::use_swizzle(c.panel);
    // Grouped: the M tile's expert, from its first row (a group's rows
    // start on a tile; padding tiles have -1 and read zeros from B). After
    // the allocations: on a persistent grid it is read per tile.
    std::optional<T::Expr> g;
    if (grouped) g = T::let((*m_indices)(by * bm), "group");
    // The tile's B scales for every K block, once per output tile.
    if (g) {
      T::copy(SB(*g, bx * bn / kBlock, 0), sb_shared);
    } else {
      T::copy(SB(bx * bn / kBlock, 0), sb_shared);
    }
    T::clear(acc);
    for (auto k : T::Pipelined(kb, {.num_stages = c.num_stages, .name = "k"})) {
      T::copy(A(by * bm, k * kBlock), A_shared);
      if (g) {
        T::copy(B(*g, bx * bn, k * kBlock), B_shared);
      } else {
        T::copy(B(bx * bn, k * kBlock), B_shared);
      }
      T::copy(SA(k, by * bm), sa_shared);
      // This K block alone, in a fresh f32 tile...
      T::gemm(A_shared, B_shared, acc_step,
              {.transpose_B = true, .clear_accum = true});
      // ... promoted into the main accumulator at its scales: one scale per
      // row (sa times this block's sb, each thread its own rows), or with
      // two sb rows in the tile, sa per row and sb per column.
      if (sb_rows == 1) {
        T::Expr sb_k = T::let(sb_shared(0, k), "sb_k");
        for (auto i : T::Parallel(bm)) row_scale(i) = sa_shared(0, i) * sb_k;
        for (auto [i, j] : T::Parallel(bm, bn))
          acc(i, j) += acc_step(i, j) * row_scale(i);
      } else if (sb_rows == 2) {
        // Columns before `split` take the tile's first sb row, the others
        // its second: two scales per row, one select per element.
        T::Expr sb_0 = T::let(sb_shared(0, k), "sb_0");
        T::Expr sb_1 = T::let(sb_shared(1, k), "sb_1");
        T::Expr split = T::let(kBlock - bx * bn % kBlock, "split");
        const T::Buffer& row_scale_1 = *row_scale_1_buf;
        for (auto i : T::Parallel(bm)) {
          row_scale(i) = sa_shared(0, i) * sb_0;
          row_scale_1(i) = sa_shared(0, i) * sb_1;
        }
        for (auto [i, j] : T::Parallel(bm, bn)) {
          acc(i, j) += acc_step(i, j) *
                       T::select(j < split, row_scale(i), row_scale_1(i));
        }
      } else {
        for (auto i : T::Parallel(bm)) row_scale(i) = sa_shared(0, i);
        for (auto [i, j] : T::Parallel(bm, bn)) {
          T::Expr row = (bx * bn + j) / kBlock - bx * bn / kBlock;
          acc(i, j) += acc_step(i, j) * (row_scale(i) * sb_shared(row, k));
        }
      }
    }
    T::copy(acc, D(by * bm, bx * bn));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(fp8_blockscaled_gemm, MakeFp8BlockScaledGemm);

}  // namespace tessel::samples
