#include "samples/w4a16_gemm_swap.h"

#include <cstdint>
#include <optional>

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr int kBlockK = kW4A16GroupSize;  // one scale row a k step
constexpr int kPerWord = 8;               // 4-bit values in an i32

// f16 of the 4-bit value `u` (an i32 in [0, 15]) minus 8, exactly: the
// bits 0x6400 | u are the f16 1024 + u.
T::Expr Int4ToF16(const T::Expr& u) {
  T::Expr biased = T::bitcast(T::cast(u | 0x6400, T::i16), T::f16);
  return biased - T::constant(1032, T::f16);
}

}  // namespace

W4A16Tile DefaultW4A16SwapTile(int64_t M) {
  if (M <= 16) return {.block_m = 16, .block_n = 64, .num_stages = 8};
  if (M <= 64) {
    return {.block_m = M <= 32 ? 32 : 64, .block_n = 64, .num_stages = 6};
  }
  return {.block_m = 128, .block_n = 64, .num_stages = 4};
}

W4A16Tensors DeclareW4A16Tensors(ProgramBuilder& p, const W4A16Config& c) {
  return {p.tensor("A", {c.M, c.K}, f16),
          p.tensor("Wq", {c.N, (c.K + kPerWord - 1) / kPerWord}, i32),
          p.tensor("scales", {(c.K + kBlockK - 1) / kBlockK, c.N}, f16),
          p.tensor("C", {c.M, c.N}, f16)};
}

W4A16StepTiles AllocW4A16StepTiles(int block_m, int block_n) {
  return {T::alloc_shared({block_m, kBlockK}, f16, "A_shared"),
          T::alloc_shared({block_n, kBlockK / kPerWord}, i32, "Wq_shared"),
          T::alloc_shared({block_n}, f16, "S_shared")};
}

absl::StatusOr<Program> W4A16SwapABProgram(const W4A16Config& c,
                                           const W4A16Tile& t) {
  const int bm = t.block_m, bn = t.block_n;
  T::ProgramBuilder p("w4a16_gemm");
  auto [A, Wq, Scales, C] = DeclareW4A16Tensors(p, c);
  {
    T::Kernel kernel(T::ceildiv(c.N, bn), T::ceildiv(c.M, bm),
                     {.threads = t.threads});
    auto [bx, by] = kernel.block_index();
    auto [A_shared, Wq_shared, S_shared] = AllocW4A16StepTiles(bm, bn);
    auto C_shared = T::alloc_shared({bm, bn}, f16, "C_shared");
    // The dequantized weights in the wgmma / mma.sync A-operand layout:
    // each thread turns the nibbles it multiplies, no shared round trip.
    auto W_frag = T::alloc_fragment({bn, kBlockK}, f16, "W_frag");
    // acc^T: rows are W's (N), columns A's (M). Each k step (one group)
    // goes into acc_step and adds into acc at its row's scale, so the
    // dequant loop has no multiply.
    auto acc = T::alloc_fragment({bn, bm}, f32, "acc");
    // Where a second f32 tile does not fit (more than 32 accumulators a
    // thread) the dequant loop multiplies by the scale instead.
    const bool scale_after = int64_t(bn) * bm / t.threads <= 32;
    std::optional<T::Buffer> acc_step;
    if (scale_after) acc_step = T::alloc_fragment({bn, bm}, f32, "acc_step");
    T::clear(acc);
    for (auto k : T::Pipelined(T::ceildiv(c.K, kBlockK),
                               {.num_stages = t.num_stages, .name = "k"})) {
      T::copy(A(by * bm, k * kBlockK), A_shared);
      T::copy(Wq(bx * bn, k * (kBlockK / kPerWord)), Wq_shared);
      T::copy(Scales(k, T::slice(bx * bn, (bx + 1) * bn)), S_shared);
      // Column j of row i is nibble j % 8 of word j / 8.
      for (auto [i, j] : T::Parallel(bn, kBlockK)) {
        T::Expr q = Int4ToF16(
            (Wq_shared(i, j / kPerWord) >> ((j % kPerWord) * 4)) & 0xF);
        W_frag(i, j) = scale_after ? q : q * S_shared(i);
      }
      if (scale_after) {
        T::gemm(W_frag, A_shared, *acc_step,
                {.transpose_B = true, .clear_accum = true});
        for (auto [i, j] : T::Parallel(bn, bm))
          acc(i, j) += (*acc_step)(i, j) * S_shared(i);
      } else {
        T::gemm(W_frag, A_shared, acc, {.transpose_B = true});
      }
    }
    // C's tile is acc transposed: through shared memory, then one guarded
    // copy (rows past M and columns past N are skipped).
    for (auto [i, j] : T::Parallel(bn, bm)) C_shared(j, i) = acc(i, j);
    T::copy(C_shared, C(by * bm, bx * bn));
  }
  return p.finish();
}

}  // namespace tessel::samples
