// T.gemm on sm_90a through wgmma.mma_async: B (and A when it fits) read by
// the tensor cores from shared memory through SWIZZLE_128B descriptors.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

// The descriptor of k16 step kk of a SWIZZLE_128B operand region whose
// M/N extent starts at mn0.
Expr Lowerer::WgmmaDescriptor(const ir::Region& region, const WgmmaOperand& o,
                              int kk, Expr mn0) {
  ir::Region r = MutateRegion(region);
  std::vector<Expr> idx =
      RegionIndices(r, o.k_major ? std::vector<Expr>{mn0, Expr(kk * 16)}
                                 : std::vector<Expr>{Expr(kk * 16), mn0});
  return IntrinExpr(DataType::kI64, Intrinsic::kWgmmaDescSw128,
                    {SharedAddr(r.buffer, SharedOffset(r.buffer, idx)),
                     Expr(kWgmmaGroupBytes)});
}

// One wgmma of k16 step kk: (type, N, A M-major (-1: A in registers),
// B N-major, accumulator, A's registers or descriptor, B's descriptor).
Stmt Lowerer::WgmmaStep(const MmaGemm& m, const ir::GemmNode& g, int kk) {
  Expr b = WgmmaDescriptor(g.b, *m.wgmma, kk, Expr(0));
  Expr a, a_mn_major = Expr(-1);
  if (m.wgmma_a) {
    // Warpgroup w reads rows 64w.. of A.
    a = WgmmaDescriptor(g.a, *m.wgmma_a, kk, Expr(tx_) / 128 * 64);
    a_mn_major = Expr(m.wgmma_a->k_major ? 0 : 1);
  } else {
    a = m.a_keep.defined() ? Ref(m.a_keep, {Expr(kk), Expr(0)})
                           : Ref(m.af, {Expr(kk), Expr(0)});
  }
  const char* type = g.a.buffer->dtype == DataType::kBF16 ? "bf16" : "f16";
  return Intrin(Intrinsic::kWgmma,
                {Tag(type), Expr(int(m.wtn)), a_mn_major,
                 Expr(m.wgmma->k_major ? 0 : 1), Ref(m.acc, {Expr(0)}), a, b});
}

// Waits for the committed wgmma, then tells the compiler their
// accumulators changed here (it must not read them before the wait).
Stmt Lowerer::WaitWgmma(const std::vector<ir::Buffer>& accumulators) {
  std::vector<Stmt> s{Intrin(Intrinsic::kWgmmaWait, {Expr(0)})};
  for (const ir::Buffer& acc : accumulators) {
    const FragmentLayout& l = Layout(acc);
    s.push_back(Intrin(Intrinsic::kFenceOperand,
                       {Ref(Local(acc), {Expr(0)}), Expr(l.ni() * 4)}));
  }
  return ir::Seq(s);
}

// The warpgroup issues every k16 step and commits them. With A in
// registers, or outside a run of gemms, it waits right away; a gemm whose
// operands are both in shared memory leaves the wait to the statement
// list (deferred_wgmma_), so that the next gemms of the list issue while
// it runs. B's tile may be overwritten only after the wait (it covers the
// tensor cores' shared reads) and the next barrier.
Stmt Lowerer::LowerWgmma(const ir::GemmNode& g, const MmaGemm& m) {
  std::vector<Stmt> body;
  if (g.clear_accum) body.push_back(ClearAccumulator(g, m));
  if (!m.wgmma_a) {
    for (int kk = 0; kk < m.KK; ++kk)
      body.push_back(LoadFragments(m, g, Expr(kk), kk));
  }
  body.push_back(Intrin(Intrinsic::kWgmmaFence, {}));
  for (int kk = 0; kk < m.KK; ++kk) body.push_back(WgmmaStep(m, g, kk));
  body.push_back(Intrin(Intrinsic::kWgmmaCommit, {}));
  if (m.wgmma_a && defer_wgmma_) {
    deferred_wgmma_.push_back(g.c.buffer);
  } else {
    body.push_back(WaitWgmma({g.c.buffer}));
  }
  if (m.wgmma_a || m.a_keep.defined()) return ir::Seq(body);
  return ir::MakeStmt<ir::AllocateNode>(m.af, ir::Seq(body), ir::SourceLoc());
}

// Whether statement s may issue while the deferred wgmma run: another
// gemm on shared operands, not clearing a running accumulator (adding to
// one is the k loop's own pattern). Not a barrier: it may order a write
// after the tensor cores' reads (another warpgroup's, even), and only
// the wait ends those.
bool Lowerer::JoinsDeferredWgmma(const Stmt& s) {
  const auto* g = s.As<ir::GemmNode>();
  if (g == nullptr || PlanOf(*g).a.path != OperandPath::kDescriptor)
    return false;
  for (const ir::Buffer& acc : deferred_wgmma_)
    if (acc.get() == g->c.buffer.get() && g->clear_accum) return false;
  return true;
}

}  // namespace tessel::passes::lower
