// Allocations, tile ops, synchronisation, annotations: each records one node
// (after checking what only the builder can check; the verifier does the rest).
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "src/dsl/region.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "tessel/builder.h"

namespace tessel {
namespace {

using dsl::Access;
using dsl::BuilderState;

// The current builder when op may record now, else null (error recorded).
BuilderState* Begin(const SourceLocation& loc, std::string_view op,
                    bool needs_kernel = true) {
  BuilderState* state = BuilderState::ForOp(loc, op);
  if (state == nullptr || !state->BeginOp(loc, op, needs_kernel))
    return nullptr;
  return state;
}

template <typename T>
bool Ok(BuilderState* state, const SourceLocation& loc, std::string_view op,
        const absl::StatusOr<T>& s) {
  if (s.ok()) return true;
  state->Error(loc, op, std::string(s.status().message()));
  return false;
}

ir::Buffer Allocate(Shape shape, DataType dtype, std::string name,
                    ir::Scope scope, std::string_view prefix,
                    std::string_view op, const SourceLocation& loc) {
  std::vector<ir::Expr> dims;
  for (const Expr& e : shape) dims.push_back(Access::ToIr(e));
  BuilderState* state = Begin(loc, op);
  if (state != nullptr) {
    if (dims.empty())
      state->Error(loc, op, "a tile needs at least one dimension");
    if (!dtype_valid(dtype)) {
      state->Error(loc, op, BuilderState::InvalidDtype(dtype));
      dtype = DataType::kF32;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      std::optional<int64_t> c =
          dims[d].defined() ? ir::AsConstInt(dims[d]) : std::nullopt;
      if (!c || *c <= 0 || dims[d].dtype() == DataType::kBool) {
        state->Error(loc, op,
                     absl::StrCat("dimension ", d, " is ",
                                  dims[d].defined() ? ir::ToString(dims[d])
                                                    : "undefined",
                                  "; tile shapes are positive numbers"));
        dims[d] = ir::IntImm(DataType::kI32, 1);
      } else if (*c > std::numeric_limits<int32_t>::max()) {
        state->Error(loc, op,
                     absl::StrCat("dimension ", d, " is ", *c,
                                  "; sizes are i32, at most ",
                                  std::numeric_limits<int32_t>::max()));
        dims[d] = ir::IntImm(DataType::kI32, 1);
      } else {
        dims[d] = ir::IntImm(DataType::kI32, *c);
      }
    }
    // Tiles are indexed in i32: their elements too must number under 2^31
    // (the dimensions alone may each pass and their product wrap).
    int64_t count = 1;
    for (const ir::Expr& d : dims) {
      const int64_t c = *ir::AsConstInt(d);
      if (count > std::numeric_limits<int32_t>::max() / c) {
        std::vector<std::string> extents;
        for (const ir::Expr& e : dims) extents.push_back(ir::ToString(e));
        state->Error(loc, op,
                     absl::StrCat("the tile [", absl::StrJoin(extents, ", "),
                                  "] has more than 2^31 - 1 elements"));
        dims.assign(dims.size(), ir::IntImm(DataType::kI32, 1));
        break;
      }
      count *= c;
    }
    name = state->BufferName(std::move(name), prefix);
  }
  ir::Buffer b = ir::MakeBuffer(name.empty() ? std::string(prefix) : name,
                                dtype, std::move(dims), scope);
  if (state != nullptr) state->AppendAlloc(b, loc);
  return b;
}

ir::Buffer AllocateBarriers(const std::vector<Expr>& counts, std::string name,
                            const SourceLocation& loc, const char* op) {
  std::vector<ir::Expr> arrive;
  for (const Expr& e : counts) arrive.push_back(Access::ToIr(e));
  BuilderState* state = Begin(loc, op);
  if (state != nullptr) {
    if (arrive.empty())
      state->Error(loc, op, "give one arrive count per barrier");
    for (ir::Expr& e : arrive) {
      if (!e.defined() || !is_int(e.dtype())) {
        state->Error(loc, op, "arrive counts are integers");
        e = ir::IntImm(DataType::kI32, 1);
      } else if (std::optional<int64_t> c = ir::AsConstInt(e);
                 c && (*c < 1 || *c > ir::kMaxMbarrierArriveCount)) {
        state->Error(loc, op,
                     absl::StrCat("arrive count ", *c,
                                  " is out of range; an "
                                  "mbarrier expects 1 to ",
                                  ir::kMaxMbarrierArriveCount, " arrivals"));
        e = ir::IntImm(DataType::kI32, 1);
      }
    }
    name = state->BufferName(std::move(name), "mbar");
  }
  ir::Buffer b = ir::MakeBuffer(
      name.empty() ? "mbar" : name, DataType::kI64,
      {ir::IntImm(DataType::kI32, static_cast<int64_t>(arrive.size()))},
      ir::Scope::kBarrier);
  if (state != nullptr) {
    state->AppendAlloc(b, loc);
    state->Append(ir::MakeStmt<ir::MbarrierInitNode>(b, arrive, loc));
  }
  return b;
}

// barrier(i) of an alloc_barrier buffer, as (buffer, index).
bool BarrierOf(BuilderState* state, const BufferRef& ref,
               const SourceLocation& loc, std::string_view op,
               ir::Buffer* buffer, ir::Expr* index) {
  *buffer = Access::ToIr(ref.buffer());
  if (!buffer->defined() || (*buffer)->scope != ir::Scope::kBarrier) {
    state->Error(loc, op,
                 absl::StrCat(buffer->defined() ? dsl::Describe(*buffer)
                                                : "an undefined buffer",
                              " is not an mbarrier array (T::alloc_barrier)"));
    return false;
  }
  absl::StatusOr<std::vector<ir::Expr>> idx = dsl::ElementIndices(ref);
  if (!Ok(state, loc, op, idx)) return false;
  *index = (*idx)[0];
  return true;
}

bool DefaultBarrier(BuilderState* state, const Expr& id,
                    const SourceLocation& loc, std::string_view op,
                    ir::Buffer* buffer, ir::Expr* index) {
  BuilderState::Frame* k = state->kernel_frame();
  if (k == nullptr || !k->default_barriers.defined()) {
    state->Error(loc, op,
                 "a barrier id needs T::create_list_of_mbarrier(...) first (or "
                 "pass bars[i] "
                 "of a T::alloc_barrier)");
    return false;
  }
  *buffer = k->default_barriers;
  *index = Access::ToIr(id);
  if (!index->defined() || !is_int((*index)->dtype)) {
    state->Error(loc, op, "the barrier id must be an integer expression");
    return false;
  }
  return true;
}

ir::Expr ValueOf(BuilderState* state, const Expr& value, DataType dtype,
                 const SourceLocation& loc, std::string_view op) {
  ir::Expr v = Access::ToIr(value);
  if (!v.defined()) {
    state->Error(loc, op, "the value is an undefined expression");
    return ir::Zero(dtype);
  }
  return ir::Cast(dtype, v);
}

void Reduce(const Buffer& src, const Buffer& dst, ReduceOptions o,
            ir::ReduceKind kind, const SourceLocation& loc) {
  std::string op = absl::StrCat("reduce_", ir::ReduceKindName(kind));
  BuilderState* state = Begin(loc, op);
  if (state == nullptr) return;
  if (!src.defined() || !dst.defined()) {
    state->Error(loc, op, "use of an undefined buffer");
    return;
  }
  int dim = o.dim;
  if (dim < 0 && dim + src.rank() >= 0)
    dim += src.rank();  // Python-style from the end
  state->Append(ir::MakeStmt<ir::ReduceNode>(
      Access::ToIr(src), Access::ToIr(dst), kind, dim, o.clear, loc));
}

void Atomic(ir::AtomicOp kind, const TileArg& dst, const AtomicValue& value,
            const SourceLocation& loc) {
  std::string op = absl::StrCat("atomic_", ir::AtomicOpName(kind));
  BuilderState* state = Begin(loc, op);
  if (state == nullptr) return;
  if (value.tile()) {
    auto regions = dsl::ResolvePair(dst, *value.tile());
    if (!Ok(state, loc, op, regions)) return;
    state->Append(ir::MakeStmt<ir::AtomicNode>(
        kind, regions->first, regions->second, ir::Expr(), loc));
    return;
  }
  if (dst.ref() == nullptr || !dst.ref()->is_element()) {
    state->Error(
        loc, op,
        "a scalar value needs an element destination like dst(i, j); a tile "
        "destination needs a tile value");
    return;
  }
  absl::StatusOr<std::vector<ir::Expr>> idx = dsl::ElementIndices(*dst.ref());
  if (!Ok(state, loc, op, idx)) return;
  ir::Buffer b = Access::ToIr(dst.buffer());
  std::vector<ir::Expr> ones(idx->size(), ir::IntImm(DataType::kI32, 1));
  state->Append(ir::MakeStmt<ir::AtomicNode>(
      kind, ir::Region{b, *idx, ones}, std::nullopt,
      ValueOf(state, value.value(), b->dtype, loc, op), loc));
}

}  // namespace

// ---------------------------------------------------------------- allocations

Buffer alloc_shared(Shape shape, DataType dtype, std::string name,
                    SourceLocation loc) {
  return Access::FromIr(Allocate(std::move(shape), dtype, std::move(name),
                                 ir::Scope::kShared, "shared", "alloc_shared",
                                 loc));
}
Buffer alloc_fragment(Shape shape, DataType dtype, std::string name,
                      SourceLocation loc) {
  return Access::FromIr(Allocate(std::move(shape), dtype, std::move(name),
                                 ir::Scope::kFragment, "frag", "alloc_fragment",
                                 loc));
}
Buffer alloc_local(Shape shape, DataType dtype, std::string name,
                   SourceLocation loc) {
  return Access::FromIr(Allocate(std::move(shape), dtype, std::move(name),
                                 ir::Scope::kLocal, "local", "alloc_local",
                                 loc));
}
ScalarVar alloc_var(DataType dtype, std::string name, SourceLocation loc) {
  Buffer b = Access::FromIr(Allocate({1}, dtype, std::move(name),
                                     ir::Scope::kVar, "var", "alloc_var", loc));
  return Access::MakeVar(Access::MakeRef(b, {Index(0, loc)}, loc));
}
ScalarVar alloc_uniform(DataType dtype, std::string name, SourceLocation loc) {
  Buffer b =
      Access::FromIr(Allocate({1}, dtype, std::move(name), ir::Scope::kUniform,
                              "uniform", "alloc_uniform", loc));
  return Access::MakeVar(Access::MakeRef(b, {Index(0, loc)}, loc));
}
Buffer alloc_barrier(std::vector<Expr> arrive_counts, std::string name,
                     SourceLocation loc) {
  return Access::FromIr(
      AllocateBarriers(arrive_counts, std::move(name), loc, "alloc_barrier"));
}
Buffer create_list_of_mbarrier(std::vector<Expr> arrive_counts,
                               SourceLocation loc) {
  ir::Buffer b = AllocateBarriers(arrive_counts, "mbarrier", loc,
                                  "create_list_of_mbarrier");
  if (BuilderState* state = BuilderState::Current()) {
    if (BuilderState::Frame* k = state->kernel_frame()) k->default_barriers = b;
  }
  return Access::FromIr(b);
}

// ---------------------------------------------------------------- tile ops

void copy(const TileArg& src, const TileArg& dst, SourceLocation loc) {
  BuilderState* state = Begin(loc, "copy");
  if (state == nullptr) return;
  auto regions = dsl::ResolvePair(src, dst);
  if (!Ok(state, loc, "copy", regions)) return;
  state->Append(
      ir::MakeStmt<ir::CopyNode>(regions->first, regions->second, loc));
}

void gemm(const TileArg& A, const TileArg& B, const TileArg& C, GemmOptions o,
          SourceLocation loc) {
  BuilderState* state = Begin(loc, "gemm");
  if (state == nullptr) return;
  auto a = dsl::ResolveWhole(A);
  auto b = dsl::ResolveWhole(B);
  auto c = dsl::ResolveWhole(C);
  if (!Ok(state, loc, "gemm", a) || !Ok(state, loc, "gemm", b) ||
      !Ok(state, loc, "gemm", c)) {
    return;
  }
  static constexpr ir::GemmWarpPolicy kPolicies[] = {
      ir::GemmWarpPolicy::kSquare, ir::GemmWarpPolicy::kFullRow,
      ir::GemmWarpPolicy::kFullCol};
  state->Append(ir::MakeStmt<ir::GemmNode>(
      *a, *b, *c, o.transpose_A, o.transpose_B, o.clear_accum,
      kPolicies[static_cast<int>(o.policy)], loc));
}

void fill(const TileArg& dst, const Expr& value, SourceLocation loc) {
  BuilderState* state = Begin(loc, "fill");
  if (state == nullptr) return;
  auto region = dsl::ResolveWhole(dst);
  if (!Ok(state, loc, "fill", region)) return;
  ir::Expr v = ValueOf(state, value, region->buffer->dtype, loc, "fill");
  state->Append(ir::MakeStmt<ir::FillNode>(*region, v, loc));
}

void clear(const TileArg& dst, SourceLocation loc) {
  BuilderState* state = Begin(loc, "clear");
  if (state == nullptr) return;
  auto region = dsl::ResolveWhole(dst);
  if (!Ok(state, loc, "clear", region)) return;
  state->Append(ir::MakeStmt<ir::FillNode>(
      *region, ir::Zero(region->buffer->dtype), loc));
}

void reduce_sum(const Buffer& s, const Buffer& d, ReduceOptions o,
                SourceLocation loc) {
  Reduce(s, d, o, ir::ReduceKind::kSum, loc);
}
void reduce_max(const Buffer& s, const Buffer& d, ReduceOptions o,
                SourceLocation loc) {
  Reduce(s, d, o, ir::ReduceKind::kMax, loc);
}
void reduce_min(const Buffer& s, const Buffer& d, ReduceOptions o,
                SourceLocation loc) {
  Reduce(s, d, o, ir::ReduceKind::kMin, loc);
}
void reduce_abssum(const Buffer& s, const Buffer& d, ReduceOptions o,
                   SourceLocation loc) {
  Reduce(s, d, o, ir::ReduceKind::kAbsSum, loc);
}
void reduce_absmax(const Buffer& s, const Buffer& d, ReduceOptions o,
                   SourceLocation loc) {
  Reduce(s, d, o, ir::ReduceKind::kAbsMax, loc);
}

void cumsum(const Buffer& src, const Buffer& dst, CumsumOptions o,
            SourceLocation loc) {
  BuilderState* state = Begin(loc, "cumsum");
  if (state == nullptr) return;
  if (!src.defined() || !dst.defined()) {
    state->Error(loc, "cumsum", "use of an undefined buffer");
    return;
  }
  int dim = o.dim;
  if (dim < 0 && dim + src.rank() >= 0) dim += src.rank();
  state->Append(ir::MakeStmt<ir::CumsumNode>(
      Access::ToIr(src), Access::ToIr(dst), dim, o.reverse, loc));
}
void cumsum(const Buffer& src_and_dst, CumsumOptions o, SourceLocation loc) {
  cumsum(src_and_dst, src_and_dst, o, loc);
}

void atomic_add(const TileArg& dst, const AtomicValue& v, SourceLocation loc) {
  Atomic(ir::AtomicOp::kAdd, dst, v, loc);
}
void atomic_max(const TileArg& dst, const AtomicValue& v, SourceLocation loc) {
  Atomic(ir::AtomicOp::kMax, dst, v, loc);
}
void atomic_min(const TileArg& dst, const AtomicValue& v, SourceLocation loc) {
  Atomic(ir::AtomicOp::kMin, dst, v, loc);
}

// ---------------------------------------------------------------- sync

void sync_threads(SourceLocation loc) {
  if (BuilderState* state = Begin(loc, "sync_threads")) {
    state->Append(ir::MakeStmt<ir::SyncThreadsNode>(loc));
  }
}

void mbarrier_arrive(const BufferRef& barrier, SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_arrive");
  ir::Buffer b;
  ir::Expr i;
  if (state && BarrierOf(state, barrier, loc, "mbarrier_arrive", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierArriveNode>(b, i, loc));
  }
}
void mbarrier_arrive(const Expr& id, SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_arrive");
  ir::Buffer b;
  ir::Expr i;
  if (state && DefaultBarrier(state, id, loc, "mbarrier_arrive", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierArriveNode>(b, i, loc));
  }
}
void mbarrier_expect_tx(const BufferRef& barrier, const Expr& bytes,
                        SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_expect_tx");
  ir::Buffer b;
  ir::Expr i;
  if (state && BarrierOf(state, barrier, loc, "mbarrier_expect_tx", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierExpectTxNode>(
        b, i, ValueOf(state, bytes, DataType::kI32, loc, "mbarrier_expect_tx"),
        loc));
  }
}
void mbarrier_expect_tx(const Expr& id, const Expr& bytes, SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_expect_tx");
  ir::Buffer b;
  ir::Expr i;
  if (state && DefaultBarrier(state, id, loc, "mbarrier_expect_tx", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierExpectTxNode>(
        b, i, ValueOf(state, bytes, DataType::kI32, loc, "mbarrier_expect_tx"),
        loc));
  }
}
void mbarrier_wait_parity(const BufferRef& barrier, const Expr& parity,
                          SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_wait_parity");
  ir::Buffer b;
  ir::Expr i;
  if (state && BarrierOf(state, barrier, loc, "mbarrier_wait_parity", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierWaitParityNode>(
        b, i,
        ValueOf(state, parity, DataType::kI32, loc, "mbarrier_wait_parity"),
        loc));
  }
}
void mbarrier_wait_parity(const Expr& id, const Expr& parity,
                          SourceLocation loc) {
  BuilderState* state = Begin(loc, "mbarrier_wait_parity");
  ir::Buffer b;
  ir::Expr i;
  if (state && DefaultBarrier(state, id, loc, "mbarrier_wait_parity", &b, &i)) {
    state->Append(ir::MakeStmt<ir::MbarrierWaitParityNode>(
        b, i,
        ValueOf(state, parity, DataType::kI32, loc, "mbarrier_wait_parity"),
        loc));
  }
}

// ---------------------------------------------------------------- annotations

void annotate_layout(const Buffer& buffer, LayoutSpec layout,
                     SourceLocation loc) {
  BuilderState* state = Begin(loc, "annotate_layout");
  if (state == nullptr) return;
  if (!buffer.defined()) {
    state->Error(loc, "annotate_layout", "use of an undefined buffer");
    return;
  }
  // The XOR swizzles the layout pass and codegen know (0 = let them pick).
  const int bytes = layout.swizzle_bytes;
  if (bytes != 0 && bytes != 32 && bytes != 64 && bytes != 128) {
    state->Error(loc, "annotate_layout",
                 absl::StrCat("swizzle_bytes = ", bytes,
                              " is not a swizzle: use 0 (chosen by the layout "
                              "pass), 32, 64 or 128"));
    return;
  }
  if (!layout.swizzled && bytes != 0) {
    state->Error(loc, "annotate_layout",
                 absl::StrCat("swizzle_bytes = ", bytes,
                              " on a row-major layout: use "
                              "make_swizzled_layout(buffer, ",
                              bytes, ")"));
    return;
  }
  ir::Layout l;
  l.kind = layout.swizzled ? ir::Layout::Kind::kSwizzled
                           : ir::Layout::Kind::kDefault;
  l.swizzle_bytes = layout.swizzle_bytes;
  state->Append(
      ir::MakeStmt<ir::AnnotateLayoutNode>(Access::ToIr(buffer), l, loc));
}

void annotate_layout(
    std::initializer_list<std::pair<Buffer, LayoutSpec>> layouts,
    SourceLocation loc) {
  for (const auto& [buffer, layout] : layouts)
    annotate_layout(buffer, layout, loc);
}

void use_swizzle(int panel_size, bool column_major, SourceLocation loc) {
  BuilderState* state = Begin(loc, "use_swizzle");
  if (state == nullptr) return;
  if (panel_size < 1) {
    state->Error(loc, "use_swizzle",
                 absl::StrCat("panel_size = ", panel_size, "; must be >= 1"));
    return;
  }
  state->Append(
      ir::MakeStmt<ir::UseSwizzleNode>(panel_size, column_major, loc));
}

void print(const Expr& value, std::string message, SourceLocation loc) {
  BuilderState* state = Begin(loc, "print");
  if (state == nullptr) return;
  ir::Expr v = Access::ToIr(value);
  if (!v.defined()) {
    state->Error(loc, "print", "the value is an undefined expression");
    return;
  }
  state->Append(
      ir::MakeStmt<ir::PrintNode>(std::move(message), v, ir::Buffer(), loc));
}

void print(const Buffer& buffer, std::string message, SourceLocation loc) {
  BuilderState* state = Begin(loc, "print");
  if (state == nullptr) return;
  if (!buffer.defined()) {
    state->Error(loc, "print", "use of an undefined buffer");
    return;
  }
  state->Append(ir::MakeStmt<ir::PrintNode>(std::move(message), ir::Expr(),
                                            Access::ToIr(buffer), loc));
}

}  // namespace tessel
