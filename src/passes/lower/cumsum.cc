// T.cumsum: the tile staged in scratch shared memory, each line scanned by
// one thread, the result read back.
#include "src/passes/lower/lowerer.h"

#include "src/passes/ir_util.h"
#include "src/passes/plan_shared_memory.h"

namespace tessel::passes::lower {

Stmt Lowerer::LowerCumsum(const ir::CumsumNode& c) {
  if (IsRowsCumsum(c, st_)) return CumsumRows(c);
  auto shape = ConstShape(c.src->shape);
  if (!shape) {
    Fail(&c, "a cumsum of a tile with a symbolic shape");
    return ir::Seq({});
  }
  std::vector<Stmt> out;
  // Stage src into scratch (row-major), scan lines in place, read back. The
  // sums are the destination's type, as the interpreter's.
  const DataType t = c.dst->dtype;
  ir::Buffer scratch = Scratch(&c, t);
  std::vector<Expr> shp = c.src->shape;
  if (c.src->scope == ir::Scope::kFragment) {
    ir::Buffer local = Local(c.src);
    const FragmentLayout& l = Layout(c.src);
    out.push_back(ForEachLocal(c.src, [&](const std::vector<Expr>& li,
                                          const std::vector<Expr>& logical) {
      return Guard(l.Leader(tx_), Store(scratch, {FlatIndex(shp, logical)},
                                        Cast(t, ir::Load(local, li))));
    }));
  } else {
    ir::Region full = ir::Region::Full(c.src);
    out.push_back(
        ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
          return Store(scratch, {FlatIndex(shp, sq)}, Cast(t, Load(c.src, sq)));
        }));
  }
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  // Lines: every index but dim.
  std::vector<int64_t> line_shape;
  for (int d = 0; d < static_cast<int>(shape->size()); ++d)
    if (d != c.dim) line_shape.push_back((*shape)[d]);
  if (line_shape.empty()) line_shape.push_back(1);
  ir::Buffer lines =
      ir::MakeBuffer("lines", DataType::kI32, {Expr(int(line_shape.size()))},
                     ir::Scope::kLocal);
  (void)lines;
  int64_t n = (*shape)[c.dim];
  std::vector<Expr> ls_expr;
  for (int64_t d : line_shape) ls_expr.push_back(Expr(int(d)));
  ir::Region line_region{
      ir::MakeBuffer("line", DataType::kI32, ls_expr, ir::Scope::kLocal),
      std::vector<Expr>(line_shape.size(), Expr(0)), ls_expr};
  out.push_back(
      ForEachElement(line_region, 1, [&](const std::vector<Expr>& li, int) {
        ir::Var k("k");
        ir::Buffer run =
            ir::MakeBuffer("running", t, {Expr(1)}, ir::Scope::kVar);
        std::vector<Expr> idx;
        size_t j = 0;
        Expr pos = c.reverse ? Expr(int(n - 1)) - k : Expr(k);
        for (int d = 0; d < static_cast<int>(shape->size()); ++d)
          idx.push_back(d == c.dim ? pos
                                   : (shape->size() == 1 ? Expr(0) : li[j++]));
        Expr flat = FlatIndex(shp, idx);
        Stmt step = ir::Seq({ir::MakeStmt<ir::StoreNode>(
                                 run, std::vector<Expr>{0},
                                 ir::Load(run, {0}) + ir::Load(scratch, {flat}),
                                 ir::SourceLoc()),
                             Store(scratch, {flat}, ir::Load(run, {0}))});
        return ir::MakeStmt<ir::AllocateNode>(
            run,
            ir::Seq({ir::MakeStmt<ir::StoreNode>(run, std::vector<Expr>{0},
                                                 ir::Zero(t), ir::SourceLoc()),
                     MakeFor(k, 0, Expr(int(n)), ir::ForKind::kSerial, step)}),
            ir::SourceLoc());
      }));
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  if (c.dst->scope == ir::Scope::kFragment) {
    ir::Buffer local = Local(c.dst);
    out.push_back(ForEachLocal(c.dst, [&](const std::vector<Expr>& li,
                                          const std::vector<Expr>& logical) {
      return Store(local, li, ir::Load(scratch, {FlatIndex(shp, logical)}));
    }));
  } else {
    ir::Region full = ir::Region::Full(c.dst);
    out.push_back(
        ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
          return Store(c.dst, sq, ir::Load(scratch, {FlatIndex(shp, sq)}));
        }));
  }
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
