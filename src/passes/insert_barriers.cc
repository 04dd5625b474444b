#include "src/passes/insert_barriers.h"

#include <optional>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/arith/interval.h"
#include "src/ir/arith/linear.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/plan_shared_memory.h"

namespace tessel::passes {
namespace {

// One access of a shared buffer by a block-collective statement.
struct Access {
  const ir::BufferNode* buffer;
  bool write;
  bool atomic;     // mbarrier arrive / wait: commute with each other
  ir::Expr first;  // first index when it is one element (stage), else undef
  // cp_async_wait: the async data of other threads lands. It orders later
  // accesses (RAW, WAW) but nothing before it (the copy's issue did).
  bool landing = false;
  // A tile op's region (start, extent per dim); empty for element accesses
  // and whole-buffer ones.
  std::vector<ir::Expr> start, extent;
};

using Accesses = std::vector<Access>;

bool IsSharedLike(const ir::BufferNode* b) {
  return b->scope == ir::Scope::kShared || b->scope == ir::Scope::kBarrier;
}

ir::Expr FirstIndex(const ir::Region& r) {
  if (r.rank() >= 2 && ir::IsConstInt(r.extent[0], 1)) return r.start[0];
  return ir::Expr();
}

// Two tile regions of one buffer that provably do not overlap: in some
// dimension their starts differ by a constant at least the first one's
// extent (a paged gather's copies into rows [0, 16), [16, 32), ... of one
// tile).
bool DisjointRegions(const Access& a, const Access& b) {
  if (a.start.empty() || a.start.size() != b.start.size()) return false;
  for (size_t d = 0; d < a.start.size(); ++d) {
    std::optional<int64_t> delta = ir::ConstDifference(b.start[d], a.start[d]);
    std::optional<int64_t> ea = ir::AsConstInt(a.extent[d]);
    std::optional<int64_t> eb = ir::AsConstInt(b.extent[d]);
    if (delta && ea && eb && (*delta >= *ea || -*delta >= *eb)) return true;
  }
  return false;
}

class Planner {
 public:
  Planner(const LoweringState& state) : state_(state) {
    // Buffers cp.async fills (any global -> shared copy may become one), and
    // mbarrier arrays every thread arrives on.
    ForEachStmt(state.program.body, [&](const ir::Stmt& s) {
      if (const auto* c = s.As<ir::CopyNode>()) {
        if (c->src.buffer->scope == ir::Scope::kGlobal &&
            c->dst.buffer->scope == ir::Scope::kShared) {
          async_.insert(c->dst.buffer.get());
        }
      }
      if (const auto* m = s.As<ir::MbarrierInitNode>()) {
        bool full = true;
        for (const ir::Expr& c : m->arrive_counts) {
          full &= ir::IsConstInt(c, state.threads);
        }
        if (full) full_barriers_.insert(m->barriers.get());
      }
    });
  }

  absl::Status status;
  int inserted = 0;

  struct Result {
    ir::Stmt stmt;
    Accesses head, tail;
    bool synced = false;
  };

  Result Scan(const ir::Stmt& s) {
    switch (s->kind) {
      case ir::StmtKind::kSeq:
        return ScanSeq(s.As<ir::SeqNode>()->stmts, s->loc);
      case ir::StmtKind::kKernel: {
        const auto* k = s.As<ir::KernelNode>();
        Result r = Scan(k->body);
        r.stmt = ir::MakeStmt<ir::KernelNode>(k->grid, k->threads,
                                              k->block_vars, r.stmt, k->loc);
        return r;
      }
      case ir::StmtKind::kAllocate: {
        const auto* a = s.As<ir::AllocateNode>();
        Result r = Scan(a->body);
        r.stmt = ir::MakeStmt<ir::AllocateNode>(a->buffer, r.stmt, a->loc);
        return r;
      }
      case ir::StmtKind::kIfThenElse:
        return ScanIf(*s.As<ir::IfThenElseNode>(), s);
      case ir::StmtKind::kFor: {
        const auto* f = s.As<ir::ForNode>();
        if (f->for_kind != ir::ForKind::kParallel) return ScanLoop(*f);
        break;
      }
      case ir::StmtKind::kSyncThreads:
        return Result{s, {}, {}, true};
      case ir::StmtKind::kWarpSpecialize:
        return ScanSpecialized(*s.As<ir::WarpSpecializeNode>());
      case ir::StmtKind::kMbarrierWaitParity: {
        const auto* w = s.As<ir::MbarrierWaitParityNode>();
        Result r{s, {{w->barriers.get(), false, true, ir::Expr()}}, {}, false};
        if (full_barriers_.count(w->barriers.get())) r.synced = true;
        return r;
      }
      case ir::StmtKind::kReduce: {
        const auto* r = s.As<ir::ReduceNode>();
        if (LeavesScratchOpen(*r, state_)) return ScanOpenReduce(s, *r);
        break;
      }
      default:
        break;
    }
    Accesses a = Leaf(s);
    return Result{s, a, a, false};
  }

 private:
  Accesses Leaf(const ir::Stmt& s) {
    Accesses out;
    auto region = [&](const ir::Region& r, bool write) {
      if (IsSharedLike(r.buffer.get()))
        out.push_back({r.buffer.get(), write, false, FirstIndex(r), false,
                       r.start, r.extent});
    };
    auto whole = [&](const ir::Buffer& b, bool write) {
      if (IsSharedLike(b.get())) out.push_back({b.get(), write, false, {}});
    };
    if (const auto* c = s.As<ir::CopyNode>()) {
      region(c->src, false);
      region(c->dst, true);
    } else if (const auto* g = s.As<ir::GemmNode>()) {
      region(g->a, false);
      region(g->b, false);
      region(g->c, true);
    } else if (const auto* f = s.As<ir::FillNode>()) {
      region(f->dst, true);
    } else if (const auto* r = s.As<ir::ReduceNode>()) {
      whole(r->src, false);
      whole(r->dst, true);
      if (!r->clear) whole(r->dst, false);
    } else if (const auto* c = s.As<ir::CumsumNode>()) {
      whole(c->src, false);
      whole(c->dst, true);
    } else if (const auto* a = s.As<ir::AtomicNode>()) {
      if (a->src) region(*a->src, false);
      if (a->prev) region(*a->prev, true);  // a ticket's slot
    } else if (const auto* m = s.As<ir::MbarrierInitNode>()) {
      whole(m->barriers, true);
    } else if (const auto* m = s.As<ir::MbarrierArriveNode>()) {
      out.push_back({m->barriers.get(), false, true, {}});
    } else if (const auto* m = s.As<ir::MbarrierExpectTxNode>()) {
      out.push_back({m->barriers.get(), false, true, {}});
    } else if (const auto* p = s.As<ir::PrintNode>()) {
      if (p->buffer.defined()) whole(p->buffer, false);
    } else if (HasEffect(s, kWaitsAsyncCopies)) {
      for (const ir::BufferNode* b : async_)
        out.push_back({b, true, false, {}, true});
    }
    // Element loads and stores anywhere inside (Parallel loops, stores).
    struct Elems : ir::IRVisitor {
      Accesses* out;
      void Visit(const ir::LoadNode* op) override {
        if (IsSharedLike(op->buffer.get()))
          out->push_back({op->buffer.get(), false, false, First(op->indices)});
        IRVisitor::Visit(op);
      }
      void Visit(const ir::StoreNode* op) override {
        if (IsSharedLike(op->buffer.get()))
          out->push_back({op->buffer.get(), true, false, First(op->indices)});
        IRVisitor::Visit(op);
      }
      static ir::Expr First(const std::vector<ir::Expr>& idx) {
        return idx.size() >= 2 ? idx[0] : ir::Expr();
      }
    } elems;
    elems.out = &out;
    elems.VisitStmt(s);
    return out;
  }

  bool Conflict(const Access& a, const Access& b) const {
    if (b.landing) return false;
    if (!a.write && !b.write) return false;
    if (a.atomic && b.atomic) return false;
    if (a.buffer != b.buffer) return state_.smem.MayAlias(a.buffer, b.buffer);
    return !ir::arith::ProvablyDistinct(a.first, b.first) &&
           !DisjointRegions(a, b);
  }
  bool Conflicts(const Accesses& before, const Accesses& after) const {
    for (const Access& a : before)
      for (const Access& b : after)
        if (Conflict(a, b)) return true;
    return false;
  }

  static void Append(Accesses& to, const Accesses& from) {
    to.insert(to.end(), from.begin(), from.end());
  }

  ir::Stmt Sync() {
    ++inserted;
    return ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc());
  }

  Result ScanSeq(const std::vector<ir::Stmt>& stmts, ir::SourceLoc loc) {
    Result out;
    std::vector<ir::Stmt> body;
    Accesses pending;
    bool seen_sync = false;
    for (const ir::Stmt& child : stmts) {
      Result r = Scan(child);
      if (Conflicts(pending, r.head)) {
        if (divergent_depth_ > 0) Reject(child);
        body.push_back(Sync());
        pending.clear();
        seen_sync = true;
      }
      if (!seen_sync) {
        Append(out.head, r.head);
        if (!r.synced) Append(out.head, r.tail);
      }
      body.push_back(r.stmt);
      if (r.synced) {
        pending = r.tail;
        seen_sync = true;
      } else {
        Append(pending, r.head);
        Append(pending, r.tail);
      }
    }
    out.stmt = ir::MakeStmt<ir::SeqNode>(std::move(body), loc);
    out.tail = std::move(pending);
    out.synced = seen_sync;
    return out;
  }

  Result ScanIf(const ir::IfThenElseNode& op, const ir::Stmt& self) {
    bool divergent = ThreadDependent(op.cond);
    if (divergent) ++divergent_depth_;
    Result t = Scan(op.then_case);
    Result e = op.else_case.defined() ? Scan(op.else_case) : Result{};
    if (divergent) --divergent_depth_;
    Result out;
    out.stmt =
        ir::MakeStmt<ir::IfThenElseNode>(op.cond, t.stmt, e.stmt, op.loc);
    for (const Result* r : {&t, &e}) {
      Append(out.head, r->head);
      Append(out.tail, r->tail);
      if (!r->synced) {
        Append(out.head, r->tail);
        Append(out.tail, r->head);
      }
    }
    out.synced = t.synced && e.synced && op.else_case.defined();
    return out;
  }

  Result ScanLoop(const ir::ForNode& f) {
    Result r = Scan(f.body);
    Accesses next_head;
    ir::Expr step = ir::Expr(f.var) + 1;
    for (const Access& a : r.head) {
      Access s = a;
      if (s.first.defined())
        s.first = Substitute(s.first, {{f.var.get(), step}});
      next_head.push_back(s);
    }
    const Accesses& carried = r.tail;  // without a sync: everything
    bool at_least_once = false, at_most_once = false;
    if (auto n = ir::AsConstInt(f.extent)) {
      at_least_once = *n >= 1;
      at_most_once = *n <= 1;  // no back edge (a row's one column chunk)
    }
    ir::Stmt body = r.stmt;
    Result out;
    if (!at_most_once && Conflicts(carried, next_head)) {
      if (divergent_depth_ > 0) Reject(f.body);
      body = ir::Seq({Sync(), body});
      out.head = {};
      out.tail = r.synced ? r.tail : r.head;
      if (!r.synced) Append(out.tail, r.tail);
      out.synced = at_least_once;
      if (!at_least_once) {
        // A zero-trip loop syncs nothing: what comes before stays pending.
        out.head = r.head;
      }
    } else {
      out.head = r.head;
      out.tail = r.tail;
      if (!r.synced) Append(out.tail, r.head);
      out.synced = r.synced && at_least_once;
    }
    out.stmt =
        ir::MakeStmt<ir::ForNode>(f.var, f.min, f.extent, f.for_kind,
                                  f.num_stages, f.order, f.stage, body, f.loc);
    return out;
  }

  // A row reduce across warps (LeavesScratchOpen) writes its scratch slot,
  // syncs and reads the slot back: a barrier inside, and the reads still
  // pending after it, so that the slot's next writer (a later reduce, or
  // this one in the next iteration) gets a barrier before it here.
  Result ScanOpenReduce(const ir::Stmt& s, const ir::ReduceNode& r) {
    Accesses a = Leaf(s);
    Result out{s, a, a, true};
    const ir::BufferNode* scratch = state_.smem.ScratchOf(&r).get();
    out.head.push_back({scratch, true, false, {}});
    out.tail.push_back({scratch, false, false, {}});
    return out;
  }

  // The consumers run their statements as a block of their own (their
  // barriers become a named barrier over them); the producer's one thread
  // only issues TMA copies, ordered by the mbarrier ring, so it stays a
  // leaf of the block around.
  Result ScanSpecialized(const ir::WarpSpecializeNode& op) {
    Result c = Scan(op.consumer);
    Accesses producer = Leaf(op.producer);
    Result out{ir::MakeStmt<ir::WarpSpecializeNode>(
                   op.producer_threads, op.producer, c.stmt, op.loc,
                   op.consumer_groups, op.group),
               producer, producer, false};
    Append(out.head, c.head);
    Append(out.head, c.tail);
    Append(out.tail, c.head);
    Append(out.tail, c.tail);
    return out;
  }

  // A condition that reads per-thread state (locals, fragments) may differ
  // between threads.
  static bool ThreadDependent(const ir::Expr& cond) {
    struct F : ir::IRVisitor {
      bool found = false;
      void Visit(const ir::LoadNode* op) override {
        found |= op->buffer->scope != ir::Scope::kGlobal &&
                 op->buffer->scope != ir::Scope::kShared &&
                 op->buffer->scope != ir::Scope::kUniform;
        IRVisitor::Visit(op);
      }
      void Visit(const ir::CallNode* op) override {
        found |= IntrinsicOf(*op) == Intrinsic::kThreadIdx;
        IRVisitor::Visit(op);
      }
    } f;
    f.VisitExpr(cond);
    return f.found;
  }

  void Reject(const ir::Stmt& at) {
    if (!status.ok()) return;
    status = absl::FailedPreconditionError(absl::StrCat(
        state_.program.name, ": a barrier is needed at ",
        ir::FormatLoc(at->loc),
        " inside a branch whose condition differs between threads; move the ",
        "shared-memory accesses out of the branch"));
  }

  const LoweringState& state_;
  std::unordered_set<const ir::BufferNode*> async_;
  std::unordered_set<const ir::BufferNode*> full_barriers_;
  int divergent_depth_ = 0;
};

}  // namespace

absl::Status InsertBarriers(LoweringState& state) {
  if (state.config.disable_thread_sync) return absl::OkStatus();
  Planner planner(state);
  Planner::Result r = planner.Scan(state.program.body);
  if (!planner.status.ok()) return planner.status;
  state.program.body = r.stmt;
  return absl::OkStatus();
}

}  // namespace tessel::passes
