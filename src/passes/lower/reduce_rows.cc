// T.reduce_* of a kRows tile along its rows into its row statistics: each
// thread combines its chunks of a row in registers, the row's lanes by
// butterfly shuffles, and, when a row spans warps, the warps' partials
// through shared memory (one value per warp and row, one barrier). No
// barrier closes it: InsertBarriers puts one before the scratch slot's next
// writer where there is one (LeavesScratchOpen).
#include "absl/strings/str_cat.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"
#include "src/passes/lower/reduce_ops.h"
#include "src/passes/plan_shared_memory.h"

namespace tessel::passes::lower {

Stmt Lowerer::ReduceRows(const ir::ReduceNode& r) {
  const FragmentLayout& l = Layout(r.src);
  const DataType t = r.dst->dtype;
  const ir::ReduceKind k = r.reduce_kind;
  ir::Buffer src = Local(r.src), dst = Local(r.dst);
  const std::vector<int64_t> ls = l.local_shape();
  const int group = l.group(), width = std::min(group, 32);
  const int warps = group > 32 ? group / 32 : 0;  // per row; 0: one warp
  auto rows = [&](const ir::Var& mr, Stmt body) {
    ranges_[mr.get()] = {0, ls[0] - 1};
    return MakeFor(mr, 0, Expr(int(ls[0])), ir::ForKind::kUnrolled, body);
  };
  auto finish = [&](const Expr& mr, const Expr& v) {
    return Store(dst, {mr}, r.clear ? v : Combine(k, ir::Load(dst, {mr}), v));
  };
  // This thread's part of row mr, then the row's lanes.
  ir::Var mr("mr"), part(absl::StrCat(r.dst->name, "_part"), t);
  std::vector<Expr> terms;
  for (int64_t nc = 0; nc < ls[1]; ++nc)
    for (int64_t v = 0; v < ls[2]; ++v)
      terms.push_back(
          Pre(k, Cast(t, ir::Load(src, {mr, Expr(int(nc)), Expr(int(v))}))));
  Expr lanes = CombineTree(k, terms);
  if (width > 1) lanes = IntrinExpr(t, WarpReduce(k), {Expr(width), lanes});
  if (warps == 0) return rows(mr, finish(mr, lanes));
  // Across the row's warps: partial of warp w of row i at [i * warps + w].
  const DataType st = RowsScratchType(t);
  ir::Buffer scratch = Scratch(&r, st);
  const FragmentLayout stats = l.RowsOf();
  Expr row = stats.Logical(tx_, {mr})[0];
  Expr valid = stats.Valid(tx_, {mr});
  Expr slot = row * warps + Expr(tx_) % group / 32;
  Stmt publish = MakeIf(And(Expr(tx_) % 32 == 0, valid),
                        Store(scratch, {slot}, Cast(st, Expr(part))));
  std::vector<Stmt> out;
  out.push_back(rows(mr, ir::Seq({Let(part, lanes), publish})));
  out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
  ir::Var mr2("mr");
  Expr row2 = stats.Logical(tx_, {mr2})[0];
  std::vector<Expr> partials;
  for (int w = 0; w < warps; ++w)
    partials.push_back(Cast(t, ir::Load(scratch, {row2 * warps + w})));
  out.push_back(rows(mr2, Guard(stats.Valid(tx_, {mr2}),
                                finish(mr2, CombineTree(k, partials)))));
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
