// T.gemm on the tensor cores through ldmatrix + mma.sync m16n8k16, over the
// warp grid layout inference chose, fragments double-buffered per k16 step.
#include "src/passes/lower/lowerer.h"

#include "absl/strings/str_cat.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/small_m_gemm.h"

namespace tessel::passes::lower {

const GemmPlan& Lowerer::PlanOf(const ir::GemmNode& g) {
  static const GemmPlan kFma;
  const GemmPlan* p = st_.GemmPlanOf(&g);
  if (p != nullptr) return *p;
  Fail(&g, "internal: a gemm that plan_gemms did not plan");
  return kFma;
}

// nullopt: the FMA path. The registers of the plan's mma (or wgmma) tiles.
std::optional<MmaGemm> Lowerer::PlanMma(const ir::GemmNode& g) {
  const GemmPlan& p = PlanOf(g);
  if (p.instruction == GemmInstruction::kFma) return std::nullopt;
  MmaGemm m;
  m.acc = Local(g.c.buffer);
  m.KK = p.k_steps;
  m.k_step = p.k_step;
  m.MI = p.m_tiles;
  m.NI = p.n_tiles;
  m.wn = p.warps_n;
  m.wtm = p.warp_m;
  m.wtn = p.warp_n;
  if (p.instruction == GemmInstruction::kWgmma) {
    m.wgmma = WgmmaOperand{p.b.k_major, p.b.atom_bytes};
    m.wgmma_n = p.wgmma_n;
    m.warpgroup_cols = Layout(g.c.buffer).warpgroup_cols();
  }
  if (p.a.path == OperandPath::kDescriptor)
    m.wgmma_a = WgmmaOperand{p.a.k_major, p.a.atom_bytes};
  int id = gemm_count_++;
  m.af = ir::MakeBuffer(absl::StrCat("a_frag", id ? std::to_string(id) : ""),
                        DataType::kU32, {m.wgmma ? m.KK : 2, m.MI, 4},
                        ir::Scope::kLocal);
  m.bf = ir::MakeBuffer(absl::StrCat("b_frag", id ? std::to_string(id) : ""),
                        DataType::kU32, {2, m.NI, 2}, ir::Scope::kLocal);
  if (g.a.buffer->dtype == DataType::kBF16) m.kind = "bf16_f32";
  if (auto it = kept_.find(&g); it != kept_.end()) {
    if (it->second[0]) std::tie(m.a_keep, m.a_fill) = *it->second[0];
    if (it->second[1]) std::tie(m.b_keep, m.b_fill) = *it->second[1];
  }
  return m;
}

Stmt Lowerer::ClearAccumulator(const ir::GemmNode& g, const MmaGemm& m) {
  return ForEachLocal(
      g.c.buffer, [&](const std::vector<Expr>& li, const std::vector<Expr>&) {
        return Store(m.acc, li, Expr(0.0));
      });
}

// ldmatrix of k16 step kk of gemm g's operands into fragment buffer buf.
Stmt Lowerer::LoadFragments(const MmaGemm& m, const ir::GemmNode& g, Expr buf,
                            int kk) {
  Stmt b = (m.b_keep.defined() && !m.b_fill) || m.wgmma ? ir::Seq({})
                                                        : LoadB(m, g, buf, kk);
  if (g.a.buffer->scope == ir::Scope::kFragment) {
    return ir::Seq({PackRegisterA(m, g, buf, kk), b});
  }
  if (m.a_keep.defined() && !m.a_fill) return b;
  return ir::Seq({LoadA(m, g, buf, kk), b});
}

// A register A operand (layout inference gave it the accumulator layout
// of a warps_m x 1 grid): the a[r] register of m16 tile mi, k16 step kk
// is the pair at local [mi][2kk + r / 2][(r % 2) * 2 ..+1] (rows g and
// g + 8 alternate with r, the two k8 halves with r / 2).
Stmt Lowerer::PackRegisterA(const MmaGemm& m, const ir::GemmNode& g, Expr buf,
                            int kk) {
  ir::Buffer a = Local(g.a.buffer);
  ir::Var mi("mi");
  ranges_[mi.get()] = {0, m.MI - 1};
  std::vector<Stmt> regs;
  for (int r = 0; r < 4; ++r) {
    Expr n8 = Expr(2 * kk + r / 2);
    Expr lo = ir::Load(a, {mi, n8, Expr((r % 2) * 2)});
    Expr hi = ir::Load(a, {mi, n8, Expr((r % 2) * 2 + 1)});
    regs.push_back(
        Store(m.af, {buf, mi, Expr(r)},
              IntrinExpr(DataType::kU32, Intrinsic::kPackB16x2, {lo, hi})));
  }
  return MakeFor(mi, 0, m.MI, ir::ForKind::kUnrolled, ir::Seq(regs));
}

Stmt Lowerer::LoadA(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk) {
  ir::Region a = MutateRegion(g.a);
  Expr lane = Expr(tx_) % 32, warp = Expr(tx_) / 32;
  Expr wrow = warp / m.wn * int(m.wtm);
  // A [1, K] (M = 1) keeps its row dim (small_m_gemm.h).
  auto shared_addr = [&](const ir::Region& r, Expr row, Expr col) {
    std::vector<Expr> idx = GemmMatrixIndices(r, row, col);
    return SharedAddr(r.buffer, SharedOffset(r.buffer, idx));
  };
  std::vector<Stmt> s;
  ir::Var mi("mi");
  ranges_[mi.get()] = {0, m.MI - 1};
  // The first row of this warp's m16 tile mi (warpgroup-spread for wgmma
  // accumulators, FragmentLayout::Wgmma).
  const FragmentLayout& cl = Layout(g.c.buffer);
  const bool spread = cl.warpgroup_rows() || cl.warpgroup_cols();
  Expr tile_row = spread ? cl.TileRow(warp, mi) : wrow + Expr(mi) * 16;
  Expr k0 = Expr(kk * 16);
  Expr addr_a;
  if (!g.transpose_a) {
    Expr row = spread ? tile_row + lane % 16 : wrow + lane % 16 + Expr(mi) * 16;
    // A small-M tile's padding rows read row M - 1 (small_m_gemm.h): C's
    // row r depends on A's row r alone, and the padding rows are dropped.
    if (cl.padded_rows() != 0)
      row = ir::Min(row, Expr(static_cast<int>(cl.shape()[0]) - 1));
    addr_a = shared_addr(a, row, k0 + lane / 16 * 8);
  } else {
    Expr q = lane / 8, r = lane % 8;
    addr_a = shared_addr(a, k0 + q / 2 * 8 + r, tile_row + q % 2 * 8);
  }
  s.push_back(MakeFor(
      mi, 0, m.MI, ir::ForKind::kUnrolled,
      Intrin(
          Intrinsic::kLdmatrix,
          {Expr(4), Expr(g.transpose_a ? 1 : 0),
           AddressOf(m.a_keep.defined() ? ir::Load(m.a_keep, {Expr(kk), mi, 0})
                                        : ir::Load(m.af, {buf, mi, 0})),
           addr_a})));
  return ir::Seq(s);
}

Stmt Lowerer::LoadB(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk) {
  ir::Region b = MutateRegion(g.b);
  Expr lane = Expr(tx_) % 32, warp = Expr(tx_) / 32;
  Expr wcol = warp % m.wn * int(m.wtn);
  auto shared_addr = [&](const ir::Region& r, Expr row, Expr col) {
    std::vector<Expr> idx = RegionIndices(r, {row, col});
    return SharedAddr(r.buffer, SharedOffset(r.buffer, idx));
  };
  std::vector<Stmt> s;
  ir::Var nj("nj");
  ranges_[nj.get()] = {0, m.NI / 2 - 1};
  Expr k0 = Expr(kk * 16);
  Expr addr_b;
  if (!g.transpose_b) {
    addr_b =
        shared_addr(b, k0 + lane % 16, wcol + Expr(nj) * 16 + lane / 16 * 8);
  } else {
    addr_b = shared_addr(b, wcol + Expr(nj) * 16 + lane / 16 * 8 + lane % 8,
                         k0 + lane / 8 % 2 * 8);
  }
  s.push_back(MakeFor(
      nj, 0, m.NI / 2, ir::ForKind::kUnrolled,
      Intrin(Intrinsic::kLdmatrix,
             {Expr(4), Expr(g.transpose_b ? 0 : 1),
              AddressOf(m.b_keep.defined()
                            ? ir::Load(m.b_keep, {Expr(kk), Expr(nj) * 2, 0})
                            : ir::Load(m.bf, {buf, Expr(nj) * 2, 0})),
              addr_b})));
  return ir::Seq(s);
}

// The mma of k16 step kk on fragment buffer buf (or the kept operands).
Stmt Lowerer::MmaStep(const MmaGemm& m, Expr buf, int kk) {
  ir::Var mi("mi"), ni("ni");
  ranges_[mi.get()] = {0, m.MI - 1};
  ranges_[ni.get()] = {0, m.NI - 1};
  // Serpentine over n: consecutive mma share A and the last B fragment.
  Expr n = ir::Select(Expr(mi) % 2 == 0, Expr(ni), Expr(m.NI - 1) - ni);
  Stmt mma = Intrin(Intrinsic::kMma,
                    {Tag(m.kind), Ref(m.acc, {mi, n}),
                     m.a_keep.defined() ? Ref(m.a_keep, {Expr(kk), mi})
                                        : Ref(m.af, {buf, mi}),
                     m.b_keep.defined() ? Ref(m.b_keep, {Expr(kk), n})
                                        : Ref(m.bf, {buf, n})});
  return MakeFor(mi, 0, m.MI, ir::ForKind::kUnrolled,
                 MakeFor(ni, 0, m.NI, ir::ForKind::kUnrolled, mma));
}

Stmt Lowerer::WithFragments(const MmaGemm& m, Stmt body) {
  return ir::MakeStmt<ir::AllocateNode>(
      m.af, ir::MakeStmt<ir::AllocateNode>(m.bf, body, ir::SourceLoc()),
      ir::SourceLoc());
}

Stmt Lowerer::LowerGemm(const ir::GemmNode& g) {
  std::optional<MmaGemm> m = PlanMma(g);
  if (!m) return LowerGemmFma(g, MutateRegion(g.a), MutateRegion(g.b));
  if (m->wgmma) return LowerWgmma(g, *m);
  std::vector<Stmt> out;
  if (g.clear_accum) out.push_back(ClearAccumulator(g, *m));
  std::vector<Stmt> body;
  body.push_back(LoadFragments(*m, g, Expr(0), 0));
  for (int kk = 0; kk < m->KK; ++kk) {
    // Fragments of step kk + 1 load while step kk's mma run.
    if (kk + 1 < m->KK)
      body.push_back(LoadFragments(*m, g, Expr((kk + 1) % 2), kk + 1));
    body.push_back(MmaStep(*m, Expr(kk % 2), kk));
  }
  out.push_back(WithFragments(*m, ir::Seq(body)));
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
