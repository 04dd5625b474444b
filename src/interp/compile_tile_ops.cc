// Tile-op statements -> closures: copy, gemm, fill, reduce, cumsum,
// atomics, the mbarrier ops and print (tile_ops.h computes them).
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/compiler.h"
#include "src/interp/status_macros.h"
#include "src/ir/op.h"
#include "src/ir/tile_op_rules.h"

namespace tessel::interp {
namespace {

const char* ReduceOpName(ir::ReduceKind kind) {
  switch (kind) {
    case ir::ReduceKind::kSum:
      return "reduce_sum";
    case ir::ReduceKind::kMax:
      return "reduce_max";
    case ir::ReduceKind::kMin:
      return "reduce_min";
    case ir::ReduceKind::kAbsSum:
      return "reduce_abssum";
    case ir::ReduceKind::kAbsMax:
      return "reduce_absmax";
  }
  return "reduce";
}

const char* AtomicOpSiteName(ir::AtomicOp op) {
  switch (op) {
    case ir::AtomicOp::kAdd:
      return "atomic_add";
    case ir::AtomicOp::kMax:
      return "atomic_max";
    case ir::AtomicOp::kMin:
      return "atomic_min";
  }
  return "atomic";
}

// Mbarrier index check shared by the mbarrier ops; nullptr after a failure.
Mbarrier* BarrierAt(Frame& f, const Site& site, int slot, int64_t index,
                    bool need_init) {
  BufferInstance& b = f.buffers[slot];
  if (index < 0 || index >= b.size) {
    Fail(f, site, absl::StatusCode::kOutOfRange,
         absl::StrCat("mbarrier index ", index, " is out of bounds of ",
                      b.node->name, "[", b.size, "]"));
    return nullptr;
  }
  Mbarrier& m = b.barriers[index];
  if (need_init && !m.initialized) {
    Fail(f, site, absl::StatusCode::kFailedPrecondition,
         absl::StrCat(b.node->name, "[", index,
                      "] is used before mbarrier_init"));
    return nullptr;
  }
  return &m;
}

}  // namespace

absl::StatusOr<StmtFn> Compiler::Copy(const ir::CopyNode* op) {
  INTERP_ASSIGN_OR_RETURN(CompiledRegion src, Region(op->src));
  INTERP_ASSIGN_OR_RETURN(CompiledRegion dst, Region(op->dst));
  if (op->src.buffer->scope == ir::Scope::kGlobal) {
    globals_accessed_.insert(src.slot);
  }
  if (op->dst.buffer->scope == ir::Scope::kGlobal) {
    globals_accessed_.insert(dst.slot);
  }
  const Site site = site_;
  return StmtFn([site, src = std::move(src), dst = std::move(dst)](Frame& f) {
    Box s, d;
    if (!EvalBox(f, src, &s) || !EvalBox(f, dst, &d)) return;
    RunCopy(f, site, s, d);
  });
}

absl::StatusOr<StmtFn> Compiler::Gemm(const ir::GemmNode* op) {
  INTERP_ASSIGN_OR_RETURN(CompiledRegion a, Region(op->a));
  INTERP_ASSIGN_OR_RETURN(CompiledRegion b, Region(op->b));
  INTERP_ASSIGN_OR_RETURN(CompiledRegion c, Region(op->c));
  const Site site = site_;
  const bool ta = op->transpose_a, tb = op->transpose_b;
  const bool clear = op->clear_accum;
  return StmtFn([site, a = std::move(a), b = std::move(b), c = std::move(c), ta,
                 tb, clear](Frame& f) {
    Box ba, bb, bc;
    if (!EvalBox(f, a, &ba) || !EvalBox(f, b, &bb) || !EvalBox(f, c, &bc)) {
      return;
    }
    RunGemm(f, site, ba, bb, bc, ta, tb, clear);
  });
}

absl::StatusOr<StmtFn> Compiler::Fill(const ir::FillNode* op) {
  INTERP_ASSIGN_OR_RETURN(CompiledRegion dst, Region(op->dst));
  if (op->dst.buffer->scope == ir::Scope::kGlobal) {
    globals_accessed_.insert(dst.slot);
  }
  const Site site = site_;
  if (!is_float(op->dst.buffer->dtype) && !is_float(op->value.dtype())) {
    INTERP_ASSIGN_OR_RETURN(IntFn value, Int(op->value));
    return StmtFn(
        [site, dst = std::move(dst), value = std::move(value)](Frame& f) {
          const int64_t v = value(f);
          Box d;
          if (!EvalBox(f, dst, &d)) return;
          RunFill(f, site, d, static_cast<double>(v), v);
        });
  }
  INTERP_ASSIGN_OR_RETURN(FloatFn value, Double(op->value));
  const DataType t = op->dst.buffer->dtype;
  return StmtFn(
      [site, t, dst = std::move(dst), value = std::move(value)](Frame& f) {
        const double v = value(f);
        Box d;
        if (!EvalBox(f, dst, &d)) return;
        RunFill(f, site, d, v, is_float(t) ? 0 : FloatToInt(t, v));
      });
}

absl::StatusOr<StmtFn> Compiler::Reduce(const ir::ReduceNode* op) {
  site_.op = ReduceOpName(op->reduce_kind);
  INTERP_ASSIGN_OR_RETURN(const int src, BufferSlot(op->src));
  INTERP_ASSIGN_OR_RETURN(const int dst, BufferSlot(op->dst));
  if (op->src->scope == ir::Scope::kGlobal ||
      op->dst->scope == ir::Scope::kGlobal) {
    return Error(absl::StatusCode::kInvalidArgument,
                 "reduce works on shared, fragment or local buffers");
  }
  const int dim = op->dim < 0 ? op->dim + op->src->rank() : op->dim;
  const Site site = site_;
  const ir::ReduceKind kind = op->reduce_kind;
  const bool clear = op->clear;
  return StmtFn([site, src, dst, kind, dim, clear](Frame& f) {
    RunReduce(f, site, f.buffers[src], f.buffers[dst], kind, dim, clear);
  });
}

absl::StatusOr<StmtFn> Compiler::Cumsum(const ir::CumsumNode* op) {
  INTERP_ASSIGN_OR_RETURN(const int src, BufferSlot(op->src));
  INTERP_ASSIGN_OR_RETURN(const int dst, BufferSlot(op->dst));
  if (op->src->scope == ir::Scope::kGlobal ||
      op->dst->scope == ir::Scope::kGlobal) {
    return Error(absl::StatusCode::kInvalidArgument,
                 "cumsum works on shared, fragment or local buffers");
  }
  const int dim = op->dim < 0 ? op->dim + op->src->rank() : op->dim;
  const Site site = site_;
  const bool reverse = op->reverse;
  return StmtFn([site, src, dst, dim, reverse](Frame& f) {
    RunCumsum(f, site, f.buffers[src], f.buffers[dst], dim, reverse);
  });
}

absl::StatusOr<StmtFn> Compiler::Atomic(const ir::AtomicNode* op) {
  if (op->prev) return Ticket(op);
  site_.op = AtomicOpSiteName(op->op);
  const DataType t = op->dst.buffer->dtype;
  if (!ir::AtomicDtypeAllowed(op->op, t)) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("no atomic ", ir::AtomicOpName(op->op), " on ",
                              DtypeName(t), " ('", op->dst.buffer->name, "')"));
  }
  INTERP_ASSIGN_OR_RETURN(CompiledRegion dst, Region(op->dst));
  const bool global_dst = op->dst.buffer->scope == ir::Scope::kGlobal;
  if (global_dst) atomic_targets_.insert(dst.slot);
  const Site site = site_;
  const ir::AtomicOp kind = op->op;
  if (op->src.has_value()) {
    INTERP_ASSIGN_OR_RETURN(CompiledRegion src, Region(*op->src));
    if (op->src->buffer->scope == ir::Scope::kGlobal) {
      globals_accessed_.insert(src.slot);
    }
    return StmtFn(
        [site, kind, src = std::move(src), dst = std::move(dst)](Frame& f) {
          Box s, d;
          if (!EvalBox(f, src, &s) || !EvalBox(f, dst, &d)) return;
          RunAtomicTile(f, site, kind, d, s);
        });
  }
  if (!is_float(t) && !is_float(op->value.dtype())) {
    INTERP_ASSIGN_OR_RETURN(IntFn value, Int(op->value));
    return StmtFn(
        [site, kind, dst = std::move(dst), value = std::move(value)](Frame& f) {
          const int64_t v = value(f);
          Box d;
          if (!EvalBox(f, dst, &d)) return;
          RunAtomicElement(f, site, kind, d, static_cast<double>(v), v);
        });
  }
  INTERP_ASSIGN_OR_RETURN(FloatFn value, Double(op->value));
  return StmtFn([site, kind, t, dst = std::move(dst),
                 value = std::move(value)](Frame& f) {
    const double v = value(f);
    Box d;
    if (!EvalBox(f, dst, &d)) return;
    RunAtomicElement(f, site, kind, d, v, is_float(t) ? 0 : FloatToInt(t, v));
  });
}

absl::StatusOr<StmtFn> Compiler::Mbarrier(const ir::StmtNode* node) {
  if (parallel_depth_ > 0) {
    return Error(absl::StatusCode::kUnimplemented,
                 "mbarrier ops inside a Parallel loop (per-element arrivals) "
                 "are not supported");
  }
  const Site site = site_;
  if (const auto* op = node->As<ir::MbarrierInitNode>()) {
    INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->barriers));
    std::optional<int64_t> n = op->barriers->ConstNumElements();
    if (op->barriers->scope != ir::Scope::kBarrier || !n.has_value() ||
        *n != static_cast<int64_t>(op->arrive_counts.size())) {
      return Error(
          absl::StatusCode::kInvalidArgument,
          absl::StrCat("'", op->barriers->name, "' needs ", n.value_or(-1),
                       " arrive counts, got ", op->arrive_counts.size()));
    }
    std::vector<IntFn> counts;
    for (const ir::Expr& c : op->arrive_counts) {
      INTERP_ASSIGN_OR_RETURN(IntFn fn, Int(c));
      counts.push_back(std::move(fn));
    }
    return StmtFn([site, slot, counts = std::move(counts)](Frame& f) {
      BufferInstance& b = f.buffers[slot];
      for (size_t i = 0; i < counts.size(); ++i) {
        const int64_t c = counts[i](f);
        if (f.failed) return;
        if (c <= 0) {
          Fail(f, site, absl::StatusCode::kInvalidArgument,
               absl::StrCat(b.node->name, "[", i, "] expects ", c,
                            " arrivals per phase; it must be positive"));
          return;
        }
        b.barriers[i] = interp::Mbarrier{true, c, c, 0, 0};
      }
    });
  }
  if (const auto* op = node->As<ir::MbarrierArriveNode>()) {
    INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->barriers));
    INTERP_ASSIGN_OR_RETURN(IntFn index, Int(op->index));
    return StmtFn([site, slot, index = std::move(index)](Frame& f) {
      const int64_t i = index(f);
      if (f.failed) return;
      interp::Mbarrier* m = BarrierAt(f, site, slot, i, true);
      if (m == nullptr) return;
      // Every thread of the block executes a block-level arrive.
      ++m->arrivals;
      m->pending -= f.threads;
      if (m->pending <= 0) {
        const int64_t completed = -m->pending / m->expected + 1;
        m->phase += completed;
        m->pending += completed * m->expected;
      }
    });
  }
  if (const auto* op = node->As<ir::MbarrierExpectTxNode>()) {
    INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->barriers));
    INTERP_ASSIGN_OR_RETURN(IntFn index, Int(op->index));
    INTERP_ASSIGN_OR_RETURN(IntFn bytes, Int(op->bytes));
    // The interpreter's copies complete at once, so the transaction bytes
    // are always already there; only the operands are checked.
    return StmtFn([site, slot, index = std::move(index),
                   bytes = std::move(bytes)](Frame& f) {
      const int64_t i = index(f);
      const int64_t n = bytes(f);
      if (f.failed) return;
      if (BarrierAt(f, site, slot, i, true) == nullptr) return;
      if (n < 0) {
        Fail(f, site, absl::StatusCode::kInvalidArgument,
             absl::StrCat("negative transaction byte count ", n));
      }
    });
  }
  if (const auto* op = node->As<ir::MbarrierWaitParityNode>()) {
    INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->barriers));
    INTERP_ASSIGN_OR_RETURN(IntFn index, Int(op->index));
    INTERP_ASSIGN_OR_RETURN(IntFn parity, Int(op->parity));
    return StmtFn([site, slot, index = std::move(index),
                   parity = std::move(parity)](Frame& f) {
      const int64_t i = index(f);
      const int64_t p = parity(f);
      if (f.failed) return;
      interp::Mbarrier* m = BarrierAt(f, site, slot, i, true);
      if (m == nullptr) return;
      const std::string& name = f.buffers[slot].node->name;
      if (p != 0 && p != 1) {
        Fail(f, site, absl::StatusCode::kInvalidArgument,
             absl::StrCat("parity ", p, " for ", name, "[", i,
                          "]; a parity is 0 or 1"));
        return;
      }
      // The phase with parity p has completed iff the current phase's
      // parity differs (as mbarrier.try_wait.parity).
      if ((m->phase & 1) != p) return;
      Fail(f, site, absl::StatusCode::kFailedPrecondition,
           absl::StrCat("waits on ", name, "[", i, "] for parity ", p,
                        ", but its current phase ", m->phase, " (parity ", p,
                        ") still misses ", m->pending, " of ", m->expected,
                        " arrivals after ", m->arrivals, " arrive op(s) of ",
                        f.threads,
                        " threads each; the block runs in order and nothing "
                        "else arrives, so this wait can never complete"));
    });
  }
  return Error(absl::StatusCode::kInternal, "unknown mbarrier op");
}

absl::StatusOr<StmtFn> Compiler::Print(const ir::PrintNode* op) {
  prints_ = true;
  const std::string message = op->message;
  if (op->value.defined()) {
    const bool integer = !is_float(op->value.dtype());
    INTERP_ASSIGN_OR_RETURN(FloatFn value, Double(op->value));
    return StmtFn([message, integer, value = std::move(value)](Frame& f) {
      const double v = value(f);
      if (f.failed) return;
      std::ostream& out = f.print != nullptr ? *f.print : std::cout;
      out << "[block " << absl::StrJoin(f.block, ", ") << "] " << message
          << ": ";
      if (integer) {
        out << static_cast<int64_t>(v) << "\n";
      } else {
        out << v << "\n";
      }
    });
  }
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->buffer));
  if (op->buffer->scope == ir::Scope::kGlobal) globals_accessed_.insert(slot);
  return StmtFn([message, slot](Frame& f) {
    const BufferInstance& b = f.buffers[slot];
    std::ostream& out = f.print != nullptr ? *f.print : std::cout;
    out << "[block " << absl::StrJoin(f.block, ", ") << "] " << message << ": "
        << b.node->name << "[" << absl::StrJoin(b.shape, ", ") << "] =";
    for (int64_t i = 0; i < b.size; ++i) {
      if (b.node->scope == ir::Scope::kBarrier) break;
      // Element i in row-major order, at its place (a global may be a
      // strided view).
      int64_t at = 0;
      for (int64_t d = static_cast<int64_t>(b.shape.size()) - 1, rest = i;
           d >= 0; --d) {
        at += rest % b.shape[d] * b.strides[d];
        rest /= b.shape[d];
      }
      if (!b.Initialized(at)) {
        out << " ?";
      } else {
        out << " " << b.Get(at);
      }
    }
    out << "\n";
  });
}

}  // namespace tessel::interp
