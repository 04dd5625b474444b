#include "src/passes/lower/rasterize_blocks.h"

#include <optional>
#include <utility>
#include <vector>

#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

using ir::Expr;
using ir::Stmt;

struct Swizzle {
  int panel = 0;
  bool column_major = false;
};

bool ReadsBlockIndex(const Stmt& let, const std::vector<ir::Var>& vars) {
  for (const ir::Var& v : vars)
    if (UsesVar(let, v.get())) return true;
  return false;
}

class Rasterize : public ir::IRMutator {
 public:
  Stmt Visit(const ir::UseSwizzleNode* op) override {
    swizzle_ = Swizzle{op->panel_size, op->column_major};
    return ir::Seq({});
  }

  Stmt Visit(const ir::KernelNode* op) override {
    Stmt body = MutateStmt(op->body);
    if (!swizzle_ || op->grid.size() < 2) {
      return ir::MakeStmt<ir::KernelNode>(op->grid, op->threads, op->block_vars,
                                          body, op->loc);
    }
    std::vector<Stmt> rest{body};
    if (const auto* seq = body.As<ir::SeqNode>()) rest = seq->stmts;
    // The leading lets stay ahead of the bindings, up to the first that
    // reads a block index (a T::let of the grouped GEMM's group): that one
    // and the rest read the rasterized indices.
    std::vector<Stmt> top;
    size_t i = 0;
    while (i < rest.size() && AsIntrin(rest[i], Intrinsic::kLet) &&
           !ReadsBlockIndex(rest[i], op->block_vars))
      top.push_back(rest[i++]);
    std::vector<ir::Var> vars = op->block_vars;
    ir::Var rx("raw_bx"), ry("raw_by");
    Expr linear = Expr(ry) * op->grid[0] + rx;
    for (Stmt& let :
         BindRasterizedBlock(linear, vars[0], vars[1], op->grid[0], op->grid[1],
                             swizzle_->panel, swizzle_->column_major)) {
      top.push_back(std::move(let));
    }
    vars[0] = rx;
    vars[1] = ry;
    top.insert(top.end(), rest.begin() + i, rest.end());
    return ir::MakeStmt<ir::KernelNode>(op->grid, op->threads, vars,
                                        ir::Seq(top), op->loc);
  }

 private:
  std::optional<Swizzle> swizzle_;
};

}  // namespace

std::vector<Stmt> BindRasterizedBlock(const Expr& linear, const ir::Var& bx,
                                      const ir::Var& by, const Expr& gx,
                                      const Expr& gy, int panel,
                                      bool column_major) {
  if (panel <= 0) return {Let(by, linear / gx), Let(bx, linear % gx)};
  // Panels of `panel` rows of by (columns of bx when column-major).
  const bool col = column_major;
  Expr fast = col ? gy : gx;  // tiles along the panel
  Expr slow = col ? gx : gy;
  ir::Var lin("block_linear"), pid("panel"), rows("panel_rows"),
      inp("in_panel");
  std::vector<Stmt> out;
  out.push_back(Let(lin, linear));
  out.push_back(Let(pid, Expr(lin) / (fast * panel)));
  out.push_back(Let(rows, ir::Min(slow - Expr(pid) * panel, Expr(panel))));
  out.push_back(Let(inp, Expr(lin) - Expr(pid) * (fast * panel)));
  Expr s_idx = Expr(pid) * panel + Expr(inp) % Expr(rows);
  Expr f_idx = Expr(inp) / Expr(rows);
  out.push_back(Let(col ? bx : by, s_idx));
  out.push_back(Let(col ? by : bx, f_idx));
  return out;
}

absl::Status RasterizeBlocks(LoweringState& state) {
  Rasterize r;
  state.program.body = r.MutateStmt(state.program.body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
