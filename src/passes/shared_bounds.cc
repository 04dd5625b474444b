#include "src/passes/shared_bounds.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/ir/arith/equal.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"

namespace tessel::passes {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

// [lo, hi], either end possibly unbounded (+-kInf), every value a multiple
// of step (0: the value is 0), so that an even column plus a 2-element
// store ends at the row's end, not past it.
struct Range {
  int64_t lo, hi;
  int64_t step = 1;
};

int64_t Clamp(__int128 v) {
  return v >= kInf ? kInf : v <= -kInf ? -kInf : static_cast<int64_t>(v);
}

int Bits(int64_t v) {  // bits of a value >= 0
  int b = 0;
  while (b < 62 && (int64_t{1} << b) <= v) ++b;
  return b;
}

int TrailingZeros(int64_t step) {  // of every multiple of step
  if (step == 0) return 62;
  int z = 0;
  while (z < 62 && (step >> z) % 2 == 0) ++z;
  return z;
}

int64_t StepMul(int64_t a, int64_t b) {
  const __int128 p = __int128(a) * b;
  return p >= (int64_t{1} << 40) ? 1 : static_cast<int64_t>(p);
}

// The ends moved onto multiples of the step.
Range Tight(Range r) {
  if (r.step > 1) {
    if (r.hi < kInf) r.hi = ir::FloorDiv(r.hi, r.step) * r.step;
    if (r.lo > -kInf) r.lo = -ir::FloorDiv(-r.lo, r.step) * r.step;
  }
  return r;
}

Range Const(int64_t c) { return Range{c, c, c < 0 ? -c : c}; }

std::optional<Range> Combine(ir::BinaryOp op, Range x, Range y) {
  using B = ir::BinaryOp;
  const bool const_y = y.lo == y.hi;
  const int64_t g = std::gcd(x.step, y.step);
  if (ir::IsComparison(op) || ir::IsLogical(op)) return Range{0, 1};
  switch (op) {
    case B::kAdd:
      return Tight(
          Range{Clamp(__int128(x.lo) + y.lo), Clamp(__int128(x.hi) + y.hi), g});
    case B::kSub:
      return Tight(
          Range{Clamp(__int128(x.lo) - y.hi), Clamp(__int128(x.hi) - y.lo), g});
    case B::kMul: {
      __int128 c[] = {__int128(x.lo) * y.lo, __int128(x.lo) * y.hi,
                      __int128(x.hi) * y.lo, __int128(x.hi) * y.hi};
      return Tight(Range{Clamp(*std::min_element(c, c + 4)),
                         Clamp(*std::max_element(c, c + 4)),
                         StepMul(x.step, y.step)});
    }
    case B::kDiv:
    case B::kCeilDiv: {
      if (!const_y || y.lo <= 0) return std::nullopt;
      const int64_t d = y.lo, up = op == B::kCeilDiv ? d - 1 : 0;
      auto div = [&](int64_t v) {
        if (v >= kInf || v <= -kInf) return v;
        return ir::FloorDiv(v + up, d);
      };
      return Range{div(x.lo), div(x.hi), x.step % d == 0 ? x.step / d : 1};
    }
    case B::kMod:
      if (!const_y || y.lo <= 0) return std::nullopt;
      if (x.lo >= 0 && x.hi < y.lo) return x;
      return Tight(Range{0, y.lo - 1, std::gcd(x.step, y.lo)});
    case B::kMin:
      return Tight(Range{std::min(x.lo, y.lo), std::min(x.hi, y.hi), g});
    case B::kMax:
      return Tight(Range{std::max(x.lo, y.lo), std::max(x.hi, y.hi), g});
    case B::kBitAnd: {
      const int64_t step =
          int64_t{1} << std::max(TrailingZeros(x.step), TrailingZeros(y.step));
      if (x.lo >= 0 && y.lo >= 0)
        return Tight(Range{0, std::min(x.hi, y.hi), step});
      if (y.lo >= 0) return Tight(Range{0, y.hi, step});
      if (x.lo >= 0) return Tight(Range{0, x.hi, step});
      return std::nullopt;
    }
    case B::kBitOr:
    case B::kBitXor: {
      // Above the bits of the smaller operand only the larger's bits.
      if (x.lo < 0 || y.lo < 0) return std::nullopt;
      const int64_t step =
          int64_t{1} << std::min(TrailingZeros(x.step), TrailingZeros(y.step));
      const int64_t big = std::max(x.hi, y.hi), small = std::min(x.hi, y.hi);
      if (big >= kInf) return Range{0, kInf, step};
      const int b = Bits(small);
      return Tight(Range{0, ((big >> b) << b) | ((int64_t{1} << b) - 1), step});
    }
    case B::kShr: {
      if (!const_y || y.lo < 0 || y.lo > 62 || x.lo < 0) return std::nullopt;
      const int z = std::max(TrailingZeros(x.step) - int(y.lo), 0);
      return Range{x.lo >> y.lo, x.hi >= kInf ? kInf : x.hi >> y.lo,
                   int64_t{1} << std::min(z, 40)};
    }
    case B::kShl:
      if (!const_y || y.lo < 0 || y.lo > 40) return std::nullopt;
      return Combine(B::kMul, x, Const(int64_t{1} << y.lo));
    default:
      return std::nullopt;
  }
}

class Checker : public ir::IRVisitor {
 public:
  explicit Checker(const LoweringState& st) : st_(st) {
    threads_ =
        st.threads * std::max(1, st.consumer_groups) + st.producer_threads;
  }

  SharedBoundsReport report;

  std::optional<Range> Of(const ir::Expr& e) const {
    if (!e.defined()) return std::nullopt;
    if (auto c = ir::AsConstInt(e)) return Const(*c);
    std::optional<Range> r = Derive(e);
    // What the enclosing branch conditions say about e itself.
    for (const auto& [fact, range] : facts_) {
      if (!SameExpr(fact, e)) continue;
      Range f = range;
      if (r) f = Range{std::max(f.lo, r->lo), std::min(f.hi, r->hi), r->step};
      r = Tight(f);
      if (r->lo > r->hi) unreachable_ = true;  // the branch never runs
    }
    return r;
  }

  // Equal, or equal but for the order of a sum's or product's operands
  // (the guards spell `v * 64 + tx / 2`, the index `tx / 2 + v * 64`).
  static bool SameExpr(const ir::Expr& a, const ir::Expr& b) {
    if (ir::ExprDeepEqual(a, b)) return true;
    const auto* x = a.As<ir::BinaryNode>();
    const auto* y = b.As<ir::BinaryNode>();
    return x != nullptr && y != nullptr && x->op == y->op &&
           (x->op == ir::BinaryOp::kAdd || x->op == ir::BinaryOp::kMul) &&
           ir::ExprDeepEqual(x->a, y->b) && ir::ExprDeepEqual(x->b, y->a);
  }

  // e's range from its operands.
  std::optional<Range> Derive(const ir::Expr& e) const {
    if (const auto* v = e.As<ir::VarNode>()) {
      auto it = ranges_.find(v);
      if (it != ranges_.end()) return it->second;
      // A let's value under the ranges here (the branch a use sits in may
      // narrow the thread index the let was computed from).
      auto let = lets_.find(v);
      if (let != lets_.end()) return Of(let->second);
      return std::nullopt;
    }
    if (const auto* c = e.As<ir::CastNode>()) {
      if (c->value.dtype() == DataType::kBool) return Range{0, 1};
      if (!is_int(c->value.dtype())) return std::nullopt;
      return Of(c->value);
    }
    if (const auto* s = e.As<ir::SelectNode>()) {
      auto t = Of(s->true_value), f = Of(s->false_value);
      if (!t || !f) return std::nullopt;
      return Range{std::min(t->lo, f->lo), std::max(t->hi, f->hi),
                   std::gcd(t->step, f->step)};
    }
    if (const auto* u = e.As<ir::UnaryNode>()) {
      if (u->op != ir::UnaryOp::kNeg) return std::nullopt;
      auto a = Of(u->a);
      if (!a) return std::nullopt;
      return Range{-a->hi, -a->lo, a->step};
    }
    if (const auto* c = e.As<ir::CallNode>()) {
      std::optional<Intrinsic> id = IntrinsicOf(*c);
      if (id == Intrinsic::kThreadIdx) return Range{0, threads_ - 1};
      if (id == Intrinsic::kWarpUniform) return Of(c->args[0]);
      return std::nullopt;
    }
    const auto* b = e.As<ir::BinaryNode>();
    if (b == nullptr) return std::nullopt;
    if (ir::IsComparison(b->op) || ir::IsLogical(b->op)) return Range{0, 1};
    auto x = Of(b->a), y = Of(b->b);
    if (!x || !y) return std::nullopt;
    return Combine(b->op, *x, *y);
  }

  void Visit(const ir::KernelNode* op) override {
    for (size_t i = 0; i < op->block_vars.size() && i < op->grid.size(); ++i) {
      auto g = Of(op->grid[i]);
      ranges_[op->block_vars[i].get()] =
          Range{0, g && g->hi < kInf ? g->hi - 1 : kInf};
    }
    IRVisitor::Visit(op);
  }

  void Visit(const ir::ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    // A trip count of unknown range (a length read from memory) leaves the
    // top open: `k % stages` is still bounded.
    auto lo = Of(op->min), n = Of(op->extent);
    if (lo) {
      const int64_t top = n ? Clamp(__int128(lo->hi) + n->hi - 1) : kInf;
      ranges_[op->var.get()] = Range{lo->lo, top};
    } else {
      ranges_.erase(op->var.get());
    }
    VisitStmt(op->body);
  }

  void Visit(const ir::IfThenElseNode* op) override {
    VisitExpr(op->cond);
    const auto saved = ranges_;
    const auto saved_facts = facts_;
    Refine(op->cond, true);
    VisitStmt(op->then_case);
    ranges_ = saved;
    facts_ = saved_facts;
    if (op->else_case.defined()) {
      Refine(op->cond, false);
      VisitStmt(op->else_case);
      ranges_ = saved;
      facts_ = saved_facts;
    }
  }

  void Visit(const ir::StoreNode* op) override {
    Access(*op->buffer.get(), op->indices, 0, op->loc);
    IRVisitor::Visit(op);
  }

  void Visit(const ir::LoadNode* op) override {
    auto w = widths_.find(op);
    Access(*op->buffer.get(), op->indices, w == widths_.end() ? 0 : w->second,
           ir::SourceLoc());
    IRVisitor::Visit(op);
  }

  void Visit(const ir::CallNode* op) override {
    std::optional<Intrinsic> id = IntrinsicOf(*op);
    if (id == Intrinsic::kLet) {
      VisitExpr(op->args[1]);
      if (const auto* v = op->args[0].As<ir::VarNode>()) {
        ranges_.erase(v);
        lets_[v] = op->args[1];
      }
      return;
    }
    if (id) MarkWidths(*id, *op);
    IRVisitor::Visit(op);
  }

 private:
  // The bytes an intrinsic moves at the shared element its argument names
  // (0: the element's own size).
  void MarkWidths(Intrinsic id, const ir::CallNode& c) {
    auto bytes = [&](int i) { return ir::AsConstInt(c.args[i]).value_or(0); };
    auto mark = [&](int i, int64_t w) {
      if (i >= static_cast<int>(c.args.size())) return;
      if (const ir::LoadNode* l = SharedLoadIn(c.args[i])) widths_[l] = w;
    };
    auto elem = [&](int i) -> int64_t {
      const ir::LoadNode* l = SharedLoadIn(c.args[i]);
      return l != nullptr ? dtype_bytes(l->buffer->dtype) : 0;
    };
    auto box = [&](int smem_arg) {
      const auto map = ir::AsConstInt(c.args[0]);
      if (!map || *map < 0 || *map >= int64_t(st_.tensor_maps.size())) return;
      int64_t n = elem(smem_arg);
      for (int64_t d : st_.tensor_maps[*map].box) n *= d;
      mark(smem_arg, n);
    };
    switch (id) {
      case Intrinsic::kCpAsync:
        mark(1, bytes(0));
        break;
      case Intrinsic::kLdmatrix:
        mark(3, 16);  // each lane names one 16-byte row
        break;
      case Intrinsic::kVecCopy:
        mark(1, bytes(0));
        mark(2, bytes(0));
        break;
      case Intrinsic::kVecZero:
        mark(1, bytes(0));
        break;
      case Intrinsic::kBulkReduceAdd:
        mark(1, bytes(0));
        mark(2, bytes(0));
        break;
      case Intrinsic::kLoadVec:
      case Intrinsic::kStoreVec:
      case Intrinsic::kAtomicAddVec:
        for (int i : {1, 2}) mark(i, bytes(0) * elem(i));
        break;
      case Intrinsic::kStorePair:
        mark(0, 2 * elem(0));
        break;
      case Intrinsic::kTmaLoad:
      case Intrinsic::kTmaLoadMulticast:
      case Intrinsic::kTmaStore:
        box(1);
        break;
      default:
        break;
    }
  }

  // The shared load an address argument names (itself, or inside
  // shared_addr / address_of / ref).
  static const ir::LoadNode* SharedLoadIn(const ir::Expr& e) {
    if (!e.defined()) return nullptr;
    if (const auto* l = e.As<ir::LoadNode>()) {
      const ir::Scope s = l->buffer->scope;
      return s == ir::Scope::kShared || s == ir::Scope::kBarrier ? l : nullptr;
    }
    if (const auto* c = e.As<ir::CallNode>()) {
      std::optional<Intrinsic> id = IntrinsicOf(*c);
      if ((id == Intrinsic::kSharedAddr || id == Intrinsic::kAddressOf ||
           id == Intrinsic::kRef) &&
          !c->args.empty()) {
        return SharedLoadIn(c->args[0]);
      }
    }
    return nullptr;
  }

  void Access(const ir::BufferNode& b, const std::vector<ir::Expr>& idx,
              int64_t width, const ir::SourceLoc& loc) {
    if (b.scope != ir::Scope::kShared && b.scope != ir::Scope::kBarrier) return;
    auto off = st_.smem.offset.find(&b);
    if (off == st_.smem.offset.end()) return;  // not placed: codegen fails
    unreachable_ = false;
    const int64_t elem =
        b.scope == ir::Scope::kBarrier ? 8 : dtype_bytes(b.dtype);
    // The flat element range (the lowering flattens a shared tile's
    // indices into one), and the elements a sub-array reference spans.
    Range flat = Const(0);
    int64_t span = 1;
    if (idx.size() == 1) {
      auto r = Of(idx[0]);
      if (!r || r->hi >= kInf || r->lo <= -kInf) {
        ++report.unbounded;
        return;
      }
      flat = *r;
    }
    for (size_t d = 0; idx.size() != 1 && d < b.shape.size(); ++d) {
      auto extent = ir::AsConstInt(b.shape[d]);
      if (!extent) {
        ++report.unbounded;
        return;
      }
      flat = *Combine(ir::BinaryOp::kMul, flat, Const(*extent));
      if (d < idx.size()) {
        auto r = Of(idx[d]);
        if (!r || r->hi >= kInf || r->lo <= -kInf) {
          ++report.unbounded;
          return;
        }
        flat = *Combine(ir::BinaryOp::kAdd, flat, *r);
      } else {
        span *= *extent;
      }
    }
    const int64_t first = flat.lo * span * elem;
    const int64_t end = flat.hi * span * elem + std::max(width, span * elem);
    auto planned = st_.smem.bytes.find(&b);
    int64_t bytes = planned != st_.smem.bytes.end()
                        ? planned->second
                        : b.ConstNumElements().value_or(0) * elem;
    bytes = std::min(bytes, st_.smem.total_bytes - off->second);
    if (unreachable_ || (first >= 0 && end <= bytes)) {
      ++report.checked;
      return;
    }
    std::string where = loc.line() > 0 ? ir::FormatLoc(loc) + ": " : "";
    std::string index;
    for (const ir::Expr& i : idx)
      absl::StrAppend(&index, index.empty() ? "" : ", ", ir::ToString(i));
    if (index.size() > 160) index = index.substr(0, 160) + "...";
    report.violations.push_back(
        absl::StrCat(where, b.name, "[", index, "]: bytes [", first, ", ", end,
                     ") of an access, ", bytes, " planned (offset ",
                     off->second, " of ", st_.smem.total_bytes, ")"));
  }

  // Narrows the ranges of variables compared with constants in a branch
  // condition that holds (`holds`) or fails.
  void Refine(const ir::Expr& cond, bool holds) {
    using B = ir::BinaryOp;
    if (const auto* u = cond.As<ir::UnaryNode>()) {
      if (u->op == ir::UnaryOp::kNot) Refine(u->a, !holds);
      return;
    }
    const auto* b = cond.As<ir::BinaryNode>();
    if (b == nullptr) return;
    if ((b->op == B::kAnd && holds) || (b->op == B::kOr && !holds)) {
      Refine(b->a, holds);
      Refine(b->b, holds);
      return;
    }
    if (!ir::IsComparison(b->op)) return;
    ir::Expr side = b->a;
    auto c = ir::AsConstInt(b->b);
    B op = b->op;
    if (!c) {  // c < e: e > c
      side = b->b;
      c = ir::AsConstInt(b->a);
      if (!c) return;
      op = op == B::kLT   ? B::kGT
           : op == B::kLE ? B::kGE
           : op == B::kGT ? B::kLT
           : op == B::kGE ? B::kLE
                          : op;
    }
    if (!holds) {
      op = op == B::kLT   ? B::kGE
           : op == B::kLE ? B::kGT
           : op == B::kGT ? B::kLE
           : op == B::kGE ? B::kLT
           : op == B::kEQ ? B::kNE
                          : B::kEQ;
    }
    Range r{-kInf, kInf, 1};
    switch (op) {
      case B::kLT:
        r.hi = *c - 1;
        break;
      case B::kLE:
        r.hi = *c;
        break;
      case B::kGT:
        r.lo = *c + 1;
        break;
      case B::kGE:
        r.lo = *c;
        break;
      case B::kEQ:
        r = Const(*c);
        break;
      default:
        return;
    }
    Know(side, op == B::kEQ ? r : Range{r.lo, r.hi, 1});
  }

  // Records that e lies in r: a variable's range narrows; any other
  // expression becomes a fact, and so does the other operand of a sum
  // whose one operand has a single value (`v * 128 + tx < 48` with v 0).
  void Know(const ir::Expr& e, Range r) {
    if (const auto* v = e.As<ir::VarNode>()) {
      std::optional<Range> now = Of(e);
      if (!now) return;
      ranges_[v] = Tight(Range{std::max(now->lo, r.lo), std::min(now->hi, r.hi),
                               r.lo == r.hi ? r.step : now->step});
      return;
    }
    facts_.push_back({e, r});
    const auto* b = e.As<ir::BinaryNode>();
    if (b == nullptr || b->op != ir::BinaryOp::kAdd) return;
    for (auto [one, other] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}}) {
      std::optional<Range> k = Of(one);
      if (!k || k->lo != k->hi) continue;
      auto shift = [&](int64_t end) {
        return end >= kInf || end <= -kInf ? end : end - k->lo;
      };
      Know(other, Range{shift(r.lo), shift(r.hi), 1});
    }
  }

  const LoweringState& st_;
  int64_t threads_ = 1;
  std::unordered_map<const ir::VarNode*, Range> ranges_;
  std::unordered_map<const ir::LoadNode*, int64_t> widths_;
  std::unordered_map<const ir::VarNode*, ir::Expr> lets_;
  std::vector<std::pair<ir::Expr, Range>> facts_;
  mutable bool unreachable_ = false;  // an access's ranges met a dead branch
};

}  // namespace

SharedBoundsReport CheckSharedBounds(const LoweringState& state) {
  Checker c(state);
  c.VisitStmt(state.program.body);
  return std::move(c.report);
}

}  // namespace tessel::passes
