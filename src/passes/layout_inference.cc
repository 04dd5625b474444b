#include "src/passes/layout_inference.h"

#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "src/passes/gemm_warp_grid.h"
#include "src/passes/ir_util.h"
#include "src/passes/layout_inference/fragment_layouts.h"
#include "src/passes/layout_inference/fragment_uses.h"
#include "src/passes/thread_memory.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

// The swizzle (bytes) the XOR swizzle uses for rows of `row_bytes`; 0 when
// rows are too short or not a supported size.
int PickSwizzleBytes(int64_t row_bytes) {
  if (row_bytes % 128 == 0) return 128;
  if (row_bytes == 64) return 64;
  if (row_bytes == 32) return 32;
  return 0;
}

// A gemm that would take wgmma but shares a shared operand tile with a gemm
// that stays on mma.sync stays on mma.sync too: the tile would be read in
// two layouts by two instruction paths (measured on the H200: the D128
// linear-attention kernels, one wgmma gemm among mma.sync ones, were 3-10%
// slower than all on mma.sync). Repeats until no more gemms change.
// Runs before the warp-grid switch, so declined gemms keep their grid.
void DeclineMixedOperands(LoweringState& state,
                          const std::vector<const ir::GemmNode*>& gemms,
                          int threads) {
  auto fits = [&](const ir::GemmNode& g) {
    // A square-policy gemm split along N stays on mma.sync
    // (PreferWgmmaWarpGrid): it counts as one here.
    return ((g.policy == ir::GemmWarpPolicy::kSquare &&
             !WgmmaSplitsN(g, threads)) ||
            g.policy == ir::GemmWarpPolicy::kFullRow) &&
           WgmmaShapeFits(g, threads) &&
           !state.wgmma_declined.count(g.c.buffer.get());
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_set<const ir::BufferNode*> mma_operands;
    for (const ir::GemmNode* g : gemms) {
      if (fits(*g)) continue;
      for (const ir::Buffer& b : {g->a.buffer, g->b.buffer})
        if (b->scope == ir::Scope::kShared) mma_operands.insert(b.get());
    }
    for (const ir::GemmNode* g : gemms) {
      if (!fits(*g)) continue;
      for (const ir::Buffer& b : {g->a.buffer, g->b.buffer}) {
        if (mma_operands.count(b.get())) {
          changed |= state.wgmma_declined.insert(g->c.buffer.get()).second;
          break;
        }
      }
    }
  }
}

}  // namespace

absl::Status InferLayouts(LoweringState& state) {
  FragmentUses uses;
  uses.VisitStmt(state.program.body);
  if (uses.threads <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(state.program.name, ": the program has no kernel"));
  }
  state.threads = uses.threads;
  // A fragment allocated inside a T.Parallel body belongs to one iteration,
  // which one thread runs: a per-thread local array.
  if (!uses.per_iteration.empty()) {
    BufferMap locals;
    for (const ir::Buffer& b : uses.per_iteration) {
      locals[b.get()] = ir::MakeBuffer(b->name, b->dtype, b->shape,
                                       ir::Scope::kLocal, b->layout);
    }
    state.program.body = ReplaceBuffers(state.program.body, locals);
    uses = FragmentUses();
    uses.VisitStmt(state.program.body);
  }
  if (WgmmaEnabled(state)) {
    DeclineMixedOperands(state, uses.gemms, uses.threads);
    state.program.body = PreferWgmmaWarpGrid(state.program.body, uses.threads,
                                             state.wgmma_declined);
    uses = FragmentUses();
    uses.VisitStmt(state.program.body);
  }

  // Gemms whose register A operands cannot be read in wgmma's rows go back
  // to mma.sync there (fragment_layouts.h).
  if (absl::Status s = InferFragmentLayouts(state, uses); !s.ok()) return s;
  // Each thread's share of the fragments is known now: refuse what a
  // thread cannot hold before anything unrolls loops over it.
  if (absl::Status s = CheckThreadMemory(state); !s.ok()) return s;

  // Shared swizzles.
  BufferMap swizzled;
  auto swizzle = [&](const ir::Buffer& b, int bytes, bool atoms) {
    if (swizzled.count(b.get())) return;
    int64_t row_bytes = 0;
    if (auto last = ir::AsConstInt(b->shape.back())) {
      row_bytes = *last * dtype_bytes(b->dtype);
    }
    if (bytes == 0) bytes = PickSwizzleBytes(row_bytes);
    if (bytes == 0 || b->rank() < 2) return;
    atoms = atoms && bytes == 128 && row_bytes > 128;
    swizzled[b.get()] =
        ir::MakeBuffer(b->name, b->dtype, b->shape, b->scope,
                       ir::Layout{ir::Layout::Kind::kSwizzled, bytes, atoms});
  };
  for (const auto& [node, layout] : uses.annotated) {
    if (layout.kind == ir::Layout::Kind::kSwizzled &&
        node->scope == ir::Scope::kShared) {
      swizzle(ir::Buffer(std::shared_ptr<const ir::BufferNode>(
                  std::shared_ptr<const ir::BufferNode>(), node)),
              layout.swizzle_bytes, /*atoms=*/false);
    }
  }
  // Operands of wgmma gemms wider than one 128-byte atom are stored atom
  // after atom, as the descriptors read them (wgmma.h). Only those: other
  // tiles keep their row-major swizzle.
  std::unordered_set<const ir::BufferNode*> atom_major;
  for (const ir::GemmNode* g : uses.gemms) {
    if (!WgmmaAccumulator(*g, state)) continue;
    for (const ir::Buffer& b : {g->a.buffer, g->b.buffer})
      if (b->scope == ir::Scope::kShared) atom_major.insert(b.get());
  }
  for (const ir::GemmNode* g : uses.gemms) {
    if (TensorCoreWarpGrid(*g, state).first == 0) continue;
    for (const ir::Buffer& b : {g->a.buffer, g->b.buffer}) {
      if (b->scope != ir::Scope::kShared) continue;
      auto it = uses.annotated.find(b.get());
      if (it != uses.annotated.end() &&
          it->second.kind == ir::Layout::Kind::kDefault) {
        continue;  // the user asked for row-major
      }
      if (b->layout.kind == ir::Layout::Kind::kSwizzled) continue;
      swizzle(b, 0, atom_major.count(b.get()) > 0);
    }
  }
  if (!swizzled.empty()) {
    // The annotated buffers were wrapped without ownership above; rebuild the
    // map from real handles found in the program.
    state.program.body = ReplaceBuffers(state.program.body, swizzled);
  }
  return absl::OkStatus();
}

}  // namespace tessel::passes
