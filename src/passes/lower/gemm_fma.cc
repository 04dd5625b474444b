// T.gemm as per-thread FMA loops over the accumulator's elements (dtypes
// and shapes the tensor cores do not take).
#include "src/passes/lower/lowerer.h"

#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::LowerGemmFma(const ir::GemmNode& g, const ir::Region& a,
                           const ir::Region& b) {
  if (a.buffer->scope == ir::Scope::kFragment ||
      b.buffer->scope == ir::Scope::kFragment) {
    Fail(&g, "gemm operands in fragments (copy them to shared memory)");
    return ir::Seq({});
  }
  ir::Buffer acc = Local(g.c.buffer);
  DataType t = g.c.buffer->dtype;
  auto ae = *ConstSqueezedExtents(a);
  int64_t K = g.transpose_a ? ae[0] : ae[1];
  // k outermost, one step over every element of the accumulator inside:
  // the unrolled body is one product per element, whatever K is. (A k loop
  // in each element's unrolled copy made NVRTC take 7.6 s for a 64 x 64 f32
  // tile and 114 s for 128 x 128.) Each element still adds its products in
  // k order, so the sums are the same.
  ir::Var k("k");
  ranges_[k.get()] = {0, K - 1};
  Stmt step = ForEachLocal(g.c.buffer, [&](const std::vector<Expr>& li,
                                           const std::vector<Expr>& ij) {
    std::vector<Expr> ai = g.transpose_a ? std::vector<Expr>{k, ij[0]}
                                         : std::vector<Expr>{ij[0], k};
    std::vector<Expr> bi = g.transpose_b ? std::vector<Expr>{ij[1], k}
                                         : std::vector<Expr>{k, ij[1]};
    Expr av = Cast(t, Load(a.buffer, RegionIndices(a, ai)));
    Expr bv = Cast(t, Load(b.buffer, RegionIndices(b, bi)));
    return Store(acc, li, ir::Load(acc, li) + av * bv);
  });
  Stmt loop = MakeFor(k, 0, Expr(int(K)), ir::ForKind::kSerial, step);
  if (!g.clear_accum) return loop;
  Stmt clear = ForEachLocal(
      g.c.buffer, [&](const std::vector<Expr>& li, const std::vector<Expr>&) {
        return Store(acc, li, ir::Zero(t));
      });
  return ir::Seq({clear, loop});
}

}  // namespace tessel::passes::lower
