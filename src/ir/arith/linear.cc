#include "src/ir/arith/linear.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "src/ir/arith/equal.h"
#include "src/ir/arith/wrapping.h"
#include "src/ir/op.h"

namespace tessel::ir {
namespace {

// Linear form: sum of coeff * term + constant, terms compared structurally.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void AddTerm(const Expr& term, int64_t coeff) {
    for (auto& [t, c] : terms) {
      if (ExprDeepEqual(t, term)) {
        c = arith::WrappingAdd(c, coeff);
        return;
      }
    }
    terms.emplace_back(term, coeff);
  }
};

void Linearize(const Expr& e, int64_t scale, LinearForm& out, int depth = 0) {
  if (std::optional<int64_t> c = AsConstInt(e)) {
    out.constant =
        arith::WrappingAdd(out.constant, arith::WrappingMul(scale, *c));
    return;
  }
  const auto* bin = e.As<BinaryNode>();
  if (bin != nullptr && depth < 64) {
    if (bin->op == BinaryOp::kAdd) {
      Linearize(bin->a, scale, out, depth + 1);
      Linearize(bin->b, scale, out, depth + 1);
      return;
    }
    if (bin->op == BinaryOp::kSub) {
      Linearize(bin->a, scale, out, depth + 1);
      Linearize(bin->b, arith::WrappingSub(0, scale), out, depth + 1);
      return;
    }
    if (bin->op == BinaryOp::kMul) {
      if (std::optional<int64_t> c = AsConstInt(bin->b)) {
        Linearize(bin->a, arith::WrappingMul(scale, *c), out, depth + 1);
        return;
      }
      if (std::optional<int64_t> c = AsConstInt(bin->a)) {
        Linearize(bin->b, arith::WrappingMul(scale, *c), out, depth + 1);
        return;
      }
    }
  }
  if (const auto* un = e.As<UnaryNode>();
      un != nullptr && un->op == UnaryOp::kNeg) {
    Linearize(un->a, arith::WrappingSub(0, scale), out, depth + 1);
    return;
  }
  out.AddTerm(e, scale);
}

}  // namespace

std::optional<int64_t> ConstDifference(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined() || is_float(a.dtype()) ||
      is_float(b.dtype())) {
    return std::nullopt;
  }
  LinearForm form;
  Linearize(a, 1, form);
  Linearize(b, -1, form);
  for (const auto& [term, coeff] : form.terms) {
    if (coeff != 0) return std::nullopt;
  }
  return form.constant;
}

std::optional<Expr> OffsetIn(const Expr& e, const Expr& base,
                             const std::vector<const VarNode*>& vars) {
  if (!e.defined() || !base.defined() || is_float(e.dtype()) ||
      is_float(base.dtype())) {
    return std::nullopt;
  }
  LinearForm form;
  Linearize(e, 1, form);
  Linearize(base, -1, form);
  const DataType t = e.dtype();
  Expr offset;
  for (const auto& [term, coeff] : form.terms) {
    if (coeff == 0) continue;
    const auto* v = term.As<VarNode>();
    if (v == nullptr || std::find(vars.begin(), vars.end(), v) == vars.end()) {
      return std::nullopt;
    }
    Expr x = term.dtype() == t ? term : Cast(t, term);
    if (coeff != 1) x = x * IntImm(t, coeff);
    offset = offset.defined() ? offset + x : x;
  }
  if (!offset.defined()) return IntImm(t, form.constant);
  if (form.constant != 0) offset = offset + IntImm(t, form.constant);
  return offset;
}

}  // namespace tessel::ir
