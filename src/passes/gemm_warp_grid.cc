#include "src/passes/gemm_warp_grid.h"

#include "absl/strings/str_cat.h"
#include "src/passes/fragment_layout.h"
#include "src/passes/ir_util.h"
#include "src/passes/small_m_gemm.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

// The warp grid of the gemm's policy over its accumulator, or {0, 0} when
// operand scopes or shapes rule the tensor cores out (any dtype).
std::pair<int, int> PolicyWarpGrid(const ir::GemmNode& g, int threads) {
  if (g.c.buffer->dtype != DataType::kF32) return {0, 0};
  // A may live in registers (a fragment laid out as an mma accumulator, see
  // CheckRegisterOperand); B always comes from shared memory.
  bool a_ok = g.a.buffer->scope == ir::Scope::kShared ||
              (g.a.buffer->scope == ir::Scope::kFragment && !g.transpose_a);
  if (!a_ok || g.b.buffer->scope != ir::Scope::kShared) return {0, 0};
  auto ce = GemmMatrixExtents(g.c);
  auto ae = GemmMatrixExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) return {0, 0};
  int64_t k = g.transpose_a ? (*ae)[0] : (*ae)[1];
  if (k % 16 != 0 || threads % 32 != 0) return {0, 0};
  // A register A operand needs each warp to own whole rows of C: the
  // default policy gives it that grid rather than refuse (an explicit
  // kFullCol still gets the error saying why).
  const bool register_a = g.a.buffer->scope == ir::Scope::kFragment;
  int policy = g.policy == ir::GemmWarpPolicy::kFullRow   ? 1
               : g.policy == ir::GemmWarpPolicy::kFullCol ? 2
               : register_a                               ? 1
                                                          : 0;
  return ChooseWarpGrid((*ce)[0], (*ce)[1], threads / 32, policy);
}

}  // namespace

std::pair<int, int> MmaWarpGrid(const ir::GemmNode& g, int threads) {
  DataType a = g.a.buffer->dtype, b = g.b.buffer->dtype;
  if (a != b || (a != DataType::kF16 && a != DataType::kBF16)) return {0, 0};
  // A small-M tile pads to one m16 tile per warp, whatever the policy.
  if (SmallMPaddedRows(g, threads) != 0) return {threads / 32, 1};
  return PolicyWarpGrid(g, threads);
}

std::string MmaPathRefusal(const ir::GemmNode& g, int threads) {
  if (MmaWarpGrid(g, threads).first != 0) return "";
  if (std::string why = SmallMRefusal(g, threads); !why.empty()) return why;
  DataType a = g.a.buffer->dtype, b = g.b.buffer->dtype;
  if (a != b || (a != DataType::kF16 && a != DataType::kBF16)) {
    return absl::StrCat("A and B are ", std::string(dtype_name(a)), " and ",
                        std::string(dtype_name(b)),
                        ", not both f16 or both bf16");
  }
  if (g.c.buffer->dtype != DataType::kF32) {
    return absl::StrCat("the accumulator is ",
                        std::string(dtype_name(g.c.buffer->dtype)),
                        ", not f32");
  }
  const ir::Scope a_scope = g.a.buffer->scope;
  if (a_scope == ir::Scope::kFragment && g.transpose_a) {
    return "A is a transposed register fragment";
  }
  if (a_scope != ir::Scope::kFragment && a_scope != ir::Scope::kShared) {
    return "A is neither a shared tile nor a fragment";
  }
  if (g.b.buffer->scope != ir::Scope::kShared) return "B is not a shared tile";
  auto ce = GemmMatrixExtents(g.c);
  auto ae = GemmMatrixExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) {
    return "the tiles are not 2-D of constant shape";
  }
  const int64_t k = g.transpose_a ? (*ae)[0] : (*ae)[1];
  if (k % 16 != 0) {
    return absl::StrCat("K = ", k, " is not a multiple of 16");
  }
  if (threads % 32 != 0) {
    return absl::StrCat(threads, " threads are not whole warps");
  }
  return absl::StrCat("the accumulator ", g.c.buffer->name, " [", (*ce)[0],
                      ", ", (*ce)[1], "] does not split over ", threads / 32,
                      " warps in 16 x 16 pieces (M a multiple of 16 x the "
                      "warps along M, N of 16 x the warps along N)");
}

std::pair<int, int> TensorCoreWarpGrid(const ir::GemmNode& g,
                                       const LoweringState& state) {
  if (!IsFp8Gemm(g)) return MmaWarpGrid(g, state.threads);
  if (!WgmmaAccumulator(g, state)) return {0, 0};
  return PolicyWarpGrid(g, state.threads);
}

}  // namespace tessel::passes
