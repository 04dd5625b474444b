#include "src/passes/plan_shared_memory.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"
#include "src/passes/ir_util.h"
#include "src/passes/shared_liveness.h"

namespace tessel::passes {

bool SharedPlan::MayAlias(const ir::BufferNode* a,
                          const ir::BufferNode* b) const {
  if (a == b) return true;
  auto oa = offset.find(a), ob = offset.find(b);
  if (oa == offset.end() || ob == offset.end()) return false;
  int64_t a0 = oa->second, a1 = a0 + bytes.at(a);
  int64_t b0 = ob->second, b1 = b0 + bytes.at(b);
  return a0 < b1 && b0 < a1;
}

ir::Buffer SharedPlan::ScratchOf(const ir::StmtNode* op) const {
  for (const auto& [node, buffer] : scratch)
    if (node.get() == op) return buffer;
  return ir::Buffer();
}

bool IsMmaRowReduce(const ir::ReduceNode& r, const LoweringState& s) {
  auto sl = s.layouts.find(r.src.get());
  auto dl = s.layouts.find(r.dst.get());
  return sl != s.layouts.end() && dl != s.layouts.end() &&
         sl->second.kind() == FragmentLayout::Kind::kMma && r.dim == 1 &&
         dl->second == sl->second.RowsOf();
}

bool IsRowsReduce(const ir::ReduceNode& r, const LoweringState& s) {
  auto sl = s.layouts.find(r.src.get());
  auto dl = s.layouts.find(r.dst.get());
  return sl != s.layouts.end() && dl != s.layouts.end() &&
         sl->second.kind() == FragmentLayout::Kind::kRows && r.dim == 1 &&
         dl->second == sl->second.RowsOf();
}

DataType RowsScratchType(DataType t) {
  return dtype_bytes(t) >= 4 ? t : DataType::kF32;
}

int64_t RowsReduceScratchBytes(const ir::ReduceNode& r,
                               const FragmentLayout& l) {
  if (l.group() <= 32) return 0;
  return l.shape()[0] * (l.group() / 32) *
         dtype_bytes(RowsScratchType(r.dst->dtype));
}

bool LeavesScratchOpen(const ir::ReduceNode& r, const LoweringState& s) {
  return IsRowsReduce(r, s) &&
         RowsReduceScratchBytes(r, s.layouts.at(r.src.get())) > 0;
}

int64_t ReduceScratchBytes(const ir::ReduceNode& r, const LoweringState& s) {
  if (IsRowsReduce(r, s))
    return RowsReduceScratchBytes(r, s.layouts.at(r.src.get()));
  // Partials of the warps that share rows, only when the destination holds
  // the accumulator's rows (LowerReduce's shuffles); an mma accumulator
  // reduced into any other layout is staged whole, as every other tile.
  if (IsMmaRowReduce(r, s)) {
    const FragmentLayout& l = s.layouts.at(r.src.get());
    if (l.warps_n() == 1) return 0;
    return l.warps_n() * l.shape()[0] * 4;
  }
  int64_t n = r.src->ConstNumElements().value_or(0);
  return n * std::max(4, dtype_bytes(r.src->dtype));
}

bool IsRowsCumsum(const ir::CumsumNode& c, const LoweringState& s) {
  auto sl = s.layouts.find(c.src.get());
  auto dl = s.layouts.find(c.dst.get());
  return sl != s.layouts.end() && dl != s.layouts.end() &&
         sl->second.kind() == FragmentLayout::Kind::kRows &&
         sl->second.group() <= 32 && c.dim == 1 && dl->second == sl->second;
}

int64_t CumsumScratchBytes(const ir::CumsumNode& c, const LoweringState& s) {
  if (IsRowsCumsum(c, s)) return 0;
  int64_t n = c.src->ConstNumElements().value_or(0);
  return n * std::max(4, dtype_bytes(c.src->dtype));
}

namespace {

int64_t AlignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Offsets for the buffers of lv: largest first, each at the lowest offset
// free during its lifetime; scratch after them.
SharedPlan Place(const SharedLiveness& lv, int64_t scratch) {
  SharedPlan plan;
  std::vector<SharedLifetime> items;
  for (const ir::BufferNode* b : lv.order) {
    SharedLifetime iv = lv.live.at(b);
    if (iv.first < 0) iv.first = iv.last = 0;  // never used
    items.push_back(iv);
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const SharedLifetime& a, const SharedLifetime& b) {
                     return a.bytes > b.bytes;
                   });
  std::vector<SharedLifetime> placed;
  std::vector<int64_t> placed_offset;
  int64_t total = 0;
  for (const SharedLifetime& iv : items) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t i = 0; i < placed.size(); ++i) {
      const SharedLifetime& p = placed[i];
      if (p.first <= iv.last && iv.first <= p.last) {
        busy.push_back({placed_offset[i], placed_offset[i] + p.bytes});
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    for (auto [b0, b1] : busy) {
      off = AlignUp(off, iv.align);
      if (off + iv.bytes <= b0) break;
      off = std::max(off, b1);
    }
    off = AlignUp(off, iv.align);
    plan.offset[iv.buffer] = off;
    plan.bytes[iv.buffer] = iv.bytes;
    placed.push_back(iv);
    placed_offset.push_back(off);
    total = std::max(total, off + iv.bytes);
  }
  if (scratch > 0) {
    plan.scratch_offset = AlignUp(total, 128);
    plan.scratch_bytes = scratch;
    total = plan.scratch_offset + scratch;
  }
  plan.total_bytes = total;
  return plan;
}

// The scratch area: the ops whose lowering ends with a barrier (their
// scratch free again) share its first bytes; the row reduces that leave
// theirs read after their one barrier (LeavesScratchOpen) take turns between
// up to two slots after those, so that two in a row need no barrier between
// them. The barrier planner orders each slot's next writer after its readers.
struct ScratchLayout {
  int64_t closed = 0;  // bytes of the shared part
  int64_t open = 0;    // bytes of one slot
  int open_users = 0;
  int64_t Slot(int i) const {
    return AlignUp(closed, 16) + i * AlignUp(open, 16);
  }
  int64_t Bytes() const {
    return open_users == 0 ? closed : Slot(std::min(open_users, 2) - 1) + open;
  }
};

ScratchLayout MeasureScratch(const ir::Stmt& body, const LoweringState& state) {
  ScratchLayout l;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* r = s.As<ir::ReduceNode>()) {
      if (LeavesScratchOpen(*r, state)) {
        l.open = std::max(l.open, ReduceScratchBytes(*r, state));
        ++l.open_users;
      } else {
        l.closed = std::max(l.closed, ReduceScratchBytes(*r, state));
      }
    }
    if (const auto* c = s.As<ir::CumsumNode>())
      l.closed = std::max(l.closed, CumsumScratchBytes(*c, state));
  });
  return l;
}

// The scratch buffer of each reduce / cumsum whose lowering stages through
// shared memory, in the dtype it stages: the closed ones all at the scratch
// offset (one runs at a time, barriers around each), the open ones in
// alternate slots in program order.
void PlanScratch(const ir::Stmt& body, const LoweringState& state,
                 const ScratchLayout& layout, SharedPlan& plan) {
  auto add = [&](const ir::Stmt& op, DataType t, int64_t at, int64_t bytes) {
    ir::Buffer b = ir::MakeBuffer("red_scratch", t,
                                  {ir::Expr(int(bytes / dtype_bytes(t)))},
                                  ir::Scope::kShared);
    plan.offset[b.get()] = plan.scratch_offset + at;
    plan.bytes[b.get()] = bytes;
    plan.scratch.push_back({op, b});
  };
  auto closed = [&](const ir::Stmt& op, DataType t) {
    add(op, t, 0, layout.closed);
  };
  int open = 0;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* r = s.As<ir::ReduceNode>()) {
      if (IsMmaRowReduce(*r, state)) {
        if (state.layouts.at(r->src.get()).warps_n() > 1)
          closed(s, DataType::kF32);
      } else if (LeavesScratchOpen(*r, state)) {
        add(s, RowsScratchType(r->dst->dtype), layout.Slot(open++ % 2),
            layout.open);
      } else if (IsRowsReduce(*r, state)) {
        // Within warps: no scratch.
      } else if (r->src->scope != ir::Scope::kShared) {
        closed(s, r->src->dtype);
      }
    }
    if (const auto* c = s.As<ir::CumsumNode>())
      if (!IsRowsCumsum(*c, state)) closed(s, c->src->dtype);
  });
}

}  // namespace

absl::Status PlanSharedMemory(LoweringState& state) {
  const ScratchLayout scratch_layout =
      MeasureScratch(state.program.body, state);
  const int64_t scratch = scratch_layout.Bytes();
  std::unordered_set<const ir::BufferNode*> tma;
  ForEachStmt(state.program.body, [&](const ir::Stmt& s) {
    if (const auto* c = s.As<ir::CopyNode>())
      if (c->barrier.defined()) tma.insert(c->dst.buffer.get());
  });
  const int64_t limit = state.target.max_shared_bytes();
  // Bytes shared by buffers that live within one loop iteration cost
  // barriers (the next iteration's writes wait for this one's reads): only
  // when the block does not fit otherwise, or when more blocks then fit on
  // an SM (whose shared memory the per-block limit approximates).
  std::unordered_set<const ir::BufferNode*> stages;
  for (const EpilogueStore& e : state.epilogue_stores)
    stages.insert(e.stage.get());
  SharedLiveness lv(/*iteration_local=*/false, tma, stages);
  lv.VisitStmt(state.program.body);
  SharedPlan plan = Place(lv, scratch);
  if (limit > 0) {
    SharedLiveness local(/*iteration_local=*/true, tma, stages);
    local.VisitStmt(state.program.body);
    SharedPlan shared = Place(local, scratch);
    auto blocks = [&](const SharedPlan& p) {
      return p.total_bytes > 0 ? limit / p.total_bytes : limit;
    };
    if (plan.total_bytes > limit || blocks(shared) > blocks(plan)) {
      lv = std::move(local);
      plan = std::move(shared);
    }
  }
  if (limit > 0 && plan.total_bytes > limit) {
    std::string parts;
    const ir::BufferNode* largest = nullptr;
    for (const ir::BufferNode* b : lv.order) {
      absl::StrAppend(&parts, parts.empty() ? "" : ", ", b->name, " ",
                      plan.bytes[b], " B");
      if (largest == nullptr || plan.bytes[b] > plan.bytes[largest])
        largest = b;
    }
    if (scratch > 0)
      absl::StrAppend(&parts, ", reduction scratch ", scratch, " B");
    // The user's line: where the largest tile is allocated.
    ir::SourceLoc at;
    ir::ForEachStmt(state.program.body, [&](const ir::Stmt& s) {
      const auto* a = s.As<ir::AllocateNode>();
      if (a != nullptr && a->buffer.get() == largest) at = a->loc;
      if (at.line() == 0 && s.As<ir::KernelNode>() != nullptr) at = s->loc;
    });
    return absl::ResourceExhaustedError(absl::StrCat(
        ir::FormatLoc(at), ": ", state.program.name, ": the shared tiles need ",
        plan.total_bytes, " bytes per block (", parts, ")",
        largest != nullptr ? absl::StrCat("; the largest, ", largest->name,
                                          ", is allocated here")
                           : "",
        "; ", state.target.arch(), " allows ", limit,
        ". Use smaller tiles or fewer pipeline stages."));
  }
  PlanScratch(state.program.body, state, scratch_layout, plan);
  state.smem = std::move(plan);
  return absl::OkStatus();
}

}  // namespace tessel::passes
