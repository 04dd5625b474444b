// T.gemm on sm_90a through wgmma.mma_async: B (and A when it fits) read by
// the tensor cores from shared memory through SWIZZLE_128B descriptors.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "src/passes/lower/lowerer.h"

#include "absl/strings/str_cat.h"
#include "src/ir/arith/linear.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

// Where the k step starting at column k0 of a SWIZZLE_128B operand region
// whose M/N extent starts at mn0 begins: its flat shared buffer and the
// element offset in it. The descriptor starts at that element's own address
// (a K-major step and an M/N piece start inside an atom, at its row 0); an
// M/N-major operand wider than one atom has its atoms LBO apart. A step is
// 32 bytes of K for every type (k16, fp8 k32).
std::pair<ir::Buffer, Expr> Lowerer::WgmmaStart(const ir::Region& region,
                                                const WgmmaOperand& o, int k0,
                                                Expr mn0) {
  ir::Region r = MutateRegion(region);
  std::vector<Expr> idx =
      RegionIndices(r, o.k_major ? std::vector<Expr>{mn0, Expr(k0)}
                                 : std::vector<Expr>{Expr(k0), mn0});
  return {r.buffer, SharedOffset(r.buffer, idx)};
}

namespace {

Expr BuildDescriptor(const ir::Buffer& buffer, const Expr& offset,
                     const WgmmaOperand& o) {
  std::vector<Expr> args{SharedAddr(buffer, offset)};
  if (!o.k_major && o.atom_bytes > 0) args.push_back(Expr(o.atom_bytes));
  args.push_back(Expr(kWgmmaGroupBytes));
  return IntrinExpr(DataType::kI64, Intrinsic::kWgmmaDescSw128, args);
}

}  // namespace

// The operand's first step (k 0 at mn0); `shared` (more than one step reads
// the operand): its descriptor built once, bound by a Let appended to
// `lets`, so that each step costs one add (the PTX census of the flash
// backward step: 56 descriptors built whole, docs/benchmarks.md).
WgmmaDescriptors Lowerer::WgmmaBase(const ir::Region& region,
                                    const WgmmaOperand& o, Expr mn0,
                                    bool shared, std::vector<Stmt>& lets) {
  WgmmaDescriptors d{.region = &region, .operand = &o};
  std::tie(d.buffer, d.offset) = WgmmaStart(region, o, 0, mn0);
  if (shared) {
    d.base = ir::Var(absl::StrCat(d.buffer->name, "_desc"), DataType::kI64);
    lets.push_back(Let(d.base, BuildDescriptor(d.buffer, d.offset, o)));
  }
  return d;
}

// The step's descriptor: the base's plus the 16-byte units between their
// starts when those are a constant apart (they are for the swizzled
// layouts: a k step, an N piece, the next m64 rows), else built whole.
// The add stays inside the start address field (wgmma_desc_add).
Expr Lowerer::WgmmaDescriptor(const WgmmaDescriptors& d, int k0, Expr mn0) {
  auto [buffer, offset] = WgmmaStart(*d.region, *d.operand, k0, mn0);
  if (d.base.defined() && buffer.get() == d.buffer.get()) {
    if (std::optional<int64_t> diff = ir::ConstDifference(offset, d.offset)) {
      const int64_t bytes = *diff * dtype_bytes(buffer->dtype);
      if (bytes == 0) return Expr(d.base);
      if (bytes % 16 == 0) {
        return IntrinExpr(DataType::kI64, Intrinsic::kWgmmaDescAdd,
                          {Expr(d.base), Expr(static_cast<int>(bytes / 16))});
      }
    }
  }
  return BuildDescriptor(buffer, offset, *d.operand);
}

namespace {

// The type tag of a wgmma: "f16" / "bf16" (A and B alike), fp8 as A's and
// B's types, "e4m3.e5m2" (the codegen reads k32 from it).
std::string WgmmaTypes(const ir::GemmNode& g) {
  auto fp8 = [](DataType t) {
    return t == DataType::kF8E4M3 ? "e4m3" : "e5m2";
  };
  DataType a = g.a.buffer->dtype, b = g.b.buffer->dtype;
  if (IsFp8Gemm(g)) return std::string(fp8(a)) + "." + fp8(b);
  return a == DataType::kBF16 ? "bf16" : "f16";
}

}  // namespace

// The first row of A that warpgroup w reads in its m64 block mi: each
// reads 64 x MI rows from row 64 MI w, w = tx / 128 of the current thread
// index, as a warp-uniform value: the descriptors built from it stay in
// uniform registers (the flash backward step: 51 R2UR -> 3).
Expr Lowerer::WgmmaRowsA(const MmaGemm& m, int mi) {
  // Split along N, every warpgroup reads all rows.
  if (m.warpgroup_cols) return Expr(64 * mi);
  Expr rows = Expr(Warpgroup()) * (64 * m.MI);
  return mi > 0 ? rows + 64 * mi : rows;
}

// The warp-uniform warpgroup index of the current thread index.
ir::Var Lowerer::Warpgroup() {
  ir::Var& w = warpgroups_[tx_.get()];
  if (!w.defined()) w = ir::Var("warpgroup");
  return w;
}

// The first column of B (and C) of this warpgroup: 0, or its N / groups
// columns when the warpgroups split N.
Expr Lowerer::WgmmaColsB(const MmaGemm& m) {
  if (!m.warpgroup_cols) return Expr(0);
  return Expr(Warpgroup()) * static_cast<int>(m.wtn);
}

std::vector<Stmt> Lowerer::WarpgroupLet(const ir::Var& tx) {
  auto it = warpgroups_.find(tx.get());
  if (it == warpgroups_.end()) return {};
  return {Let(it->second, IntrinExpr(DataType::kI32, Intrinsic::kWarpUniform,
                                     {Expr(tx) / 128}))};
}

// One m64nNkK wgmma of k step kk: rows of the warpgroup's m64 block mi,
// accumulator columns n0..n0+n. Args (type, N, A M-major (-1: A in
// registers), B N-major, accumulator row block, its first n8 tile, A's
// registers or descriptor, B's descriptor).
Stmt Lowerer::WgmmaStep(const MmaGemm& m, const ir::GemmNode& g,
                        const WgmmaDescriptors& da, const WgmmaDescriptors& db,
                        int kk, int mi, int n0, int n, bool accumulate) {
  Expr b = WgmmaDescriptor(db, kk * m.k_step,
                           m.warpgroup_cols ? WgmmaColsB(m) + n0 : Expr(n0));
  Expr a, a_mn_major = Expr(-1);
  if (m.wgmma_a) {
    a = WgmmaDescriptor(da, kk * m.k_step, WgmmaRowsA(m, mi));
    a_mn_major = Expr(m.wgmma_a->k_major ? 0 : 1);
  } else {
    a = m.a_keep.defined() ? Ref(m.a_keep, {Expr(kk), Expr(mi)})
                           : Ref(m.af, {Expr(kk), Expr(mi)});
  }
  std::vector<Expr> args{Tag(WgmmaTypes(g)),
                         Expr(n),
                         a_mn_major,
                         Expr(m.wgmma->k_major ? 0 : 1),
                         Ref(m.acc, {Expr(mi)}),
                         Expr(n0 / 8),
                         a,
                         b};
  if (!accumulate) args.push_back(Expr(0));
  return Intrin(Intrinsic::kWgmma, args);
}

// Waits until at most `pending` committed wgmma groups run, then tells the
// compiler their accumulators changed here (it must not read them before the
// wait).
Stmt Lowerer::WaitWgmma(const std::vector<ir::Buffer>& accumulators,
                        int pending) {
  std::vector<Stmt> s{Intrin(Intrinsic::kWgmmaWait, {Expr(pending)})};
  for (const ir::Buffer& acc : accumulators) {
    const FragmentLayout& l = Layout(acc);
    for (int mi = 0; mi < l.mi(); ++mi) {
      s.push_back(Intrin(Intrinsic::kFenceOperand,
                         {Ref(Local(acc), {Expr(mi)}), Expr(l.ni() * 4)}));
    }
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
  // A clear_accum gemm's first k step overwrites the accumulator (scale-d
  // 0) instead of zeroed registers: ptxas then sees no register defined
  // before the run, keeps fewer live across it and does not serialize the
  // wgmmas (the flash backward's five gemms did: "insufficient register
  // resources", a wait after every k step).
  if (!m.wgmma_a) {
    for (int kk = 0; kk < m.KK; ++kk)
      body.push_back(LoadFragments(m, g, Expr(kk), kk));
  }
  // Taking turns (gemm_turns.cc, gemm_turns_rotated.cc): a gemm that opens
  // the warpgroup's turn waits for it, its fragments ready.
  const auto mark = turn_marks_.find(&g);
  const int turn = mark == turn_marks_.end() ? 0 : mark->second;
  if (turn & kTurnSync) body.push_back(GemmTurnSync());
  const int n_total = static_cast<int>(m.wtn);
  const int pieces = (n_total + m.wgmma_n - 1) / m.wgmma_n;
  WgmmaDescriptors db =
      WgmmaBase(g.b, *m.wgmma, WgmmaColsB(m), m.KK * m.MI * pieces > 1, body);
  WgmmaDescriptors da;
  if (m.wgmma_a) {
    da = WgmmaBase(g.a, *m.wgmma_a, WgmmaRowsA(m, 0), m.KK * m.MI > 1, body);
  }
  body.push_back(Intrin(Intrinsic::kWgmmaFence, {}));
  for (int kk = 0; kk < m.KK; ++kk) {
    for (int mi = 0; mi < m.MI; ++mi) {
      for (int n0 = 0; n0 < n_total; n0 += m.wgmma_n) {
        body.push_back(WgmmaStep(m, g, da, db, kk, mi, n0,
                                 std::min(m.wgmma_n, n_total - n0),
                                 /*accumulate=*/kk > 0 || !g.clear_accum));
      }
    }
  }
  body.push_back(Intrin(Intrinsic::kWgmmaCommit, {}));
  // ... and the one that closes it passes the turn on once issued.
  if (turn & kTurnPass) body.push_back(GemmTurnPass());
  if (turn & kTurnPassUnlessLast) {
    body.push_back(MakeIf(Expr(tx_) / 128 < in_turns_ - 1, GemmTurnPass()));
  }
  if (defer_wgmma_ && (m.wgmma_a || overlap_wgmma_)) {
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

// Whether statement s is a wgmma gemm with A in registers that may issue
// while the deferred wgmma run: it waits right away (its A registers must
// stay until then), which retires them too. Its fragments are neither their
// accumulators nor cleared over them.
bool Lowerer::EndsDeferredWgmma(const Stmt& s) {
  const auto* g = s.As<ir::GemmNode>();
  if (g == nullptr) return false;
  const GemmPlan& p = PlanOf(*g);
  if (p.instruction != GemmInstruction::kWgmma ||
      p.a.path != OperandPath::kRegisters) {
    return false;
  }
  for (const ir::Buffer& acc : deferred_wgmma_) {
    if (acc.get() == g->c.buffer.get() || acc.get() == g->a.buffer.get())
      return false;
  }
  return true;
}

}  // namespace tessel::passes::lower
