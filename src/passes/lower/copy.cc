// T.copy and T.fill: cp.async (16-byte chunks, zero-filled past the tensor
// edge) or vectorized moves between global and shared memory, fragment
// copies, and packed pair stores of mma accumulators.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

bool IsProducerCopy(const Stmt& s) {
  const auto* c = s.As<ir::CopyNode>();
  return c != nullptr && c->src.buffer->scope == ir::Scope::kGlobal &&
         c->dst.buffer->scope == ir::Scope::kShared;
}
bool OnlyProducerCopies(const Stmt& s) {
  if (IsProducerCopy(s)) return true;
  if (const auto* i = s.As<ir::IfThenElseNode>()) {
    return !i->else_case.defined() && OnlyProducerCopies(i->then_case);
  }
  if (const auto* q = s.As<ir::SeqNode>()) {
    for (const Stmt& c : q->stmts)
      if (!OnlyProducerCopies(c)) return false;
    return !q->stmts.empty();
  }
  return false;
}

Stmt Lowerer::Visit(const ir::FillNode* op) {
  const ir::Region& r = op->dst;
  Expr value = Cast(r.buffer->dtype, op->value);
  if (r.buffer->scope == ir::Scope::kFragment) {
    return ForEachLocal(r.buffer, [&](const std::vector<Expr>& local,
                                      const std::vector<Expr>&) {
      return Store(Local(r.buffer), local, value);
    });
  }
  return ForEachElement(r, 1, [&](const std::vector<Expr>& sq, int) {
    std::vector<Expr> idx = RegionIndices(r, sq);
    return Guard(InBounds(r.buffer, idx), Store(r.buffer, idx, value));
  });
}

void Lowerer::MarkAsync(const Stmt& s) {
  ForEachStmt(s, [&](const Stmt& x) {
    if (const auto* c = x.As<ir::CopyNode>()) async_.insert(c);
  });
}

Stmt Lowerer::LowerCopy(const ir::CopyNode& c) {
  if (c.barrier.defined()) return LowerTmaCopy(c);
  if (const EpilogueStore* e = st_.EpilogueStoreOf(&c))
    return LowerEpilogueStore(c, *e);
  ir::Region src = MutateRegion(c.src), dst = MutateRegion(c.dst);
  ir::Scope ss = src.buffer->scope, ds = dst.buffer->scope;
  if (ss == ir::Scope::kFragment || ds == ir::Scope::kFragment) {
    return CopyFragment(c, src, dst);
  }
  if (ss == ir::Scope::kGlobal && ds == ir::Scope::kShared) {
    bool async = async_.count(&c) && !st_.config.disable_async_copy &&
                 st_.target.sm() >= 80;
    int vec = VectorWidth(src, dst, 16);
    int bytes = vec * dtype_bytes(src.buffer->dtype);
    if (bytes < 4) async = false;
    return ForEachElement(dst, vec, [&](const std::vector<Expr>& sq, int v) {
      std::vector<Expr> gi = RegionIndices(src, sq);
      std::vector<Expr> si = RegionIndices(dst, sq);
      Expr pred = InBounds(src.buffer, gi);
      Expr soff = SharedOffset(dst.buffer, si);
      Expr goff = GlobalIndex(src.buffer, gi);
      if (async) {
        return Intrin(Intrinsic::kCpAsync,
                      {Expr(bytes), SharedAddr(dst.buffer, soff),
                       ir::Load(src.buffer, {goff}),
                       pred.defined() ? pred : ir::BoolImm(true)});
      }
      if (v > 1) {
        Stmt copy = Intrin(Intrinsic::kVecCopy,
                           {Expr(bytes), ir::Load(dst.buffer, {soff}),
                            ir::Load(src.buffer, {goff})});
        if (!pred.defined()) return copy;
        return MakeIf(pred, copy,
                      Intrin(Intrinsic::kVecZero,
                             {Expr(bytes), ir::Load(dst.buffer, {soff})}));
      }
      Expr value = Cast(dst.buffer->dtype, ir::Load(src.buffer, {goff}));
      if (pred.defined())
        value = ir::Select(pred, value, ir::Zero(dst.buffer->dtype));
      return ir::MakeStmt<ir::StoreNode>(dst.buffer, std::vector<Expr>{soff},
                                         value, ir::SourceLoc());
    });
  }
  // shared -> global, global -> global, shared -> shared.
  const ir::Region& driver = ss == ir::Scope::kShared ? src : dst;
  int vec = 1;
  if (ds == ir::Scope::kGlobal && ss == ir::Scope::kShared)
    vec = VectorWidth(dst, src, 16);
  int bytes = vec * dtype_bytes(src.buffer->dtype);
  return ForEachElement(driver, vec, [&](const std::vector<Expr>& sq, int v) {
    std::vector<Expr> si = RegionIndices(src, sq);
    std::vector<Expr> di = RegionIndices(dst, sq);
    Expr pred = And(InBounds(src.buffer, si), InBounds(dst.buffer, di));
    Expr so = FlatOffset(src.buffer, si), d_o = FlatOffset(dst.buffer, di);
    if (v > 1) {
      return Guard(pred, Intrin(Intrinsic::kVecCopy,
                                {Expr(bytes), ir::Load(dst.buffer, {d_o}),
                                 ir::Load(src.buffer, {so})}));
    }
    Expr value = Cast(dst.buffer->dtype, ir::Load(src.buffer, {so}));
    Expr src_in = InBounds(src.buffer, si);
    if (src_in.defined())
      value = ir::Select(src_in, value, ir::Zero(dst.buffer->dtype));
    return Guard(InBounds(dst.buffer, di),
                 ir::MakeStmt<ir::StoreNode>(dst.buffer, std::vector<Expr>{d_o},
                                             value, ir::SourceLoc()));
  });
}

Stmt Lowerer::CopyFragment(const ir::CopyNode& c, const ir::Region& src,
                           const ir::Region& dst) {
  bool from_frag = src.buffer->scope == ir::Scope::kFragment;
  const ir::Region& frag = from_frag ? src : dst;
  const ir::Region& other = from_frag ? dst : src;
  if (!frag.IsFull()) {
    Fail(&c, "a copy of part of fragment " + frag.buffer->name +
                 "; copy the whole fragment, or slice a shared tile");
    return ir::Seq({});
  }
  const FragmentLayout& l = Layout(frag.buffer);
  ir::Buffer local = Local(frag.buffer);
  if (other.buffer->scope == ir::Scope::kFragment) {
    if (!(Layout(other.buffer) == l)) {
      Fail(&c, "a copy from fragment " + src.buffer->name + " to fragment " +
                   dst.buffer->name +
                   ", whose elements other loops, copies or gemms spread "
                   "differently over the threads; copy through shared "
                   "memory (T::alloc_shared)");
      return ir::Seq({});
    }
    ir::Buffer ol = Local(other.buffer);
    return ForEachLocal(frag.buffer, [&](const std::vector<Expr>& li,
                                         const std::vector<Expr>&) {
      return from_frag ? Store(ol, li, ir::Load(local, li))
                       : Store(local, li, ir::Load(ol, li));
    });
  }
  // Packed pair stores of mma accumulators to global or shared memory: one
  // 32- or 64-bit store per column pair instead of two scalar ones (a
  // swizzle moves 16-byte chunks, so an even-aligned pair stays together).
  if (from_frag && l.kind() == FragmentLayout::Kind::kMma &&
      other.buffer->scope != ir::Scope::kLocal && PairsOk(other)) {
    ir::Var mi("mi"), ni("ni"), h("h");
    ranges_[mi.get()] = {0, l.mi() - 1};
    ranges_[ni.get()] = {0, l.ni() - 1};
    ranges_[h.get()] = {0, 1};
    std::vector<Expr> lo{mi, ni, Expr(h) * 2}, hi{mi, ni, Expr(h) * 2 + 1};
    std::vector<Expr> logical = l.Logical(tx_, lo);
    // By the squeezed index, as below: a [1, N] tile's pairs run along N.
    std::vector<Expr> gi = RegionIndices(other, SqueezedIndex(frag, logical));
    // A small-M accumulator's padding rows are not stored (Valid).
    Expr pred = And(l.Valid(tx_, lo), InBounds(other.buffer, gi));
    DataType t = other.buffer->dtype;
    // 16-bit pairs are packed from the f32 values by the store itself.
    bool packed = t == DataType::kF16 || t == DataType::kBF16;
    Stmt st =
        Intrin(Intrinsic::kStorePair,
               {ir::Load(other.buffer, {FlatOffset(other.buffer, gi)}),
                packed ? ir::Load(local, lo) : Cast(t, ir::Load(local, lo)),
                packed ? ir::Load(local, hi) : Cast(t, ir::Load(local, hi))});
    Stmt body = Guard(pred, st);
    body = MakeFor(h, 0, 2, ir::ForKind::kUnrolled, body);
    body = MakeFor(ni, 0, l.ni(), ir::ForKind::kUnrolled, body);
    return MakeFor(mi, 0, l.mi(), ir::ForKind::kUnrolled, body);
  }
  Expr leader = l.Leader(tx_);
  return ForEachLocal(frag.buffer, [&](const std::vector<Expr>& li,
                                       const std::vector<Expr>& logical) {
    // By the squeezed index: a [1, N] tile's column runs along the row.
    std::vector<Expr> oi = RegionIndices(other, SqueezedIndex(frag, logical));
    Expr pred = InBounds(other.buffer, oi);
    Expr off = FlatOffset(other.buffer, oi);
    if (from_frag) {
      Stmt s = ir::MakeStmt<ir::StoreNode>(
          other.buffer, std::vector<Expr>{off},
          Cast(other.buffer->dtype, ir::Load(local, li)), ir::SourceLoc());
      return Guard(And(leader, pred), s);
    }
    Expr v = Cast(frag.buffer->dtype, ir::Load(other.buffer, {off}));
    if (pred.defined()) v = ir::Select(pred, v, ir::Zero(frag.buffer->dtype));
    return Store(local, li, v);
  });
}

// Whether element pairs (j, j + 1) of a global or shared region sit
// together in memory, 2-element aligned (the mma accumulator's column
// pairs).
bool Lowerer::PairsOk(const ir::Region& g) {
  if (!st_.InnerContiguous(g.buffer.get())) return false;
  std::vector<int> gd = NonUnitDims(g);
  if (gd.empty() || gd.back() != g.rank() - 1) return false;
  if (KnownDivisor(g.start.back()) % 2 != 0) return false;
  if (auto last = ir::AsConstInt(g.buffer->shape.back())) {
    if (*last % 2 != 0) return false;
  } else {
    RequireAlignment(g.buffer, 2, "paired accumulator stores");
  }
  return true;
}

}  // namespace tessel::passes::lower
