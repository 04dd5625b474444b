#include "src/passes/layout_inference.h"

#include <numeric>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "src/ir/printer.h"
#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"
#include "src/passes/thread_memory.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

bool IsFragment(const ir::Buffer& b) {
  return b->scope == ir::Scope::kFragment;
}

// One (possibly nested) Parallel loop and the fragments it indexes.
struct ParallelLoop {
  std::vector<const ir::VarNode*> vars;
  std::vector<int64_t> extents;
  std::vector<ir::Buffer> full;  // indexed by exactly the loop's vars
  std::vector<ir::Buffer> rows;  // rank 1, indexed by the first var
  std::vector<ir::Buffer> cols;  // rank 1, indexed by the second of two
  // Read at other indices (an offset, a reversed or a constant index): by
  // threads that need not hold those elements.
  std::vector<ir::Buffer> other_reads;
  std::vector<ir::Buffer> touched;  // every fragment it loads or stores
  bool other_store = false;         // a fragment stored at other indices
};

class Collector : public ir::IRVisitor {
 public:
  std::vector<ParallelLoop> loops;
  std::vector<const ir::GemmNode*> gemms;
  std::vector<const ir::ReduceNode*> reduces;
  std::vector<const ir::CumsumNode*> cumsums;
  std::vector<const ir::CopyNode*> copies;
  std::vector<ir::Buffer> fragments;  // in allocation order
  // Allocated inside a T.Parallel body: one per iteration.
  std::vector<ir::Buffer> per_iteration;
  std::unordered_map<const ir::BufferNode*, ir::Layout> annotated;
  int threads = 0;

  void Visit(const ir::KernelNode* op) override {
    threads = op->threads;
    IRVisitor::Visit(op);
  }
  void Visit(const ir::AllocateNode* op) override {
    if (IsFragment(op->buffer) && current_ != nullptr)
      per_iteration.push_back(op->buffer);
    else if (IsFragment(op->buffer))
      fragments.push_back(op->buffer);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::GemmNode* op) override {
    gemms.push_back(op);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::ReduceNode* op) override {
    reduces.push_back(op);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::CumsumNode* op) override {
    cumsums.push_back(op);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::CopyNode* op) override {
    copies.push_back(op);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::AnnotateLayoutNode* op) override {
    annotated[op->buffer.get()] = op->layout;
  }
  void Visit(const ir::ForNode* op) override {
    if (op->for_kind != ir::ForKind::kParallel || current_ != nullptr) {
      IRVisitor::Visit(op);
      return;
    }
    ParallelLoop loop;
    const ir::ForNode* f = op;
    while (true) {
      loop.vars.push_back(f->var.get());
      auto e = ir::AsConstInt(f->extent);
      loop.extents.push_back(e ? *e : -1);
      const auto* inner = f->body.As<ir::ForNode>();
      if (inner == nullptr || inner->for_kind != ir::ForKind::kParallel) break;
      f = inner;
    }
    current_ = &loop;
    VisitStmt(f->body);
    current_ = nullptr;
    loops.push_back(std::move(loop));
  }
  void Visit(const ir::LoadNode* op) override {
    Note(op->buffer, op->indices, /*store=*/false);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::StoreNode* op) override {
    Note(op->buffer, op->indices, /*store=*/true);
    IRVisitor::Visit(op);
  }

 private:
  void Note(const ir::Buffer& b, const std::vector<ir::Expr>& idx, bool store) {
    if (current_ == nullptr || !IsFragment(b)) return;
    current_->touched.push_back(b);
    const size_t before =
        current_->full.size() + current_->rows.size() + current_->cols.size();
    auto is_var = [&](size_t i, const ir::VarNode* v) {
      return idx[i].get() == v;
    };
    if (idx.size() == current_->vars.size()) {
      bool all = true;
      for (size_t i = 0; i < idx.size(); ++i)
        all &= is_var(i, current_->vars[i]);
      if (all) current_->full.push_back(b);
    }
    if (idx.size() == 1 && current_->vars.size() == 2 &&
        is_var(0, current_->vars[0])) {
      current_->rows.push_back(b);
    }
    if (idx.size() == 1 && current_->vars.size() == 2 &&
        is_var(0, current_->vars[1])) {
      current_->cols.push_back(b);
    }
    const size_t after =
        current_->full.size() + current_->rows.size() + current_->cols.size();
    if (after == before && !store) current_->other_reads.push_back(b);
    if (after == before && store) current_->other_store = true;
  }
  ParallelLoop* current_ = nullptr;
};

std::vector<int64_t> ShapeOf(const ir::Buffer& b) {
  auto s = ConstShape(b->shape);
  return s ? *s : std::vector<int64_t>{};
}

int BlockedVec(const ir::Buffer& b, int threads) {
  std::vector<int64_t> s = ShapeOf(b);
  if (s.empty()) return 1;
  int vec = std::max(1, 16 / dtype_bytes(b->dtype));
  while (vec > 1 && s.back() % vec != 0) vec /= 2;
  return vec;
}

// Elements per access of a row-reduced [M, N] tile: 16 bytes of the
// narrowest element among the tiles of its shape and the global tensors
// copied to or from them (f16 rows of an f32 tile still load 16 bytes).
int RowVec(const std::vector<int64_t>& shape, const Collector& c) {
  int bytes = 16;
  for (const ir::Buffer& f : c.fragments)
    if (ShapeOf(f) == shape) bytes = std::min(bytes, dtype_bytes(f->dtype));
  for (const ir::CopyNode* cp : c.copies) {
    const ir::Buffer &s = cp->src.buffer, &d = cp->dst.buffer;
    if (IsFragment(s) && ShapeOf(s) == shape && !IsFragment(d))
      bytes = std::min(bytes, dtype_bytes(d->dtype));
    if (IsFragment(d) && ShapeOf(d) == shape && !IsFragment(s))
      bytes = std::min(bytes, dtype_bytes(s->dtype));
  }
  return 16 / std::max(1, bytes);
}

}  // namespace

int PickSwizzleBytes(int64_t row_bytes) {
  if (row_bytes % 128 == 0) return 128;
  if (row_bytes == 64) return 64;
  if (row_bytes == 32) return 32;
  return 0;
}

namespace {

// The warp grid of the gemm's policy over its accumulator, or {0, 0} when
// operand scopes or shapes rule the tensor cores out (any dtype).
std::pair<int, int> PolicyWarpGrid(const ir::GemmNode& g, int threads) {
  if (g.c.buffer->dtype != DataType::kF32) return {0, 0};
  // A may live in registers (a fragment laid out as an mma accumulator, see
  // CheckRegisterOperand); B always comes from shared memory.
  bool a_ok = g.a.buffer->scope == ir::Scope::kShared ||
              (g.a.buffer->scope == ir::Scope::kFragment && !g.transpose_a);
  if (!a_ok || g.b.buffer->scope != ir::Scope::kShared) return {0, 0};
  auto ce = ConstSqueezedExtents(g.c);
  auto ae = ConstSqueezedExtents(g.a);
  if (!ce || ce->size() != 2 || !ae || ae->size() != 2) return {0, 0};
  int64_t k = g.transpose_a ? (*ae)[0] : (*ae)[1];
  if (k % 16 != 0 || threads % 32 != 0) return {0, 0};
  // A register A operand needs each warp to own whole rows of C: the
  // default policy gives it that grid rather than refuse (an explicit
  // kFullCol still gets the error saying why).
  const bool register_a = g.a.buffer->scope == ir::Scope::kFragment;
  int policy = g.policy == ir::GemmWarpPolicy::kFullRow   ? 1
               : g.policy == ir::GemmWarpPolicy::kFullCol ? 2
               : register_a                               ? 1
                                                          : 0;
  return ChooseWarpGrid((*ce)[0], (*ce)[1], threads / 32, policy);
}

}  // namespace

std::pair<int, int> MmaWarpGrid(const ir::GemmNode& g, int threads) {
  DataType a = g.a.buffer->dtype, b = g.b.buffer->dtype;
  if (a != b || (a != DataType::kF16 && a != DataType::kBF16)) return {0, 0};
  return PolicyWarpGrid(g, threads);
}

std::pair<int, int> TensorCoreWarpGrid(const ir::GemmNode& g,
                                       const LoweringState& state) {
  if (!IsFp8Gemm(g)) return MmaWarpGrid(g, state.threads);
  if (!WgmmaAccumulator(g, state)) return {0, 0};
  return PolicyWarpGrid(g, state.threads);
}

namespace {

// The layout a register A operand of mma gemm g is read in: its rows as
// the accumulator's.
FragmentLayout RegisterOperandLayout(const ir::GemmNode& g,
                                     const LoweringState& state) {
  const int threads = state.threads;
  if (WgmmaAccumulator(g, state))
    return FragmentLayout::Wgmma(*ConstSqueezedExtents(g.a), threads);
  int wm = MmaWarpGrid(g, threads).first;
  return FragmentLayout::Mma(*ConstSqueezedExtents(g.a), threads, wm, 1);
}

// A register A operand is read in place as mma A fragments: warp w's m16 x
// k16 step kk is local [mi][2kk..2kk+1][0..3] of the accumulator layout with
// warps_m = the gemm's warps_m and warps_n = 1 (each warp owns whole rows).
// Anything else would need data from other threads: say so, at the gemm.
absl::Status CheckRegisterOperand(const ir::GemmNode& g,
                                  const LoweringState& state) {
  const int threads = state.threads;
  const auto& layouts = state.layouts;
  const ir::Buffer& a = g.a.buffer;
  auto where = [&] {
    return absl::StrCat("gemm at ", ir::FormatLoc(g.loc), ": A operand ",
                        a->name, " is a register fragment");
  };
  auto [wm, wn] = MmaWarpGrid(g, threads);
  if (wm == 0) {
    return absl::UnimplementedError(absl::StrCat(
        where(),
        "; register operands need the mma.sync path (f16/bf16 A "
        "and B, f32 accumulator, tiles divisible by the warp grid, "
        "A not transposed): copy A to shared memory"));
  }
  if (wn != 1) {
    return absl::UnimplementedError(absl::StrCat(
        where(), ", but the gemm's warp grid is ", wm, "x", wn,
        ": each warp must own whole rows of C (GemmWarpPolicy::kFullRow, "
        "or copy A to shared memory)"));
  }
  if (!g.a.IsFull()) {
    return absl::UnimplementedError(
        absl::StrCat(where(), ": pass the whole fragment, not a part of it"));
  }
  FragmentLayout want = RegisterOperandLayout(g, state);
  auto it = layouts.find(a.get());
  if (it != layouts.end() && !(it->second == want)) {
    const FragmentLayout& have = it->second;
    const bool mma = have.kind() == FragmentLayout::Kind::kMma;
    return absl::UnimplementedError(absl::StrCat(
        where(), " spread over the threads ",
        mma ? absl::StrCat("as a gemm accumulator on a ", have.warps_m(), "x",
                           have.warps_n(), " warp grid")
            : std::string("by another loop or copy"),
        ", but this gemm reads its A operand as the accumulator of a gemm "
        "whose warps each own whole rows (a ",
        want.warps_m(), "x", want.warps_n(),
        " warp grid): give the gemm whose accumulator becomes ", a->name,
        " GemmWarpPolicy::kFullRow, or copy A to shared memory"));
  }
  return absl::OkStatus();
}

// A register operand needs another layout: infer the fragments again.
absl::Status Retry() { return absl::AbortedError("retry"); }

// The fragment layouts, seeded by the gemm accumulators and spread through
// the loops, reductions and copies that use them.
absl::Status InferFragmentLayouts(LoweringState& state, Collector& c) {
  auto& layouts = state.layouts;
  // Seeds: gemm accumulators.
  for (const ir::GemmNode* g : c.gemms) {
    const ir::Buffer& acc = g->c.buffer;
    if (!IsFragment(acc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("gemm at ", ir::FormatLoc(g->loc), ": the accumulator ",
                       acc->name, " must be a fragment"));
    }
    auto [wm, wn] = TensorCoreWarpGrid(*g, state);
    std::vector<int64_t> shape = ShapeOf(acc);
    if (wm == 0 || shape.size() != 2) continue;  // FMA path: blocked later
    FragmentLayout l = WgmmaAccumulator(*g, state)
                           ? FragmentLayout::Wgmma(shape, c.threads)
                           : FragmentLayout::Mma(shape, c.threads, wm, wn);
    auto it = layouts.find(acc.get());
    if (it != layouts.end() && !(it->second == l)) {
      return absl::UnimplementedError(absl::StrCat(
          "gemm at ", ir::FormatLoc(g->loc), ": accumulator ", acc->name,
          " is written by gemms with different warp partitions"));
    }
    layouts.emplace(acc.get(), l);
  }
  // A fragment read at indices other than a loop's variables (a bias at an
  // offset, a reversed row) may be read by any thread: every thread holds
  // it all, unless a gemm laid it out (then the lowering says why not).
  // A loop storing a fragment at other indices (x(i, 0) = ..., a sum into
  // s(0)) runs every iteration in every thread, in order, on replicated
  // fragments (lower/parallel.cc): each thread computes what the
  // interpreter does.
  for (const ParallelLoop& loop : c.loops) {
    if (!loop.other_store) continue;
    for (const ir::Buffer& b : loop.touched) {
      if (!layouts.count(b.get()) && !ShapeOf(b).empty()) {
        layouts.emplace(b.get(),
                        FragmentLayout::Replicated(ShapeOf(b), c.threads));
      }
    }
  }
  for (const ParallelLoop& loop : c.loops) {
    for (const ir::Buffer& b : loop.other_reads) {
      if (!layouts.count(b.get()) && !ShapeOf(b).empty()) {
        layouts.emplace(b.get(),
                        FragmentLayout::Replicated(ShapeOf(b), c.threads));
      }
    }
  }

  auto propagate = [&]() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const ParallelLoop& loop : c.loops) {
        const FragmentLayout* driver = nullptr;
        for (const ir::Buffer& b : loop.full) {
          auto it = layouts.find(b.get());
          if (it != layouts.end()) {
            driver = &it->second;
            break;
          }
        }
        if (driver == nullptr) continue;
        FragmentLayout d = *driver;
        for (const ir::Buffer& b : loop.full) {
          if (!layouts.count(b.get()) && ShapeOf(b) == d.shape()) {
            layouts.emplace(b.get(), d);
            changed = true;
          }
        }
        const bool row_wise = d.kind() == FragmentLayout::Kind::kMma ||
                              d.kind() == FragmentLayout::Kind::kRows;
        if (!row_wise) {
          for (const ir::Buffer& b : loop.rows) {
            if (!layouts.count(b.get())) {
              layouts.emplace(
                  b.get(), FragmentLayout::Replicated(ShapeOf(b), c.threads));
              changed = true;
            }
          }
        }
        if (row_wise) {
          for (const ir::Buffer& b : loop.rows) {
            if (!layouts.count(b.get()) &&
                ShapeOf(b) == std::vector<int64_t>{d.shape()[0]}) {
              layouts.emplace(b.get(), d.RowsOf());
              changed = true;
            }
          }
        }
        // Broadcast over the rows: the columns each thread's elements have
        // (a blocked driver's columns vary per element: every thread all).
        for (const ir::Buffer& b : loop.cols) {
          if (layouts.count(b.get()) || d.shape().size() != 2) continue;
          const bool fits =
              row_wise && ShapeOf(b) == std::vector<int64_t>{d.shape()[1]};
          layouts.emplace(b.get(), fits ? d.ColsOf()
                                        : FragmentLayout::Replicated(
                                              ShapeOf(b), c.threads));
          changed = true;
        }
      }
      for (const ir::ReduceNode* r : c.reduces) {
        auto it = layouts.find(r->src.get());
        if (it == layouts.end() || layouts.count(r->dst.get())) continue;
        const FragmentLayout::Kind k = it->second.kind();
        if ((k == FragmentLayout::Kind::kMma ||
             k == FragmentLayout::Kind::kRows) &&
            r->dim == 1 && IsFragment(r->dst)) {
          layouts.emplace(r->dst.get(), it->second.RowsOf());
          changed = true;
        }
        // Column statistics take the columns' layout, as a later Parallel
        // loop over the tile reads them.
        if ((k == FragmentLayout::Kind::kMma ||
             k == FragmentLayout::Kind::kRows) &&
            r->dim == 0 && IsFragment(r->dst) && r->src->rank() == 2) {
          layouts.emplace(r->dst.get(), it->second.ColsOf());
          changed = true;
        }
      }
      // A row scan's result is laid out as the rows it scans.
      for (const ir::CumsumNode* cs : c.cumsums) {
        auto it = layouts.find(cs->src.get());
        if (it == layouts.end() || layouts.count(cs->dst.get()) ||
            it->second.kind() != FragmentLayout::Kind::kRows ||
            !IsFragment(cs->dst) || ShapeOf(cs->dst) != it->second.shape())
          continue;
        layouts.emplace(cs->dst.get(), it->second);
        changed = true;
      }
      for (const ir::CopyNode* cp : c.copies) {
        const ir::Buffer &s = cp->src.buffer, &d = cp->dst.buffer;
        if (!IsFragment(s) || !IsFragment(d) || ShapeOf(s) != ShapeOf(d))
          continue;
        auto is = layouts.find(s.get()), id = layouts.find(d.get());
        if (is != layouts.end() && id == layouts.end()) {
          layouts.emplace(d.get(), is->second);
          changed = true;
        } else if (id != layouts.end() && is == layouts.end()) {
          layouts.emplace(s.get(), id->second);
          changed = true;
        }
      }
    }
  };
  propagate();
  // Tiles reduced or scanned along their rows that nothing laid out yet:
  // rows over thread groups, 16-byte accesses (reduce_rows.cc,
  // cumsum_rows.cc lower them).
  std::vector<std::pair<ir::Buffer, ir::Buffer>> row_ops;
  for (const ir::ReduceNode* r : c.reduces)
    if (r->dim == 1) row_ops.push_back({r->src, r->dst});
  for (const ir::CumsumNode* s : c.cumsums)
    if (s->dim == 1) row_ops.push_back({s->src, s->dst});
  for (const auto& [src, dst] : row_ops) {
    if (!IsFragment(src) || !IsFragment(dst) || layouts.count(src.get()) ||
        (dst.get() != src.get() && layouts.count(dst.get())))
      continue;
    std::vector<int64_t> shape = ShapeOf(src);
    auto rows =
        FragmentLayout::ForRowReduce(shape, c.threads, RowVec(shape, c));
    if (!rows) continue;
    layouts.emplace(src.get(), *rows);
    propagate();
  }
  // Register A operands that nothing laid out yet take the layout the mma
  // reads them in.
  for (const ir::GemmNode* g : c.gemms) {
    if (g->a.buffer->scope != ir::Scope::kFragment) continue;
    if (layouts.count(g->a.buffer.get())) continue;
    auto [wm, wn] = MmaWarpGrid(*g, c.threads);
    if (wm == 0 || wn != 1 || !g->a.IsFull()) continue;  // reported below
    layouts.emplace(g->a.buffer.get(), RegisterOperandLayout(*g, state));
    propagate();
  }
  // Higher-rank tiles first: their loops decide the rows' layouts.
  std::stable_sort(c.fragments.begin(), c.fragments.end(),
                   [](const ir::Buffer& a, const ir::Buffer& b) {
                     return a->rank() > b->rank();
                   });
  for (const ir::Buffer& f : c.fragments) {
    if (layouts.count(f.get())) continue;
    std::vector<int64_t> shape = ShapeOf(f);
    if (shape.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fragment ", f->name, " needs a constant shape"));
    }
    layouts.emplace(f.get(), FragmentLayout::Blocked(shape, c.threads,
                                                     BlockedVec(f, c.threads)));
    propagate();
  }

  for (const ir::GemmNode* g : c.gemms) {
    if (g->a.buffer->scope != ir::Scope::kFragment) continue;
    absl::Status s = CheckRegisterOperand(*g, state);
    if (s.ok()) continue;
    // Wgmma's rows (FragmentLayout::Wgmma) made the mismatch: keep this
    // gemm on mma.sync, or when another gemm laid A out so, every
    // warpgroup-spread accumulator, and infer again.
    const ir::BufferNode* acc = g->c.buffer.get();
    auto it = layouts.find(acc);
    if (it != layouts.end() && it->second.warpgroup_rows()) {
      state.wgmma_declined.insert(acc);
      return Retry();
    }
    bool declined = false;
    for (const auto& [buffer, layout] : layouts) {
      if (layout.kind() == FragmentLayout::Kind::kMma &&
          layout.warpgroup_rows()) {
        declined |= state.wgmma_declined.insert(buffer).second;
      }
    }
    return declined ? Retry() : s;
  }

  return absl::OkStatus();
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
    return (g.policy == ir::GemmWarpPolicy::kSquare ||
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
  Collector c;
  c.VisitStmt(state.program.body);
  if (c.threads <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(state.program.name, ": the program has no kernel"));
  }
  state.threads = c.threads;
  auto& layouts = state.layouts;
  // A fragment allocated inside a T.Parallel body belongs to one iteration,
  // which one thread runs: a per-thread local array.
  if (!c.per_iteration.empty()) {
    BufferMap locals;
    for (const ir::Buffer& b : c.per_iteration) {
      locals[b.get()] = ir::MakeBuffer(b->name, b->dtype, b->shape,
                                       ir::Scope::kLocal, b->layout);
    }
    state.program.body = ReplaceBuffers(state.program.body, locals);
    c = Collector();
    c.VisitStmt(state.program.body);
  }
  if (WgmmaEnabled(state)) {
    DeclineMixedOperands(state, c.gemms, c.threads);
    state.program.body = PreferWgmmaWarpGrid(state.program.body, c.threads,
                                             state.wgmma_declined);
    c = Collector();
    c.VisitStmt(state.program.body);
  }

  // Gemms that fit wgmma but whose register A operands cannot be read in
  // its rows fall back to mma.sync, one round each.
  absl::Status fragments;
  do {
    layouts.clear();
    fragments = InferFragmentLayouts(state, c);
  } while (fragments.code() == absl::StatusCode::kAborted);
  if (!fragments.ok()) return fragments;
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
  for (const auto& [node, layout] : c.annotated) {
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
  for (const ir::GemmNode* g : c.gemms) {
    if (!WgmmaAccumulator(*g, state)) continue;
    for (const ir::Buffer& b : {g->a.buffer, g->b.buffer})
      if (b->scope == ir::Scope::kShared) atom_major.insert(b.get());
  }
  for (const ir::GemmNode* g : c.gemms) {
    if (TensorCoreWarpGrid(*g, state).first == 0) continue;
    for (const ir::Buffer& b : {g->a.buffer, g->b.buffer}) {
      if (b->scope != ir::Scope::kShared) continue;
      auto it = c.annotated.find(b.get());
      if (it != c.annotated.end() &&
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
