#include "src/passes/epilogue_store.h"

#include <functional>

#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

constexpr int64_t kMaxBoxExtent = 256;  // cuTensorMapEncodeTiled's limit
constexpr int64_t kChunkBytes = 128;    // one SWIZZLE_128B row
// What the planner may add besides the tiles: barriers, alignment.
constexpr int64_t kSlackBytes = 1024;

std::optional<EpilogueStorePlan> Refuse(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::optional<EpilogueStorePlan> PlanEpilogueStore(const ir::CopyNode& c,
                                                   const LoweringState& state,
                                                   std::string* why) {
  if (state.config.disable_tma_store_epilogue)
    return Refuse(why, "switched off");
  if (state.target.arch() != "sm_90a") return Refuse(why, "not sm_90a");
  const ir::Region &src = c.src, &dst = c.dst;
  const ir::Buffer &f = src.buffer, &g = dst.buffer;
  if (c.barrier.defined() || f->scope != ir::Scope::kFragment ||
      g->scope != ir::Scope::kGlobal || !src.IsFull()) {
    return Refuse(why, "not a copy of a whole fragment to a global tensor");
  }
  if (g->dtype != DataType::kF16 && g->dtype != DataType::kBF16)
    return Refuse(why, "the output is not f16 or bf16");
  const int eb = dtype_bytes(g->dtype);
  int param = -1;
  for (size_t i = 0; i < state.program.params.size(); ++i)
    if (state.program.params[i].get() == g.get()) param = static_cast<int>(i);
  if (param < 0) return Refuse(why, "the tensor is not a kernel parameter");
  if (g->rank() != 2 || !state.InnerContiguous(g.get()))
    return Refuse(why, "not a row-major (or unit-stride) rank-2 tensor");
  // The TMA needs 16-byte row strides; a symbolic width could be anything
  // at launch, and the plain store takes every width.
  auto width = ir::AsConstInt(g->shape.back());
  if (!width || *width * eb % 16 != 0)
    return Refuse(why, "rows of the tensor are not whole 16-byte chunks");
  auto it = state.layouts.find(f.get());
  if (it == state.layouts.end())
    return Refuse(why, "the fragment has no layout");
  const FragmentLayout& l = it->second;
  // Warpgroups stacked along M, each owning a slab of whole rows.
  if (l.kind() != FragmentLayout::Kind::kMma || l.shape().size() != 2 ||
      l.warps_n() != 1 || l.threads() % 128 != 0 ||
      l.warps_m() != l.threads() / 32 || l.threads() != state.threads) {
    return Refuse(why, "the fragment is not a warpgroup-rows mma layout");
  }
  if (l.padded_rows() != 0)
    return Refuse(why, "the fragment's rows are padded (a small-M tile)");
  const int64_t rows = l.shape()[0], cols = l.shape()[1];
  for (int d = 0; d < 2; ++d) {
    auto e = ir::AsConstInt(dst.extent[d]);
    if (!e || *e != l.shape()[d])
      return Refuse(why, "the global region is not the fragment's shape");
  }
  EpilogueStorePlan plan;
  plan.param = param;
  plan.groups = l.threads() / 128;
  plan.group_rows = rows / plan.groups;
  plan.chunk_cols = kChunkBytes / eb;
  if (rows % plan.groups != 0 || plan.group_rows % 8 != 0 ||
      plan.group_rows > kMaxBoxExtent || cols % plan.chunk_cols != 0) {
    return Refuse(why, "the tile is not whole 128-byte chunks per warpgroup");
  }
  plan.chunks = static_cast<int>(cols / plan.chunk_cols);
  plan.chunk_bytes = plan.group_rows * kChunkBytes;
  // The elected thread alone computes the box origin.
  if (!ReadsOnlyUnwrittenGlobals(dst.start, state.program.body))
    return Refuse(why, "origin depends on values read per thread");
  return plan;
}

void StageEpilogueStores(const std::vector<ir::Stmt>& after,
                         int64_t shared_bytes, LoweringState& state) {
  if (state.config.disable_tma_store_epilogue) return;
  const int64_t limit = state.target.max_shared_bytes();
  // The copies among the statements, in lists and allocations (a bias
  // fragment's scope), not under loops or conditions.
  std::vector<ir::Stmt> copies;
  std::function<void(const ir::Stmt&)> find = [&](const ir::Stmt& s) {
    if (s.As<ir::CopyNode>() != nullptr) copies.push_back(s);
    if (const auto* a = s.As<ir::AllocateNode>()) find(a->body);
    if (const auto* q = s.As<ir::SeqNode>())
      for (const ir::Stmt& x : q->stmts) find(x);
  };
  for (const ir::Stmt& s : after) find(s);
  for (const ir::Stmt& s : copies) {
    const auto* c = s.As<ir::CopyNode>();
    std::optional<EpilogueStorePlan> plan = PlanEpilogueStore(*c, state, {});
    if (!plan) continue;
    // Double-buffered where it fits (one barrier per chunk), else one
    // buffer (two barriers per chunk), else the plain stores. Two buffers
    // alternate across tiles only over an even number of chunks.
    int buffers = plan->chunks % 2 == 0 ? 2 : 1;
    auto need = [&](int n) {
      return shared_bytes + plan->groups * n * plan->chunk_bytes + kSlackBytes;
    };
    while (buffers > 0 && limit > 0 && need(buffers) > limit) --buffers;
    if (buffers == 0) continue;
    const ir::Buffer& g = c->dst.buffer;
    ir::Buffer stage = ir::MakeBuffer(
        c->src.buffer->name + "_stage", g->dtype,
        {ir::Expr(plan->groups), ir::Expr(buffers),
         ir::Expr(static_cast<int>(plan->group_rows)),
         ir::Expr(static_cast<int>(plan->chunk_cols))},
        ir::Scope::kShared,
        ir::Layout{.kind = ir::Layout::Kind::kSwizzled,
                   .swizzle_bytes = static_cast<int>(kChunkBytes)});
    state.epilogue_stores.push_back({s, stage, buffers});
    shared_bytes += plan->groups * buffers * plan->chunk_bytes;
  }
}

}  // namespace tessel::passes
