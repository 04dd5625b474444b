// Copies between a kRows (or kRowCols) fragment and a global tile: each
// thread's chunk of vec contiguous row elements moves as 16-byte words
// (tl::load_vec / store_vec), converted in registers. Anything else goes to
// copy.cc.
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes::lower {

namespace {

bool Float(DataType t) {
  return t == DataType::kF32 || t == DataType::kF16 || t == DataType::kBF16;
}

}  // namespace

Stmt Lowerer::Visit(const ir::CopyNode* op) {
  if (std::optional<Stmt> s = CopyRows(*op)) return *s;
  return LowerCopy(*op);
}

std::optional<Stmt> Lowerer::CopyRows(const ir::CopyNode& c) {
  const bool load = c.dst.buffer->scope == ir::Scope::kFragment;
  const ir::Region& frag = load ? c.dst : c.src;
  if (frag.buffer->scope != ir::Scope::kFragment || !frag.IsFull())
    return std::nullopt;
  const FragmentLayout& l = Layout(frag.buffer);
  const bool cols = l.kind() == FragmentLayout::Kind::kRowCols;
  if ((l.kind() != FragmentLayout::Kind::kRows && !cols) || l.vec() < 2)
    return std::nullopt;
  const int rank = cols ? 1 : 2;
  ir::Region g = MutateRegion(load ? c.src : c.dst);
  if (g.buffer->scope != ir::Scope::kGlobal || !Float(g.buffer->dtype) ||
      !Float(frag.buffer->dtype) || !st_.InnerContiguous(g.buffer.get()))
    return std::nullopt;
  // The tile's rows are the global's innermost, contiguous dim; every chunk
  // starts on a vec boundary and lies wholly inside or outside the tensor.
  // Unit dims on either side drop out (a [1, N] tile of a row).
  const int vec = l.vec();
  std::vector<int> fd, gd;
  for (int d = 0; d < rank; ++d)
    if (l.shape()[d] != 1) fd.push_back(d);
  for (int d = 0; d < g.rank(); ++d) {
    auto e = ir::AsConstInt(g.extent[d]);
    if (!e) return std::nullopt;
    if (*e != 1) gd.push_back(d);
  }
  if (fd.size() != gd.size() || fd.empty() || fd.back() != rank - 1 ||
      gd.back() != g.rank() - 1)
    return std::nullopt;
  for (size_t i = 0; i < fd.size(); ++i)
    if (*ir::AsConstInt(g.extent[gd[i]]) != l.shape()[fd[i]])
      return std::nullopt;
  auto last = ir::AsConstInt(g.buffer->shape.back());
  if (KnownDivisor(g.start.back()) % vec != 0 || (last && *last % vec != 0))
    return std::nullopt;
  const int bytes = vec * dtype_bytes(g.buffer->dtype);
  if (bytes % 4 != 0 || (bytes > 16 && bytes % 16 != 0)) return std::nullopt;
  RequireAlignment(g.buffer, vec, "16-byte row copies");
  ir::Buffer local = Local(frag.buffer);
  std::vector<int64_t> ls = l.local_shape();
  // Loops over the row chunks (kRows) and the column chunks.
  ir::Var mr("mr"), nc("nc");
  std::vector<ir::Var> loops =
      cols ? std::vector<ir::Var>{nc} : std::vector<ir::Var>{mr, nc};
  std::vector<Expr> li(loops.begin(), loops.end());
  li.push_back(Expr(0));
  for (size_t i = 0; i < loops.size(); ++i)
    ranges_[loops[i].get()] = {0, ls[i] - 1};
  std::vector<Expr> logical = l.Logical(tx_, li);
  std::vector<Expr> gi = g.start;
  for (size_t i = 0; i < fd.size(); ++i) gi[gd[i]] = gi[gd[i]] + logical[fd[i]];
  Expr in = InBounds(g.buffer, gi);
  Expr mem = ir::Load(g.buffer, {GlobalIndex(g.buffer, gi)});
  Expr regs = ir::Load(local, li);
  Stmt body;
  if (load) {
    body = Intrin(Intrinsic::kLoadVec, {Expr(vec), regs, mem});
    if (in.defined()) {
      std::vector<Stmt> zero;
      for (int v = 0; v < vec; ++v) {
        li.back() = Expr(v);
        zero.push_back(Store(local, li, ir::Zero(frag.buffer->dtype)));
      }
      body = MakeIf(in, body, ir::Seq(zero));
    }
  } else {
    // kRowCols: every row group holds the columns; the first stores.
    body = Guard(And(And(l.Leader(tx_), l.Valid(tx_, li)), in),
                 Intrin(Intrinsic::kStoreVec, {Expr(vec), mem, regs}));
  }
  for (int i = static_cast<int>(loops.size()) - 1; i >= 0; --i)
    body = MakeFor(loops[i], 0, Expr(int(ls[i])), ir::ForKind::kUnrolled, body);
  return body;
}

}  // namespace tessel::passes::lower
