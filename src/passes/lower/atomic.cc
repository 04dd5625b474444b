// T.atomic_add / max / min: of one value, of a fragment, or of a shared tile
// (vectorized f32x4 / f32x2 / f16x2 where aligned).
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::LowerAtomic(const ir::AtomicNode& a) {
  ir::Region dst = MutateRegion(a.dst);
  Intrinsic name = a.op == ir::AtomicOp::kAdd   ? Intrinsic::kAtomicAdd
                   : a.op == ir::AtomicOp::kMax ? Intrinsic::kAtomicMax
                                                : Intrinsic::kAtomicMin;
  DataType t = dst.buffer->dtype;
  if (!a.src) {
    Expr v = Cast(t, MutateExpr(a.value));
    Expr off = GlobalIndex(dst.buffer, dst.start);
    Stmt s = Intrin(name, {ir::Load(dst.buffer, {off}), v});
    return in_parallel_ ? s : MakeIf(Expr(tx_) == 0, s);
  }
  ir::Region src = MutateRegion(*a.src);
  if (src.buffer->scope == ir::Scope::kFragment) {
    ir::Buffer local = Local(src.buffer);
    const FragmentLayout& l = Layout(src.buffer);
    return ForEachLocal(src.buffer, [&](const std::vector<Expr>& li,
                                        const std::vector<Expr>& logical) {
      std::vector<Expr> di = RegionIndices(dst, SqueezedIndex(src, logical));
      Stmt s =
          Intrin(name, {ir::Load(dst.buffer, {GlobalIndex(dst.buffer, di)}),
                        Cast(t, ir::Load(local, li))});
      return Guard(And(l.Leader(tx_), InBounds(dst.buffer, di)), s);
    });
  }
  // Shared source: vectors of 4 f32 / 2 f16/bf16 where aligned.
  int vec = 1;
  if (a.op == ir::AtomicOp::kAdd && src.buffer->dtype == t) {
    int max_bytes = t == DataType::kF32                             ? 16
                    : (t == DataType::kF16 || t == DataType::kBF16) ? 4
                                                                    : 0;
    if (max_bytes > 0) vec = VectorWidth(dst, src, max_bytes);
  }
  return ForEachElement(src, vec, [&](const std::vector<Expr>& sq, int v) {
    std::vector<Expr> si = RegionIndices(src, sq);
    std::vector<Expr> di = RegionIndices(dst, sq);
    Expr pred = InBounds(dst.buffer, di);
    Expr doff = GlobalIndex(dst.buffer, di);
    if (v > 1) {
      std::vector<Expr> args{Expr(v), ir::Load(dst.buffer, {doff})};
      for (int u = 0; u < v; ++u) {
        std::vector<Expr> su = si;
        su.back() = su.back() + u;
        args.push_back(ir::Load(src.buffer, {SharedOffset(src.buffer, su)}));
      }
      return Guard(pred, Intrin(Intrinsic::kAtomicAddVec, args));
    }
    Expr val = Cast(t, ir::Load(src.buffer, {FlatOffset(src.buffer, si)}));
    return Guard(pred, Intrin(name, {ir::Load(dst.buffer, {doff}), val}));
  });
}

}  // namespace tessel::passes::lower
