// T.cumsum of a kRows tile along its rows, rows within a warp: per chunk,
// each thread scans its vec elements in registers, an exclusive warp scan
// of the threads' totals (tl::warp_scan_exclusive_sum) and the sum of the
// earlier chunks give its offset; the last lane's scan plus its total is the
// chunk's sum (tl::warp_group_last). No shared memory, no barriers; the
// unrolled body is one step per local element. Rows over several warps go
// to cumsum.cc.
#include "absl/strings/str_cat.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"
#include "src/passes/plan_shared_memory.h"

namespace tessel::passes::lower {

Stmt Lowerer::CumsumRows(const ir::CumsumNode& c) {
  const FragmentLayout& l = Layout(c.src);
  // The sums are the destination's type, as the interpreter's: an f16 row
  // summed into f32 adds in f32 (and the carry's operands agree).
  const DataType t = c.dst->dtype;
  ir::Buffer src = Local(c.src), dst = Local(c.dst);
  const std::vector<int64_t> ls = l.local_shape();
  const int group = l.group(), NC = static_cast<int>(ls[1]);
  const int V = static_cast<int>(ls[2]);
  ir::Var mr("mr");
  ranges_[mr.get()] = {0, ls[0] - 1};
  std::vector<Stmt> body;
  Expr carry;  // the sum of the row's earlier chunks; undefined: none
  for (int k = 0; k < NC; ++k) {
    // Reversed, the chunks, the lanes and the elements run backwards.
    const Expr nc(c.reverse ? NC - 1 - k : k);
    auto at = [&](int i) {
      return std::vector<Expr>{mr, nc, Expr(c.reverse ? V - 1 - i : i)};
    };
    for (int i = 0; i < V; ++i) {
      if (i == 0 && src.get() == dst.get()) continue;  // in place
      Expr v = Cast(t, ir::Load(src, at(i)));
      if (i > 0) v = ir::Load(dst, at(i - 1)) + v;
      body.push_back(Store(dst, at(i), v));
    }
    ir::Var total(absl::StrCat(c.dst->name, "_total"), t),
        before(absl::StrCat(c.dst->name, "_before"), t);
    body.push_back(Let(total, ir::Load(dst, at(V - 1))));
    Expr offset = Expr(before);
    if (group > 1) {
      body.push_back(
          Let(before,
              IntrinExpr(t, Intrinsic::kWarpScanExclusiveSum,
                         {Expr(group), Expr(c.reverse ? 1 : 0), Expr(total)})));
    } else {
      offset = Expr();
    }
    if (carry.defined()) offset = offset.defined() ? carry + offset : carry;
    if (offset.defined()) {
      ir::Var off(absl::StrCat(c.dst->name, "_offset"), t);
      body.push_back(Let(off, offset));
      for (int i = 0; i < V; ++i)
        body.push_back(Store(dst, at(i), ir::Load(dst, at(i)) + Expr(off)));
    }
    if (k + 1 < NC) {
      // The chunk's sum: the group's last lane (first, reversed) holds it as
      // its exclusive scan plus its total, one shuffle instead of a warp
      // reduction (NVRTC CPU of seed_row_softmax_cumsum 2744 -> 1895 ms on
      // sm_80); the float sum adds in scan order, not the butterfly's.
      Expr chunk = Expr(total);
      if (group > 1) {
        chunk = IntrinExpr(
            t, Intrinsic::kWarpGroupLast,
            {Expr(group), Expr(c.reverse ? 1 : 0), Expr(before) + Expr(total)});
      }
      ir::Var next(absl::StrCat(c.dst->name, "_carry"), t);
      body.push_back(Let(next, carry.defined() ? carry + chunk : chunk));
      carry = next;
    }
  }
  return MakeFor(mr, 0, Expr(int(ls[0])), ir::ForKind::kUnrolled,
                 ir::Seq(body));
}

}  // namespace tessel::passes::lower
