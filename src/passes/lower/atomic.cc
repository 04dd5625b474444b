// T.atomic_add / max / min: of one value, of a fragment, or of a shared tile
// (vectorized f32x4 / f32x2 / f16x2 where aligned; with
// PassConfig::bulk_reduce_atomics on sm_90a, an f32 tile's rows as bulk
// reductions).
#include "src/passes/lower/lowerer.h"

#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

Stmt Lowerer::LowerAtomic(const ir::AtomicNode& a) {
  if (a.prev) return LowerTicket(a);
  ir::Region dst = MutateRegion(a.dst);
  Intrinsic name = a.op == ir::AtomicOp::kAdd   ? Intrinsic::kAtomicAdd
                   : a.op == ir::AtomicOp::kMax ? Intrinsic::kAtomicMax
                                                : Intrinsic::kAtomicMin;
  DataType t = dst.buffer->dtype;
  if (!a.src) {
    Expr v = Cast(t, MutateExpr(a.value));
    Expr off = GlobalIndex(dst.buffer, dst.start);
    Stmt s = Intrin(name, {ir::Load(dst.buffer, {off}), v});
    // In a T.Parallel body, GuardParallelBody checked the element's bounds.
    if (in_parallel_) return s;
    return MakeIf(And(Expr(tx_) == 0, ElementInBounds(dst.buffer, dst.start)),
                  s);
  }
  ir::Region src = MutateRegion(*a.src);
  if (src.buffer->scope == ir::Scope::kFragment) {
    ir::Buffer local = Local(src.buffer);
    const FragmentLayout& l = Layout(src.buffer);
    return ForEachLocal(src.buffer, [&](const std::vector<Expr>& li,
                                        const std::vector<Expr>& logical) {
      std::vector<Expr> di = RegionIndices(dst, SqueezedIndex(src, logical));
      Stmt s =
          Intrin(name, {ir::Load(dst.buffer, {GlobalIndex(dst.buffer, di)}),
                        Cast(t, ir::Load(local, li))});
      return Guard(And(l.Leader(tx_), InBounds(dst.buffer, di)), s);
    });
  }
  if (Stmt bulk = BulkReduceRows(a, dst, src); bulk.defined()) return bulk;
  // Shared source: vectors of 4 f32 / 2 f16/bf16 where aligned.
  int vec = 1;
  if (a.op == ir::AtomicOp::kAdd && src.buffer->dtype == t) {
    int max_bytes = t == DataType::kF32                             ? 16
                    : (t == DataType::kF16 || t == DataType::kBF16) ? 4
                                                                    : 0;
    if (max_bytes > 0) vec = VectorWidth(dst, src, max_bytes);
  }
  return ForEachElement(src, vec, [&](const std::vector<Expr>& sq, int v) {
    std::vector<Expr> si = RegionIndices(src, sq);
    std::vector<Expr> di = RegionIndices(dst, sq);
    Expr pred = InBounds(dst.buffer, di);
    Expr doff = GlobalIndex(dst.buffer, di);
    if (v > 1) {
      std::vector<Expr> args{Expr(v), ir::Load(dst.buffer, {doff})};
      for (int u = 0; u < v; ++u) {
        std::vector<Expr> su = si;
        su.back() = su.back() + u;
        args.push_back(ir::Load(src.buffer, {SharedOffset(src.buffer, su)}));
      }
      return Guard(pred, Intrin(Intrinsic::kAtomicAddVec, args));
    }
    Expr val = Cast(t, ir::Load(src.buffer, {FlatOffset(src.buffer, si)}));
    return Guard(pred, Intrin(name, {ir::Load(dst.buffer, {doff}), val}));
  });
}

// A ticket (T::atomic_ticket): every thread's earlier writes are ordered
// before thread 0's acquire-release atomic by a barrier; thread 0 writes the
// old value into the shared slot, and the barrier planner put the barrier
// between that write and the threads' reads of the slot (insert_barriers.cc
// takes prev as written). A counter outside its tensor is not updated and
// its ticket reads 0 (the boundary rule).
//
//   __syncthreads();
//   if (tx == 0) tl::atomic_ticket(&slot[0], &counters[tile], 1);
Stmt Lowerer::LowerTicket(const ir::AtomicNode& a) {
  ir::Region dst = MutateRegion(a.dst);
  ir::Region prev = MutateRegion(*a.prev);
  Expr slot = Load(prev.buffer, prev.start);
  Expr counter = ir::Load(dst.buffer, {GlobalIndex(dst.buffer, dst.start)});
  Stmt take =
      Intrin(Intrinsic::kAtomicTicket,
             {slot, counter, Cast(DataType::kI32, MutateExpr(a.value))});
  if (Expr inside = ElementInBounds(dst.buffer, dst.start); inside.defined()) {
    take =
        MakeIf(inside, take,
               Store(prev.buffer, prev.start, ir::IntImm(DataType::kI32, 0)));
  }
  return ir::Seq({ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()),
                  MakeIf(Expr(tx_) == 0, take)});
}

// An f32 shared tile added into a global f32 region row by row, each row one
// cp.reduce.async.bulk from the TMA unit, one row per thread:
//
//   if (row in bounds) bulk_reduce_add(512, &dQ[row][0], &dq_shared[row][0]);
//   bulk_commit();
//
// The barrier planner takes the tile as read when the statement ends; the
// TMA reads it later, so an issuing thread waits (bulk_wait_read(0), a no-op
// with nothing pending) before every barrier and mbarrier arrival
// (fence_proxy_async.cc), before its next tile statement touching the tile
// (WaitsForBulkReads) and at the kernel's end: whoever writes the tile next
// is ordered after the reads, as after a synchronous atomic. The adds
// themselves finish in L2, ordered for later kernels by the launch
// boundary. Undefined where it does not apply: not asked for, not sm_90a,
// not an f32 add, rows not whole 16-byte lines in both memories, the
// columns not provably in bounds (the vector atomics drop those elements
// one by one), or a tile the TMA writes (its pipeline arrivals wait for
// nothing).
namespace {

// Whether the TMA writes shared tile b (a pipeline's stage).
bool TmaWritten(const Stmt& body, const ir::BufferNode* b) {
  bool found = false;
  ForEachStmt(body, [&](const Stmt& s) {
    const auto* c = s.As<ir::CopyNode>();
    found = found || (c && c->barrier.defined() && c->dst.buffer.get() == b);
  });
  return found;
}

}  // namespace

Stmt Lowerer::BulkReduceRows(const ir::AtomicNode& a, const ir::Region& dst,
                             const ir::Region& src) {
  if (!st_.config.bulk_reduce_atomics || st_.target.arch() != "sm_90a" ||
      a.op != ir::AtomicOp::kAdd || dst.buffer->dtype != DataType::kF32 ||
      src.buffer->dtype != DataType::kF32 ||
      dst.buffer->scope != ir::Scope::kGlobal ||
      src.buffer->layout.kind != ir::Layout::Kind::kDefault ||
      st_.strides.count(dst.buffer.get()) != 0 ||
      TmaWritten(st_.program.body, src.buffer.get())) {
    return Stmt();
  }
  auto ext = ConstSqueezedExtents(src);
  auto src_cols = ir::AsConstInt(src.buffer->shape.back());
  auto dst_cols = ir::AsConstInt(dst.buffer->shape.back());
  auto first_col = ir::AsConstInt(dst.start.back());
  if (!ext || ext->empty() || !src_cols || !dst_cols || !first_col ||
      VectorWidth(dst, src, 16) != 4 || *src_cols % 4 != 0 ||
      KnownDivisor(src.start.back()) % 4 != 0) {
    return Stmt();
  }
  const int64_t cols = ext->back();
  if (*first_col + cols > *dst_cols) return Stmt();
  const int bytes = static_cast<int>(cols * 4);
  Stmt rows = ForEachElement(
      src, static_cast<int>(cols), [&](const std::vector<Expr>& sq, int) {
        std::vector<Expr> si = RegionIndices(src, sq);
        std::vector<Expr> di = RegionIndices(dst, sq);
        return Guard(
            InBounds(dst.buffer, di),
            Intrin(Intrinsic::kBulkReduceAdd,
                   {Expr(bytes),
                    ir::Load(dst.buffer, {GlobalIndex(dst.buffer, di)}),
                    ir::Load(src.buffer, {FlatOffset(src.buffer, si)})}));
      });
  return ir::Seq({rows, Intrin(Intrinsic::kBulkCommit, {})});
}

// The tile statements that touch a bulk source: copies, gemms, fills,
// reductions, other atomics, stores and T.Parallel loops (the structure
// around them is walked through).
bool Lowerer::WaitsForBulkReads(const Stmt& s) {
  // Inside a T.Parallel body: the loop waited.
  if (!st_.config.bulk_reduce_atomics || in_parallel_ > 0) return false;
  if (!bulk_sources_) {
    bulk_sources_.emplace();
    ForEachStmt(st_.program.body, [&](const Stmt& x) {
      const auto* a = x.As<ir::AtomicNode>();
      if (a && a->src && a->src->buffer->scope == ir::Scope::kShared)
        bulk_sources_->insert(a->src->buffer.get());
    });
  }
  if (bulk_sources_->empty()) return false;
  switch (s->kind) {
    case ir::StmtKind::kCopy:
    case ir::StmtKind::kGemm:
    case ir::StmtKind::kFill:
    case ir::StmtKind::kReduce:
    case ir::StmtKind::kCumsum:
    case ir::StmtKind::kStore:
      break;
    case ir::StmtKind::kAtomic: {
      const auto* a = s.As<ir::AtomicNode>();
      if (a->src && bulk_sources_->count(a->src->buffer.get())) return false;
      break;
    }
    case ir::StmtKind::kFor:
      if (s.As<ir::ForNode>()->for_kind != ir::ForKind::kParallel) return false;
      break;
    default:
      return false;
  }
  for (const ir::BufferNode* b : *bulk_sources_) {
    if (UsesBuffer(s, b)) return true;
  }
  return false;
}

}  // namespace tessel::passes::lower
