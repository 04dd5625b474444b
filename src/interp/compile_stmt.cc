// Statements -> closures, and the program-level compile (slots for
// parameters, symbolic sizes and kernels).
#include <cmath>
#include <iostream>
#include <limits>
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

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

// Value of an expression for a store into dtype t: an int for integer
// dtypes, a double otherwise.
struct TypedValue {
  IntFn as_int;
  FloatFn as_float;
};

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

absl::StatusOr<CompiledRegion> Compiler::Region(const ir::Region& region) {
  CompiledRegion r;
  INTERP_ASSIGN_OR_RETURN(r.slot, BufferSlot(region.buffer));
  if (region.rank() != region.buffer->rank() ||
      region.extent.size() != region.start.size()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("region of '", region.buffer->name, "' has ",
                              region.rank(), " dimensions, the buffer ",
                              region.buffer->rank()));
  }
  for (size_t d = 0; d < region.start.size(); ++d) {
    INTERP_ASSIGN_OR_RETURN(IntFn s, Int(region.start[d]));
    INTERP_ASSIGN_OR_RETURN(IntFn e, Int(region.extent[d]));
    r.start.push_back(std::move(s));
    r.extent.push_back(std::move(e));
  }
  return r;
}

absl::Status Compiler::CompileProgram(const ir::Program& program) {
  exe_->name = program.name;
  exe_->program = program;
  site_ = Site{"program", {}};
  for (const ir::Var& dim : program.dims) {
    exe_->dim_slots.push_back(BindVar(dim));
  }
  for (const ir::Buffer& param : program.params) {
    if (param->scope != ir::Scope::kGlobal) {
      return Error(absl::StatusCode::kInvalidArgument,
                   absl::StrCat("parameter '", param->name, "' has scope ",
                                ir::ScopeName(param->scope),
                                "; parameters are global tensors"));
    }
    if (buffer_slots_.contains(param.get())) {
      return Error(absl::StatusCode::kInvalidArgument,
                   absl::StrCat("parameter '", param->name, "' appears twice"));
    }
    const int slot = static_cast<int>(exe_->buffers.size());
    BufferInstance b;
    b.node = param.get();
    b.dtype = param->dtype;
    b.is_int = !is_float(param->dtype);
    b.global = true;
    b.elem_bytes = dtype_bytes(param->dtype);
    exe_->buffers.push_back(std::move(b));
    buffer_slots_[param.get()] = slot;
    live_.insert(param.get());
    exe_->param_slots.push_back(slot);
    std::vector<IntFn> shape;
    std::vector<int> dim_var_slots;
    for (const ir::Expr& d : param->shape) {
      INTERP_ASSIGN_OR_RETURN(IntFn fn, Int(d));
      shape.push_back(std::move(fn));
      const auto* var = d.As<ir::VarNode>();
      dim_var_slots.push_back(var != nullptr ? var_slots_.at(var) : -1);
    }
    exe_->param_shapes.push_back(std::move(shape));
    exe_->param_dim_vars.push_back(std::move(dim_var_slots));
  }
  // The body: kernels, possibly inside sequences.
  std::vector<ir::Stmt> pending = {program.body};
  std::vector<ir::Stmt> kernels;
  while (!pending.empty()) {
    ir::Stmt s = pending.front();
    pending.erase(pending.begin());
    if (!s.defined()) continue;
    if (const auto* seq = s.As<ir::SeqNode>()) {
      pending.insert(pending.begin(), seq->stmts.begin(), seq->stmts.end());
      continue;
    }
    if (s.As<ir::KernelNode>() == nullptr) {
      site_ = Site{ir::StmtKindName(s->kind), s->loc};
      return Error(absl::StatusCode::kUnimplemented,
                   "statements outside a kernel are not supported");
    }
    kernels.push_back(s);
  }
  for (const ir::Stmt& s : kernels) {
    INTERP_RETURN_IF_ERROR(Kernel(s.As<ir::KernelNode>()).status());
  }
  bool conflict = false;
  for (int slot : atomic_targets_) conflict |= globals_accessed_.contains(slot);
  exe_->serial_only = prints_ || conflict;
  return absl::OkStatus();
}

absl::StatusOr<StmtFn> Compiler::Statement(const ir::Stmt& s) {
  if (!s.defined()) return StmtFn([](Frame&) {});
  const Site saved = site_;
  site_ = Site{ir::StmtKindName(s->kind), s->loc};
  absl::StatusOr<StmtFn> result;
  switch (s->kind) {
    case ir::StmtKind::kKernel:
      result =
          Error(absl::StatusCode::kInvalidArgument, "a kernel inside a kernel");
      break;
    case ir::StmtKind::kFor:
      result = For(s.As<ir::ForNode>());
      break;
    case ir::StmtKind::kIfThenElse: {
      const auto* op = s.As<ir::IfThenElseNode>();
      absl::StatusOr<IntFn> cond = Int(op->cond);
      absl::StatusOr<StmtFn> then_case = Statement(op->then_case);
      absl::StatusOr<StmtFn> else_case = Statement(op->else_case);
      if (!cond.ok()) {
        result = cond.status();
      } else if (!then_case.ok()) {
        result = then_case.status();
      } else if (!else_case.ok()) {
        result = else_case.status();
      } else {
        result = StmtFn([c = *std::move(cond), t = *std::move(then_case),
                         e = *std::move(else_case)](Frame& f) {
          const int64_t v = c(f);
          if (f.failed) return;
          if (v) {
            t(f);
          } else {
            e(f);
          }
        });
      }
      break;
    }
    case ir::StmtKind::kStore:
      result = Store(s.As<ir::StoreNode>());
      break;
    case ir::StmtKind::kSeq: {
      std::vector<StmtFn> stmts;
      for (const ir::Stmt& child : s.As<ir::SeqNode>()->stmts) {
        absl::StatusOr<StmtFn> fn = Statement(child);
        if (!fn.ok()) {
          site_ = saved;
          return fn.status();
        }
        stmts.push_back(*std::move(fn));
      }
      result = StmtFn([stmts = std::move(stmts)](Frame& f) {
        for (const StmtFn& fn : stmts) {
          fn(f);
          if (f.failed) return;
        }
      });
      break;
    }
    case ir::StmtKind::kAllocate:
      result = Allocate(s.As<ir::AllocateNode>());
      break;
    case ir::StmtKind::kCopy:
      result = Copy(s.As<ir::CopyNode>());
      break;
    case ir::StmtKind::kGemm:
      result = Gemm(s.As<ir::GemmNode>());
      break;
    case ir::StmtKind::kFill:
      result = Fill(s.As<ir::FillNode>());
      break;
    case ir::StmtKind::kReduce:
      result = Reduce(s.As<ir::ReduceNode>());
      break;
    case ir::StmtKind::kCumsum:
      result = Cumsum(s.As<ir::CumsumNode>());
      break;
    case ir::StmtKind::kAtomic:
      result = Atomic(s.As<ir::AtomicNode>());
      break;
    case ir::StmtKind::kSyncThreads:
    case ir::StmtKind::kAnnotateLayout:
    case ir::StmtKind::kUseSwizzle:
      // Sequential execution already orders everything; layouts and block
      // rasterization never change results.
      result = StmtFn([](Frame&) {});
      break;
    case ir::StmtKind::kMbarrierInit:
    case ir::StmtKind::kMbarrierArrive:
    case ir::StmtKind::kMbarrierExpectTx:
    case ir::StmtKind::kMbarrierWaitParity:
      result = Mbarrier(s.get());
      break;
    case ir::StmtKind::kPrint:
      result = Print(s.As<ir::PrintNode>());
      break;
    case ir::StmtKind::kWarpSpecialize:  // scheduler-made, never recorded
      result = absl::UnimplementedError(
          "the interpreter runs tile programs as recorded, not scheduled");
      break;
    case ir::StmtKind::kEvaluate: {
      absl::StatusOr<FloatFn> value = Double(s.As<ir::EvaluateNode>()->value);
      if (!value.ok()) {
        result = value.status();
      } else {
        result = StmtFn([v = *std::move(value)](Frame& f) { v(f); });
      }
      break;
    }
  }
  site_ = saved;
  return result;
}

absl::StatusOr<StmtFn> Compiler::Kernel(const ir::KernelNode* op) {
  site_ = Site{"kernel", op->loc};
  if (op->grid.empty() || op->grid.size() > 3 ||
      op->block_vars.size() != op->grid.size()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("a kernel needs 1-3 grid dimensions and one "
                              "block variable each; got ",
                              op->grid.size(), " and ", op->block_vars.size()));
  }
  if (op->threads <= 0) {
    return Error(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat("threads per block must be positive, got ", op->threads));
  }
  CompiledKernel k;
  k.site = site_;
  k.threads = op->threads;
  for (const ir::Expr& g : op->grid) {
    INTERP_ASSIGN_OR_RETURN(IntFn fn, Int(g));
    k.grid.push_back(std::move(fn));
  }
  for (const ir::Var& v : op->block_vars) {
    k.block_var_slots.push_back(BindVar(v));
  }
  in_kernel_ = true;
  INTERP_ASSIGN_OR_RETURN(k.body, Statement(op->body));
  in_kernel_ = false;
  for (const ir::Var& v : op->block_vars) var_slots_.erase(v.get());
  exe_->kernels.push_back(std::move(k));
  return StmtFn([](Frame&) {});
}

absl::StatusOr<StmtFn> Compiler::For(const ir::ForNode* op) {
  INTERP_ASSIGN_OR_RETURN(IntFn min, Int(op->min));
  INTERP_ASSIGN_OR_RETURN(IntFn extent, Int(op->extent));
  if (var_slots_.contains(op->var.get())) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("loop variable '", op->var.name(),
                              "' is already bound by an enclosing scope"));
  }
  const int slot = BindVar(op->var);
  const bool parallel = op->for_kind == ir::ForKind::kParallel;
  parallel_depth_ += parallel;
  absl::StatusOr<StmtFn> body = Statement(op->body);
  parallel_depth_ -= parallel;
  var_slots_.erase(op->var.get());
  if (!body.ok()) return body.status();
  // Every kind runs in order: Pipelined loops have sequential semantics and
  // Parallel iterations are independent.
  return StmtFn([slot, min = std::move(min), extent = std::move(extent),
                 body = *std::move(body)](Frame& f) {
    const int64_t lo = min(f);
    const int64_t n = extent(f);
    for (int64_t i = 0; i < n && !f.failed; ++i) {
      f.vars[slot] = lo + i;
      body(f);
    }
  });
}

absl::StatusOr<StmtFn> Compiler::Store(const ir::StoreNode* op) {
  INTERP_ASSIGN_OR_RETURN(IntFn flat,
                          FlatIndex(op->buffer, op->indices, false));
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->buffer));
  if (op->buffer->scope == ir::Scope::kGlobal) globals_accessed_.insert(slot);
  if (!is_float(op->buffer->dtype) && !is_float(op->value.dtype())) {
    INTERP_ASSIGN_OR_RETURN(IntFn value, Int(op->value));
    return StmtFn(
        [slot, flat = std::move(flat), value = std::move(value)](Frame& f) {
          const int64_t v = value(f);
          const int64_t i = flat(f);
          if (f.failed) return;
          f.buffers[slot].SetInt(i, v);
        });
  }
  INTERP_ASSIGN_OR_RETURN(FloatFn value, Double(op->value));
  return StmtFn(
      [slot, flat = std::move(flat), value = std::move(value)](Frame& f) {
        const double v = value(f);
        const int64_t i = flat(f);
        if (f.failed) return;
        f.buffers[slot].Set(i, v);
      });
}

absl::StatusOr<StmtFn> Compiler::Allocate(const ir::AllocateNode* op) {
  const ir::Buffer& buffer = op->buffer;
  if (buffer->scope == ir::Scope::kGlobal) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("'", buffer->name,
                              "': global tensors are parameters, not "
                              "allocations"));
  }
  if (!in_kernel_) {
    return Error(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat("'", buffer->name, "' allocated outside a kernel"));
  }
  if (live_.contains(buffer.get())) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("'", buffer->name,
                              "' is allocated again inside its own scope"));
  }
  std::vector<int64_t> shape;
  for (const ir::Expr& d : buffer->shape) {
    std::optional<int64_t> v = ir::AsConstInt(d);
    if (!v.has_value() || *v < 0) {
      return Error(
          absl::StatusCode::kInvalidArgument,
          absl::StrCat("'", buffer->name, "' (", ir::ScopeName(buffer->scope),
                       ") needs a constant non-negative shape"));
    }
    shape.push_back(*v);
  }
  // Each element costs the interpreter 9 bytes (a double and a flag): a tile
  // far larger than any target takes (thread_memory.h, the shared memory
  // limits) is a mistake to report, not gigabytes to allocate per block.
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(elements, d, &elements)) {
      elements = std::numeric_limits<int64_t>::max();
      break;
    }
  }
  if (elements > kMaxTileElements) {
    return Error(
        absl::StatusCode::kResourceExhausted,
        absl::StrCat("'", buffer->name, "' (", ir::ScopeName(buffer->scope),
                     ") holds ", elements, " elements; the interpreter takes ",
                     "tiles of up to ", kMaxTileElements,
                     " elements (a GPU block far fewer)"));
  }
  int slot;
  auto it = buffer_slots_.find(buffer.get());
  if (it != buffer_slots_.end()) {
    slot = it->second;  // the same allocation reached again (sibling scope)
  } else {
    slot = static_cast<int>(exe_->buffers.size());
    BufferInstance b;
    b.node = buffer.get();
    b.dtype = buffer->dtype;
    b.is_int = !is_float(buffer->dtype);
    b.global = false;
    b.shape = shape;
    b.strides = RowMajorStrides(shape);
    b.size = 1;
    for (int64_t d : shape) b.size *= d;
    exe_->buffers.push_back(std::move(b));
    buffer_slots_[buffer.get()] = slot;
  }
  live_.insert(buffer.get());
  absl::StatusOr<StmtFn> body = Statement(op->body);
  live_.erase(buffer.get());
  if (!body.ok()) return body.status();
  const bool barrier = buffer->scope == ir::Scope::kBarrier;
  return StmtFn([slot, barrier, body = *std::move(body)](Frame& f) {
    // Fresh and uninitialised every time the allocation is reached.
    BufferInstance& b = f.buffers[slot];
    if (barrier) {
      b.barriers.assign(b.size, interp::Mbarrier{});
    } else {
      b.values.assign(b.size, std::numeric_limits<double>::quiet_NaN());
      b.init.assign(b.size, 0);
    }
    body(f);
  });
}

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
