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
    std::vector<Stmt> top;
    size_t i = 0;
    while (i < rest.size() && AsIntrin(rest[i], Intrinsic::kLet))
      top.push_back(rest[i++]);
    // Rasterize (bx, by) in panels of `panel` rows of by (columns of bx).
    std::vector<ir::Var> vars = op->block_vars;
    ir::Var rx("raw_bx"), ry("raw_by");
    Expr gx = op->grid[0], gy = op->grid[1];
    bool col = swizzle_->column_major;
    Expr fast = col ? gy : gx;  // tiles along the panel
    Expr slow = col ? gx : gy;
    int panel = swizzle_->panel;
    Expr linear = Expr(ry) * gx + rx;
    ir::Var lin("block_linear"), pid("panel"), rows("panel_rows"),
        inp("in_panel");
    top.push_back(Let(lin, linear));
    top.push_back(Let(pid, Expr(lin) / (fast * panel)));
    top.push_back(Let(rows, ir::Min(slow - Expr(pid) * panel, Expr(panel))));
    top.push_back(Let(inp, Expr(lin) - Expr(pid) * (fast * panel)));
    Expr s_idx = Expr(pid) * panel + Expr(inp) % Expr(rows);
    Expr f_idx = Expr(inp) / Expr(rows);
    top.push_back(Let(col ? vars[0] : vars[1], s_idx));
    top.push_back(Let(col ? vars[1] : vars[0], f_idx));
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

absl::Status RasterizeBlocks(LoweringState& state) {
  Rasterize r;
  state.program.body = r.MutateStmt(state.program.body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
