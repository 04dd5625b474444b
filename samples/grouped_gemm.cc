#include "samples/grouped_gemm.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

// What C holds before the kernel: a row of no group keeps it.
constexpr double kSentinel = 3.0;

absl::Status CheckConfig(const GroupedGemmConfig& c) {
  if (c.N <= 0 || c.K <= 0 || c.G <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("grouped_gemm: sizes must be positive, got N=", c.N,
                     " K=", c.K, " G=", c.G));
  }
  if (c.in_dtype != f16 && c.in_dtype != bf16) {
    return absl::InvalidArgumentError(
        absl::StrCat("grouped_gemm: inputs must be f16 or bf16, got ",
                     DtypeName(c.in_dtype)));
  }
  const GemmTile& t = c.tile;
  if (t.block_m <= 0 || t.block_n <= 0 || t.block_k <= 0 || t.threads <= 0 ||
      t.num_stages < 0 || t.panel < 0) {
    return absl::InvalidArgumentError(
        "grouped_gemm: the tile sizes must be positive");
  }
  if (t.threads % 32 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("grouped_gemm: threads=", t.threads,
                     " must be a multiple of 32 (whole warps)"));
  }
  return absl::OkStatus();
}

// terms[0] + ... + terms[n - 1] as a balanced tree (G may be 256: a chain
// would nest deeper than finish() takes).
T::Expr Sum(std::vector<T::Expr> terms) {
  if (terms.empty()) return T::Expr(0);
  while (terms.size() > 1) {
    std::vector<T::Expr> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2)
      next.push_back(terms[i] + terms[i + 1]);
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms[0];
}

absl::StatusOr<Program> MakeGroupedGemm(const nlohmann::json& json,
                                        const Target& target) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  GroupedGemmConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.G, params.IntInRange("G", 1, 65536));
  SAMPLES_ASSIGN_OR_RETURN(c.in_dtype, params.Dtype("in_dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.b_k_major, params.Bool("b_k_major", true));
  GemmTile& t = c.tile;
  t = GroupedGemmTile(target.sm());
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
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return GroupedGemmProgram(c);
}

}  // namespace

GemmTile GroupedGemmTile(int sm) {
  if (HopperSharedMemory(sm)) {  // 192 KB: sm_90, sm_100
    return {.block_m = 128,
            .block_n = 256,
            .block_k = 64,
            .num_stages = 4,
            .threads = 256,
            .panel = 0};
  }
  return {.block_m = 128,
          .block_n = 128,
          .block_k = 32,
          .num_stages = 4,
          .threads = 256,
          .panel = 0};
}

int GroupedGemmSlots(const GroupedGemmConfig& c) {
  return c.M / c.tile.block_m + c.G;
}

absl::StatusOr<Program> GroupedGemmProgram(const GroupedGemmConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const GemmTile& t = c.tile;
  const int bm = t.block_m, bn = t.block_n, bk = t.block_k;
  T::ProgramBuilder p(c.b_k_major ? "grouped_gemm_NT" : "grouped_gemm_NN");
  // The rows are bound at launch: one kernel serves every batch of tokens.
  T::Expr M = p.dim("M");
  auto A = p.tensor("A", {M, c.K}, c.in_dtype);
  auto B = c.b_k_major ? p.tensor("B", {c.G, c.N, c.K}, c.in_dtype)
                       : p.tensor("B", {c.G, c.K, c.N}, c.in_dtype);
  auto offsets = p.tensor("offsets", {c.G + 1}, i32);
  auto C = p.tensor("C", {M, c.N}, c.in_dtype);
  {
    T::Kernel kernel(T::ceildiv(c.N, bn), M / bm + c.G, {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    // Group g's tiles take slots base(g) = offsets[g] / bm + g on, which
    // never overlap the next group's (base(g + 1) >= base(g) +
    // ceildiv(rows, bm)), so the block's group is the number of groups
    // after the first whose base is at or before its slot: G - 1 loads,
    // all independent, and no search loop (a T::let, which the TMA
    // producer reads as its value).
    std::vector<T::Expr> starts_before;
    for (int g = 1; g < c.G; ++g)
      starts_before.push_back(
          T::select(offsets(g) / bm + g <= by, T::Expr(1), T::Expr(0)));
    auto group = T::let(Sum(std::move(starts_before)), "group");
    auto start = T::let(offsets(group), "start");
    auto end = T::let(offsets(group + 1), "end");
    auto tile = T::let(by - (start / bm + group), "tile");
    auto row0 = T::let(start + tile * bm, "row0");
    // A slot of no tile (a hole after a ragged or empty group, or past the
    // last) runs no k step and stores nothing.
    auto k_steps = T::let(T::select(tile >= 0 && row0 < end,
                                    T::Expr((c.K + bk - 1) / bk), T::Expr(0)),
                          "k_steps");
    auto A_shared = T::alloc_shared({bm, bk}, c.in_dtype, "A_shared");
    auto B_shared = c.b_k_major
                        ? T::alloc_shared({bn, bk}, c.in_dtype, "B_shared")
                        : T::alloc_shared({bk, bn}, c.in_dtype, "B_shared");
    auto C_local = T::alloc_fragment({bm, bn}, f32, "C_local");
    // Rasterization in panels of `panel` slots (the lets read the remapped
    // block index).
    if (t.panel > 0) T::use_swizzle(t.panel);
    T::clear(C_local);
    for (auto k : T::Pipelined(k_steps, {.num_stages = t.num_stages})) {
      // Rows past the group's end read the next group's (or zeros past M):
      // they are never stored.
      T::copy(A(T::slice(row0, row0 + bm), T::slice(k * bk, (k + 1) * bk)),
              A_shared);
      if (c.b_k_major) {
        T::copy(B(group, T::slice(bx * bn, (bx + 1) * bn),
                  T::slice(k * bk, (k + 1) * bk)),
                B_shared);
      } else {
        T::copy(B(group, T::slice(k * bk, (k + 1) * bk),
                  T::slice(bx * bn, (bx + 1) * bn)),
                B_shared);
      }
      T::gemm(A_shared, B_shared, C_local, {.transpose_B = c.b_k_major});
    }
    // A whole tile inside the group: one tile store. The group's ragged
    // last tile: only its own rows (a tile copy clips at the tensor's edge
    // only, and would overwrite the next group's rows).
    T::If(k_steps > 0 && row0 + bm <= end, [&] {
      T::copy(C_local,
              C(T::slice(row0, row0 + bm), T::slice(bx * bn, (bx + 1) * bn)));
    }).Else([&] {
      for (auto [i, j] : T::Parallel(bm, bn)) {
        T::If(k_steps > 0 && row0 + i < end,
              [&] { C(row0 + i, bx * bn + j) = C_local(i, j); });
      }
    });
  }
  return p.finish();
}

std::vector<int> RaggedGroupRows(int G, int mean, bool with_empty,
                                 uint64_t seed) {
  // A 32-bit LCG (Numerical Recipes' constants), so that bench/peers.py
  // draws the same sizes in a few lines.
  uint32_t x = static_cast<uint32_t>(seed) * 2654435761u + 12345u;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return x >> 8;
  };
  std::vector<int> rows;
  for (int g = 0; g < G; ++g) {
    const uint32_t r = next();
    if (with_empty && g % 4 == 1) {
      rows.push_back((g / 4) % 2);  // 0, 1, 0, 1, ...
      continue;
    }
    int n = mean / 2 + static_cast<int>(r % static_cast<uint32_t>(mean + 1));
    if (n % 64 == 0) n += 1;
    rows.push_back(n);
  }
  return rows;
}

absl::StatusOr<std::vector<int>> ParseGroupRows(const std::string& text) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(item, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--groups=", text, ": expected group sizes >= 0, as 0,1,130,64"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<Workload> GroupedGemmWorkload(GroupedGemmConfig c,
                                             const std::vector<int>& group_rows,
                                             uint64_t seed, int pad) {
  if (group_rows.empty() || pad < 0) {
    return absl::InvalidArgumentError(
        "grouped_gemm: no groups, or negative padding");
  }
  std::vector<int64_t> offsets = {0};
  for (int r : group_rows) {
    if (r < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("grouped_gemm: group size ", r, " is negative"));
    }
    offsets.push_back(offsets.back() + r);
  }
  if (offsets.back() + pad > std::numeric_limits<int32_t>::max() ||
      offsets.back() + pad == 0) {
    return absl::InvalidArgumentError(
        "grouped_gemm: the rows must be between 1 and what int32 offsets hold");
  }
  c.G = static_cast<int>(group_rows.size());
  c.M = static_cast<int>(offsets.back() + pad);
  SAMPLES_ASSIGN_OR_RETURN(Program program, GroupedGemmProgram(c));
  const std::vector<int64_t> b_shape =
      c.b_k_major ? std::vector<int64_t>{c.G, c.N, c.K}
                  : std::vector<int64_t>{c.G, c.K, c.N};
  Workload w;
  w.kernel = "grouped_gemm";
  std::string sizes;
  if (c.G <= 16) {
    for (int r : group_rows)
      absl::StrAppend(&sizes, sizes.empty() ? "" : ",", r);
  } else {
    sizes = absl::StrCat(c.G, " groups");
  }
  w.shape =
      absl::StrCat("rows=", sizes, pad ? absl::StrCat("+pad", pad) : "", " (",
                   offsets.back(), ") N=", c.N, " K=", c.K, " ",
                   DtypeName(c.in_dtype), c.b_k_major ? " NT" : " NN", " tile ",
                   c.tile.block_m, "x", c.tile.block_n, "x", c.tile.block_k,
                   " s", c.tile.num_stages, " t", c.tile.threads);
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["A"],
                           RandomInput(c.in_dtype, {c.M, c.K}, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["B"],
                           RandomInput(c.in_dtype, b_shape, seed + 1));
  HostTensor off(i32, {c.G + 1});
  for (size_t g = 0; g < offsets.size(); ++g) off.set_flat_int(g, offsets[g]);
  w.tensors["offsets"] = std::move(off);
  w.tensors["C"] = HostTensor(c.in_dtype, {c.M, c.N});
  w.tensors["C"].fill(kSentinel);
  w.steps.push_back({.program = program, .args = {"A", "B", "offsets", "C"}});
  w.outputs = {"C"};
  const double rows = static_cast<double>(offsets.back());
  w.flops = 2.0 * rows * c.N * c.K;
  // A's rows, each group's weights (an empty group's are not read), C.
  int used = 0;
  for (int r : group_rows) used += r > 0;
  w.bytes = double(dtype_bytes(c.in_dtype)) *
            (rows * c.K + double(used) * c.N * c.K + rows * c.N);
  int64_t max_rows = 0;
  for (int r : group_rows) max_rows = std::max<int64_t>(max_rows, r);
  w.label = {.kernel = "grouped_gemm",
             .variant = c.b_k_major ? "NT" : "NN",
             .dtype = DtypeName(c.in_dtype),
             .shape = {{"G", c.G},
                       {"rows", offsets.back()},
                       {"max_rows", max_rows},
                       {"N", c.N},
                       {"K", c.K}},
             .size = absl::StrCat("G", c.G, " rows", offsets.back(), " N", c.N,
                                  " K", c.K)};
  const bool k_major = c.b_k_major;
  w.reference =
      [k_major](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const HostTensor& a = w.tensors.at("A");
    const HostTensor& b = w.tensors.at("B");
    const HostTensor& off = w.tensors.at("offsets");
    const int64_t M = a.shape()[0], K = a.shape()[1];
    const int64_t G = b.shape()[0];
    const int64_t N = k_major ? b.shape()[1] : b.shape()[2];
    std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
    std::vector<double> c(M * N, kSentinel);
    for (int64_t g = 0; g < G; ++g) {
      const int64_t lo = off.get_flat_int(g), hi = off.get_flat_int(g + 1);
      const double* bg = bv.data() + g * N * K;
      ParallelFor(hi - lo, [&](int64_t i) {
        const double* ar = av.data() + (lo + i) * K;
        for (int64_t n = 0; n < N; ++n) {
          double sum = 0;
          for (int64_t k = 0; k < K; ++k)
            sum += ar[k] * (k_major ? bg[n * K + k] : bg[k * N + n]);
          c[(lo + i) * N + n] = sum;
        }
      });
    }
    return std::vector<Expected>{
        {"C", F64Tensor({M, N}, std::move(c)), 1e-2, 1e-2}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(grouped_gemm, MakeGroupedGemm);

}  // namespace tessel::samples
