#include "src/ir/verifier.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/arith/interval.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/tile_op_rules.h"
#include "src/ir/visitor.h"

namespace tessel::ir {
namespace {

using arith::Interval;

std::string ShapeText(const std::vector<Expr>& v) {
  std::vector<std::string> parts;
  for (const Expr& e : v) parts.push_back(ToString(e));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Describe(const Buffer& b) {
  return absl::StrCat(b->name, " (", ScopeName(b->scope), " ",
                      std::string(dtype_name(b->dtype)), " ",
                      ShapeText(b->shape), ")");
}

// Extents equal for sure (constants, or the same expression).
bool ProvablyEqual(const Expr& a, const Expr& b) {
  if (ExprDeepEqual(a, b)) return true;
  std::optional<int64_t> d = ConstDifference(a, b);
  return d && *d == 0;
}

bool AllowedGemmDtypes(DataType ab, DataType c) {
  switch (ab) {
    case DataType::kF16:
      return c == DataType::kF32 || c == DataType::kF16;
    case DataType::kBF16:
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
    case DataType::kF32:
      return c == DataType::kF32;
    case DataType::kF64:
      return c == DataType::kF64;
    case DataType::kI8:
    case DataType::kU8:
      return c == DataType::kI32;
    default:
      return false;
  }
}

bool IsTileScope(Scope s) {
  return s == Scope::kShared || s == Scope::kFragment || s == Scope::kLocal;
}

class Verifier : public IRVisitor {
 public:
  absl::Status Run(const Program& p) {
    for (const Var& v : p.dims) Bind(v, std::nullopt);
    for (const Buffer& b : p.params) {
      if (!b.defined())
        return absl::InvalidArgumentError("program has an undefined parameter");
      if (b->scope != Scope::kGlobal) {
        Fail(absl::StrCat("parameter ", Describe(b),
                          " must be a global tensor"));
      }
      live_buffers_[b.get()]++;
    }
    if (!p.body.defined()) Fail("the program has no body");
    VisitStmt(p.body);
    return status_;
  }

 private:
  // ------------------------------------------------------------ plumbing
  void Fail(const std::string& message) {
    if (!status_.ok()) return;
    status_ = absl::InvalidArgumentError(
        absl::StrCat(FormatLoc(loc_), ": ", op_, ": ", message));
  }

  void Bind(const Var& v, std::optional<Interval> range) {
    live_vars_[v.get()]++;
    if (range) ranges_.Set(v.get(), *range);
  }
  void Unbind(const Var& v) {
    if (--live_vars_[v.get()] == 0) {
      live_vars_.erase(v.get());
      ranges_.Erase(v.get());
    }
  }

  // ------------------------------------------------------------ checks
  bool CheckIndices(const Buffer& b, const std::vector<Expr>& idx,
                    std::string_view what) {
    if (static_cast<int>(idx.size()) != b->rank()) {
      Fail(absl::StrCat(std::string(what), " of ", Describe(b), " has ",
                        idx.size(), " indices for rank ", b->rank()));
      return false;
    }
    for (const Expr& e : idx) {
      if (!e.defined() || !is_int(e.dtype())) {
        Fail(absl::StrCat(std::string(what), " of ", Describe(b), ": index ",
                          e.defined() ? ToString(e) : "<undefined>",
                          " is not an integer"));
        return false;
      }
    }
    return true;
  }

  // Statically out of bounds: for non-global buffers any overrun; for global
  // ones a region that lies wholly outside the tensor.
  void CheckBounds(const Buffer& b, const std::vector<Expr>& start,
                   const std::vector<Expr>& extent, const std::string& text) {
    for (size_t d = 0; d < start.size() && d < b->shape.size(); ++d) {
      std::optional<int64_t> size = AsConstInt(b->shape[d]);
      std::optional<int64_t> ext = AsConstInt(extent[d]);
      std::optional<Interval> s = ranges_.Bounds(start[d]);
      if (!size || !ext || !s || !s->exact) continue;
      bool outside;
      if (b->scope == Scope::kGlobal) {
        outside = s->lo >= *size || s->hi + *ext <= 0;
      } else {
        outside = s->lo < 0 || s->hi + *ext > *size;
      }
      if (outside) {
        Fail(absl::StrCat(text, " is out of bounds of ", Describe(b),
                          " in dim ", d, ": start ", ToString(start[d]),
                          " ranges over [", s->lo, ", ", s->hi,
                          "] with extent ", *ext, ", dim size ", *size));
        return;
      }
    }
  }

  bool CheckRegion(const Region& r, std::string_view role) {
    if (!r.buffer.defined()) {
      Fail(absl::StrCat(std::string(role), " has no buffer"));
      return false;
    }
    std::string text = absl::StrCat(std::string(role), " ", ToString(r));
    if (r.start.size() != r.extent.size() || r.rank() != r.buffer->rank()) {
      Fail(absl::StrCat(text, " has rank ", r.rank(), " but ",
                        Describe(r.buffer), " has rank ", r.buffer->rank()));
      return false;
    }
    if (r.buffer->scope == Scope::kBarrier) {
      Fail(absl::StrCat(text, ": ", Describe(r.buffer),
                        " is an mbarrier array, not data"));
      return false;
    }
    for (size_t d = 0; d < r.extent.size(); ++d) {
      std::optional<int64_t> e = AsConstInt(r.extent[d]);
      if (e && *e <= 0) {
        Fail(absl::StrCat(text, " has extent ", *e, " in dim ", d));
        return false;
      }
    }
    if (!CheckIndices(r.buffer, r.start, role)) return false;
    CheckBounds(r.buffer, r.start, r.extent, text);
    return status_.ok();
  }

  bool SameExtents(const Region& a, const Region& b) {
    std::vector<Expr> x = a.SqueezedExtents(), y = b.SqueezedExtents();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!ProvablyEqual(x[i], y[i])) return false;
    }
    return true;
  }

  std::string RegionWithExtents(const Region& r) {
    return absl::StrCat(ToString(r), " (", ScopeName(r.buffer->scope), " ",
                        std::string(dtype_name(r.buffer->dtype)), ", extents ",
                        ShapeText(r.extent), ")");
  }

  bool NeedKernel() {
    if (kernel_depth_ == 0) {
      Fail(
          "outside a kernel: tile ops, loops and allocations belong inside "
          "T::Kernel");
      return false;
    }
    return true;
  }

  bool NotInParallel() {
    if (parallel_depth_ > 0) {
      Fail(
          "inside a T::Parallel loop; Parallel bodies hold element-wise "
          "statements only");
      return false;
    }
    return true;
  }

  // The last two extents of a gemm operand ([rows, cols]); leading ones must
  // be 1.
  std::optional<std::pair<Expr, Expr>> Matrix(const Region& r,
                                              const char* name) {
    if (r.rank() < 2) {
      Fail(absl::StrCat("operand ", name, " ", RegionWithExtents(r),
                        " is not 2-D"));
      return std::nullopt;
    }
    for (int d = 0; d + 2 < r.rank(); ++d) {
      if (!IsConstInt(r.extent[d], 1)) {
        Fail(absl::StrCat("operand ", name, " ", RegionWithExtents(r),
                          " has more than two non-unit dims"));
        return std::nullopt;
      }
    }
    return std::make_pair(r.extent[r.rank() - 2], r.extent[r.rank() - 1]);
  }

  // ------------------------------------------------------------ visits
 public:
  void VisitStmt(const Stmt& s) override {
    if (!s.defined() || !status_.ok()) return;
    SourceLoc saved_loc = loc_;
    std::string saved_op = op_;
    if (s->loc.line() != 0) loc_ = s->loc;
    op_ = OpName(s);
    IRVisitor::VisitStmt(s);
    loc_ = saved_loc;
    op_ = saved_op;
  }

  void VisitBuffer(const Buffer& b) override {
    if (!b.defined()) {
      Fail("use of an undefined buffer");
      return;
    }
    if (!live_buffers_.count(b.get())) {
      Fail(absl::StrCat(
          "buffer ", Describe(b),
          " is used outside its scope (its allocation's scope has ended, or it "
          "belongs to another program)"));
    }
  }

  void Visit(const VarNode* op) override {
    if (!live_vars_.count(op)) {
      Fail(absl::StrCat(
          "variable ", op->name,
          " is used outside its scope (the loop or kernel that defines it has "
          "ended, or it belongs to another program)"));
    }
  }

  void Visit(const LoadNode* op) override {
    IRVisitor::Visit(op);
    if (!status_.ok()) return;
    if (op->buffer->scope == Scope::kBarrier) {
      Fail(absl::StrCat("load from ", Describe(op->buffer),
                        ", an mbarrier array"));
      return;
    }
    if (!CheckIndices(op->buffer, op->indices, "load")) return;
    {
      // Global tensors too: an element wholly outside one (CheckBounds' rule
      // for global buffers) is read on no launch the shapes allow.
      std::vector<Expr> ones(op->indices.size(), IntImm(DataType::kI32, 1));
      CheckBounds(
          op->buffer, op->indices, ones,
          absl::StrCat("load ", op->buffer->name, "[",
                       absl::StrJoin(op->indices, ", ",
                                     [](std::string* out, const Expr& e) {
                                       out->append(ToString(e));
                                     }),
                       "]"));
    }
  }

  void Visit(const KernelNode* op) override {
    if (kernel_depth_ > 0) {
      Fail("a kernel nested inside another kernel");
      return;
    }
    if (op->grid.empty() || op->grid.size() > 3 ||
        op->grid.size() != op->block_vars.size()) {
      Fail(absl::StrCat(
          "a kernel has 1 to 3 grid dims with one block index each; got ",
          op->grid.size(), " dims and ", op->block_vars.size(), " indices"));
      return;
    }
    if (op->threads < 1 || op->threads > 1024) {
      Fail(absl::StrCat("threads = ", op->threads,
                        "; a block has 1 to 1024 threads"));
      return;
    }
    for (size_t d = 0; d < op->grid.size(); ++d) {
      const Expr& g = op->grid[d];
      VisitExpr(g);
      if (g.defined() && !is_int(g.dtype())) Fail("grid dims are integers");
      std::optional<int64_t> c = g.defined() ? AsConstInt(g) : std::nullopt;
      if (c && (*c < 1 || *c > kMaxGridDim[d])) {
        Fail(absl::StrCat("grid dimension ", d, " is ", *c,
                          "; it must be 1 to ", kMaxGridDim[d],
                          " (CUDA's grid limit)"));
        return;
      }
    }
    for (size_t d = 0; d < op->grid.size(); ++d) {
      std::optional<Interval> g = ranges_.Bounds(op->grid[d]);
      Bind(op->block_vars[d],
           g ? std::optional<Interval>(Interval{0, g->hi - 1, g->lo == g->hi})
             : std::nullopt);
    }
    ++kernel_depth_;
    VisitStmt(op->body);
    --kernel_depth_;
    for (const Var& v : op->block_vars) Unbind(v);
  }

  void Visit(const ForNode* op) override {
    if (!NeedKernel()) return;
    if (op->num_stages < 0 || op->num_stages > kMaxNumStages) {
      Fail(absl::StrCat(
          "num_stages = ", op->num_stages,
          op->num_stages < 0
              ? " is negative"
              : absl::StrCat("; tessel takes at most ", kMaxNumStages)));
      return;
    }
    if (!op->order.empty() && !op->stage.empty() &&
        op->order.size() != op->stage.size()) {
      Fail("order and stage lists differ in length");
      return;
    }
    VisitExpr(op->min);
    VisitExpr(op->extent);
    if (!op->min.defined() || !op->extent.defined() ||
        !is_int(op->min.dtype()) || !is_int(op->extent.dtype())) {
      Fail("loop bounds must be integer expressions");
      return;
    }
    std::optional<Interval> lo = ranges_.Bounds(op->min),
                            n = ranges_.Bounds(op->extent);
    std::optional<Interval> range;
    if (lo && n && n->lo == n->hi && lo->lo == lo->hi && n->lo > 0) {
      range = Interval{lo->lo, lo->lo + n->lo - 1, true};
    }
    bool parallel = op->for_kind == ForKind::kParallel;
    parallel_depth_ += parallel;
    Bind(op->var, range);
    VisitStmt(op->body);
    Unbind(op->var);
    parallel_depth_ -= parallel;
  }

  void Visit(const IfThenElseNode* op) override {
    if (!NeedKernel()) return;
    VisitExpr(op->cond);
    if (op->cond.defined() && op->cond.dtype() != DataType::kBool) {
      Fail(absl::StrCat("the condition ", ToString(op->cond), " is not bool"));
      return;
    }
    VisitStmt(op->then_case);
    VisitStmt(op->else_case);
  }

  void Visit(const StoreNode* op) override {
    if (!NeedKernel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok()) return;
    if (op->buffer->scope == Scope::kBarrier) {
      Fail(absl::StrCat("store to ", Describe(op->buffer),
                        ", an mbarrier array"));
      return;
    }
    if (!CheckIndices(op->buffer, op->indices, "store")) return;
    if (!op->value.defined() || op->value.dtype() != op->buffer->dtype) {
      Fail(absl::StrCat("stored value has dtype ",
                        op->value.defined()
                            ? std::string(dtype_name(op->value.dtype()))
                            : "none",
                        " but ", Describe(op->buffer), " holds ",
                        std::string(dtype_name(op->buffer->dtype))));
      return;
    }
    {
      // Global tensors too (wholly outside: written past the tensor).
      std::vector<Expr> ones(op->indices.size(), IntImm(DataType::kI32, 1));
      CheckBounds(op->buffer, op->indices, ones, "the stored element");
    }
  }

  void Visit(const AllocateNode* op) override {
    if (!NeedKernel()) return;
    const Buffer& b = op->buffer;
    if (!b.defined() || b->scope == Scope::kGlobal) {
      Fail("allocations are shared, fragment, local, var or barrier buffers");
      return;
    }
    for (const Expr& d : b->shape) {
      std::optional<int64_t> c = AsConstInt(d);
      if (!c || *c <= 0) {
        Fail(absl::StrCat(Describe(b), ": tile shapes are positive numbers"));
        return;
      }
    }
    live_buffers_[b.get()]++;
    VisitStmt(op->body);
    if (--live_buffers_[b.get()] == 0) live_buffers_.erase(b.get());
  }

  void Visit(const CopyNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok() || !CheckRegion(op->src, "src") ||
        !CheckRegion(op->dst, "dst"))
      return;
    if (op->src.buffer->scope == Scope::kVar ||
        op->dst.buffer->scope == Scope::kVar) {
      Fail("copy of a scalar variable; assign it instead");
      return;
    }
    if (!SameExtents(op->src, op->dst)) {
      Fail(absl::StrCat("shape mismatch: src ", RegionWithExtents(op->src),
                        " vs dst ", RegionWithExtents(op->dst),
                        " (extents must agree once unit dims are dropped)"));
    }
  }

  void Visit(const GemmNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok() || !CheckRegion(op->a, "A") || !CheckRegion(op->b, "B") ||
        !CheckRegion(op->c, "C")) {
      return;
    }
    const Buffer &a = op->a.buffer, &b = op->b.buffer, &c = op->c.buffer;
    if (c->scope != Scope::kFragment) {
      Fail(absl::StrCat("C = ", Describe(c),
                        " must be a fragment (T::alloc_fragment)"));
      return;
    }
    for (const Buffer* x : {&a, &b}) {
      if ((*x)->scope != Scope::kShared && (*x)->scope != Scope::kFragment) {
        Fail(absl::StrCat("operand ", Describe(*x),
                          " must be shared or fragment"));
        return;
      }
    }
    if (a->dtype != b->dtype) {
      Fail(absl::StrCat("A = ", Describe(a), " and B = ", Describe(b),
                        " differ in dtype"));
      return;
    }
    if (!AllowedGemmDtypes(a->dtype, c->dtype)) {
      Fail(absl::StrCat("unsupported dtypes: A, B ",
                        std::string(dtype_name(a->dtype)),
                        " with C = ", Describe(c),
                        " (f16 -> f16/f32; bf16, fp8, f32 -> f32; f64 -> f64; "
                        "i8/u8 -> i32)"));
      return;
    }
    auto ma = Matrix(op->a, "A"), mb = Matrix(op->b, "B"),
         mc = Matrix(op->c, "C");
    if (!ma || !mb || !mc) return;
    Expr m = op->transpose_a ? ma->second : ma->first;
    Expr ka = op->transpose_a ? ma->first : ma->second;
    Expr kb = op->transpose_b ? mb->second : mb->first;
    Expr n = op->transpose_b ? mb->first : mb->second;
    if (!ProvablyEqual(ka, kb) || !ProvablyEqual(m, mc->first) ||
        !ProvablyEqual(n, mc->second)) {
      Fail(absl::StrCat("shape mismatch: A ", RegionWithExtents(op->a),
                        op->transpose_a ? " transposed" : "", ", B ",
                        RegionWithExtents(op->b),
                        op->transpose_b ? " transposed" : "", ", C ",
                        RegionWithExtents(op->c),
                        "; need A [M, K], B [K, N], C [M, N] (M=", ToString(m),
                        ", K=", ToString(ka), " vs ", ToString(kb),
                        ", N=", ToString(n), ")"));
    }
  }

  void Visit(const FillNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok() || !CheckRegion(op->dst, "dst")) return;
    if (!op->value.defined() || op->value.dtype() != op->dst.buffer->dtype) {
      Fail(absl::StrCat("fill value dtype differs from ",
                        Describe(op->dst.buffer)));
    }
  }

  void Visit(const ReduceNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok()) return;
    const Buffer &src = op->src, &dst = op->dst;
    if (!IsTileScope(src->scope) || !IsTileScope(dst->scope)) {
      Fail(absl::StrCat("src ", Describe(src), " and dst ", Describe(dst),
                        " must be fragment, shared or local tiles"));
      return;
    }
    if (op->dim < 0 || op->dim >= src->rank()) {
      Fail(absl::StrCat("dim ", op->dim, " is out of range for src ",
                        Describe(src), " of rank ", src->rank()));
      return;
    }
    std::vector<Expr> want;
    for (int d = 0; d < src->rank(); ++d) {
      if (d != op->dim) want.push_back(src->shape[d]);
    }
    if (want.empty()) want.push_back(IntImm(DataType::kI32, 1));
    bool ok = want.size() == dst->shape.size();
    for (size_t d = 0; ok && d < want.size(); ++d)
      ok = ProvablyEqual(want[d], dst->shape[d]);
    if (!ok) {
      Fail(absl::StrCat("dst ", Describe(dst), " must have shape ",
                        ShapeText(want), " (src ", Describe(src),
                        " without dim ", op->dim, ")"));
    }
  }

  void Visit(const CumsumNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok()) return;
    if (!IsTileScope(op->src->scope) || !IsTileScope(op->dst->scope)) {
      Fail(absl::StrCat("src ", Describe(op->src), " and dst ",
                        Describe(op->dst),
                        " must be fragment, shared or local tiles"));
      return;
    }
    if (op->dim < 0 || op->dim >= op->src->rank()) {
      Fail(absl::StrCat("dim ", op->dim, " is out of range for ",
                        Describe(op->src)));
      return;
    }
    bool ok = op->src->rank() == op->dst->rank();
    for (int d = 0; ok && d < op->src->rank(); ++d) {
      ok = ProvablyEqual(op->src->shape[d], op->dst->shape[d]);
    }
    if (!ok) {
      Fail(absl::StrCat("src ", Describe(op->src), " and dst ",
                        Describe(op->dst), " differ in shape"));
    }
  }

  void Visit(const AtomicNode* op) override {
    if (!NeedKernel()) return;
    if (op->src && !NotInParallel()) return;
    IRVisitor::Visit(op);
    if (!status_.ok() || !CheckRegion(op->dst, "dst")) return;
    const Buffer& dst = op->dst.buffer;
    if (dst->scope != Scope::kGlobal) {
      Fail(absl::StrCat(
          "dst ", Describe(dst),
          " is not a global tensor; atomics update global memory"));
      return;
    }
    if (!AtomicDtypeAllowed(op->op, dst->dtype)) {
      Fail(absl::StrCat("dtype ", std::string(dtype_name(dst->dtype)), " of ",
                        Describe(dst),
                        " is not supported (add: f16, bf16, f32, f64, i32, "
                        "u32, i64; max/min: "
                        "f32, i32, u32, i64)"));
      return;
    }
    if (op->src) {
      if (!CheckRegion(*op->src, "src")) return;
      if (op->src->buffer->scope == Scope::kGlobal ||
          op->src->buffer->scope == Scope::kVar) {
        Fail(absl::StrCat("src ", Describe(op->src->buffer),
                          " must be a shared, fragment or local tile"));
        return;
      }
      if (!SameExtents(op->dst, *op->src)) {
        Fail(absl::StrCat("shape mismatch: dst ", RegionWithExtents(op->dst),
                          " vs src ", RegionWithExtents(*op->src)));
      }
      return;
    }
    for (const Expr& e : op->dst.extent) {
      if (!IsConstInt(e, 1)) {
        Fail(absl::StrCat("the element form updates one element, but dst ",
                          ToString(op->dst), " spans more"));
        return;
      }
    }
    if (!op->value.defined() || op->value.dtype() != dst->dtype) {
      Fail(absl::StrCat("the value's dtype differs from ", Describe(dst)));
    }
  }

  void Visit(const SyncThreadsNode* op) override {
    if (NeedKernel()) NotInParallel();
  }

  void CheckBarrier(const Buffer& b, const Expr& index) {
    if (!b.defined() || b->scope != Scope::kBarrier) {
      Fail(absl::StrCat(b.defined() ? Describe(b) : "<undefined>",
                        " is not an mbarrier array (T::alloc_barrier)"));
      return;
    }
    if (!index.defined() || !is_int(index.dtype())) {
      Fail("the barrier index must be an integer");
      return;
    }
    CheckBounds(b, {index}, {IntImm(DataType::kI32, 1)},
                absl::StrCat("barrier ", b->name, "[", ToString(index), "]"));
  }

  void Visit(const MbarrierInitNode* op) override {
    if (!NeedKernel() || !NotInParallel()) return;
    IRVisitor::Visit(op);
    CheckBarrier(op->barriers, IntImm(DataType::kI32, 0));
    if (status_.ok() &&
        !IsConstInt(op->barriers->shape[0],
                    static_cast<int64_t>(op->arrive_counts.size()))) {
      Fail(absl::StrCat(Describe(op->barriers), " gets ",
                        op->arrive_counts.size(), " arrive counts"));
    }
    for (const Expr& e : op->arrive_counts) {
      if (!status_.ok()) return;
      std::optional<int64_t> c = e.defined() ? AsConstInt(e) : std::nullopt;
      if (!e.defined() || !is_int(e.dtype())) {
        Fail("arrive counts are integers");
      } else if (c && (*c < 1 || *c > kMaxMbarrierArriveCount)) {
        Fail(absl::StrCat("arrive count ", *c,
                          " is out of range; an mbarrier expects 1 to ",
                          kMaxMbarrierArriveCount, " arrivals"));
      }
    }
  }
  void Visit(const MbarrierArriveNode* op) override {
    if (!NeedKernel()) return;
    IRVisitor::Visit(op);
    if (status_.ok()) CheckBarrier(op->barriers, op->index);
  }
  void Visit(const MbarrierExpectTxNode* op) override {
    if (!NeedKernel()) return;
    IRVisitor::Visit(op);
    if (status_.ok()) CheckBarrier(op->barriers, op->index);
  }
  void Visit(const MbarrierWaitParityNode* op) override {
    if (!NeedKernel()) return;
    IRVisitor::Visit(op);
    if (status_.ok()) CheckBarrier(op->barriers, op->index);
  }

  void Visit(const AnnotateLayoutNode* op) override {
    if (!NeedKernel()) return;
    IRVisitor::Visit(op);
    if (status_.ok() && op->layout.kind == Layout::Kind::kSwizzled &&
        op->buffer->scope != Scope::kShared) {
      Fail(absl::StrCat("a swizzled layout is for shared tiles, not ",
                        Describe(op->buffer)));
    }
  }

  void Visit(const UseSwizzleNode* op) override {
    if (NeedKernel() && op->panel_size < 1) Fail("panel_size must be >= 1");
  }

  void Visit(const PrintNode* op) override {
    if (NeedKernel()) IRVisitor::Visit(op);
  }

  void Visit(const EvaluateNode* op) override {
    if (NeedKernel()) IRVisitor::Visit(op);
  }

 private:
  static std::string OpName(const Stmt& s) {
    if (const auto* a = s.As<AtomicNode>())
      return absl::StrCat("atomic_", AtomicOpName(a->op));
    if (const auto* r = s.As<ReduceNode>()) {
      return absl::StrCat("reduce_", ReduceKindName(r->reduce_kind));
    }
    if (const auto* st = s.As<StoreNode>()) {
      return absl::StrCat("store to ",
                          st->buffer.defined() ? st->buffer->name : "?");
    }
    if (const auto* f = s.As<ForNode>())
      return absl::StrCat("T::", ForKindName(f->for_kind));
    return StmtKindName(s->kind);
  }

  absl::Status status_;
  SourceLoc loc_;
  std::string op_ = "program";
  int kernel_depth_ = 0;
  int parallel_depth_ = 0;
  std::unordered_map<const VarNode*, int> live_vars_;
  arith::VarRanges ranges_;
  std::unordered_map<const BufferNode*, int> live_buffers_;
};

}  // namespace

absl::Status Verify(const Program& program) { return Verifier().Run(program); }

}  // namespace tessel::ir
