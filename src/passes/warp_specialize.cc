#include "src/passes/warp_specialize.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/let.h"
#include "src/ir/visitor.h"
#include "src/passes/epilogue_store.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/rasterize_blocks.h"
#include "src/passes/pipeline_schedule.h"
#include "src/passes/tma_boxes.h"
#include "src/passes/warp_specialize_fits.h"
#include "src/passes/warp_specialize_producer_lets.h"
#include "src/passes/warp_specialize_split.h"

namespace tessel::passes {
namespace {

using ir::Expr;
using ir::Stmt;

class Specializer {
 public:
  explicit Specializer(LoweringState& state) : state_(state) {}

  Stmt Kernel(const ir::KernelNode& k) {
    kernel_ = &k;
    lets_ = ir::CollectLets(k.body);
    Stmt body = Rewrite(k.body);
    if (!done_) return Stmt();
    // The staged tiles replace the originals in their allocations.
    body = ReplaceBuffers(body, staged_);
    if (!first_tile_.defined()) {
      return ir::MakeStmt<ir::KernelNode>(k.grid, k.threads, k.block_vars, body,
                                          k.loc);
    }
    return ir::MakeStmt<ir::KernelNode>(std::vector<Expr>{Tiles()}, k.threads,
                                        std::vector<ir::Var>{first_tile_}, body,
                                        k.loc);
  }

 private:
  // Down the kernel's allocations, and a guard the whole block takes or
  // skips together (a varlen block past its sequence's end exits), to its
  // statement list.
  Stmt Rewrite(const Stmt& s) {
    if (const auto* a = s.As<ir::AllocateNode>()) {
      Stmt body = Rewrite(a->body);
      return done_ ? ir::MakeStmt<ir::AllocateNode>(a->buffer, body, a->loc)
                   : s;
    }
    if (const auto* i = s.As<ir::IfThenElseNode>()) {
      if (i->else_case.defined() ||
          !ReadsOnlyUnwrittenGlobals({i->cond}, kernel_->body)) {
        return s;
      }
      Stmt then_case = Rewrite(i->then_case);
      return done_ ? ir::MakeStmt<ir::IfThenElseNode>(i->cond, then_case,
                                                      Stmt(), i->loc)
                   : s;
    }
    const auto* seq = s.As<ir::SeqNode>();
    if (seq == nullptr) return s;
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      const auto* f = seq->stmts[i].As<ir::ForNode>();
      if (f == nullptr || f->for_kind != ir::ForKind::kPipelined ||
          f->num_stages < 2) {
        continue;
      }
      std::optional<Split> split = SplitBody(*f, state_);
      if (!split) return s;
      std::vector<Stmt> before(seq->stmts.begin(), seq->stmts.begin() + i);
      std::vector<Stmt> after(seq->stmts.begin() + i + 1, seq->stmts.end());
      for (const ir::CopyNode* c : split->copies) {
        for (const std::vector<Stmt>* list : {&before, &after})
          for (const Stmt& o : *list)
            if (UsesBuffer(o, c->dst.buffer.get())) return s;
      }
      done_ = true;
      return Specialize(*f, *split, before, after);
    }
    // Lets ahead of the allocations (T::let before T::alloc_shared) stay
    // where they are, over producer and consumers alike: every thread
    // evaluates them before the split, so the producer reads them as the
    // consumers do (a grouped GEMM's group, found from 63 offsets, is one
    // register, not 63 loads in every copy's origin).
    const std::vector<Stmt>& all = seq->stmts;
    if (all.size() > 1 &&
        std::all_of(all.begin(), all.end() - 1,
                    [](const Stmt& x) { return ir::AsLet(x).has_value(); })) {
      for (auto it = all.begin(); it + 1 != all.end(); ++it)
        outer_lets_.insert(ir::AsLet(*it)->var);
      Stmt last = Rewrite(all.back());
      if (!done_) return s;
      std::vector<Stmt> out(all.begin(), all.end() - 1);
      out.push_back(last);
      return ir::Seq(out, seq->loc);
    }
    return s;
  }

  // A persistent grid: one block per SM loops over the output tiles, so
  // that the producer loads the next tile while the consumers store this
  // one. For 1-d and 2-d grids of constant size whose k loop runs the same
  // iterations for every tile.
  bool PersistentFits(const ir::ForNode& loop) const {
    if (state_.config.disable_persistent_grid) return false;
    const auto& grid = kernel_->grid;
    if (grid.empty() || grid.size() > 2) return false;
    for (const Expr& g : grid)
      if (!ir::AsConstInt(g)) return false;
    // Every let inlined: the tile loop rebinds the block indices inside
    // it, so the k loop's bounds and the lets over the split (evaluated
    // before that loop) must not read them.
    for (const ir::Var& b : kernel_->block_vars) {
      if (UsesVar(ir::InlineLets(loop.min, lets_), b.get()) ||
          UsesVar(ir::InlineLets(loop.extent, lets_), b.get()))
        return false;
      for (const ir::VarNode* v : outer_lets_)
        if (UsesVar(lets_.at(v), b.get())) return false;
    }
    return true;
  }

  // The shared memory the specialized kernel's tiles take (each aligned
  // as a swizzled tile is) and its stages' two barriers.
  int64_t SharedBytes(int stages) const {
    int64_t total = 2 * stages * 8;
    ForEachStmt(kernel_->body, [&](const Stmt& s) {
      const auto* a = s.As<ir::AllocateNode>();
      if (a == nullptr || a->buffer->scope != ir::Scope::kShared) return;
      const ir::BufferNode* b = a->buffer.get();
      if (auto it = staged_.find(b); it != staged_.end()) b = it->second.get();
      const int64_t bytes =
          b->ConstNumElements().value_or(0) * dtype_bytes(b->dtype);
      total += (bytes + 1023) / 1024 * 1024;
    });
    return total;
  }

  Expr Tiles() const {
    Expr n = kernel_->grid[0];
    for (size_t d = 1; d < kernel_->grid.size(); ++d) n = n * kernel_->grid[d];
    return n;
  }

  // PassConfig::cluster_size 2: the grid dimension whose neighbouring tiles
  // (2i, 2i + 1) run as a cluster pair, sharing the copies whose source does
  // not use that block index; the one that shares the most bytes. -1: none
  // (a 2-d persistent grid of one consumer group, an even extent there, a
  // shared copy whose rows split in halves on swizzle periods).
  int PairDim(const Split& split, bool persistent, bool pingpong) const {
    if (state_.config.cluster_size != 2 || !persistent || pingpong ||
        kernel_->grid.size() != 2) {
      return -1;
    }
    int best = -1;
    int64_t best_bytes = 0;
    for (int d : {1, 0}) {
      if (*ir::AsConstInt(kernel_->grid[d]) % 2 != 0) continue;
      const ir::VarNode* v = kernel_->block_vars[d].get();
      int64_t bytes = 0;
      for (const ir::CopyNode* c : split.copies)
        if (SharedByPair(*c, v))
          bytes += PlanTmaCopy(*c, state_, nullptr)->bytes;
      if (bytes > best_bytes) best = d, best_bytes = bytes;
    }
    return best;
  }

  // Through the lets inside the split: a grouped GEMM's B origin names the
  // tile's group, a let of the M block index.
  bool SharedByPair(const ir::CopyNode& c, const ir::VarNode* v) const {
    for (const Expr& e : c.src.start)
      if (UsesVar(Inline(e), v)) return false;
    std::optional<TmaCopyPlan> plan = PlanTmaCopy(c, state_, nullptr);
    return plan && HalfRowsPlan(*plan);
  }

  // The tiles (cluster pairs) this block runs on a persistent grid.
  Expr BlockTiles() const {
    if (pair_dim_ < 0) return ir::CeilDiv(Tiles() - first_tile_, GridDimX());
    return ir::CeilDiv(Tiles() / 2 - Expr(first_tile_) / 2, GridDimX() / 2);
  }

  // Ping-pong (PassConfig::pingpong_consumers): a consumer warpgroup of
  // its own per output tile. The groups share only the stage ring: another
  // shared buffer, or a reduction's scratch, would be one for both.
  bool PingpongFits() const {
    if (!state_.config.pingpong_consumers || state_.threads != 128)
      return false;
    bool ok = true;
    ForEachStmt(kernel_->body, [&](const Stmt& s) {
      const auto* a = s.As<ir::AllocateNode>();
      ok &= a == nullptr || a->buffer->scope != ir::Scope::kShared ||
            staged_.count(a->buffer.get()) > 0;
      ok &= s.As<ir::ReduceNode>() == nullptr &&
            s.As<ir::CumsumNode>() == nullptr;
    });
    return ok;
  }

  // for t in serial(ceildiv(tiles - first_tile, grid_dim_x())):
  //   <bind the block indices to tile first_tile + t * grid_dim_x()>; body
  // With `group` (ping-pong), group g of two takes the block's tiles
  // t = 2 * turn + g:
  //   for turn in serial(ceildiv(ceildiv(...) - g, 2)): t = 2 * turn + g; ...
  // A cluster pair (pair_dim_ >= 0) binds its tiles as one tile of a grid
  // halved along pair_dim_, then its blocks to the two halves by rank:
  //   <bind (bx, by') to pair first_tile / 2 + t * grid_dim_x() / 2>
  //   by = by' * 2 + first_tile % 2        # pair_dim_ 1
  Stmt PerTile(const ir::Var& t, Stmt body, const ir::Var& group = {},
               const ir::Var& turn = {}) {
    Expr tile = Expr(first_tile_) + Expr(t) * GridDimX();
    std::vector<ir::Var> vars = kernel_->block_vars;
    std::vector<Expr> grid = kernel_->grid;
    ir::Var paired;
    if (pair_dim_ >= 0) {
      tile = Expr(first_tile_) / 2 + Expr(t) * (GridDimX() / 2);
      paired = vars[pair_dim_];
      vars[pair_dim_] = ir::Var(paired->name + "_pair");
      grid[pair_dim_] = Expr(*ir::AsConstInt(grid[pair_dim_]) / 2);
    }
    std::vector<Stmt> s;
    if (group.defined()) s.push_back(Let(t, Expr(turn) * 2 + group));
    if (vars.size() == 1) {
      s.push_back(Let(vars[0], tile));
    } else {
      for (Stmt& let : BindRasterizedBlock(tile, vars[0], vars[1], grid[0],
                                           grid[1], panel_, column_major_))
        s.push_back(std::move(let));
    }
    if (paired.defined()) {
      s.push_back(
          Let(paired, Expr(vars[pair_dim_]) * 2 + Expr(first_tile_) % 2));
    }
    s.push_back(std::move(body));
    Expr tiles = BlockTiles();
    if (group.defined()) {
      return MakeFor(turn, Expr(0), ir::CeilDiv(tiles - group, Expr(2)),
                     ir::ForKind::kSerial, ir::Seq(s));
    }
    return MakeFor(t, Expr(0), tiles, ir::ForKind::kSerial, ir::Seq(s));
  }

  Stmt Specialize(const ir::ForNode& loop, const Split& split,
                  std::vector<Stmt> before, const std::vector<Stmt>& after) {
    const int stages = loop.num_stages;
    producer_lets_.emplace(kernel_->body, outer_lets_);
    const bool persistent = PersistentFits(loop);
    // The producer runs none of the consumers' lets: its loop bounds and
    // copy origins read their values instead.
    const Expr loop_min = Inline(loop.min), loop_extent = Inline(loop.extent);
    ir::Var producer_tile("tile"), consumer_tile("tile");
    if (persistent) {
      first_tile_ = ir::Var("first_tile");
      for (size_t d = 0; d < kernel_->grid.size(); ++d) {
        state_.tile_block_vars.push_back(
            {kernel_->block_vars[d], *ir::AsConstInt(kernel_->grid[d])});
      }
    }
    for (const ir::CopyNode* c : split.copies) {
      const ir::Buffer& b = c->dst.buffer;
      if (staged_.count(b.get()) > 0) continue;  // a tile of several copies
      std::vector<Expr> shape{Expr(stages)};
      shape.insert(shape.end(), b->shape.begin(), b->shape.end());
      staged_[b.get()] =
          ir::MakeBuffer(b->name, b->dtype, shape, b->scope, b->layout);
    }
    ir::Buffer full = ir::MakeBuffer("tma_full", DataType::kI64, {stages},
                                     ir::Scope::kBarrier);
    ir::Buffer empty = ir::MakeBuffer("tma_empty", DataType::kI64, {stages},
                                      ir::Scope::kBarrier);
    state_.tma_barriers = {full.get(), empty.get()};
    // Ping-pong: the groups' mainloops take turns, group g waiting on
    // order[g] before its k loop and arriving on the other's after it. The
    // turns also keep the full barriers' parity waits exact: a group's
    // first wait on a stage comes after the other group's waits on its
    // earlier fills (without them, a group could pass a wait on a fill two
    // phases ahead of the barrier's).
    const bool pingpong = persistent && PingpongFits();
    pair_dim_ = PairDim(split, persistent, pingpong);
    if (pair_dim_ >= 0) {
      state_.cluster_size = 2;
      state_.cluster_var = kernel_->block_vars[pair_dim_];
      state_.cluster_empty = empty.get();
    }
    ir::Var group, turn;
    ir::Buffer order;
    if (pingpong) {
      group = ir::Var("group");
      turn = ir::Var("turn");
      order = ir::MakeBuffer("math_order", DataType::kI64, {2},
                             ir::Scope::kBarrier);
      state_.tma_barriers.insert(order.get());
    }

    // Iteration i of either loop (counted on across tiles), its stage and
    // phase.
    auto iteration = [&](const ir::Var& k, const ir::Var& tile) {
      Expr i = ir::IsConstInt(loop_min, 0) ? Expr(k) : Expr(k) - loop_min;
      return persistent ? Expr(tile) * loop_extent + i : i;
    };
    ir::Var pk(loop.var->name);
    Expr pi = iteration(pk, producer_tile), ps = pi % stages;
    // The copies' lets (page rows) are bound ahead of the free-stage wait
    // (warp_specialize_producer_lets.h).
    VarMap to_pk{{loop.var.get(), Expr(pk)}};
    std::vector<Stmt> copies;
    for (const ir::CopyNode* c : split.copies) {
      ir::Region src = c->src;
      for (Expr& e : src.start) e = producer_lets_->Bind(e, to_pk, pk.get());
      for (Expr& e : src.extent) e = producer_lets_->Bind(e, to_pk, pk.get());
      ir::Region dst = StageIndex(staged_, ps).MutateRegion(c->dst);
      copies.push_back(ir::MakeStmt<ir::CopyNode>(src, dst, full, ps, c->loc));
    }
    std::vector<Stmt> produce = producer_lets_->ahead_of_wait();
    produce.push_back(ir::MakeStmt<ir::MbarrierWaitParityNode>(
        empty, ps, (pi / stages + 1) % 2, loop.loc));
    produce.push_back(ir::MakeStmt<ir::MbarrierExpectTxNode>(
        full, ps, Expr(int(split.bytes)), loop.loc));
    produce.insert(produce.end(), copies.begin(), copies.end());
    produce.push_back(ir::MakeStmt<ir::MbarrierArriveNode>(full, ps, loop.loc));
    Stmt producer = MakeFor(pk, loop_min, loop_extent, ir::ForKind::kSerial,
                            ir::Seq(produce));
    if (!producer_lets_->ahead_of_loop().empty()) {
      std::vector<Stmt> s = producer_lets_->ahead_of_loop();
      s.push_back(producer);
      producer = ir::Seq(s);
    }

    Expr ci = iteration(loop.var, consumer_tile), cs = ci % stages;
    Stmt wait_full = ir::MakeStmt<ir::MbarrierWaitParityNode>(
        full, cs, ci / stages % 2, loop.loc);
    Stmt release = ir::MakeStmt<ir::MbarrierArriveNode>(empty, cs, loop.loc);
    StageIndex stage(staged_, cs);
    std::vector<Stmt> consume;
    for (const Stmt& s : split.consumers)
      consume.push_back(stage.MutateStmt(s));
    // Under order / stage lists the lowering keeps the steady loop's wgmma
    // in flight until a statement needs them.
    if (HasStatementSchedule(loop))
      state_.wgmma_overlap_loops.insert(loop.var.get());
    Stmt consumer_loop = ScheduledConsumerLoop(
        loop, consume, split.consumer_index, wait_full, release);

    // Annotations stay kernel-wide (a persistent grid rasterizes its tiles
    // itself); the consumers run the rest.
    std::vector<Stmt> top, consumer;
    for (const Stmt& s : before) {
      if (const auto* u = s.As<ir::UseSwizzleNode>()) {
        panel_ = u->panel_size;
        column_major_ = u->column_major;
        if (!persistent) top.push_back(s);
      } else if (s.As<ir::AnnotateLayoutNode>()) {
        top.push_back(s);
      } else {
        consumer.push_back(s);
      }
    }
    if (pingpong) {
      // Group 0's first turn passes a fresh barrier (parity 1).
      consumer.push_back(ir::MakeStmt<ir::MbarrierWaitParityNode>(
          order, group, (Expr(turn) + 1 - group) % 2, loop.loc));
    }
    consumer.push_back(consumer_loop);
    if (pingpong) {
      consumer.push_back(
          ir::MakeStmt<ir::MbarrierArriveNode>(order, 1 - group, loop.loc));
    }
    // PassConfig::disable_tma_store_epilogue: the accumulator's store through a
    // staging tile and the TMA (one consumer group: the staging is per
    // warpgroup of the tile).
    if (!pingpong) StageEpilogueStores(after, SharedBytes(stages), state_);
    consumer.insert(consumer.end(), after.begin(), after.end());
    Stmt consumer_body = ir::Seq(consumer);
    if (persistent) {
      producer = PerTile(producer_tile, producer);
      consumer_body = PerTile(consumer_tile, consumer_body, group, turn);
    }
    // A cluster pair's consumers release each stage in both blocks, one
    // arrival per warp on each: the stage is free when both pairs' reads
    // of it (the tiles multicast into it) are done.
    std::vector<Expr> ones(stages, Expr(1)),
        consumers(stages, Expr(pair_dim_ >= 0 ? 2 * state_.threads / 32
                                              : state_.threads));
    top.insert(top.begin(),
               {ir::MakeStmt<ir::MbarrierInitNode>(full, ones, loop.loc),
                ir::MakeStmt<ir::MbarrierInitNode>(empty, consumers, loop.loc),
                ir::MakeStmt<ir::SyncThreadsNode>(loop.loc)});
    if (pair_dim_ >= 0) {
      // The peer's barriers are initialized before the first multicast or
      // remote arrival reaches them.
      top.insert(top.begin() + 3, Intrin(Intrinsic::kClusterSync, {}));
      // The block stays until the peer's consumers have released every
      // stage of its own (their arrivals land in this block's barriers):
      // the producer waits on the empty barriers as `stages` more
      // iterations would.
      ir::Var j("drain");
      Expr i = BlockTiles() * loop_extent + j;
      producer = ir::Seq(
          {producer,
           MakeFor(j, Expr(0), Expr(stages), ir::ForKind::kSerial,
                   ir::MakeStmt<ir::MbarrierWaitParityNode>(
                       empty, i % stages, (i / stages + 1) % 2, loop.loc))});
    }
    if (pingpong) {
      top.insert(
          top.begin() + 2,
          ir::MakeStmt<ir::MbarrierInitNode>(
              order, std::vector<Expr>(2, Expr(state_.threads)), loop.loc));
      state_.consumer_groups = 2;
    }
    // A block of one consumer warpgroup that is not persistent may share
    // its SM with others (a decode block per sequence and head): one warp
    // issues the copies, so the idle producers hold no registers the next
    // block could use (setmaxnreg, which gives them back, applies only to
    // larger consumer counts).
    producer_threads_ =
        !persistent && state_.threads == 128 ? kProducerWarp : kProducerThreads;
    top.push_back(ir::MakeStmt<ir::WarpSpecializeNode>(
        producer_threads_, producer, consumer_body, loop.loc, pingpong ? 2 : 1,
        group));
    Stmt body = ir::Seq(top);
    for (const EpilogueStore& e : state_.epilogue_stores)
      body = ir::MakeStmt<ir::AllocateNode>(e.stage, body, loop.loc);
    if (pingpong) body = ir::MakeStmt<ir::AllocateNode>(order, body, loop.loc);
    body = ir::MakeStmt<ir::AllocateNode>(empty, body, loop.loc);
    return ir::MakeStmt<ir::AllocateNode>(full, body, loop.loc);
  }

  // e with the lets inside the split inlined (the producer runs none of
  // the consumers' statements); the lets over it stay names.
  Expr Inline(const Expr& e) const { return producer_lets_->Inline(e); }

 public:
  int producer_threads() const { return producer_threads_; }

 private:
  LoweringState& state_;
  const ir::KernelNode* kernel_ = nullptr;
  ir::LetValues lets_;  // the kernel's T::let values
  // The lets ahead of the allocations, which every thread evaluates before
  // the producer / consumer split.
  std::unordered_set<const ir::VarNode*> outer_lets_;
  std::optional<ProducerLets> producer_lets_;  // set by Specialize
  BufferMap staged_;
  bool done_ = false;
  ir::Var first_tile_;  // defined: the grid is persistent
  int pair_dim_ = -1;   // >= 0: the grid dimension of cluster pairs
  int panel_ = 0;       // the kernel's T.use_swizzle
  int producer_threads_ = kProducerThreads;
  bool column_major_ = false;
};

}  // namespace

absl::Status WarpSpecialize(LoweringState& state) {
  if (state.config.cluster_size != 1 && state.config.cluster_size != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("PassConfig::cluster_size is ", state.config.cluster_size,
                     "; clusters of 1 or 2 blocks are supported"));
  }
  // Order / stage lists are checked on every path, specialized or not.
  absl::Status checked = absl::OkStatus();
  ForEachStmt(state.program.body, [&](const Stmt& s) {
    if (const auto* f = s.As<ir::ForNode>(); f && checked.ok())
      checked = CheckPipelineSchedule(*f);
  });
  if (!checked.ok()) return checked;
  std::optional<std::string> refused = SpecializeRefusal(state);
  if (!refused) return absl::OkStatus();  // nothing to specialize here
  if (!refused->empty()) {
    state.specialize_declined = *refused;
    return absl::OkStatus();
  }
  struct Kernels : ir::IRMutator {
    explicit Kernels(LoweringState& state) : state(state) {}
    Stmt Visit(const ir::KernelNode* op) override {
      Specializer specializer(state);
      Stmt out = specializer.Kernel(*op);
      if (!out.defined()) return Self(op);
      state.producer_threads = specializer.producer_threads();
      state.persistent = !state.tile_block_vars.empty();
      return out;
    }
    LoweringState& state;
  } kernels(state);
  state.program.body = kernels.MutateStmt(state.program.body);
  if (state.producer_threads == 0) {
    state.specialize_declined =
        "the Pipelined loop is not TMA copies into whole shared tiles (or "
        "row ranges that fill them) read only by gemms after them, or a "
        "copied tile is used outside it";
  }
  return absl::OkStatus();
}

}  // namespace tessel::passes
