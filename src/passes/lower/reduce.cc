// T.reduce_*: the mma accumulator's rows by warp shuffles (and shared
// memory across warps), any other tile through a scratch copy.
#include "src/passes/lower/lowerer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "src/ir/tile_op_rules.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/reduce_ops.h"
#include "src/passes/plan_shared_memory.h"

namespace tessel::passes::lower {

ir::Buffer Lowerer::Scratch(const ir::StmtNode* op, DataType t) {
  ir::Buffer s = st_.smem.ScratchOf(op);
  if (!s.defined() || s->dtype != t) {
    Fail(op, "internal: no scratch planned for this reduction");
    return ir::MakeBuffer("red_scratch", t, {Expr(1)}, ir::Scope::kShared);
  }
  return s;
}

Stmt Lowerer::LowerReduce(const ir::ReduceNode& r) {
  DataType t = r.dst->dtype;
  if (IsMmaRowReduce(r, st_)) {
    const FragmentLayout& l = Layout(r.src);
    ir::Buffer src = Local(r.src), dst = Local(r.dst);
    ir::Var mi("mi"), h("h"), acc_v(absl::StrCat(r.dst->name, "_part"));
    std::vector<Stmt> per_row;
    Expr part = ir::ReduceIdentity(r.reduce_kind, t);
    for (int ni = 0; ni < l.ni(); ++ni)
      for (int e = 0; e < 2; ++e)
        part = Combine(r.reduce_kind, part,
                       Pre(r.reduce_kind,
                           Cast(t, ir::Load(src, {mi, ni, Expr(h) * 2 + e}))));
    Expr warp = IntrinExpr(t, WarpReduce(r.reduce_kind), {Expr(4), part});
    per_row.push_back(Let(acc_v, warp));
    Expr total = acc_v;
    if (l.warps_n() == 1) {
      Expr v = r.clear ? total
                       : Combine(r.reduce_kind, ir::Load(dst, {mi, h}), total);
      per_row.push_back(Store(dst, {mi, h}, v));
      return MakeFor(
          mi, 0, l.mi(), ir::ForKind::kUnrolled,
          MakeFor(h, 0, 2, ir::ForKind::kUnrolled, ir::Seq(per_row)));
    }
    // Across the warps that share rows: partials to shared, then combine.
    std::vector<Stmt> out;
    ir::Buffer scratch = Scratch(&r, DataType::kF32);
    int M = static_cast<int>(l.shape()[0]);
    Expr row = l.Logical(tx_, {mi, Expr(0), Expr(h) * 2})[0];
    Expr wn = l.WarpCol(Expr(tx_) / 32);
    per_row.push_back(MakeIf(
        Expr(tx_) % 4 == 0,
        Store(scratch, {wn * M + row}, Cast(DataType::kF32, Expr(acc_v)))));
    out.push_back(
        MakeFor(mi, 0, l.mi(), ir::ForKind::kUnrolled,
                MakeFor(h, 0, 2, ir::ForKind::kUnrolled, ir::Seq(per_row))));
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    ir::Var mi2("mi"), h2("h");
    Expr row2 = l.Logical(tx_, {mi2, Expr(0), Expr(h2) * 2})[0];
    Expr comb;
    for (int w = 0; w < l.warps_n(); ++w) {
      Expr v = Cast(t, ir::Load(scratch, {Expr(w * M) + row2}));
      comb = comb.defined() ? Combine(r.reduce_kind, comb, v) : v;
    }
    Expr v =
        r.clear ? comb : Combine(r.reduce_kind, ir::Load(dst, {mi2, h2}), comb);
    out.push_back(MakeFor(
        mi2, 0, l.mi(), ir::ForKind::kUnrolled,
        MakeFor(h2, 0, 2, ir::ForKind::kUnrolled, Store(dst, {mi2, h2}, v))));
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    return ir::Seq(out);
  }
  if (IsRowsReduce(r, st_)) return ReduceRows(r);
  return ReduceGeneric(r);
}

// Writes a whole tile (fragment or shared) into a flat row-major scratch
// copy (or returns a loader for a shared tile read in place).
std::function<Expr(const std::vector<Expr>&)> Lowerer::Staged(
    const ir::ReduceNode& r, const ir::Buffer& b, std::vector<Stmt>& out) {
  if (b->scope == ir::Scope::kShared) {
    return [this, b](const std::vector<Expr>& idx) { return Load(b, idx); };
  }
  ir::Buffer scratch = Scratch(&r, b->dtype);
  ir::Buffer local = Local(b);
  const FragmentLayout& l = Layout(b);
  // The shared memory plan sizes this scratch for the whole tile
  // (ReduceScratchBytes); a shorter one would be written past its end.
  if (scratch->ConstNumElements().value_or(0) <
      b->ConstNumElements().value_or(0)) {
    Fail(&r, absl::StrCat("internal: the reduction scratch holds ",
                          scratch->ConstNumElements().value_or(0),
                          " elements, the staged tile ", b->name, " ",
                          b->ConstNumElements().value_or(0)));
  }
  out.push_back(ForEachLocal(
      b, [&](const std::vector<Expr>& li, const std::vector<Expr>& logical) {
        std::vector<Expr> shape;
        for (int64_t d : l.shape()) shape.push_back(Expr(int(d)));
        return Guard(l.Leader(tx_), Store(scratch, {FlatIndex(shape, logical)},
                                          ir::Load(local, li)));
      }));
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  std::vector<Expr> shape = b->shape;
  return [scratch, shape](const std::vector<Expr>& idx) {
    return ir::Load(scratch, {FlatIndex(shape, idx)});
  };
}

Stmt Lowerer::ReduceGeneric(const ir::ReduceNode& r) {
  if (!ConstShape(r.src->shape)) {
    Fail(&r, "a reduce of a tile with a symbolic shape");
    return ir::Seq({});
  }
  std::vector<Stmt> out;
  auto src = Staged(r, r.src, out);
  if (r.dst->scope == ir::Scope::kFragment) {
    ir::Buffer local = Local(r.dst);
    out.push_back(ForEachLocal(r.dst, [&](const std::vector<Expr>& li,
                                          const std::vector<Expr>& logical) {
      return ReduceOne(
          r, src, logical, [&](Expr v) { return Store(local, li, v); },
          ir::Load(local, li));
    }));
  } else {
    ir::Region full = ir::Region::Full(r.dst);
    out.push_back(
        ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
          return ReduceOne(
              r, src, sq, [&](Expr v) { return Store(r.dst, sq, v); },
              Load(r.dst, sq));
        }));
  }
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  return ir::Seq(out);
}

Stmt Lowerer::ReduceOne(
    const ir::ReduceNode& r,
    const std::function<Expr(const std::vector<Expr>&)>& src,
    const std::vector<Expr>& di, const std::function<Stmt(Expr)>& set,
    const Expr& old) {
  DataType t = r.dst->dtype;
  int64_t n = (*ConstShape(r.src->shape))[r.dim];
  ir::Var k("k");
  ir::Buffer accv = ir::MakeBuffer(absl::StrCat(r.dst->name, "_acc"), t,
                                   {Expr(1)}, ir::Scope::kVar);
  std::vector<Expr> si = di;
  // A rank-1 tile reduces into a [1] tile, whose index names no source dim.
  if (r.src->rank() == 1) si.clear();
  si.insert(si.begin() + r.dim, Expr(k));
  Stmt init = ir::MakeStmt<ir::StoreNode>(accv, std::vector<Expr>{0},
                                          ir::ReduceIdentity(r.reduce_kind, t),
                                          ir::SourceLoc());
  Stmt step =
      ir::MakeStmt<ir::StoreNode>(accv, std::vector<Expr>{0},
                                  Combine(r.reduce_kind, ir::Load(accv, {0}),
                                          Pre(r.reduce_kind, Cast(t, src(si)))),
                                  ir::SourceLoc());
  Stmt loop = MakeFor(k, 0, Expr(int(n)), ir::ForKind::kSerial, step);
  Expr result = ir::Load(accv, {0});
  Stmt fin = set(r.clear ? result : Combine(r.reduce_kind, old, result));
  return ir::MakeStmt<ir::AllocateNode>(accv, ir::Seq({init, loop, fin}),
                                        ir::SourceLoc());
}

}  // namespace tessel::passes::lower
