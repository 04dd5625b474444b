// The verifier's walk (scopes of variables and buffers, the op in
// front of each error) and the checks the ops share: indices, regions,
// bounds, gemm operands' matrices, barrier elements.
#include "src/ir/verifier/verifier_visitor.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/tile_op_rules.h"
#include "src/ir/verifier.h"

namespace tessel::ir {

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

absl::Status Verifier::Run(const Program& p) {
  for (const Var& v : p.dims) Bind(v, std::nullopt);
  for (const Buffer& b : p.params) {
    if (!b.defined())
      return absl::InvalidArgumentError("program has an undefined parameter");
    if (b->scope != Scope::kGlobal) {
      Fail(absl::StrCat("parameter ", Describe(b), " must be a global tensor"));
    }
    live_buffers_[b.get()]++;
  }
  if (!p.body.defined()) Fail("the program has no body");
  VisitStmt(p.body);
  return status_;
}

void Verifier::Fail(const std::string& message) {
  if (!status_.ok()) return;
  status_ = absl::InvalidArgumentError(
      absl::StrCat(FormatLoc(loc_), ": ", op_, ": ", message));
}

void Verifier::Bind(const Var& v, std::optional<Interval> range) {
  live_vars_[v.get()]++;
  if (range) ranges_.Set(v.get(), *range);
}

void Verifier::Unbind(const Var& v) {
  if (--live_vars_[v.get()] == 0) {
    live_vars_.erase(v.get());
    ranges_.Erase(v.get());
  }
}

void Verifier::VisitStmt(const Stmt& s) {
  if (!s.defined() || !status_.ok()) return;
  SourceLoc saved_loc = loc_;
  std::string saved_op = op_;
  if (s->loc.line() != 0) loc_ = s->loc;
  op_ = OpName(s);
  IRVisitor::VisitStmt(s);
  loc_ = saved_loc;
  op_ = saved_op;
}

std::string Verifier::OpName(const Stmt& s) {
  if (const auto* a = s.As<AtomicNode>()) {
    return a->prev ? std::string("atomic_ticket")
                   : absl::StrCat("atomic_", AtomicOpName(a->op));
  }
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

bool Verifier::CheckIndices(const Buffer& b, const std::vector<Expr>& idx,
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
void Verifier::CheckBounds(const Buffer& b, const std::vector<Expr>& start,
                           const std::vector<Expr>& extent,
                           const std::string& text) {
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
      Fail(absl::StrCat(text, " is out of bounds of ", Describe(b), " in dim ",
                        d, ": start ", ToString(start[d]), " ranges over [",
                        s->lo, ", ", s->hi, "] with extent ", *ext,
                        ", dim size ", *size));
      return;
    }
  }
}

bool Verifier::CheckRegion(const Region& r, std::string_view role) {
  if (!r.buffer.defined()) {
    Fail(absl::StrCat(std::string(role), " has no buffer"));
    return false;
  }
  std::string text = absl::StrCat(std::string(role), " ", ToString(r));
  if (r.start.size() != r.extent.size() || r.rank() != r.buffer->rank()) {
    Fail(absl::StrCat(text, " has rank ", r.rank(), " but ", Describe(r.buffer),
                      " has rank ", r.buffer->rank()));
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

bool Verifier::SameExtents(const Region& a, const Region& b) {
  std::vector<Expr> x = a.SqueezedExtents(), y = b.SqueezedExtents();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!ProvablyEqual(x[i], y[i])) return false;
  }
  return true;
}

std::string Verifier::RegionWithExtents(const Region& r) {
  return absl::StrCat(ToString(r), " (", ScopeName(r.buffer->scope), " ",
                      std::string(dtype_name(r.buffer->dtype)), ", extents ",
                      ShapeText(r.extent), ")");
}

bool Verifier::NeedKernel() {
  if (kernel_depth_ == 0) {
    Fail(
        "outside a kernel: tile ops, loops and allocations belong inside "
        "T::Kernel");
    return false;
  }
  return true;
}

bool Verifier::NotInParallel() {
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
std::optional<std::pair<Expr, Expr>> Verifier::Matrix(const Region& r,
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

void Verifier::CheckBarrier(const Buffer& b, const Expr& index) {
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

absl::Status Verify(const Program& program) { return Verifier().Run(program); }

}  // namespace tessel::ir
