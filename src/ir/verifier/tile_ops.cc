// The tile ops: copy, gemm, fill, reduce, cumsum and atomics: regions,
// shapes, scopes and dtypes.
#include "src/ir/verifier/verifier_visitor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/tile_op_rules.h"

namespace tessel::ir {
namespace {

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

}  // namespace

void Verifier::Visit(const CopyNode* op) {
  if (!NeedKernel() || !NotInParallel()) return;
  IRVisitor::Visit(op);
  if (!status_.ok() || !CheckRegion(op->src, "src") ||
      !CheckRegion(op->dst, "dst"))
    return;
  if (IsScalarVar(op->src.buffer->scope) ||
      IsScalarVar(op->dst.buffer->scope)) {
    Fail("copy of a scalar variable; assign it instead");
    return;
  }
  if (!SameExtents(op->src, op->dst)) {
    Fail(absl::StrCat("shape mismatch: src ", RegionWithExtents(op->src),
                      " vs dst ", RegionWithExtents(op->dst),
                      " (extents must agree once unit dims are dropped)"));
  }
}

void Verifier::Visit(const GemmNode* op) {
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
    Fail(absl::StrCat(
        "shape mismatch: A ", RegionWithExtents(op->a),
        op->transpose_a ? " transposed" : "", ", B ", RegionWithExtents(op->b),
        op->transpose_b ? " transposed" : "", ", C ", RegionWithExtents(op->c),
        "; need A [M, K], B [K, N], C [M, N] (M=", ToString(m),
        ", K=", ToString(ka), " vs ", ToString(kb), ", N=", ToString(n), ")"));
  }
}

void Verifier::Visit(const FillNode* op) {
  if (!NeedKernel() || !NotInParallel()) return;
  IRVisitor::Visit(op);
  if (!status_.ok() || !CheckRegion(op->dst, "dst")) return;
  if (!op->value.defined() || op->value.dtype() != op->dst.buffer->dtype) {
    Fail(absl::StrCat("fill value dtype differs from ",
                      Describe(op->dst.buffer)));
  }
}

void Verifier::Visit(const ReduceNode* op) {
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
                      ShapeText(want), " (src ", Describe(src), " without dim ",
                      op->dim, ")"));
  }
}

void Verifier::Visit(const CumsumNode* op) {
  if (!NeedKernel() || !NotInParallel()) return;
  IRVisitor::Visit(op);
  if (!status_.ok()) return;
  if (!IsTileScope(op->src->scope) || !IsTileScope(op->dst->scope)) {
    Fail(absl::StrCat("src ", Describe(op->src), " and dst ", Describe(op->dst),
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
    Fail(absl::StrCat("src ", Describe(op->src), " and dst ", Describe(op->dst),
                      " differ in shape"));
  }
}

void Verifier::Visit(const AtomicNode* op) {
  if (!NeedKernel()) return;
  if (op->src && !NotInParallel()) return;
  IRVisitor::Visit(op);
  if (!status_.ok() || !CheckRegion(op->dst, "dst")) return;
  if (op->prev && !CheckTicket(*op)) return;
  const Buffer& dst = op->dst.buffer;
  if (dst->scope != Scope::kGlobal) {
    Fail(absl::StrCat("dst ", Describe(dst),
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
        IsScalarVar(op->src->buffer->scope)) {
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

}  // namespace tessel::ir
