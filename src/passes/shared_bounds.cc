#include "src/passes/shared_bounds.h"

#include <algorithm>
#include <cstdint>
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
#include "src/passes/index_range.h"
#include "src/passes/intrinsics.h"

namespace tessel::passes {
namespace {

class Checker : public ir::IRVisitor {
 public:
  explicit Checker(const LoweringState& st) : st_(st) {
    threads_ =
        st.threads * std::max(1, st.consumer_groups) + st.producer_threads;
  }

  SharedBoundsReport report;

  std::optional<IndexRange> Of(const ir::Expr& e) const {
    if (!e.defined()) return std::nullopt;
    if (auto c = ir::AsConstInt(e)) return IndexRange::Of(*c);
    std::optional<IndexRange> r = Derive(e);
    // What the enclosing branch conditions say about e itself.
    for (const auto& [fact, range] : facts_) {
      if (!SameExpr(fact, e)) continue;
      IndexRange f = range;
      if (r)
        f = IndexRange{std::max(f.lo, r->lo), std::min(f.hi, r->hi), r->step};
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
  std::optional<IndexRange> Derive(const ir::Expr& e) const {
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
      if (c->value.dtype() == DataType::kBool) return IndexRange{0, 1};
      if (!is_int(c->value.dtype())) return std::nullopt;
      return Of(c->value);
    }
    if (const auto* s = e.As<ir::SelectNode>()) {
      auto t = Of(s->true_value), f = Of(s->false_value);
      if (!t || !f) return std::nullopt;
      return IndexRange{std::min(t->lo, f->lo), std::max(t->hi, f->hi),
                        std::gcd(t->step, f->step)};
    }
    if (const auto* u = e.As<ir::UnaryNode>()) {
      if (u->op != ir::UnaryOp::kNeg) return std::nullopt;
      auto a = Of(u->a);
      if (!a) return std::nullopt;
      return IndexRange{-a->hi, -a->lo, a->step};
    }
    if (const auto* c = e.As<ir::CallNode>()) {
      std::optional<Intrinsic> id = IntrinsicOf(*c);
      if (id == Intrinsic::kThreadIdx) return IndexRange{0, threads_ - 1};
      if (id == Intrinsic::kWarpUniform) return Of(c->args[0]);
      return std::nullopt;
    }
    const auto* b = e.As<ir::BinaryNode>();
    if (b == nullptr) return std::nullopt;
    if (ir::IsComparison(b->op) || ir::IsLogical(b->op))
      return IndexRange{0, 1};
    auto x = Of(b->a), y = Of(b->b);
    if (!x || !y) return std::nullopt;
    return CombineRanges(b->op, *x, *y);
  }

  void Visit(const ir::KernelNode* op) override {
    for (size_t i = 0; i < op->block_vars.size() && i < op->grid.size(); ++i) {
      auto g = Of(op->grid[i]);
      ranges_[op->block_vars[i].get()] =
          IndexRange{0, g && g->hi < kOpenEnd ? g->hi - 1 : kOpenEnd};
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
      const int64_t top =
          n ? ClampToOpen(__int128(lo->hi) + n->hi - 1) : kOpenEnd;
      ranges_[op->var.get()] = IndexRange{lo->lo, top};
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
    IndexRange flat = IndexRange::Of(0);
    int64_t span = 1;
    if (idx.size() == 1) {
      auto r = Of(idx[0]);
      if (!r || r->hi >= kOpenEnd || r->lo <= -kOpenEnd) {
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
      flat = *CombineRanges(ir::BinaryOp::kMul, flat, IndexRange::Of(*extent));
      if (d < idx.size()) {
        auto r = Of(idx[d]);
        if (!r || r->hi >= kOpenEnd || r->lo <= -kOpenEnd) {
          ++report.unbounded;
          return;
        }
        flat = *CombineRanges(ir::BinaryOp::kAdd, flat, *r);
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
    IndexRange r{-kOpenEnd, kOpenEnd, 1};
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
        r = IndexRange::Of(*c);
        break;
      default:
        return;
    }
    Know(side, op == B::kEQ ? r : IndexRange{r.lo, r.hi, 1});
  }

  // Records that e lies in r: a variable's range narrows; any other
  // expression becomes a fact, and so does the other operand of a sum
  // whose one operand has a single value (`v * 128 + tx < 48` with v 0).
  void Know(const ir::Expr& e, IndexRange r) {
    if (const auto* v = e.As<ir::VarNode>()) {
      std::optional<IndexRange> now = Of(e);
      if (!now) return;
      ranges_[v] =
          Tight(IndexRange{std::max(now->lo, r.lo), std::min(now->hi, r.hi),
                           r.lo == r.hi ? r.step : now->step});
      return;
    }
    facts_.push_back({e, r});
    const auto* b = e.As<ir::BinaryNode>();
    if (b == nullptr || b->op != ir::BinaryOp::kAdd) return;
    for (auto [one, other] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}}) {
      std::optional<IndexRange> k = Of(one);
      if (!k || k->lo != k->hi) continue;
      auto shift = [&](int64_t end) {
        return end >= kOpenEnd || end <= -kOpenEnd ? end : end - k->lo;
      };
      Know(other, IndexRange{shift(r.lo), shift(r.hi), 1});
    }
  }

  const LoweringState& st_;
  int64_t threads_ = 1;
  std::unordered_map<const ir::VarNode*, IndexRange> ranges_;
  std::unordered_map<const ir::LoadNode*, int64_t> widths_;
  std::unordered_map<const ir::VarNode*, ir::Expr> lets_;
  std::vector<std::pair<ir::Expr, IndexRange>> facts_;
  mutable bool unreachable_ = false;  // an access's ranges met a dead branch
};

}  // namespace

SharedBoundsReport CheckSharedBounds(const LoweringState& state) {
  Checker c(state);
  c.VisitStmt(state.program.body);
  return std::move(c.report);
}

}  // namespace tessel::passes
