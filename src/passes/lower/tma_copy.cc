// T.copy on the TMA (copies warp_specialize gave a barrier): the issuing
// thread starts the boxes of the copy's tensor map (passes/tma_boxes.h);
// they land in the tile asynchronously and complete on the barrier. In a
// cluster pair (LoweringState::cluster_size 2) a copy both blocks make
// (its source does not use cluster_var) is split by rows: each block
// loads its half of every box and multicasts it into both.
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/tma_boxes.h"

namespace tessel::passes::lower {

// The kernel parameter of the tensor map: one per (tensor, box, swizzle).
int Lowerer::TensorMapOf(const TmaCopyPlan& plan) {
  std::vector<TensorMapParam>& maps = st_.tensor_maps;
  const ir::Buffer& tensor = st_.program.params[plan.param];
  TensorMapParam want{plan.param, tensor->name + "_tma", plan.box,
                      plan.swizzle_bytes};
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].param == want.param && maps[i].box == want.box &&
        maps[i].swizzle_bytes == want.swizzle_bytes) {
      return static_cast<int>(i);
    }
  }
  // The map's strides must be 16-byte multiples, its base 16-byte aligned.
  RequireAlignment(tensor, 16 / dtype_bytes(tensor->dtype), "TMA copies");
  maps.push_back(want);
  return static_cast<int>(maps.size() - 1);
}

// Args of each load: (tensor map index, shared address, barrier element,
// coordinates innermost first).
Stmt Lowerer::LowerTmaCopy(const ir::CopyNode& c) {
  std::string why;
  std::optional<TmaCopyPlan> plan = PlanTmaCopy(c, st_, &why);
  if (!plan) {
    Fail(&c, "a TMA copy whose " + why + " (a tessel bug)");
    return Self(&c);
  }
  bool multicast = st_.cluster_size == 2;
  for (const Expr& e : c.src.start)
    multicast &= !UsesVar(e, st_.cluster_var.get());
  std::optional<TmaCopyPlan> half;
  if (multicast) half = HalfRowsPlan(*plan);
  const int map = TensorMapOf(half ? *half : *plan);
  ir::Region src = MutateRegion(c.src), dst = MutateRegion(c.dst);
  Expr bar = ir::Load(c.barrier, {MutateExpr(c.barrier_index)});
  // This block's half: rows [rank * half, (rank + 1) * half) of each box.
  Expr row0;
  if (half) {
    row0 = IntrinExpr(DataType::kI32, Intrinsic::kClusterRank, {}) *
           Expr(half->box[half->rows_dim]);
  }
  std::vector<Stmt> out;
  const int last = src.rank() - 1;
  for (int j = 0; j < plan->boxes; ++j) {
    const int col = static_cast<int>(j * plan->box_cols);
    std::vector<Expr> idx = dst.start;
    idx.back() = Expr(col);
    if (half) idx[idx.size() - 2] = idx[idx.size() - 2] + row0;
    std::vector<Expr> args{
        Expr(map), SharedAddr(dst.buffer, SharedOffset(dst.buffer, idx)), bar};
    if (half) args.push_back(Expr(0b11));
    for (int d = last; d >= 0; --d) {
      Expr at = d == last && col > 0 ? src.start[d] + col : src.start[d];
      if (half && d == half->rows_dim) at = at + row0;
      args.push_back(at);
    }
    out.push_back(Intrin(
        half ? Intrinsic::kTmaLoadMulticast : Intrinsic::kTmaLoad, args));
  }
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
