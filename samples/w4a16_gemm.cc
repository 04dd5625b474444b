#include "samples/w4a16_gemm.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/w4a16_gemm_swap.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr int kBlockK = kW4A16GroupSize;  // one scale row a k step
constexpr int kPerWord = 8;               // 4-bit values in an i32

absl::Status CheckConfig(const W4A16Config& c, const W4A16Tile& t) {
  if (c.M <= 0 || c.N <= 0 || c.K <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("w4a16_gemm: sizes must be positive, got M=", c.M,
                     " N=", c.N, " K=", c.K));
  }
  if (t.block_m <= 0 || t.block_n <= 0 || t.num_stages < 0 || t.threads <= 0) {
    return absl::InvalidArgumentError(
        "w4a16_gemm: the tile sizes must be positive");
  }
  // Whole m16 / n16 tensor-core tiles, issued by whole warps.
  if (t.block_m % 16 != 0 || t.block_n % 16 != 0 || t.threads % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "w4a16_gemm: block_m=", t.block_m, " and block_n=", t.block_n,
        " must be multiples of 16 and threads=", t.threads, " of 32"));
  }
  return absl::OkStatus();
}

// Whether acc and a second f32 tile fit a thread's registers: at most 32
// accumulators a thread (a small-M tile counts its rows padded to one m16
// tile a warp, as the scheduler pads it). 128 x 128 over 256 threads, 64
// each, spilled 808 bytes (ptxas caps 384 threads at 168 registers).
bool ScalesAfterGemm(const W4A16Tile& t) {
  const int warps = t.threads / 32;
  const int rows =
      t.block_m < 64 && t.block_m < 16 * warps ? 16 * warps : t.block_m;
  return int64_t(rows) * t.block_n / t.threads <= 32;
}

// f16 of the 4-bit value `u` (an i32 in [0, 15]) minus 8, exactly: the
// bits 0x6400 | u are the f16 1024 + u.
T::Expr Int4ToF16(const T::Expr& u) {
  T::Expr biased = T::bitcast(T::cast(u | 0x6400, T::i16), T::f16);
  return biased - T::constant(1032, T::f16);
}

absl::StatusOr<Program> MakeW4A16(const nlohmann::json& json,
                                  const Target& target) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  W4A16Config c;
  SAMPLES_ASSIGN_OR_RETURN(c.M, params.IntInRange("M", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.N, params.IntInRange("N", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.K, params.IntInRange("K", 1, kMax));
  W4A16Tile& t = c.tile;
  // swap_ab 0: the first form, with its own default tile.
  SAMPLES_ASSIGN_OR_RETURN(int64_t swap, params.IntInRange("swap_ab", 0, 1, 1));
  t = swap ? DefaultW4A16Tile(c.M, target.sm())
           : LegacyW4A16Tile(c.M, target.sm());
  SAMPLES_ASSIGN_OR_RETURN(t.block_m,
                           params.IntInRange("block_m", 16, 256, t.block_m));
  SAMPLES_ASSIGN_OR_RETURN(t.block_n,
                           params.IntInRange("block_n", 16, 256, t.block_n));
  SAMPLES_ASSIGN_OR_RETURN(t.num_stages,
                           params.IntInRange("num_stages", 0, 8, t.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(t.threads,
                           params.IntInRange("threads", 32, 512, t.threads));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  c.default_tile = false;
  return W4A16GemmProgram(c);
}

}  // namespace

W4A16Tile DefaultW4A16Tile(int64_t M, int sm) {
  W4A16Tile t = DefaultW4A16SwapTile(M);
  const int64_t limit = int64_t(MaxSharedBytes(sm)) - 2048;
  while (sm > 0 && t.num_stages > 1 && W4A16SharedBytes(t) > limit)
    --t.num_stages;
  return t;
}

W4A16Tile LegacyW4A16Tile(int64_t M, int sm) {
  W4A16Tile t =
      M <= 16 ? W4A16Tile{.block_m = 16,
                          .block_n = 64,
                          .num_stages = 6,
                          .threads = 256}
      : M <= 64
          ? W4A16Tile{.block_m = 64, .block_n = 32, .threads = 128}
          : W4A16Tile{
                .block_m = 128, .block_n = 64, .num_stages = 3, .threads = 256};
  t.swap_ab = false;
  // 128 x 64 in 4 stages is 177 KB: Hopper's shared memory only.
  if (M > 64 && HopperSharedMemory(sm)) t.num_stages = 4;
  // Room for the scheduler's barriers and alignment.
  const int64_t limit = int64_t(MaxSharedBytes(sm)) - 2048;
  while (sm > 0 && t.num_stages > 1 && W4A16SharedBytes(t) > limit)
    --t.num_stages;
  return t;
}

int64_t W4A16SharedBytes(const W4A16Tile& t) {
  // The swapped form's f16 tile is C's (after the loop), not W's.
  const int64_t f16_tile = t.swap_ab ? int64_t(t.block_m) * t.block_n * 2
                                     : int64_t(t.block_n) * kBlockK * 2;
  const int64_t stage = int64_t(t.block_m) * kBlockK * 2 +
                        int64_t(t.block_n) * (kBlockK / kPerWord) * 4 +
                        int64_t(t.block_n) * 2;
  return stage * std::max(t.num_stages, 1) + f16_tile;
}

absl::StatusOr<Program> W4A16GemmProgram(const W4A16Config& c) {
  const W4A16Tile t = c.default_tile ? DefaultW4A16Tile(c.M) : c.tile;
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c, t));
  if (t.swap_ab) return W4A16SwapABProgram(c, t);
  const int bm = t.block_m, bn = t.block_n;
  T::ProgramBuilder p("w4a16_gemm");
  auto [A, Wq, Scales, C] = DeclareW4A16Tensors(p, c);
  {
    T::Kernel kernel(T::ceildiv(c.N, bn), T::ceildiv(c.M, bm),
                     {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    auto [A_shared, Wq_shared, S_shared] = AllocW4A16StepTiles(bm, bn);
    auto W_shared = T::alloc_shared({bn, kBlockK}, f16, "W_shared");
    auto acc = T::alloc_fragment({bm, bn}, f32, "acc");
    // Tiles of up to 64 rows scale after the gemm: each k step (one
    // group) into a fresh f32 tile of the integers u - 8, added into acc
    // at its column's scale; the dequant loop then loads one word and
    // stores one f16 an element, no scale, no f16 multiply. A 128-row tile
    // would hold twice 128 accumulators a thread, so it scales in the
    // dequant loop instead.
    const bool scale_after = ScalesAfterGemm(t);
    std::optional<T::Buffer> acc_step;
    if (scale_after) acc_step = T::alloc_fragment({bm, bn}, f32, "acc_step");
    // Each element's word in a register, loaded before any store: with the
    // loads and the W_shared stores interleaved, the compiler cannot tell
    // them apart (one shared array) and runs every element's load after
    // the previous store (H100: 0.18 ms at 16x8192x8192, 3x f16's time).
    auto words = T::alloc_fragment({bn, kBlockK}, i32, "words");
    T::clear(acc);
    for (auto k : T::Pipelined(T::ceildiv(c.K, kBlockK),
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * bm, k * kBlockK), A_shared);
      T::copy(Wq(bx * bn, k * (kBlockK / kPerWord)), Wq_shared);
      T::copy(Scales(k, T::slice(bx * bn, (bx + 1) * bn)), S_shared);
      // Column j of row i is nibble j % 8 of word j / 8.
      for (auto [i, j] : T::Parallel(bn, kBlockK))
        words(i, j) = Wq_shared(i, j / kPerWord);
      for (auto [i, j] : T::Parallel(bn, kBlockK)) {
        T::Expr q = Int4ToF16((words(i, j) >> ((j % kPerWord) * 4)) & 0xF);
        W_shared(i, j) = scale_after ? q : q * S_shared(i);
      }
      if (scale_after) {
        T::gemm(A_shared, W_shared, *acc_step,
                {.transpose_B = true, .clear_accum = true});
        for (auto [i, j] : T::Parallel(bm, bn))
          acc(i, j) += (*acc_step)(i, j) * S_shared(j);
      } else {
        T::gemm(A_shared, W_shared, acc, {.transpose_B = true});
      }
    }
    T::copy(acc, C(by * bm, bx * bn));
  }
  return p.finish();
}

HostTensor PackInt4Weights(const std::vector<uint8_t>& u, int64_t N,
                           int64_t K) {
  const int64_t words = (K + kPerWord - 1) / kPerWord;
  HostTensor wq(i32, {N, words});
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t w = 0; w < words; ++w) {
      uint32_t bits = 0;
      for (int j = 0; j < kPerWord && w * kPerWord + j < K; ++j)
        bits |= uint32_t(u[n * K + w * kPerWord + j] & 0xF) << (4 * j);
      wq.set_flat_int(n * words + w, static_cast<int32_t>(bits));
    }
  }
  return wq;
}

std::vector<double> DequantizeInt4Weights(const HostTensor& wq,
                                          const HostTensor& scales, int64_t N,
                                          int64_t K) {
  const int64_t words = (K + kPerWord - 1) / kPerWord;
  std::vector<double> w(N * K);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const uint32_t bits =
          static_cast<uint32_t>(wq.get_flat_int(n * words + k / kPerWord));
      const int q = int((bits >> (4 * (k % kPerWord))) & 0xF) - 8;
      w[n * K + k] = q * scales.get_flat((k / kBlockK) * N + n);
    }
  }
  return w;
}

absl::StatusOr<Workload> W4A16GemmWorkload(const W4A16Config& c,
                                           uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program program, W4A16GemmProgram(c));
  const W4A16Tile t = c.default_tile ? DefaultW4A16Tile(c.M) : c.tile;
  const int64_t M = c.M, N = c.N, K = c.K;
  const int64_t groups = (K + kBlockK - 1) / kBlockK;
  Workload w;
  w.kernel = "w4a16_gemm";
  w.shape = absl::StrCat(M, "x", N, "x", K, " int4 g128 tile ", t.block_m, "x",
                         t.block_n, "x", kBlockK, " s", t.num_stages, " t",
                         t.threads, t.swap_ab ? " swap" : "");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["A"], RandomInput(f16, {M, K}, seed));
  std::vector<uint8_t> u(N * K);
  std::mt19937 gen(static_cast<uint32_t>(seed + 1));
  for (uint8_t& v : u) v = static_cast<uint8_t>(gen() & 0xF);
  w.tensors["Wq"] = PackInt4Weights(u, N, K);
  // |W| <= 8 / 16: sums of K products stay near sqrt(K) / 4.
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["scales"],
                           RandomInput(f16, {groups, N}, seed + 2, 1.0 / 16));
  w.tensors["C"] = Zeros(f16, {M, N});
  w.steps.push_back({.program = program, .args = {"A", "Wq", "scales", "C"}});
  w.outputs = {"C"};
  w.flops = 2.0 * M * N * K;
  w.bytes = 2.0 * M * K + 4.0 * N * ((K + kPerWord - 1) / kPerWord) +
            2.0 * groups * N + 2.0 * M * N;
  w.label = {.kernel = "w4a16_gemm",
             .variant = "g128",
             .dtype = "f16",
             .shape = {{"M", M}, {"N", N}, {"K", K}},
             .size = absl::StrCat(M, "x", N, "x", K)};
  w.reference =
      [M, N, K](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const std::vector<double> wt =
        DequantizeInt4Weights(w.tensors.at("Wq"), w.tensors.at("scales"), N, K);
    const std::vector<double> a = w.tensors.at("A").to_doubles();
    std::vector<double> out(M * N);
    ParallelFor(M, [&](int64_t m) {
      for (int64_t n = 0; n < N; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += a[m * K + k] * wt[n * K + k];
        out[m * N + n] = sum;
      }
    });
    return std::vector<Expected>{
        {"C", F64Tensor({M, N}, std::move(out)), 1e-2, 1e-2}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(w4a16_gemm, MakeW4A16);

}  // namespace tessel::samples
