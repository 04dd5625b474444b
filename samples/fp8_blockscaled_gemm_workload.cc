// fp8_blockscaled_gemm's inputs and float64 reference (dense and grouped).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "samples/fp8_blockscaled_gemm.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

constexpr int kBlock = kFp8ScaleBlock;

// Scales in [0.5, 1.5) from values in [-1, 1]: a scale dropped or taken
// from the wrong block moves the result by a large part of itself.
HostTensor Scales(HostTensor t) {
  for (int64_t e = 0; e < t.num_elements(); ++e)
    t.set_flat(e, 1.0 + 0.5 * t.get_flat(e));
  return t;
}

}  // namespace

HostTensor ReferenceFp8BlockScaledGemm(const HostTensor& a,
                                       const HostTensor& sa,
                                       const HostTensor& b,
                                       const HostTensor& sb,
                                       const HostTensor* m_indices) {
  const bool grouped = b.shape().size() == 3;
  const int64_t M = a.shape()[0], K = a.shape()[1];
  const int64_t N = b.shape()[grouped ? 1 : 0];
  const int64_t kb = K / kBlock, sa_row = sa.shape()[1];
  const int64_t sb_n = sb.shape()[grouped ? 1 : 0];
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  std::vector<double> sav = sa.to_doubles(), sbv = sb.to_doubles();
  std::vector<double> d(M * N);
  ParallelFor(M, [&](int64_t m) {
    const int64_t g = m_indices ? m_indices->get_flat_int(m) : 0;
    if (g < 0) return;  // a padding row: no group, zeros
    const double* bg = bv.data() + g * N * K;
    const double* sbg = sbv.data() + g * sb_n * kb;
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0;
      for (int64_t q = 0; q < kb; ++q) {
        double part = 0;
        for (int64_t k = q * kBlock; k < (q + 1) * kBlock; ++k)
          part += av[m * K + k] * bg[n * K + k];
        sum += part * sav[q * sa_row + m] * sbg[(n / kBlock) * kb + q];
      }
      d[m * N + n] = sum;
    }
  });
  return F64Tensor({M, N}, std::move(d));
}

absl::StatusOr<Workload> Fp8BlockScaledGemmWorkload(
    const Fp8BlockScaledGemmConfig& config, uint64_t seed,
    const std::vector<int>& group_rows) {
  Fp8BlockScaledGemmConfig c = config;
  const bool grouped = !group_rows.empty();
  std::vector<int32_t> groups_of_rows;  // m_indices
  if (grouped) {
    c.groups = static_cast<int>(group_rows.size());
    for (int g = 0; g < c.groups; ++g) {
      const int padded =
          (group_rows[g] + c.block_m - 1) / c.block_m * c.block_m;
      for (int r = 0; r < padded; ++r)
        groups_of_rows.push_back(r < group_rows[g] ? g : -1);
    }
    c.M = static_cast<int>(groups_of_rows.size());
    if (c.M == 0) c.M = c.block_m, groups_of_rows.assign(c.M, -1);
  }
  SAMPLES_ASSIGN_OR_RETURN(Program program, Fp8BlockScaledGemmProgram(c));
  const int64_t kb = c.K / kBlock, sb_n = (c.N + kBlock - 1) / kBlock;
  Workload w;
  w.kernel = program.name();
  w.shape = absl::StrCat(
      c.M, "x", c.N, "x", c.K, " fp8_e4m3->bf16 tile ", c.block_m, "x",
      c.block_n, "x", kBlock, " s", c.num_stages, " t", c.threads,
      c.cluster > 1 ? absl::StrCat(" cluster", c.cluster) : "");
  if (grouped) {
    std::vector<std::string> rows;
    for (int r : group_rows) rows.push_back(std::to_string(r));
    w.shape += " groups " + absl::StrJoin(rows, ",");
  }
  SAMPLES_ASSIGN_OR_RETURN(HostTensor a,
                           RandomInput(fp8_e4m3, {c.M, c.K}, seed));
  // Padding rows of A are zeros, as a MoE dispatch leaves them: their D
  // rows are 0 whichever group's B their tile reads.
  for (int64_t m = 0; grouped && m < c.M; ++m) {
    if (groups_of_rows[m] >= 0) continue;
    for (int64_t k = 0; k < c.K; ++k) a.set_flat(m * c.K + k, 0.0);
  }
  w.tensors["A"] = std::move(a);
  std::vector<int64_t> b_shape = {c.N, c.K}, sb_shape = {sb_n, kb};
  if (grouped) {
    b_shape.insert(b_shape.begin(), c.groups);
    sb_shape.insert(sb_shape.begin(), c.groups);
  }
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["B"],
                           RandomInput(fp8_e4m3, b_shape, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(HostTensor sa,
                           RandomInput(f32, {kb, Fp8ScaleRows(c.M)}, seed + 2));
  SAMPLES_ASSIGN_OR_RETURN(HostTensor sb, RandomInput(f32, sb_shape, seed + 3));
  w.tensors["sa"] = Scales(std::move(sa));
  w.tensors["sb"] = Scales(std::move(sb));
  w.tensors["D"] = Zeros(bf16, {c.M, c.N});
  std::vector<Arg> args = {"A", "sa", "B", "sb", "D"};
  if (grouped) {
    HostTensor idx(i32, {c.M});
    for (int64_t m = 0; m < c.M; ++m) idx.set_flat_int(m, groups_of_rows[m]);
    w.tensors["m_indices"] = std::move(idx);
    args = {"A", "sa", "B", "sb", "m_indices", "D"};
  }
  w.steps.push_back({.program = program, .args = args});
  w.steps[0].pass_config.cluster_size = c.cluster;
  w.outputs = {"D"};
  // Useful work: the rows that belong to a group.
  int64_t rows = c.M;
  if (grouped) {
    rows = 0;
    for (int r : group_rows) rows += r;
  }
  const int64_t b_groups = grouped ? c.groups : 1;
  w.flops = 2.0 * rows * c.N * c.K;
  w.bytes = double(c.M) * c.K + double(b_groups) * c.N * c.K + 2.0 * c.M * c.N +
            4.0 * (kb * Fp8ScaleRows(c.M) + b_groups * sb_n * kb);
  const std::string size =
      grouped ? absl::StrCat("G", c.groups, " M", rows, " N", c.N, " K", c.K)
      : c.M == c.N && c.N == c.K ? absl::StrCat(c.M, "^3")
                                 : absl::StrCat(c.M, "x", c.N, "x", c.K);
  w.label = {.kernel = w.kernel,
             .variant = grouped ? "contiguous" : "NT",
             .dtype = "fp8_e4m3",
             .shape = {{"M", rows}, {"N", c.N}, {"K", c.K}},
             .size = size};
  if (grouped) w.label.shape.push_back({"G", c.groups});
  // bf16 rounding (rtol), plus the tensor cores' fp8 accumulation within
  // each 128-product block (about 2^-13 of a block's partial sum, summed
  // over the blocks as a random walk). A missed promotion or scale is off
  // by a large part of the sum (~sqrt(K) / 3).
  const double atol = 1e-2 + 1e-3 * std::sqrt(double(kb));
  w.reference =
      [atol](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    auto idx = w.tensors.find("m_indices");
    HostTensor ref = ReferenceFp8BlockScaledGemm(
        w.tensors.at("A"), w.tensors.at("sa"), w.tensors.at("B"),
        w.tensors.at("sb"), idx == w.tensors.end() ? nullptr : &idx->second);
    return std::vector<Expected>{{"D", std::move(ref), 1e-2, atol}};
  };
  return w;
}

}  // namespace tessel::samples
