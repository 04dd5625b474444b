#include "tests/codegen/seed_cases.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessel/interpret.h"
#include "tests/codegen/chained_gemm.h"
#include "tests/dsl/seed_programs.h"

namespace tessel::seed_test {
namespace {

// Tolerances, each against the interpreter (docs/interpreter.md), which
// rounds as the GPU stores values but sums in its own order: gemm in C's
// dtype (f32) in k order, reductions and cumsum serially, atomics in block
// order. The GPU sums in mma / shuffle / atomic-arrival order. Every tolerance
// below is far under what a wrong tile, a missed k step, a mask off by one
// or an unsynchronised shared read produces (errors of order 0.1 to 1).

// f32 results of f16 GEMMs: f16 x f16 products are exact in f32, so the sums
// differ only by order: about sqrt(K) f32 roundings of partial sums of
// magnitude <= 10 here (K <= 512, |a|, |b| <= 1), i.e. ~1e-5. Split-K adds
// the partial products (and the random start) with f32 atomics in arrival
// order: three or four more roundings of the same size.
constexpr double kF32GemmRtol = 1e-4, kF32GemmAtol = 1e-4;

// f16 GEMM results: the f32 sums above differ by ~1e-5, so after rounding to
// f16 the two sides may land on neighbouring f16 values when the sum is near
// a rounding boundary: one f16 ulp, at most 2^-10 of the value (rtol 2e-3
// allows two); atol covers results near zero, where the f32 difference is
// the whole error.
constexpr double kF16GemmRtol = 2e-3, kF16GemmAtol = 1e-3;

// Linear attention stores intermediates in f16 shared tiles (q * scale, the
// masked s / ds, the state h / dh) at the same points on both sides, but an
// intermediate whose f32 value differs by order may round to the neighbouring
// f16: one ulp (2^-11 relative) of h ~ 4 times q*scale ~ 0.1 moves an output
// by ~2e-4; only a few of the 64..128 terms of an output flip, if any. The
// outputs are of order 1 and added with f32 atomics over DK (or DV) tiles.
constexpr double kAttentionRtol = 2e-3, kAttentionAtol = 2e-3;

// Row softmax and cumsum in f32: exp2 (ex2.approx) is within 2 ulps of the
// exact value the interpreter rounds; the row sum (N <= 64 terms of <= 1) and
// the prefix sums (<= 1) differ by order by at most N f32 roundings, ~4e-6.
constexpr double kSoftmaxRtol = 1e-5, kSoftmaxAtol = 1e-5;

// Chained gemms (tests/codegen/chained_gemm.h): P = f16(A B / 2) is rounded
// at the same point on both sides, but A B differs by summation order
// (~1e-5), so an element of P near an f16 rounding boundary may land on the
// neighbouring value: one ulp of |P| <= ~4 is 2^-9, times |C| <= 1 moves an
// output (|O| ~ 10, N = 64 terms) by ~2e-3 per flipped element, rarely more
// than one per output.
constexpr double kChainedRtol = 2e-3, kChainedAtol = 5e-3;

Argument In(std::string name, DataType t, std::vector<int64_t> shape,
            testing::RandomOptions random = {}) {
  return {std::move(name), t, std::move(shape), Role::kInput, random};
}
Argument Out(std::string name, DataType t, std::vector<int64_t> shape) {
  return {std::move(name), t, std::move(shape), Role::kOutput};
}
Argument Acc(std::string name, DataType t, std::vector<int64_t> shape) {
  return {std::move(name), t, std::move(shape), Role::kAccumulated};
}

SeedCase Gemm(std::string name, int M, int N, int K, DataType c_dtype) {
  const bool f16_out = c_dtype == f16;
  return {
      std::move(name),
      [=] { return seed::TiledGemm(M, N, K, {}, c_dtype); },
      {In("A", f16, {M, K}), In("B", f16, {K, N}), Out("C", c_dtype, {M, N})},
      f16_out ? kF16GemmRtol : kF32GemmRtol,
      f16_out ? kF16GemmAtol : kF32GemmAtol};
}

// M is symbolic: the program only sees it through the tensors' shapes.
SeedCase GemmDynamicM(std::string name, int M, int N, int K) {
  return {std::move(name),
          [=] { return seed::TiledGemmDynamicM(N, K); },
          {In("A", f16, {M, K}), In("B", f16, {K, N}), Out("C", f16, {M, N})},
          kF16GemmRtol,
          kF16GemmAtol};
}

SeedCase SplitK(std::string name, int M, int N, int K, int split_k) {
  return {std::move(name),
          [=] { return seed::SplitKGemm(M, N, K, split_k); },
          {In("A", f16, {M, K}), In("B", f16, {K, N}), Acc("C", f32, {M, N})},
          kF32GemmRtol,
          kF32GemmAtol};
}

SeedCase Mbarrier(std::string name, int M, int N, int K) {
  return {std::move(name),
          [=] { return seed::MbarrierPipelinedGemm(M, N, K); },
          {In("A", f16, {M, K}), In("B", f16, {K, N}), Out("C", f32, {M, N})},
          kF32GemmRtol,
          kF32GemmAtol};
}

SeedCase AttentionForward(std::string name, int B, int S, int H, int DK,
                          int DV) {
  return {std::move(name),
          [=] { return seed::LinearAttentionForward(B, S, H, DK, DV); },
          {In("Q", f16, {B, S, H, DK}), In("K", f16, {B, S, H, DK}),
           In("V", f16, {B, S, H, DV}), Acc("O", f32, {B, S, H, DV})},
          kAttentionRtol,
          kAttentionAtol};
}

SeedCase AttentionBackward(std::string name, int B, int S, int H, int DK,
                           int DV) {
  return {std::move(name),
          [=] { return seed::LinearAttentionBackward(B, S, H, DK, DV); },
          {In("Q", f16, {B, S, H, DK}), In("K", f16, {B, S, H, DK}),
           In("V", f16, {B, S, H, DV}), In("dO", f16, {B, S, H, DV}),
           Acc("dQ", f32, {B, S, H, DK}), Acc("dK", f32, {B, S, H, DK}),
           Acc("dV", f32, {B, S, H, DV})},
          kAttentionRtol,
          kAttentionAtol};
}

SeedCase Chained(std::string name, testing::ChainedGemmShape shape) {
  const testing::ChainedGemmShape s = shape;
  return {std::move(name),
          [s] { return testing::ChainedGemm(s); },
          {In("A", f16, {s.M, s.K}), In("B", f16, {s.K, s.N}),
           In("C", f16, {s.N, s.D}), Out("O", f32, {s.M, s.D})},
          kChainedRtol,
          kChainedAtol};
}

SeedCase Softmax(std::string name, int M, int N) {
  // Inputs in [-4, 4]: the row maximum and exp2 have something to do.
  return {std::move(name),
          [=] { return seed::RowSoftmaxCumsum(M, N); },
          {In("X", f32, {M, N}, {.low = -4, .high = 4}), Out("Y", f32, {M, N}),
           Out("Z", f32, {M, N})},
          kSoftmaxRtol,
          kSoftmaxAtol};
}

}  // namespace

const std::vector<SeedCase>& SeedCases() {
  // Tiles: GEMMs 128x128x32 (the mbarrier GEMM 64x64x32), split-K splits of
  // whole k tiles, linear attention chunks of 64 rows and 64x64 DK x DV
  // blocks, the softmax 32 rows a block. The boundary rule (docs/ir.md) makes
  // every ragged size legal: reads past a tensor are zero, writes and atomics
  // past it are dropped. Ragged leading dimensions also exercise the
  // narrower (or scalar) copies the lowering falls back to.
  static const auto* const kCases = new std::vector<SeedCase>{
      Gemm("TiledGemmF16_Multiple", 256, 256, 128, f16),
      Gemm("TiledGemmF16_Ragged", 200, 130, 70, f16),
      Gemm("TiledGemmF32_Multiple", 256, 128, 256, f32),
      Gemm("TiledGemmF32_Ragged", 157, 99, 45, f32),
      GemmDynamicM("TiledGemmDynamicM_Multiple", 256, 256, 128),
      GemmDynamicM("TiledGemmDynamicM_Ragged", 300, 136, 72),
      // 512 / (4 * 32): four k tiles per split.
      SplitK("SplitKGemm_Multiple", 256, 256, 512, 4),
      // Splits of 96: the third runs past K = 200 and reads zeros.
      SplitK("SplitKGemm_Ragged", 130, 100, 200, 3),
      // 4 and 5 chunks: both mbarriers, both parities.
      Mbarrier("MbarrierPipelinedGemm_Multiple", 128, 128, 128),
      Mbarrier("MbarrierPipelinedGemm_Ragged", 100, 70, 150),
      // Two DK tiles: O is the atomic sum of two blocks' partial outputs.
      AttentionForward("LinearAttentionForward_Multiple", 1, 128, 2, 128, 128),
      // S = 100: the second chunk is 36 rows; DV = 96: the second DV tile
      // is half outside V and O.
      AttentionForward("LinearAttentionForward_Ragged", 2, 100, 1, 128, 96),
      AttentionBackward("LinearAttentionBackward_Multiple", 1, 128, 2, 128,
                        128),
      // S = 100 and DK = 96: ragged chunk and ragged DK tile; two DV tiles
      // add into dQ and dK, two DK tiles into dV.
      AttentionBackward("LinearAttentionBackward_Ragged", 1, 100, 2, 96, 128),
      Softmax("RowSoftmaxCumsum_Multiple", 128, 64),
      // 70 rows: the third block has 6; rows of 50 do not fill the 128
      // threads evenly.
      Softmax("RowSoftmaxCumsum_Ragged", 70, 50),
      // P in registers as the A operand of the second gemm: 4 warps of 16
      // rows, then 8 warps of 16 rows with two n8 tiles per k16 step of a
      // wider second gemm; 100 rows: the second block is partly outside.
      Chained("ChainedGemmRegisterP_Multiple", {.M = 128}),
      Chained("ChainedGemmRegisterP_Ragged", {.M = 100, .K = 32, .N = 48}),
      Chained("ChainedGemmRegisterP_8Warps",
              {.M = 256, .N = 64, .D = 128, .block_m = 128, .threads = 256}),
      Chained("ChainedGemmRegisterP_2RowTiles",
              {.M = 256, .N = 32, .D = 64, .block_m = 128, .threads = 128}),
      // Both gemms on wgmma (sm_90a), two m64 blocks per warpgroup.
      Chained("ChainedGemmRegisterP_WgmmaRowTiles",
              {.M = 256, .block_m = 128, .threads = 128}),
      Chained("ChainedGemmSharedP_Multiple",
              {.M = 128, .p_in_registers = false}),
  };
  return *kCases;
}

absl::StatusOr<std::vector<HostTensor>> InitialArguments(const SeedCase& c) {
  // One seed per (case, argument), so every tensor differs.
  uint64_t case_index = 0;
  while (case_index < SeedCases().size() &&
         SeedCases()[case_index].name != c.name) {
    ++case_index;
  }
  const uint64_t base =
      c.input_seed != 0 ? c.input_seed : 1000 * (case_index + 1);
  std::vector<HostTensor> arguments;
  for (size_t i = 0; i < c.arguments.size(); ++i) {
    const Argument& a = c.arguments[i];
    const uint64_t seed = base + i;
    if (a.role == Role::kOutput) {
      absl::StatusOr<HostTensor> t = HostTensor::Create(a.dtype, a.shape);
      if (!t.ok()) return t.status();
      t->fill(std::numeric_limits<double>::quiet_NaN());
      arguments.push_back(*std::move(t));
      continue;
    }
    absl::StatusOr<HostTensor> t =
        testing::RandomTensor(a.dtype, a.shape, seed, a.random);
    if (!t.ok()) return t.status();
    arguments.push_back(*std::move(t));
  }
  return arguments;
}

absl::Status InterpretInPlace(const Program& program,
                              std::vector<HostTensor>& arguments) {
  std::vector<HostTensor*> pointers;
  for (HostTensor& t : arguments) pointers.push_back(&t);
  if (absl::Status s = interpret(program, pointers); !s.ok()) return s;
  for (const HostTensor& t : arguments) {
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (!std::isfinite(t.get_flat(i))) {
        return absl::InternalError(absl::StrCat(
            program.name(), ": the interpreter left element ", i, " of a ",
            t.type_string(), " argument at ", t.get_flat(i)));
      }
    }
  }
  return absl::OkStatus();
}

void PrintTo(const SeedCase& c, std::ostream* os) {
  *os << c.name;
  if (!c.description.empty()) *os << " (" << c.description << ")";
}

}  // namespace tessel::seed_test
