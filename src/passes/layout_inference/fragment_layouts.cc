#include "src/passes/layout_inference/fragment_layouts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "src/ir/printer.h"
#include "src/passes/gemm_warp_grid.h"
#include "src/passes/ir_util.h"
#include "src/passes/small_m_gemm.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

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
int RowVec(const std::vector<int64_t>& shape, const FragmentUses& c) {
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

// The layout a register A operand of mma gemm g is read in: its rows as
// the accumulator's.
FragmentLayout RegisterOperandLayout(const ir::GemmNode& g,
                                     const LoweringState& state) {
  const int threads = state.threads;
  if (SmallMPaddedRows(g, threads) != 0)
    return FragmentLayout::Padded(*GemmMatrixExtents(g.a), threads);
  if (WgmmaAccumulator(g, state))
    return FragmentLayout::Wgmma(*ConstSqueezedExtents(g.a), threads);
  int wm = MmaWarpGrid(g, threads).first;
  return FragmentLayout::Mma(*ConstSqueezedExtents(g.a), threads, wm, 1);
}

// A vector read along a loop's rows or columns (bias(j)) where the loop
// indexes no fragment in full (its tile is in shared memory): that loop's
// threads follow its own blocked spread, which a blocked spread of the
// vector's would not match, so every thread holds the vector.
bool ReadAsBroadcastOnly(const ir::Buffer& f, const FragmentUses& c) {
  auto has = [&](const std::vector<ir::Buffer>& v) {
    return std::any_of(v.begin(), v.end(),
                       [&](const ir::Buffer& b) { return b.get() == f.get(); });
  };
  return std::any_of(c.loops.begin(), c.loops.end(),
                     [&](const ParallelLoop& l) {
                       return l.full.empty() && (has(l.rows) || has(l.cols));
                     });
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
        "A not transposed), and here ",
        MmaPathRefusal(g, threads), ": copy A to shared memory"));
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

// One round of inference; Aborted when a gemm went back to mma.sync.
absl::Status InferOnce(LoweringState& state, const FragmentUses& c) {
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
    FragmentLayout l = SmallMPaddedRows(*g, c.threads) != 0
                           ? FragmentLayout::Padded(shape, c.threads)
                       : WgmmaAccumulator(*g, state)
                           ? (WgmmaSplitsN(*g, c.threads)
                                  ? FragmentLayout::WgmmaCols(shape, c.threads)
                                  : FragmentLayout::Wgmma(shape, c.threads))
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
  std::vector<ir::Buffer> fragments = c.fragments;
  std::stable_sort(fragments.begin(), fragments.end(),
                   [](const ir::Buffer& a, const ir::Buffer& b) {
                     return a->rank() > b->rank();
                   });
  for (const ir::Buffer& f : fragments) {
    if (layouts.count(f.get())) continue;
    std::vector<int64_t> shape = ShapeOf(f);
    if (shape.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fragment ", f->name, " needs a constant shape"));
    }
    layouts.emplace(f.get(),
                    ReadAsBroadcastOnly(f, c)
                        ? FragmentLayout::Replicated(shape, c.threads)
                        : FragmentLayout::Blocked(shape, c.threads,
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

}  // namespace

absl::Status InferFragmentLayouts(LoweringState& state,
                                  const FragmentUses& uses) {
  absl::Status status;
  do {
    state.layouts.clear();
    status = InferOnce(state, uses);
  } while (status.code() == absl::StatusCode::kAborted);
  return status;
}

}  // namespace tessel::passes
