// Statements -> closures, and the program-level compile (slots for
// parameters, symbolic sizes and kernels). The tile ops' statements are
// compile_tile_ops.cc's.
#include <bit>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/interp/compiler.h"
#include "src/interp/status_macros.h"
#include "src/ir/let.h"
#include "src/ir/op.h"

namespace tessel::interp {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
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
  exe_->serial_only = prints_ || conflict || exe_->takes_tickets;
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
      if (std::optional<ir::LetParts> let = ir::AsLet(s)) {
        result = Let(*let);
        break;
      }
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

// A let's slot holds an integer value, or a float one's double bits (the
// frame's variables are int64).
absl::StatusOr<StmtFn> Compiler::Let(const ir::LetParts& let) {
  if (var_slots_.contains(let.var)) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("variable '", let.var->name,
                              "' is already bound by an enclosing scope"));
  }
  const int slot = exe_->num_vars++;
  if (is_float(let.value.dtype())) {
    INTERP_ASSIGN_OR_RETURN(FloatFn v, Double(let.value));
    var_slots_[let.var] = slot;
    return StmtFn([slot, v = std::move(v)](Frame& f) {
      f.vars[slot] = std::bit_cast<int64_t>(v(f));
    });
  }
  INTERP_ASSIGN_OR_RETURN(IntFn v, Int(let.value));
  var_slots_[let.var] = slot;
  return StmtFn([slot, v = std::move(v)](Frame& f) { f.vars[slot] = v(f); });
}

absl::StatusOr<StmtFn> Compiler::Store(const ir::StoreNode* op) {
  INTERP_ASSIGN_OR_RETURN(IntFn flat,
                          FlatIndex(op->buffer, op->indices, Access::kStore));
  INTERP_ASSIGN_OR_RETURN(const int slot, BufferSlot(op->buffer));
  if (op->buffer->scope == ir::Scope::kGlobal) globals_accessed_.insert(slot);
  if (!is_float(op->buffer->dtype) && !is_float(op->value.dtype())) {
    INTERP_ASSIGN_OR_RETURN(IntFn value, Int(op->value));
    return StmtFn(
        [slot, flat = std::move(flat), value = std::move(value)](Frame& f) {
          const int64_t v = value(f);
          const int64_t i = flat(f);
          if (f.failed || i == kOutside) return;
          f.buffers[slot].SetInt(i, v);
        });
  }
  INTERP_ASSIGN_OR_RETURN(FloatFn value, Double(op->value));
  return StmtFn(
      [slot, flat = std::move(flat), value = std::move(value)](Frame& f) {
        const double v = value(f);
        const int64_t i = flat(f);
        if (f.failed || i == kOutside) return;
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

}  // namespace tessel::interp
