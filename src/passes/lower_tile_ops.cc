#include "src/passes/lower_tile_ops.h"

#include <map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "src/ir/printer.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/layout_inference.h"
#include "src/passes/operand_reuse.h"
#include "src/passes/plan_shared_memory.h"
#include "src/passes/wgmma.h"

namespace tessel::passes {
namespace {

using ir::Expr;
using ir::Stmt;

bool IsProducerCopy(const Stmt& s) {
  const auto* c = s.As<ir::CopyNode>();
  return c != nullptr && c->src.buffer->scope == ir::Scope::kGlobal &&
         c->dst.buffer->scope == ir::Scope::kShared;
}
bool OnlyProducerCopies(const Stmt& s) {
  if (IsProducerCopy(s)) return true;
  if (const auto* i = s.As<ir::IfThenElseNode>()) {
    return !i->else_case.defined() && OnlyProducerCopies(i->then_case);
  }
  if (const auto* q = s.As<ir::SeqNode>()) {
    for (const Stmt& c : q->stmts)
      if (!OnlyProducerCopies(c)) return false;
    return !q->stmts.empty();
  }
  return false;
}

struct Range {
  int64_t lo, hi;
};

class Lowerer : public ir::IRMutator {
 public:
  explicit Lowerer(LoweringState& state) : st_(state) {
    tx_ = ir::Var("tx");
    st_.thread_var = tx_;
    ranges_[tx_.get()] = {0, state.threads - 1};
  }

  absl::Status status;

  // ------------------------------------------------------------ structure
  Stmt Visit(const ir::KernelNode* op) override {
    for (size_t d = 0; d < op->block_vars.size(); ++d) {
      if (auto g = ir::AsConstInt(op->grid[d]))
        ranges_[op->block_vars[d].get()] = {0, *g - 1};
    }
    grid_ = op->grid;
    block_vars_ = op->block_vars;
    Stmt body = MutateStmt(op->body);
    std::vector<Stmt> top{Let(tx_, ThreadIdx())};
    std::vector<ir::Var> vars = op->block_vars;
    if (swizzle_.has_value() && op->grid.size() >= 2) {
      // Rasterize (bx, by) in panels of swizzle_->panel_size rows of by.
      ir::Var rx("raw_bx"), ry("raw_by");
      Expr gx = op->grid[0], gy = op->grid[1];
      bool col = swizzle_->second;
      Expr fast = col ? gy : gx;  // tiles along the panel
      Expr slow = col ? gx : gy;
      int panel = swizzle_->first;
      Expr linear = Expr(ry) * gx + rx;
      ir::Var lin("block_linear"), pid("panel"), rows("panel_rows"),
          inp("in_panel");
      top.push_back(Let(lin, linear));
      top.push_back(Let(pid, Expr(lin) / (fast * panel)));
      top.push_back(Let(rows, ir::Min(slow - Expr(pid) * panel, Expr(panel))));
      top.push_back(Let(inp, Expr(lin) - Expr(pid) * (fast * panel)));
      Expr s_idx = Expr(pid) * panel + Expr(inp) % Expr(rows);
      Expr f_idx = Expr(inp) / Expr(rows);
      top.push_back(Let(col ? vars[0] : vars[1], s_idx));
      top.push_back(Let(col ? vars[1] : vars[0], f_idx));
      vars[0] = rx;
      vars[1] = ry;
    }
    top.push_back(body);
    return ir::MakeStmt<ir::KernelNode>(op->grid, op->threads, vars,
                                        ir::Seq(top), op->loc);
  }

  Stmt Visit(const ir::SeqNode* op) override {
    // Global -> shared copies followed by a commit become cp.async.
    std::vector<const ir::Stmt*> pending;
    for (const Stmt& s : op->stmts) {
      if (AsIntrin(s, "cp_async_commit")) {
        for (const Stmt* p : pending) MarkAsync(*p);
        pending.clear();
      } else if (OnlyProducerCopies(s)) {
        pending.push_back(&s);
      } else {
        pending.clear();
      }
    }
    std::vector<ir::Buffer> kept = PlanKeptOperands(op->stmts);
    std::vector<Stmt> out;
    // Gemms on shared operands in a row run together on the tensor cores:
    // one wait before the first statement that is not one of them.
    std::vector<ir::Buffer> outer_deferred;
    std::swap(outer_deferred, deferred_wgmma_);
    for (const Stmt& s : op->stmts) {
      if (!deferred_wgmma_.empty() && !JoinsDeferredWgmma(s)) {
        out.push_back(WaitWgmma(deferred_wgmma_));
        deferred_wgmma_.clear();
      }
      defer_wgmma_ = s.As<ir::GemmNode>() != nullptr;
      out.push_back(MutateStmt(s));
      defer_wgmma_ = false;
    }
    if (!deferred_wgmma_.empty()) out.push_back(WaitWgmma(deferred_wgmma_));
    deferred_wgmma_ = std::move(outer_deferred);
    // The kept arrays exist only around this list: a gemm node met again
    // elsewhere loads its own fragments.
    for (const Stmt& s : op->stmts)
      if (const auto* g = s.As<ir::GemmNode>()) kept_.erase(g);
    Stmt seq = ir::Seq(out, op->loc);
    for (const ir::Buffer& b : kept)
      seq = ir::MakeStmt<ir::AllocateNode>(b, seq, op->loc);
    return seq;
  }

  Stmt Visit(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::kParallel) return LowerParallel(op);
    if (std::optional<Stmt> s = LowerPipelinedGemm(op)) return *s;
    auto mn = ir::AsConstInt(op->min), ex = ir::AsConstInt(op->extent);
    if (mn && ex) ranges_[op->var.get()] = {*mn, *mn + *ex - 1};
    Stmt body = MutateStmt(op->body);
    ir::ForKind kind = op->for_kind == ir::ForKind::kPipelined
                           ? ir::ForKind::kSerial
                           : op->for_kind;
    return ir::MakeStmt<ir::ForNode>(op->var, op->min, op->extent, kind, 0,
                                     std::vector<int>{}, std::vector<int>{},
                                     body, op->loc);
  }

  Stmt Visit(const ir::IfThenElseNode* op) override {
    // `v + c1 < c2` bounds v inside the then branch (pipeline prefetch
    // guards), which removes copy predicates that cannot fail there.
    std::optional<std::pair<const ir::VarNode*, Range>> saved;
    if (const auto* lt = op->cond.As<ir::BinaryNode>();
        lt && lt->op == ir::BinaryOp::kLT) {
      const ir::VarNode* v = lt->a.As<ir::VarNode>();
      int64_t c1 = 0;
      if (const auto* add = lt->a.As<ir::BinaryNode>();
          add && add->op == ir::BinaryOp::kAdd && ir::AsConstInt(add->b)) {
        v = add->a.As<ir::VarNode>();
        c1 = *ir::AsConstInt(add->b);
      }
      auto c2 = ir::AsConstInt(lt->b);
      auto it = v ? ranges_.find(v) : ranges_.end();
      if (c2 && it != ranges_.end()) {
        saved = {v, it->second};
        it->second.hi = std::min(it->second.hi, *c2 - c1 - 1);
      }
    }
    Stmt then_case = MutateStmt(op->then_case);
    if (saved) ranges_[saved->first] = saved->second;
    Stmt else_case = MutateStmt(op->else_case);
    return ir::MakeStmt<ir::IfThenElseNode>(MutateExpr(op->cond), then_case,
                                            else_case, op->loc);
  }

  Stmt Visit(const ir::AllocateNode* op) override {
    Stmt body = MutateStmt(op->body);
    if (op->buffer->scope == ir::Scope::kFragment) {
      return ir::MakeStmt<ir::AllocateNode>(Local(op->buffer), body, op->loc);
    }
    return ir::MakeStmt<ir::AllocateNode>(op->buffer, body, op->loc);
  }

  Stmt Visit(const ir::AnnotateLayoutNode* op) override { return ir::Seq({}); }
  Stmt Visit(const ir::UseSwizzleNode* op) override {
    swizzle_ = {op->panel_size, op->column_major};
    return ir::Seq({});
  }

  Stmt Visit(const ir::StoreNode* op) override {
    if (op->buffer->scope == ir::Scope::kFragment) {
      Fail(op, "an element store to a fragment outside a T.Parallel loop");
      return Self(op);
    }
    return Flatten(IRMutator::Visit(op));
  }
  Expr Visit(const ir::LoadNode* op) override {
    if (op->buffer->scope == ir::Scope::kFragment) {
      Fail(nullptr, "an element read of fragment " + op->buffer->name +
                        " outside a T.Parallel loop");
      return Self(op);
    }
    return FlattenExpr(IRMutator::Visit(op));
  }

  // ------------------------------------------------------------ tile ops
  Stmt Visit(const ir::FillNode* op) override {
    const ir::Region& r = op->dst;
    Expr value = Cast(r.buffer->dtype, op->value);
    if (r.buffer->scope == ir::Scope::kFragment) {
      return ForEachLocal(r.buffer, [&](const std::vector<Expr>& local,
                                        const std::vector<Expr>&) {
        return Store(Local(r.buffer), local, value);
      });
    }
    return ForEachElement(r, 1, [&](const std::vector<Expr>& sq, int) {
      std::vector<Expr> idx = RegionIndices(r, sq);
      return Guard(InBounds(r.buffer, idx), Store(r.buffer, idx, value));
    });
  }

  Stmt Visit(const ir::CopyNode* op) override { return LowerCopy(*op); }
  Stmt Visit(const ir::GemmNode* op) override { return LowerGemm(*op); }
  Stmt Visit(const ir::ReduceNode* op) override { return LowerReduce(*op); }
  Stmt Visit(const ir::CumsumNode* op) override { return LowerCumsum(*op); }
  Stmt Visit(const ir::AtomicNode* op) override { return LowerAtomic(*op); }

  Stmt Visit(const ir::MbarrierInitNode* op) override {
    std::vector<Stmt> init;
    for (size_t i = 0; i < op->arrive_counts.size(); ++i) {
      init.push_back(
          Intrin("mbarrier_init", {ir::Load(op->barriers, {Expr(int(i))}),
                                   MutateExpr(op->arrive_counts[i])}));
    }
    init.push_back(Intrin("fence_barrier_init", {}));
    return MakeIf(Expr(tx_) == 0, ir::Seq(init));
  }
  Stmt Visit(const ir::MbarrierArriveNode* op) override {
    return Intrin("mbarrier_arrive",
                  {ir::Load(op->barriers, {MutateExpr(op->index)})});
  }
  Stmt Visit(const ir::MbarrierWaitParityNode* op) override {
    return Intrin("mbarrier_wait_parity",
                  {ir::Load(op->barriers, {MutateExpr(op->index)}),
                   MutateExpr(op->parity)});
  }
  Stmt Visit(const ir::MbarrierExpectTxNode* op) override {
    Fail(op, "mbarrier_expect_tx needs the TMA path (not built yet)");
    return Self(op);
  }
  Stmt Visit(const ir::PrintNode* op) override {
    if (op->buffer.defined()) {
      Fail(op, "T.print of a whole buffer is not supported by the CUDA path");
      return Self(op);
    }
    return MakeIf(Expr(tx_) == 0,
                  Intrin("print", {ir::Call(DataType::kI32, op->message, {}),
                                   MutateExpr(op->value)}));
  }

 private:
  // ------------------------------------------------------------ helpers
  void Fail(const ir::StmtNode* at, const std::string& what) {
    if (!status.ok()) return;
    status = absl::UnimplementedError(absl::StrCat(
        st_.program.name, ": ", what,
        at ? absl::StrCat(" (", ir::FormatLoc(at->loc), ")") : ""));
  }

  void MarkAsync(const Stmt& s) {
    ForEachStmt(s, [&](const Stmt& x) {
      if (const auto* c = x.As<ir::CopyNode>()) async_.insert(c);
    });
  }

  static Expr Cast(DataType t, const Expr& e) {
    return e.dtype() == t ? e : ir::Cast(t, e);
  }

  // The local array a fragment becomes.
  ir::Buffer Local(const ir::Buffer& frag) {
    auto it = locals_.find(frag.get());
    if (it != locals_.end()) return it->second;
    const FragmentLayout& l = Layout(frag);
    std::vector<Expr> shape;
    for (int64_t d : l.local_shape()) shape.push_back(Expr(int(d)));
    ir::Buffer b =
        ir::MakeBuffer(frag->name, frag->dtype, shape, ir::Scope::kLocal);
    locals_[frag.get()] = b;
    return b;
  }
  const FragmentLayout& Layout(const ir::Buffer& frag) {
    return st_.layouts.at(frag.get());
  }

  Stmt Store(const ir::Buffer& b, std::vector<Expr> idx, Expr value) {
    value = Cast(b->dtype, value);
    return Flatten(
        ir::MakeStmt<ir::StoreNode>(b, std::move(idx), value, ir::SourceLoc()));
  }
  Expr Load(const ir::Buffer& b, std::vector<Expr> idx) {
    return FlattenExpr(ir::Load(b, std::move(idx)));
  }

  static Stmt Guard(const Expr& cond, Stmt s) {
    if (!cond.defined()) return s;
    return MakeIf(cond, std::move(s));
  }
  static Expr And(const Expr& a, const Expr& b) {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return a && b;
  }

  // Upper bound of an index expression from the known variable ranges.
  std::optional<int64_t> Upper(const Expr& e) { return Bound(e, true); }
  std::optional<int64_t> Bound(const Expr& e, bool upper) {
    if (auto c = ir::AsConstInt(e)) return *c;
    if (const auto* v = e.As<ir::VarNode>()) {
      auto it = ranges_.find(v);
      if (it == ranges_.end()) return std::nullopt;
      return upper ? it->second.hi : it->second.lo;
    }
    if (const auto* b = e.As<ir::BinaryNode>()) {
      auto a0 = Bound(b->a, upper), b0 = Bound(b->b, upper);
      switch (b->op) {
        case ir::BinaryOp::kAdd:
          if (a0 && b0) return *a0 + *b0;
          return std::nullopt;
        case ir::BinaryOp::kSub: {
          auto b1 = Bound(b->b, !upper);
          if (a0 && b1) return *a0 - *b1;
          return std::nullopt;
        }
        case ir::BinaryOp::kMul:
          if (a0 && b0 && ProvablyNonNegative(b->a) &&
              ProvablyNonNegative(b->b))
            return *a0 * *b0;
          return std::nullopt;
        case ir::BinaryOp::kDiv:
          if (a0 && ir::AsConstInt(b->b) && *ir::AsConstInt(b->b) > 0 &&
              ProvablyNonNegative(b->a))
            return *a0 / *ir::AsConstInt(b->b);
          return std::nullopt;
        case ir::BinaryOp::kMod:
          if (auto m = ir::AsConstInt(b->b); m && *m > 0)
            return upper ? *m - 1 : 0;
          return std::nullopt;
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // idx < shape in every dim of a global buffer where that is not provable.
  Expr InBounds(const ir::Buffer& b, const std::vector<Expr>& idx) {
    if (b->scope != ir::Scope::kGlobal) return Expr();
    Expr cond;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto up = Upper(idx[d]);
      auto dim = ir::AsConstInt(b->shape[d]);
      if (up && dim && *up < *dim) continue;
      Expr shape = b->shape[d];
      Expr i = idx[d];
      if (shape.dtype() != i.dtype()) shape = ir::Cast(i.dtype(), shape);
      cond = And(cond, i < shape);
    }
    return cond;
  }

  // The flat element offset of indices into a shared buffer, swizzle applied
  // to the last two dims; row terms that are multiples of the swizzle period
  // are added outside the XOR so they stay cheap.
  Expr SharedOffset(const ir::Buffer& b, const std::vector<Expr>& idx) {
    auto shape = ConstShape(b->shape);
    if (b->layout.kind != ir::Layout::Kind::kSwizzled || idx.size() < 2 ||
        !shape) {
      return FlatIndex(b->shape, idx);
    }
    int r = static_cast<int>(idx.size());
    int64_t cols = (*shape)[r - 1], rows = (*shape)[r - 2];
    int eb = dtype_bytes(b->dtype);
    int64_t row_bytes = cols * eb;
    int vec = 16 / eb;
    int shift = row_bytes >= 128  ? 0
                : row_bytes == 64 ? 1
                : row_bytes == 32 ? 2
                                  : 3;
    int mask = row_bytes >= 128  ? 7
               : row_bytes == 64 ? 3
               : row_bytes == 32 ? 1
                                 : 0;
    std::vector<Expr> lead(idx.begin(), idx.end() - 2);
    std::vector<Expr> lead_shape(b->shape.begin(), b->shape.end() - 2);
    Expr base =
        lead.empty() ? Expr(0) : FlatIndex(lead_shape, lead) * int(rows * cols);
    Expr row = idx[r - 2], col = idx[r - 1];
    // Split row = inner + outer where outer is a multiple of the period.
    int64_t period = int64_t{8} << shift;
    Expr outer = 0;
    std::function<Expr(const Expr&)> split = [&](const Expr& e) -> Expr {
      if (const auto* add = e.As<ir::BinaryNode>();
          add && add->op == ir::BinaryOp::kAdd) {
        if (KnownDivisor(add->b) % period == 0) {
          outer = outer + add->b;
          return split(add->a);
        }
        if (KnownDivisor(add->a) % period == 0) {
          outer = outer + add->a;
          return split(add->b);
        }
      }
      if (KnownDivisor(e) % period == 0) {
        outer = outer + e;
        return Expr(0);
      }
      return e;
    };
    Expr inner = split(row);
    if (mask == 0) return base + row * int(cols) + col;
    Expr chunk = col / vec;
    Expr swz = ir::Binary(
        ir::BinaryOp::kBitXor, chunk,
        ir::Binary(ir::BinaryOp::kBitAnd,
                   ir::Binary(ir::BinaryOp::kShr, inner, Expr(shift)),
                   Expr(mask)));
    Expr in_chunk = KnownDivisor(col) % vec == 0 ? Expr(0) : col % vec;
    return base + (inner + outer) * int(cols) + swz * vec + in_chunk;
  }

  Expr GlobalIndex(const ir::Buffer& b, const std::vector<Expr>& idx) {
    bool wide = true;
    if (auto n = b->ConstNumElements()) wide = *n >= (int64_t{1} << 31);
    if (!wide) return FlatIndex(b->shape, idx);
    std::vector<Expr> shape, id;
    for (const Expr& s : b->shape) shape.push_back(Cast(DataType::kI64, s));
    for (const Expr& i : idx) id.push_back(Cast(DataType::kI64, i));
    return FlatIndex(shape, id);
  }

  Expr FlatOffset(const ir::Buffer& b, const std::vector<Expr>& idx) {
    if (b->scope == ir::Scope::kShared) return SharedOffset(b, idx);
    return GlobalIndex(b, idx);
  }

  bool NeedsFlatten(const ir::Buffer& b, size_t n) {
    return (b->scope == ir::Scope::kGlobal || b->scope == ir::Scope::kShared) &&
           n == static_cast<size_t>(b->rank()) && b->rank() > 1;
  }
  Stmt Flatten(const Stmt& s) {
    const auto* st = s.As<ir::StoreNode>();
    if (st == nullptr || !NeedsFlatten(st->buffer, st->indices.size()))
      return s;
    return ir::MakeStmt<ir::StoreNode>(
        st->buffer, std::vector<Expr>{FlatOffset(st->buffer, st->indices)},
        st->value, st->loc);
  }
  Expr FlattenExpr(const Expr& e) {
    const auto* l = e.As<ir::LoadNode>();
    if (l == nullptr || !NeedsFlatten(l->buffer, l->indices.size())) return e;
    return ir::Load(l->buffer, {FlatOffset(l->buffer, l->indices)});
  }

  // Loops over every local element of a fragment's layout (unrolled), with
  // the tail guard; fn gets (local indices, logical indices).
  Stmt ForEachLocal(const ir::Buffer& frag,
                    const std::function<Stmt(const std::vector<Expr>&,
                                             const std::vector<Expr>&)>& fn) {
    const FragmentLayout& l = Layout(frag);
    std::vector<int64_t> ls = l.local_shape();
    std::vector<ir::Var> vars;
    std::vector<Expr> local;
    static const char* kNames[] = {"i", "j", "e", "u"};
    for (size_t d = 0; d < ls.size(); ++d) {
      vars.emplace_back(absl::StrCat(kNames[d % 4], "_", frag->name));
      local.push_back(vars.back());
      ranges_[vars.back().get()] = {0, ls[d] - 1};
    }
    std::vector<Expr> logical = l.Logical(tx_, local);
    Stmt body = Guard(l.Valid(tx_, local), fn(local, logical));
    for (int d = static_cast<int>(ls.size()) - 1; d >= 0; --d) {
      body =
          MakeFor(vars[d], 0, Expr(int(ls[d])), ir::ForKind::kUnrolled, body);
    }
    return body;
  }

  // Spreads the elements of a region's (squeezed) box over the threads, vec
  // consecutive elements (along the last dim) per step; fn gets the squeezed
  // index of the first element and the vector width.
  Stmt ForEachElement(
      const ir::Region& r, int vec,
      const std::function<Stmt(const std::vector<Expr>&, int)>& fn) {
    auto ext = ConstSqueezedExtents(r);
    if (!ext) {
      Fail(nullptr,
           "a tile op over " + r.buffer->name + " with a non-constant extent");
      return ir::Seq({});
    }
    int64_t total = 1;
    for (int64_t e : *ext) total *= e;
    int64_t chunks = total / vec;
    int T = st_.threads;
    int64_t iters = (chunks + T - 1) / T;
    ir::Var it(absl::StrCat("v_", r.buffer->name));
    ranges_[it.get()] = {0, iters - 1};
    Expr chunk = Expr(it) * T + tx_;
    // Unravel chunk -> squeezed index. chunk = it * coef + tpart; while coef
    // is a multiple of a dim's extent, that dim's index depends on the thread
    // only, so per-thread offsets stay loop invariant.
    std::vector<Expr> sq(ext->size());
    Expr tpart = tx_;
    int64_t coef = T;
    bool split = true;
    Expr p = chunk;
    int64_t last = ext->back() / vec;
    for (int d = static_cast<int>(ext->size()) - 1; d >= 0; --d) {
      bool inner = d == static_cast<int>(ext->size()) - 1;
      int64_t n = inner ? last : (*ext)[d];
      Expr idx;
      if (d == 0) {
        idx = split ? Expr(it) * int(coef) + tpart : p;
      } else if (split && coef % n == 0) {
        idx = tpart % int(n);
        tpart = tpart / int(n);
        coef /= n;
      } else {
        if (split) p = Expr(it) * int(coef) + tpart;
        split = false;
        idx = p % int(n);
        p = p / int(n);
      }
      if (inner && vec > 1) idx = idx * vec;
      sq[d] = idx;
    }
    Stmt body = fn(sq, vec);
    if (chunks % T != 0) body = Guard(chunk < int(chunks), body);
    return MakeFor(it, 0, Expr(int(iters)),
                   iters <= 64 ? ir::ForKind::kUnrolled : ir::ForKind::kSerial,
                   body);
  }

  // The widest vector (elements) usable to move a tile between a global
  // region and a non-global one of the same dtype along the last dim.
  int VectorWidth(const ir::Region& global, const ir::Region& other,
                  int max_bytes) {
    if (global.buffer->dtype != other.buffer->dtype) return 1;
    int eb = dtype_bytes(global.buffer->dtype);
    int vec = max_bytes / eb;
    auto ext = ConstSqueezedExtents(other);
    if (!ext || ext->empty()) return 1;
    std::vector<int> gd = NonUnitDims(global);
    // The global's last dim must be the innermost dim of the box.
    if (gd.empty() || gd.back() != global.rank() - 1) return 1;
    if (other.buffer->scope == ir::Scope::kShared) {
      std::vector<int> od = NonUnitDims(other);
      if (od.back() != other.rank() - 1) return 1;
    }
    while (vec > 1) {
      bool ok = ext->back() % vec == 0 &&
                KnownDivisor(global.start.back()) % vec == 0;
      if (auto last = ir::AsConstInt(global.buffer->shape.back())) {
        ok = ok && *last % vec == 0;
      }
      if (ok) break;
      vec /= 2;
    }
    if (vec > 1) RequireAlignment(global.buffer, vec, "vectorized copies");
    return vec;
  }

  void RequireAlignment(const ir::Buffer& b, int multiple,
                        const std::string& why) {
    for (size_t i = 0; i < st_.program.params.size(); ++i) {
      if (st_.program.params[i].same_as(b)) {
        st_.alignment.push_back({static_cast<int>(i), multiple, why});
      }
    }
  }

  // ------------------------------------------------------------ Parallel
  Stmt LowerParallel(const ir::ForNode* op) {
    std::vector<const ir::VarNode*> vars;
    std::vector<ir::Var> var_handles;
    std::vector<int64_t> extents;
    const ir::ForNode* f = op;
    while (true) {
      auto e = ir::AsConstInt(f->extent);
      if (!e || !ir::IsConstInt(f->min, 0)) {
        Fail(f, "a T.Parallel loop needs a constant extent starting at 0");
        return Self(op);
      }
      vars.push_back(f->var.get());
      var_handles.push_back(f->var);
      extents.push_back(*e);
      const auto* inner = f->body.As<ir::ForNode>();
      if (inner == nullptr || inner->for_kind != ir::ForKind::kParallel) break;
      f = inner;
    }
    Stmt body = f->body;
    // The driving layout: a fragment indexed by exactly the loop's vars.
    std::optional<FragmentLayout> driver;
    ForEachFragmentAccess(
        body, [&](const ir::Buffer& b, const std::vector<Expr>& idx) {
          if (driver || idx.size() != vars.size()) return;
          for (size_t i = 0; i < idx.size(); ++i)
            if (idx[i].get() != vars[i]) return;
          driver = Layout(b);
        });
    if (!driver) driver = FragmentLayout::Blocked(extents, st_.threads, 1);
    if (driver->shape() != extents) {
      Fail(op,
           "a T.Parallel loop whose extents differ from its fragment's "
           "shape");
      return Self(op);
    }
    const FragmentLayout d = *driver;
    std::vector<int64_t> ls = d.local_shape();
    std::vector<ir::Var> lvars;
    std::vector<Expr> local;
    for (size_t i = 0; i < ls.size(); ++i) {
      lvars.emplace_back(absl::StrCat(vars[0]->name, "_l", i));
      local.push_back(lvars.back());
      ranges_[lvars.back().get()] = {0, ls[i] - 1};
    }
    std::vector<Expr> logical = d.Logical(tx_, local);
    // Fragment accesses -> local array elements.
    Stmt mapped = MapFragments(body, vars, d, local);
    if (!status.ok()) return Self(op);
    Expr leader = d.Leader(tx_);
    if (leader.defined()) mapped = GuardSideEffects(mapped, leader);
    VarMap sub;
    for (size_t i = 0; i < vars.size(); ++i) sub[vars[i]] = logical[i];
    mapped = Substitute(mapped, sub);
    in_parallel_++;
    mapped = MutateStmt(mapped);
    in_parallel_--;
    mapped = Guard(d.Valid(tx_, local), mapped);
    int64_t total = 1;
    for (int64_t e : ls) total *= e;
    for (int i = static_cast<int>(ls.size()) - 1; i >= 0; --i) {
      ir::ForKind k =
          total <= 256 || i > 0 ? ir::ForKind::kUnrolled : ir::ForKind::kSerial;
      mapped = MakeFor(lvars[i], 0, Expr(int(ls[i])), k, mapped);
    }
    return mapped;
  }

  void ForEachFragmentAccess(
      const Stmt& s,
      const std::function<void(const ir::Buffer&, const std::vector<Expr>&)>&
          fn) {
    struct V : ir::IRVisitor {
      const std::function<void(const ir::Buffer&, const std::vector<Expr>&)>*
          fn;
      void Visit(const ir::LoadNode* op) override {
        if (op->buffer->scope == ir::Scope::kFragment)
          (*fn)(op->buffer, op->indices);
        IRVisitor::Visit(op);
      }
      void Visit(const ir::StoreNode* op) override {
        if (op->buffer->scope == ir::Scope::kFragment)
          (*fn)(op->buffer, op->indices);
        IRVisitor::Visit(op);
      }
    } v;
    v.fn = &fn;
    v.VisitStmt(s);
  }

  // Rewrites F[i, j] (F laid out as the driver) and r[i] (the driver's rows)
  // to the local array elements the loop's local indices name.
  Stmt MapFragments(const Stmt& body,
                    const std::vector<const ir::VarNode*>& vars,
                    const FragmentLayout& d, const std::vector<Expr>& local) {
    class M : public ir::IRMutator {
     public:
      Lowerer* self;
      const std::vector<const ir::VarNode*>* vars;
      const FragmentLayout* d;
      const std::vector<Expr>* local;
      std::optional<std::vector<Expr>> Map(const ir::Buffer& b,
                                           const std::vector<Expr>& idx) {
        const FragmentLayout& l = self->Layout(b);
        bool full = idx.size() == vars->size();
        for (size_t i = 0; full && i < idx.size(); ++i)
          full = idx[i].get() == (*vars)[i];
        if (full && l == *d) return *local;
        if (l.kind() == FragmentLayout::Kind::kReplicated && !is_store) {
          std::vector<Expr> shape;
          for (int64_t x : l.shape()) shape.push_back(Expr(int(x)));
          return std::vector<Expr>{FlatIndex(shape, idx)};
        }
        if (d->kind() == FragmentLayout::Kind::kMma &&
            l.kind() == FragmentLayout::Kind::kMmaRows && idx.size() == 1 &&
            idx[0].get() == (*vars)[0] && l == d->RowsOf()) {
          return std::vector<Expr>{(*local)[0], (*local)[2] / 2};
        }
        self->Fail(nullptr,
                   absl::StrCat("fragment ", b->name, " (", l.ToString(),
                                ") indexed in a T.Parallel loop laid out as ",
                                d->ToString(),
                                "; index a fragment by the loop variables"));
        return std::nullopt;
      }
      bool is_store = false;
      Expr Visit(const ir::LoadNode* op) override {
        Expr e = IRMutator::Visit(op);
        if (op->buffer->scope != ir::Scope::kFragment) return e;
        is_store = false;
        auto idx = Map(op->buffer, op->indices);
        if (!idx) return e;
        return ir::Load(self->Local(op->buffer), *idx);
      }
      ir::Stmt Visit(const ir::StoreNode* op) override {
        ir::Stmt s = IRMutator::Visit(op);
        if (op->buffer->scope != ir::Scope::kFragment) return s;
        is_store = true;
        auto idx = Map(op->buffer, op->indices);
        if (!idx) return s;
        const auto* st = s.As<ir::StoreNode>();
        return ir::MakeStmt<ir::StoreNode>(self->Local(op->buffer), *idx,
                                           st->value, st->loc);
      }
    } m;
    m.self = this;
    m.vars = &vars;
    m.d = &d;
    m.local = &local;
    return m.MutateStmt(body);
  }

  // Stores to shared/global memory and atomics run once per element, in
  // the leading replica.
  Stmt GuardSideEffects(const Stmt& s, const Expr& leader) {
    class G : public ir::IRMutator {
     public:
      Expr leader;
      ir::Stmt Visit(const ir::StoreNode* op) override {
        if (op->buffer->scope == ir::Scope::kGlobal ||
            op->buffer->scope == ir::Scope::kShared)
          return MakeIf(leader, Self(op));
        return Self(op);
      }
      ir::Stmt Visit(const ir::AtomicNode* op) override {
        return MakeIf(leader, Self(op));
      }
    } g;
    g.leader = leader;
    return g.MutateStmt(s);
  }

  // ------------------------------------------------------------ copy
  Stmt LowerCopy(const ir::CopyNode& c) {
    ir::Region src = MutateRegion(c.src), dst = MutateRegion(c.dst);
    ir::Scope ss = src.buffer->scope, ds = dst.buffer->scope;
    if (ss == ir::Scope::kFragment || ds == ir::Scope::kFragment) {
      return CopyFragment(c, src, dst);
    }
    if (ss == ir::Scope::kGlobal && ds == ir::Scope::kShared) {
      bool async = async_.count(&c) && !st_.config.disable_async_copy &&
                   st_.target.sm() >= 80;
      int vec = VectorWidth(src, dst, 16);
      int bytes = vec * dtype_bytes(src.buffer->dtype);
      if (bytes < 4) async = false;
      return ForEachElement(dst, vec, [&](const std::vector<Expr>& sq, int v) {
        std::vector<Expr> gi = RegionIndices(src, sq);
        std::vector<Expr> si = RegionIndices(dst, sq);
        Expr pred = InBounds(src.buffer, gi);
        Expr soff = SharedOffset(dst.buffer, si);
        Expr goff = GlobalIndex(src.buffer, gi);
        if (async) {
          return Intrin("cp_async",
                        {Expr(bytes), SharedAddr(dst.buffer, soff),
                         ir::Load(src.buffer, {goff}),
                         pred.defined() ? pred : ir::BoolImm(true)});
        }
        if (v > 1) {
          Stmt copy =
              Intrin("vec_copy", {Expr(bytes), ir::Load(dst.buffer, {soff}),
                                  ir::Load(src.buffer, {goff})});
          if (!pred.defined()) return copy;
          return MakeIf(
              pred, copy,
              Intrin("vec_zero", {Expr(bytes), ir::Load(dst.buffer, {soff})}));
        }
        Expr value = Cast(dst.buffer->dtype, ir::Load(src.buffer, {goff}));
        if (pred.defined())
          value = ir::Select(pred, value, ir::Zero(dst.buffer->dtype));
        return ir::MakeStmt<ir::StoreNode>(dst.buffer, std::vector<Expr>{soff},
                                           value, ir::SourceLoc());
      });
    }
    // shared -> global, global -> global, shared -> shared.
    const ir::Region& driver = ss == ir::Scope::kShared ? src : dst;
    int vec = 1;
    if (ds == ir::Scope::kGlobal && ss == ir::Scope::kShared)
      vec = VectorWidth(dst, src, 16);
    int bytes = vec * dtype_bytes(src.buffer->dtype);
    return ForEachElement(driver, vec, [&](const std::vector<Expr>& sq, int v) {
      std::vector<Expr> si = RegionIndices(src, sq);
      std::vector<Expr> di = RegionIndices(dst, sq);
      Expr pred = And(InBounds(src.buffer, si), InBounds(dst.buffer, di));
      Expr so = FlatOffset(src.buffer, si), d_o = FlatOffset(dst.buffer, di);
      if (v > 1) {
        return Guard(
            pred, Intrin("vec_copy", {Expr(bytes), ir::Load(dst.buffer, {d_o}),
                                      ir::Load(src.buffer, {so})}));
      }
      Expr value = Cast(dst.buffer->dtype, ir::Load(src.buffer, {so}));
      Expr src_in = InBounds(src.buffer, si);
      if (src_in.defined())
        value = ir::Select(src_in, value, ir::Zero(dst.buffer->dtype));
      return Guard(
          InBounds(dst.buffer, di),
          ir::MakeStmt<ir::StoreNode>(dst.buffer, std::vector<Expr>{d_o}, value,
                                      ir::SourceLoc()));
    });
  }

  Stmt CopyFragment(const ir::CopyNode& c, const ir::Region& src,
                    const ir::Region& dst) {
    bool from_frag = src.buffer->scope == ir::Scope::kFragment;
    const ir::Region& frag = from_frag ? src : dst;
    const ir::Region& other = from_frag ? dst : src;
    if (!frag.IsFull()) {
      Fail(&c, "a copy of part of fragment " + frag.buffer->name);
      return ir::Seq({});
    }
    const FragmentLayout& l = Layout(frag.buffer);
    ir::Buffer local = Local(frag.buffer);
    if (other.buffer->scope == ir::Scope::kFragment) {
      if (!(Layout(other.buffer) == l)) {
        Fail(&c, "a copy between fragments of different layouts");
        return ir::Seq({});
      }
      ir::Buffer ol = Local(other.buffer);
      return ForEachLocal(frag.buffer, [&](const std::vector<Expr>& li,
                                           const std::vector<Expr>&) {
        return from_frag ? Store(ol, li, ir::Load(local, li))
                         : Store(local, li, ir::Load(ol, li));
      });
    }
    // Packed pair stores of mma accumulators to global or shared memory: one
    // 32- or 64-bit store per column pair instead of two scalar ones (a
    // swizzle moves 16-byte chunks, so an even-aligned pair stays together).
    if (from_frag && l.kind() == FragmentLayout::Kind::kMma &&
        other.buffer->scope != ir::Scope::kLocal && PairsOk(other)) {
      ir::Var mi("mi"), ni("ni"), h("h");
      ranges_[mi.get()] = {0, l.mi() - 1};
      ranges_[ni.get()] = {0, l.ni() - 1};
      ranges_[h.get()] = {0, 1};
      std::vector<Expr> lo{mi, ni, Expr(h) * 2}, hi{mi, ni, Expr(h) * 2 + 1};
      std::vector<Expr> logical = l.Logical(tx_, lo);
      std::vector<Expr> gi = RegionIndices(other, logical);
      Expr pred = InBounds(other.buffer, gi);
      DataType t = other.buffer->dtype;
      // 16-bit pairs are packed from the f32 values by the store itself.
      bool packed = t == DataType::kF16 || t == DataType::kBF16;
      Stmt st =
          Intrin("store_pair",
                 {ir::Load(other.buffer, {FlatOffset(other.buffer, gi)}),
                  packed ? ir::Load(local, lo) : Cast(t, ir::Load(local, lo)),
                  packed ? ir::Load(local, hi) : Cast(t, ir::Load(local, hi))});
      Stmt body = Guard(pred, st);
      body = MakeFor(h, 0, 2, ir::ForKind::kUnrolled, body);
      body = MakeFor(ni, 0, l.ni(), ir::ForKind::kUnrolled, body);
      return MakeFor(mi, 0, l.mi(), ir::ForKind::kUnrolled, body);
    }
    Expr leader = l.Leader(tx_);
    return ForEachLocal(frag.buffer, [&](const std::vector<Expr>& li,
                                         const std::vector<Expr>& logical) {
      std::vector<Expr> oi = RegionIndices(other, logical);
      Expr pred = InBounds(other.buffer, oi);
      Expr off = FlatOffset(other.buffer, oi);
      if (from_frag) {
        Stmt s = ir::MakeStmt<ir::StoreNode>(
            other.buffer, std::vector<Expr>{off},
            Cast(other.buffer->dtype, ir::Load(local, li)), ir::SourceLoc());
        return Guard(And(leader, pred), s);
      }
      Expr v = Cast(frag.buffer->dtype, ir::Load(other.buffer, {off}));
      if (pred.defined()) v = ir::Select(pred, v, ir::Zero(frag.buffer->dtype));
      return Store(local, li, v);
    });
  }
  // Whether element pairs (j, j + 1) of a global or shared region sit
  // together in memory, 2-element aligned (the mma accumulator's column
  // pairs).
  bool PairsOk(const ir::Region& g) {
    std::vector<int> gd = NonUnitDims(g);
    if (gd.empty() || gd.back() != g.rank() - 1) return false;
    if (KnownDivisor(g.start.back()) % 2 != 0) return false;
    if (auto last = ir::AsConstInt(g.buffer->shape.back())) {
      if (*last % 2 != 0) return false;
    } else {
      RequireAlignment(g.buffer, 2, "paired accumulator stores");
    }
    return true;
  }

  // ------------------------------------------------------------ atomics
  Stmt LowerAtomic(const ir::AtomicNode& a) {
    ir::Region dst = MutateRegion(a.dst);
    const char* name = a.op == ir::AtomicOp::kAdd   ? "atomic_add"
                       : a.op == ir::AtomicOp::kMax ? "atomic_max"
                                                    : "atomic_min";
    DataType t = dst.buffer->dtype;
    if (!a.src) {
      Expr v = Cast(t, MutateExpr(a.value));
      Expr off = GlobalIndex(dst.buffer, dst.start);
      Stmt s = Intrin(name, {ir::Load(dst.buffer, {off}), v});
      return in_parallel_ ? s : MakeIf(Expr(tx_) == 0, s);
    }
    ir::Region src = MutateRegion(*a.src);
    if (src.buffer->scope == ir::Scope::kFragment) {
      ir::Buffer local = Local(src.buffer);
      const FragmentLayout& l = Layout(src.buffer);
      return ForEachLocal(src.buffer, [&](const std::vector<Expr>& li,
                                          const std::vector<Expr>& logical) {
        std::vector<Expr> di = RegionIndices(dst, logical);
        Stmt s =
            Intrin(name, {ir::Load(dst.buffer, {GlobalIndex(dst.buffer, di)}),
                          Cast(t, ir::Load(local, li))});
        return Guard(And(l.Leader(tx_), InBounds(dst.buffer, di)), s);
      });
    }
    // Shared source: vectors of 4 f32 / 2 f16/bf16 where aligned.
    int vec = 1;
    if (a.op == ir::AtomicOp::kAdd && src.buffer->dtype == t) {
      int max_bytes = t == DataType::kF32                             ? 16
                      : (t == DataType::kF16 || t == DataType::kBF16) ? 4
                                                                      : 0;
      if (max_bytes > 0) vec = VectorWidth(dst, src, max_bytes);
    }
    return ForEachElement(src, vec, [&](const std::vector<Expr>& sq, int v) {
      std::vector<Expr> si = RegionIndices(src, sq);
      std::vector<Expr> di = RegionIndices(dst, sq);
      Expr pred = InBounds(dst.buffer, di);
      Expr doff = GlobalIndex(dst.buffer, di);
      if (v > 1) {
        std::vector<Expr> args{Expr(v), ir::Load(dst.buffer, {doff})};
        for (int u = 0; u < v; ++u) {
          std::vector<Expr> su = si;
          su.back() = su.back() + u;
          args.push_back(ir::Load(src.buffer, {SharedOffset(src.buffer, su)}));
        }
        return Guard(pred, Intrin("atomic_add_vec", args));
      }
      Expr val = Cast(t, ir::Load(src.buffer, {FlatOffset(src.buffer, si)}));
      return Guard(pred, Intrin(name, {ir::Load(dst.buffer, {doff}), val}));
    });
  }

  // ------------------------------------------------------------ gemm
  // The mma.sync lowering of one gemm: its accumulator and its fragment
  // registers, two of each (fragment double buffering: the ldmatrix of one
  // k16 step are in flight while the mma of the previous step run).
  struct MmaGemm {
    ir::Buffer acc, af, bf;
    // Operands kept in registers across gemms (operand_reuse.h): all k16
    // steps in [kk][...]; filled by this gemm (fill) or already there.
    ir::Buffer a_keep, b_keep;
    bool a_fill = false, b_fill = false;
    int KK = 0, MI = 0, NI = 0, wn = 0;
    int64_t wtm = 0, wtn = 0;
    const char* kind = "f16_f32";
    // wgmma.mma_async (wgmma.h): B stays in shared memory; A too when
    // wgmma_a, else A's fragments of all k16 steps are live at once (af is
    // [KK][MI][4]).
    std::optional<WgmmaOperand> wgmma, wgmma_a;
  };

  // k16 steps of a gemm (its operand tiles have constant shapes).
  static int KSteps(const ir::GemmNode& g) {
    auto ae = *ConstSqueezedExtents(g.a);
    return static_cast<int>((g.transpose_a ? ae[0] : ae[1]) / 16);
  }

  // nullopt: the FMA path (no mma warp grid or no mma accumulator layout).
  std::optional<MmaGemm> PlanMma(const ir::GemmNode& g) {
    auto [wm, wn] = MmaWarpGrid(g, st_.threads);
    if (wm == 0 || Layout(g.c.buffer).kind() != FragmentLayout::Kind::kMma)
      return std::nullopt;
    const FragmentLayout& l = Layout(g.c.buffer);
    MmaGemm m;
    m.acc = Local(g.c.buffer);
    m.KK = KSteps(g);
    m.MI = l.mi();
    m.NI = l.ni();
    m.wn = wn;
    m.wtm = l.shape()[0] / wm;
    m.wtn = l.shape()[1] / wn;
    m.wgmma = WgmmaOperandB(g, st_);
    m.wgmma_a = WgmmaOperandA(g, st_);
    int id = gemm_count_++;
    m.af = ir::MakeBuffer(absl::StrCat("a_frag", id ? std::to_string(id) : ""),
                          DataType::kU32, {m.wgmma ? m.KK : 2, m.MI, 4},
                          ir::Scope::kLocal);
    m.bf = ir::MakeBuffer(absl::StrCat("b_frag", id ? std::to_string(id) : ""),
                          DataType::kU32, {2, m.NI, 2}, ir::Scope::kLocal);
    if (g.a.buffer->dtype == DataType::kBF16) m.kind = "bf16_f32";
    if (auto it = kept_.find(&g); it != kept_.end()) {
      if (it->second[0]) std::tie(m.a_keep, m.a_fill) = *it->second[0];
      if (it->second[1]) std::tie(m.b_keep, m.b_fill) = *it->second[1];
    }
    return m;
  }

  // The fragments a gemm's shared operand loads, for operand_reuse.
  std::optional<OperandKey> KeyOf(const ir::GemmNode& g, GemmOperand which) {
    const ir::Region& r = which == GemmOperand::kA ? g.a : g.b;
    auto [wm, wn] = MmaWarpGrid(g, st_.threads);
    if (wm == 0 || r.buffer->scope != ir::Scope::kShared ||
        Layout(g.c.buffer).kind() != FragmentLayout::Kind::kMma) {
      return std::nullopt;
    }
    if (which == GemmOperand::kB ? WgmmaOperandB(g, st_).has_value()
                                 : WgmmaOperandA(g, st_).has_value()) {
      return std::nullopt;  // read by the tensor cores from shared memory
    }
    const FragmentLayout& l = Layout(g.c.buffer);
    const int64_t kk = KSteps(g);
    OperandKey key;
    key.region = r;
    if (which == GemmOperand::kA) {
      key.transpose = g.transpose_a;
      key.tiling = {wm, wn, l.shape()[0] / wm, l.mi(), kk};
      key.registers = static_cast<int>(kk * l.mi() * 4);
    } else {
      key.transpose = g.transpose_b;
      key.tiling = {wm, wn, l.shape()[1] / wn, l.ni(), kk};
      key.registers = static_cast<int>(kk * l.ni() * 2);
    }
    return key;
  }

  // 32-bit registers per thread the kernel's fragments take.
  int FragmentRegisters() const {
    int64_t n = 0;
    for (const auto& [buffer, layout] : st_.layouts) {
      int64_t elems = 1;
      for (int64_t e : layout.local_shape()) elems *= e;
      n += (elems * dtype_bytes(buffer->dtype) + 3) / 4;
    }
    return static_cast<int>(n);
  }

  // Plans the operands kept in registers among a statement list's gemms
  // (at most 32 registers each, and while the fragments and the kept
  // operands together stay within 160 registers: past that, ptxas spills
  // at 255); returns the register arrays to allocate around the list.
  std::vector<ir::Buffer> PlanKeptOperands(const std::vector<Stmt>& stmts) {
    constexpr int kPerOperand = 32, kWithFragments = 160;
    OperandReusePlan plan = PlanOperandReuse(
        stmts,
        [&](const ir::GemmNode& g, GemmOperand w) { return KeyOf(g, w); },
        kPerOperand, std::max(0, kWithFragments - FragmentRegisters()));
    // Named in statement order (plan.gemms is keyed by pointer): the source
    // must not depend on addresses.
    std::vector<ir::Buffer> buffers(plan.chains);
    for (const Stmt& s : stmts) {
      const auto* gemm = s.As<ir::GemmNode>();
      if (gemm == nullptr) continue;
      for (GemmOperand w : {GemmOperand::kA, GemmOperand::kB}) {
        std::optional<KeptOperand> keep = plan.Find(gemm, w);
        if (!keep) continue;
        ir::Buffer& b = buffers[keep->chain];
        if (keep->fill) {
          const OperandKey key = *KeyOf(*gemm, w);
          const int64_t tiles = key.tiling[3], steps = key.tiling[4];
          const bool a = w == GemmOperand::kA;
          b = ir::MakeBuffer(
              absl::StrCat(a ? "a_keep" : "b_keep", kept_count_++),
              DataType::kU32, {steps, tiles, a ? 4 : 2}, ir::Scope::kLocal);
        }
        kept_[gemm][static_cast<int>(w)] = std::make_pair(b, keep->fill);
      }
    }
    return buffers;
  }

  Stmt ClearAccumulator(const ir::GemmNode& g, const MmaGemm& m) {
    return ForEachLocal(
        g.c.buffer, [&](const std::vector<Expr>& li, const std::vector<Expr>&) {
          return Store(m.acc, li, Expr(0.0));
        });
  }

  // ldmatrix of k16 step kk of gemm g's operands into fragment buffer buf.
  Stmt LoadFragments(const MmaGemm& m, const ir::GemmNode& g, Expr buf,
                     int kk) {
    Stmt b = (m.b_keep.defined() && !m.b_fill) || m.wgmma
                 ? ir::Seq({})
                 : LoadB(m, g, buf, kk);
    if (g.a.buffer->scope == ir::Scope::kFragment) {
      return ir::Seq({PackRegisterA(m, g, buf, kk), b});
    }
    if (m.a_keep.defined() && !m.a_fill) return b;
    return ir::Seq({LoadA(m, g, buf, kk), b});
  }

  // A register A operand (layout inference gave it the accumulator layout
  // of a warps_m x 1 grid): the a[r] register of m16 tile mi, k16 step kk
  // is the pair at local [mi][2kk + r / 2][(r % 2) * 2 ..+1] (rows g and
  // g + 8 alternate with r, the two k8 halves with r / 2).
  Stmt PackRegisterA(const MmaGemm& m, const ir::GemmNode& g, Expr buf,
                     int kk) {
    ir::Buffer a = Local(g.a.buffer);
    ir::Var mi("mi");
    ranges_[mi.get()] = {0, m.MI - 1};
    std::vector<Stmt> regs;
    for (int r = 0; r < 4; ++r) {
      Expr n8 = Expr(2 * kk + r / 2);
      Expr lo = ir::Load(a, {mi, n8, Expr((r % 2) * 2)});
      Expr hi = ir::Load(a, {mi, n8, Expr((r % 2) * 2 + 1)});
      regs.push_back(
          Store(m.af, {buf, mi, Expr(r)},
                ir::Call(DataType::kU32, "tl::pack_b16x2", {lo, hi})));
    }
    return MakeFor(mi, 0, m.MI, ir::ForKind::kUnrolled, ir::Seq(regs));
  }

  Stmt LoadA(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk) {
    ir::Region a = MutateRegion(g.a);
    Expr lane = Expr(tx_) % 32, warp = Expr(tx_) / 32;
    Expr wrow = warp / m.wn * int(m.wtm);
    auto shared_addr = [&](const ir::Region& r, Expr row, Expr col) {
      std::vector<Expr> idx = RegionIndices(r, {row, col});
      return SharedAddr(r.buffer, SharedOffset(r.buffer, idx));
    };
    std::vector<Stmt> s;
    ir::Var mi("mi");
    ranges_[mi.get()] = {0, m.MI - 1};
    Expr k0 = Expr(kk * 16);
    Expr addr_a;
    if (!g.transpose_a) {
      addr_a =
          shared_addr(a, wrow + lane % 16 + Expr(mi) * 16, k0 + lane / 16 * 8);
    } else {
      Expr q = lane / 8, r = lane % 8;
      addr_a =
          shared_addr(a, k0 + q / 2 * 8 + r, wrow + Expr(mi) * 16 + q % 2 * 8);
    }
    s.push_back(MakeFor(
        mi, 0, m.MI, ir::ForKind::kUnrolled,
        Intrin("ldmatrix",
               {Expr(4), Expr(g.transpose_a ? 1 : 0),
                ir::Call(
                    DataType::kI64, "address_of",
                    {m.a_keep.defined() ? ir::Load(m.a_keep, {Expr(kk), mi, 0})
                                        : ir::Load(m.af, {buf, mi, 0})}),
                addr_a})));
    return ir::Seq(s);
  }

  Stmt LoadB(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk) {
    ir::Region b = MutateRegion(g.b);
    Expr lane = Expr(tx_) % 32, warp = Expr(tx_) / 32;
    Expr wcol = warp % m.wn * int(m.wtn);
    auto shared_addr = [&](const ir::Region& r, Expr row, Expr col) {
      std::vector<Expr> idx = RegionIndices(r, {row, col});
      return SharedAddr(r.buffer, SharedOffset(r.buffer, idx));
    };
    std::vector<Stmt> s;
    ir::Var nj("nj");
    ranges_[nj.get()] = {0, m.NI / 2 - 1};
    Expr k0 = Expr(kk * 16);
    Expr addr_b;
    if (!g.transpose_b) {
      addr_b =
          shared_addr(b, k0 + lane % 16, wcol + Expr(nj) * 16 + lane / 16 * 8);
    } else {
      addr_b = shared_addr(b, wcol + Expr(nj) * 16 + lane / 16 * 8 + lane % 8,
                           k0 + lane / 8 % 2 * 8);
    }
    s.push_back(MakeFor(
        nj, 0, m.NI / 2, ir::ForKind::kUnrolled,
        Intrin("ldmatrix",
               {Expr(4), Expr(g.transpose_b ? 0 : 1),
                ir::Call(DataType::kI64, "address_of",
                         {m.b_keep.defined()
                              ? ir::Load(m.b_keep, {Expr(kk), Expr(nj) * 2, 0})
                              : ir::Load(m.bf, {buf, Expr(nj) * 2, 0})}),
                addr_b})));
    return ir::Seq(s);
  }

  // The mma of k16 step kk on fragment buffer buf (or the kept operands).
  Stmt MmaStep(const MmaGemm& m, Expr buf, int kk) {
    ir::Var mi("mi"), ni("ni");
    ranges_[mi.get()] = {0, m.MI - 1};
    ranges_[ni.get()] = {0, m.NI - 1};
    // Serpentine over n: consecutive mma share A and the last B fragment.
    Expr n = ir::Select(Expr(mi) % 2 == 0, Expr(ni), Expr(m.NI - 1) - ni);
    Stmt mma = Intrin(
        "mma", {ir::Call(DataType::kI32, m.kind, {}), Ref(m.acc, {mi, n}),
                m.a_keep.defined() ? Ref(m.a_keep, {Expr(kk), mi})
                                   : Ref(m.af, {buf, mi}),
                m.b_keep.defined() ? Ref(m.b_keep, {Expr(kk), n})
                                   : Ref(m.bf, {buf, n})});
    return MakeFor(mi, 0, m.MI, ir::ForKind::kUnrolled,
                   MakeFor(ni, 0, m.NI, ir::ForKind::kUnrolled, mma));
  }

  static Stmt WithFragments(const MmaGemm& m, Stmt body) {
    return ir::MakeStmt<ir::AllocateNode>(
        m.af, ir::MakeStmt<ir::AllocateNode>(m.bf, body, ir::SourceLoc()),
        ir::SourceLoc());
  }

  // The descriptor of k16 step kk of a SWIZZLE_128B operand region whose
  // M/N extent starts at mn0.
  Expr WgmmaDescriptor(const ir::Region& region, const WgmmaOperand& o, int kk,
                       Expr mn0) {
    ir::Region r = MutateRegion(region);
    std::vector<Expr> idx =
        RegionIndices(r, o.k_major ? std::vector<Expr>{mn0, Expr(kk * 16)}
                                   : std::vector<Expr>{Expr(kk * 16), mn0});
    return ir::Call(DataType::kI64, "tl::wgmma_desc_sw128",
                    {SharedAddr(r.buffer, SharedOffset(r.buffer, idx)),
                     Expr(kWgmmaGroupBytes)});
  }

  // One wgmma of k16 step kk: (type, N, A M-major (-1: A in registers),
  // B N-major, accumulator, A's registers or descriptor, B's descriptor).
  Stmt WgmmaStep(const MmaGemm& m, const ir::GemmNode& g, int kk) {
    Expr b = WgmmaDescriptor(g.b, *m.wgmma, kk, Expr(0));
    Expr a, a_mn_major = Expr(-1);
    if (m.wgmma_a) {
      // Warpgroup w reads rows 64w.. of A.
      a = WgmmaDescriptor(g.a, *m.wgmma_a, kk, Expr(tx_) / 128 * 64);
      a_mn_major = Expr(m.wgmma_a->k_major ? 0 : 1);
    } else {
      a = m.a_keep.defined() ? Ref(m.a_keep, {Expr(kk), Expr(0)})
                             : Ref(m.af, {Expr(kk), Expr(0)});
    }
    const char* type = g.a.buffer->dtype == DataType::kBF16 ? "bf16" : "f16";
    return Intrin(
        "wgmma",
        {ir::Call(DataType::kI32, type, {}), Expr(int(m.wtn)), a_mn_major,
         Expr(m.wgmma->k_major ? 0 : 1), Ref(m.acc, {Expr(0)}), a, b});
  }

  // Waits for the committed wgmma, then tells the compiler their
  // accumulators changed here (it must not read them before the wait).
  Stmt WaitWgmma(const std::vector<ir::Buffer>& accumulators) {
    std::vector<Stmt> s{Intrin("wgmma_wait", {Expr(0)})};
    for (const ir::Buffer& acc : accumulators) {
      const FragmentLayout& l = Layout(acc);
      s.push_back(Intrin("fence_operand",
                         {Ref(Local(acc), {Expr(0)}), Expr(l.ni() * 4)}));
    }
    return ir::Seq(s);
  }

  // The warpgroup issues every k16 step and commits them. With A in
  // registers, or outside a run of gemms, it waits right away; a gemm whose
  // operands are both in shared memory leaves the wait to the statement
  // list (deferred_wgmma_), so that the next gemms of the list issue while
  // it runs. B's tile may be overwritten only after the wait (it covers the
  // tensor cores' shared reads) and the next barrier.
  Stmt LowerWgmma(const ir::GemmNode& g, const MmaGemm& m) {
    uses_wgmma_ = true;
    std::vector<Stmt> body;
    if (g.clear_accum) body.push_back(ClearAccumulator(g, m));
    if (!m.wgmma_a) {
      for (int kk = 0; kk < m.KK; ++kk)
        body.push_back(LoadFragments(m, g, Expr(kk), kk));
    }
    body.push_back(Intrin("wgmma_fence", {}));
    for (int kk = 0; kk < m.KK; ++kk) body.push_back(WgmmaStep(m, g, kk));
    body.push_back(Intrin("wgmma_commit", {}));
    if (m.wgmma_a && defer_wgmma_) {
      deferred_wgmma_.push_back(g.c.buffer);
    } else {
      body.push_back(WaitWgmma({g.c.buffer}));
    }
    if (m.wgmma_a || m.a_keep.defined()) return ir::Seq(body);
    return ir::MakeStmt<ir::AllocateNode>(m.af, ir::Seq(body), ir::SourceLoc());
  }

  // Whether statement s may issue while the deferred wgmma run: another
  // gemm on shared operands, not clearing a running accumulator (adding to
  // one is the k loop's own pattern). Not a barrier: it may order a write
  // after the tensor cores' reads (another warpgroup's, even), and only
  // the wait ends those.
  bool JoinsDeferredWgmma(const Stmt& s) {
    const auto* g = s.As<ir::GemmNode>();
    if (g == nullptr || !WgmmaOperandA(*g, st_)) return false;
    for (const ir::Buffer& acc : deferred_wgmma_)
      if (acc.get() == g->c.buffer.get() && g->clear_accum) return false;
    return true;
  }

  Stmt LowerGemm(const ir::GemmNode& g) {
    std::optional<MmaGemm> m = PlanMma(g);
    if (!m) return LowerGemmFma(g, MutateRegion(g.a), MutateRegion(g.b));
    if (m->wgmma) return LowerWgmma(g, *m);
    std::vector<Stmt> out;
    if (g.clear_accum) out.push_back(ClearAccumulator(g, *m));
    std::vector<Stmt> body;
    body.push_back(LoadFragments(*m, g, Expr(0), 0));
    for (int kk = 0; kk < m->KK; ++kk) {
      // Fragments of step kk + 1 load while step kk's mma run.
      if (kk + 1 < m->KK)
        body.push_back(LoadFragments(*m, g, Expr((kk + 1) % 2), kk + 1));
      body.push_back(MmaStep(*m, Expr(kk % 2), kk));
    }
    out.push_back(WithFragments(*m, ir::Seq(body)));
    return ir::Seq(out);
  }

  // The steady state inject_pipeline (and insert_barriers) make of a
  // Pipelined loop whose only consumer is one gemm of the current stage:
  //   for k: cp_async_wait(S-2); __syncthreads(); if (k+S-1 < n) prefetch;
  //          cp_async_commit(); gemm(As[k % S], Bs[k % S], acc)
  struct PipelinedGemm {
    Stmt wait, sync, prefetch, commit;  // sync undefined: thread sync off
    Stmt gemm;
  };
  static std::optional<PipelinedGemm> MatchPipelinedGemm(const Stmt& body) {
    const auto* seq = body.As<ir::SeqNode>();
    if (seq == nullptr) return std::nullopt;
    const std::vector<Stmt>& s = seq->stmts;
    PipelinedGemm p;
    size_t i = 0;
    if (i < s.size() && AsIntrin(s[i], "cp_async_wait")) p.wait = s[i++];
    if (i < s.size() && s[i]->kind == ir::StmtKind::kSyncThreads)
      p.sync = s[i++];
    if (i < s.size() && s[i].As<ir::IfThenElseNode>() &&
        OnlyProducerCopies(s[i]))
      p.prefetch = s[i++];
    if (i < s.size() && AsIntrin(s[i], "cp_async_commit")) p.commit = s[i++];
    if (i < s.size() && s[i].As<ir::GemmNode>()) p.gemm = s[i++];
    if (!p.wait.defined() || !p.prefetch.defined() || !p.commit.defined() ||
        !p.gemm.defined() || p.gemm.As<ir::GemmNode>()->clear_accum ||
        i != s.size()) {
      return std::nullopt;
    }
    return p;
  }

  // Fragment double buffering across k-tiles ("fragpipe", CUTLASS's
  // multistage main loop): the fragments of the first k16 step of tile k+1
  // load during the last step of tile k, so the tensor cores never wait for
  // an ldmatrix at a tile boundary. The (wait, barrier) pair the passes put
  // at the top of iteration k+1 moves to just before that load, i.e. before
  // the last k16 step of iteration k (and once before the loop):
  //   wait; sync; load(buf 0, tile min, step 0)
  //   for k:
  //     for kk (unrolled):
  //       if kk == KK-1: wait; sync
  //       load(buf (kk+1)%2, kk+1 < KK ? (tile k, step kk+1) : (tile k+1, 0))
  //       if kk == 0: prefetch; commit
  //       mma(buf kk%2)
  // Legal because the body has no other shared-memory statement: every read
  // still follows the wait and barrier that preceded it before, and precedes
  // the next barrier (the prefetch's writes were proven disjoint from the
  // gemm's reads of the same iteration, so their order may change). The
  // wait still counts the same committed groups: the commit sits at kk == 0,
  // before the wait at kk == KK-1 (KK >= 2). KK must be even so that tile
  // k+1 finds its first fragments in buffer 0. The last iteration loads
  // (and discards) fragments of the stage after the last tile: in bounds of
  // shared memory and not in flight (no prefetch was issued past the end).
  std::optional<Stmt> LowerPipelinedGemm(const ir::ForNode* op) {
    std::optional<PipelinedGemm> p = MatchPipelinedGemm(op->body);
    if (!p) return std::nullopt;
    const ir::GemmNode& g = *p->gemm.As<ir::GemmNode>();
    if (KSteps(g) < 2 || KSteps(g) % 2 != 0) return std::nullopt;
    if (WgmmaOperandB(g, st_)) return std::nullopt;
    std::optional<MmaGemm> m = PlanMma(g);
    if (!m) return std::nullopt;
    // The same gemm at the first tile and at the next one.
    Stmt first = Substitute(p->gemm, {{op->var.get(), op->min}});
    Stmt next = Substitute(p->gemm, {{op->var.get(), Expr(op->var) + 1}});
    const ir::GemmNode& g_first = *first.As<ir::GemmNode>();
    const ir::GemmNode& g_next = *next.As<ir::GemmNode>();
    MarkAsync(p->prefetch);  // followed by the commit: cp.async
    auto wait_and_sync = [&](std::vector<Stmt>& to) {
      to.push_back(MutateStmt(p->wait));
      if (p->sync.defined()) to.push_back(p->sync);
    };
    std::vector<Stmt> out;
    wait_and_sync(out);
    out.push_back(LoadFragments(*m, g_first, Expr(0), 0));
    auto mn = ir::AsConstInt(op->min), ex = ir::AsConstInt(op->extent);
    if (mn && ex) ranges_[op->var.get()] = {*mn, *mn + *ex - 1};
    std::vector<Stmt> body;
    for (int kk = 0; kk < m->KK; ++kk) {
      bool last = kk == m->KK - 1;
      if (last) wait_and_sync(body);
      body.push_back(last ? LoadFragments(*m, g_next, Expr(0), 0)
                          : LoadFragments(*m, g, Expr((kk + 1) % 2), kk + 1));
      if (kk == 0) {
        body.push_back(MutateStmt(p->prefetch));
        body.push_back(MutateStmt(p->commit));
      }
      body.push_back(MmaStep(*m, Expr(kk % 2), kk));
    }
    out.push_back(ir::MakeStmt<ir::ForNode>(
        op->var, op->min, op->extent, ir::ForKind::kSerial, 0,
        std::vector<int>{}, std::vector<int>{}, ir::Seq(body), op->loc));
    return WithFragments(*m, ir::Seq(out, op->loc));
  }

  Stmt LowerGemmFma(const ir::GemmNode& g, const ir::Region& a,
                    const ir::Region& b) {
    if (a.buffer->scope == ir::Scope::kFragment ||
        b.buffer->scope == ir::Scope::kFragment) {
      Fail(&g, "gemm operands in fragments (copy them to shared memory)");
      return ir::Seq({});
    }
    ir::Buffer acc = Local(g.c.buffer);
    DataType t = g.c.buffer->dtype;
    auto ae = *ConstSqueezedExtents(a);
    int64_t K = g.transpose_a ? ae[0] : ae[1];
    return ForEachLocal(g.c.buffer, [&](const std::vector<Expr>& li,
                                        const std::vector<Expr>& ij) {
      ir::Var k("k");
      ranges_[k.get()] = {0, K - 1};
      std::vector<Expr> ai = g.transpose_a ? std::vector<Expr>{k, ij[0]}
                                           : std::vector<Expr>{ij[0], k};
      std::vector<Expr> bi = g.transpose_b ? std::vector<Expr>{ij[1], k}
                                           : std::vector<Expr>{k, ij[1]};
      Expr av = Cast(t, Load(a.buffer, RegionIndices(a, ai)));
      Expr bv = Cast(t, Load(b.buffer, RegionIndices(b, bi)));
      Stmt step = Store(acc, li, ir::Load(acc, li) + av * bv);
      Stmt loop = MakeFor(k, 0, Expr(int(K)), ir::ForKind::kSerial, step);
      if (g.clear_accum) return ir::Seq({Store(acc, li, ir::Zero(t)), loop});
      return loop;
    });
  }

  // ------------------------------------------------------------ reduce
  ir::Buffer Scratch(DataType t) {
    ir::Buffer s = ir::MakeBuffer(
        "red_scratch", t, {Expr(int(st_.smem.scratch_bytes / dtype_bytes(t)))},
        ir::Scope::kShared);
    st_.smem.offset[s.get()] = st_.smem.scratch_offset;
    st_.smem.bytes[s.get()] = st_.smem.scratch_bytes;
    scratch_.push_back(s);
    return s;
  }

  static Expr Combine(ir::ReduceKind k, const Expr& a, const Expr& b) {
    switch (k) {
      case ir::ReduceKind::kSum:
      case ir::ReduceKind::kAbsSum:
        return a + b;
      case ir::ReduceKind::kMax:
      case ir::ReduceKind::kAbsMax:
        return ir::Max(a, b);
      case ir::ReduceKind::kMin:
        return ir::Min(a, b);
    }
    return a;
  }
  static Expr Identity(ir::ReduceKind k, DataType t) {
    switch (k) {
      case ir::ReduceKind::kSum:
      case ir::ReduceKind::kAbsSum:
      case ir::ReduceKind::kAbsMax:
        return ir::Zero(t);
      case ir::ReduceKind::kMax:
        return is_float(t) ? ir::FloatImm(t, -INFINITY)
                           : ir::MakeConst(t, -2147483648.0);
      case ir::ReduceKind::kMin:
        return is_float(t) ? ir::FloatImm(t, INFINITY)
                           : ir::MakeConst(t, 2147483647.0);
    }
    return ir::Zero(t);
  }
  static Expr Pre(ir::ReduceKind k, const Expr& v) {
    if (k == ir::ReduceKind::kAbsSum || k == ir::ReduceKind::kAbsMax)
      return ir::Math(ir::MathOp::kAbs, v);
    return v;
  }
  static const char* WarpKind(ir::ReduceKind k) {
    switch (k) {
      case ir::ReduceKind::kSum:
      case ir::ReduceKind::kAbsSum:
        return "sum";
      case ir::ReduceKind::kMax:
      case ir::ReduceKind::kAbsMax:
        return "max";
      case ir::ReduceKind::kMin:
        return "min";
    }
    return "sum";
  }

  Stmt LowerReduce(const ir::ReduceNode& r) {
    DataType t = r.dst->dtype;
    auto sl = st_.layouts.find(r.src.get());
    auto dl = st_.layouts.find(r.dst.get());
    if (sl != st_.layouts.end() && dl != st_.layouts.end() &&
        sl->second.kind() == FragmentLayout::Kind::kMma && r.dim == 1 &&
        dl->second == sl->second.RowsOf()) {
      const FragmentLayout& l = sl->second;
      ir::Buffer src = Local(r.src), dst = Local(r.dst);
      ir::Var mi("mi"), h("h"), acc_v(absl::StrCat(r.dst->name, "_part"));
      std::vector<Stmt> per_row;
      Expr part = Identity(r.reduce_kind, t);
      for (int ni = 0; ni < l.ni(); ++ni)
        for (int e = 0; e < 2; ++e)
          part =
              Combine(r.reduce_kind, part,
                      Pre(r.reduce_kind,
                          Cast(t, ir::Load(src, {mi, ni, Expr(h) * 2 + e}))));
      Expr warp =
          ir::Call(t, absl::StrCat("warp_reduce_", WarpKind(r.reduce_kind)),
                   {Expr(4), part});
      per_row.push_back(Let(acc_v, warp));
      Expr total = acc_v;
      if (l.warps_n() == 1) {
        Expr v = r.clear
                     ? total
                     : Combine(r.reduce_kind, ir::Load(dst, {mi, h}), total);
        per_row.push_back(Store(dst, {mi, h}, v));
        return MakeFor(
            mi, 0, l.mi(), ir::ForKind::kUnrolled,
            MakeFor(h, 0, 2, ir::ForKind::kUnrolled, ir::Seq(per_row)));
      }
      // Across the warps that share rows: partials to shared, then combine.
      std::vector<Stmt> out;
      ir::Buffer scratch = Scratch(DataType::kF32);
      int M = static_cast<int>(l.shape()[0]);
      Expr row = l.Logical(tx_, {mi, Expr(0), Expr(h) * 2})[0];
      Expr wn = Expr(tx_) / 32 % l.warps_n();
      per_row.push_back(MakeIf(
          Expr(tx_) % 4 == 0,
          Store(scratch, {wn * M + row}, Cast(DataType::kF32, Expr(acc_v)))));
      out.push_back(
          MakeFor(mi, 0, l.mi(), ir::ForKind::kUnrolled,
                  MakeFor(h, 0, 2, ir::ForKind::kUnrolled, ir::Seq(per_row))));
      out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
      ir::Var mi2("mi"), h2("h");
      Expr row2 = l.Logical(tx_, {mi2, Expr(0), Expr(h2) * 2})[0];
      Expr comb;
      for (int w = 0; w < l.warps_n(); ++w) {
        Expr v = Cast(t, ir::Load(scratch, {Expr(w * M) + row2}));
        comb = comb.defined() ? Combine(r.reduce_kind, comb, v) : v;
      }
      Expr v = r.clear ? comb
                       : Combine(r.reduce_kind, ir::Load(dst, {mi2, h2}), comb);
      out.push_back(MakeFor(
          mi2, 0, l.mi(), ir::ForKind::kUnrolled,
          MakeFor(h2, 0, 2, ir::ForKind::kUnrolled, Store(dst, {mi2, h2}, v))));
      out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
      return ir::Seq(out);
    }
    return ReduceGeneric(r);
  }

  // Writes a whole tile (fragment or shared) into a flat row-major scratch
  // copy (or returns a loader for a shared tile read in place).
  std::function<Expr(const std::vector<Expr>&)> Staged(const ir::Buffer& b,
                                                       std::vector<Stmt>& out) {
    if (b->scope == ir::Scope::kShared) {
      return [this, b](const std::vector<Expr>& idx) { return Load(b, idx); };
    }
    ir::Buffer scratch = Scratch(b->dtype);
    ir::Buffer local = Local(b);
    const FragmentLayout& l = Layout(b);
    out.push_back(ForEachLocal(b, [&](const std::vector<Expr>& li,
                                      const std::vector<Expr>& logical) {
      std::vector<Expr> shape;
      for (int64_t d : l.shape()) shape.push_back(Expr(int(d)));
      return Guard(l.Leader(tx_), Store(scratch, {FlatIndex(shape, logical)},
                                        ir::Load(local, li)));
    }));
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    std::vector<Expr> shape = b->shape;
    return [scratch, shape](const std::vector<Expr>& idx) {
      return ir::Load(scratch, {FlatIndex(shape, idx)});
    };
  }

  Stmt ReduceGeneric(const ir::ReduceNode& r) {
    if (!ConstShape(r.src->shape)) {
      Fail(&r, "a reduce of a tile with a symbolic shape");
      return ir::Seq({});
    }
    std::vector<Stmt> out;
    auto src = Staged(r.src, out);
    if (r.dst->scope == ir::Scope::kFragment) {
      ir::Buffer local = Local(r.dst);
      out.push_back(ForEachLocal(r.dst, [&](const std::vector<Expr>& li,
                                            const std::vector<Expr>& logical) {
        return ReduceOne(
            r, src, logical, [&](Expr v) { return Store(local, li, v); },
            ir::Load(local, li));
      }));
    } else {
      ir::Region full = ir::Region::Full(r.dst);
      out.push_back(
          ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
            return ReduceOne(
                r, src, sq, [&](Expr v) { return Store(r.dst, sq, v); },
                Load(r.dst, sq));
          }));
    }
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    return ir::Seq(out);
  }
  Stmt ReduceOne(const ir::ReduceNode& r,
                 const std::function<Expr(const std::vector<Expr>&)>& src,
                 const std::vector<Expr>& di,
                 const std::function<Stmt(Expr)>& set, const Expr& old) {
    DataType t = r.dst->dtype;
    int64_t n = (*ConstShape(r.src->shape))[r.dim];
    ir::Var k("k");
    ir::Buffer accv = ir::MakeBuffer(absl::StrCat(r.dst->name, "_acc"), t,
                                     {Expr(1)}, ir::Scope::kVar);
    std::vector<Expr> si = di;
    si.insert(si.begin() + r.dim, Expr(k));
    Stmt init = ir::MakeStmt<ir::StoreNode>(accv, std::vector<Expr>{0},
                                            Identity(r.reduce_kind, t),
                                            ir::SourceLoc());
    Stmt step = ir::MakeStmt<ir::StoreNode>(
        accv, std::vector<Expr>{0},
        Combine(r.reduce_kind, ir::Load(accv, {0}),
                Pre(r.reduce_kind, Cast(t, src(si)))),
        ir::SourceLoc());
    Stmt loop = MakeFor(k, 0, Expr(int(n)), ir::ForKind::kSerial, step);
    Expr result = ir::Load(accv, {0});
    Stmt fin = set(r.clear ? result : Combine(r.reduce_kind, old, result));
    return ir::MakeStmt<ir::AllocateNode>(accv, ir::Seq({init, loop, fin}),
                                          ir::SourceLoc());
  }

  // ------------------------------------------------------------ cumsum
  Stmt LowerCumsum(const ir::CumsumNode& c) {
    auto shape = ConstShape(c.src->shape);
    if (!shape) {
      Fail(&c, "a cumsum of a tile with a symbolic shape");
      return ir::Seq({});
    }
    std::vector<Stmt> out;
    // Stage src into scratch (row-major), scan lines in place, read back.
    ir::Buffer scratch = Scratch(c.src->dtype);
    std::vector<Expr> shp = c.src->shape;
    if (c.src->scope == ir::Scope::kFragment) {
      ir::Buffer local = Local(c.src);
      const FragmentLayout& l = Layout(c.src);
      out.push_back(ForEachLocal(c.src, [&](const std::vector<Expr>& li,
                                            const std::vector<Expr>& logical) {
        return Guard(l.Leader(tx_), Store(scratch, {FlatIndex(shp, logical)},
                                          ir::Load(local, li)));
      }));
    } else {
      ir::Region full = ir::Region::Full(c.src);
      out.push_back(
          ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
            return Store(scratch, {FlatIndex(shp, sq)}, Load(c.src, sq));
          }));
    }
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    // Lines: every index but dim.
    std::vector<int64_t> line_shape;
    for (int d = 0; d < static_cast<int>(shape->size()); ++d)
      if (d != c.dim) line_shape.push_back((*shape)[d]);
    if (line_shape.empty()) line_shape.push_back(1);
    ir::Buffer lines =
        ir::MakeBuffer("lines", DataType::kI32, {Expr(int(line_shape.size()))},
                       ir::Scope::kLocal);
    (void)lines;
    int64_t n = (*shape)[c.dim];
    std::vector<Expr> ls_expr;
    for (int64_t d : line_shape) ls_expr.push_back(Expr(int(d)));
    ir::Region line_region{
        ir::MakeBuffer("line", DataType::kI32, ls_expr, ir::Scope::kLocal),
        std::vector<Expr>(line_shape.size(), Expr(0)), ls_expr};
    out.push_back(
        ForEachElement(line_region, 1, [&](const std::vector<Expr>& li, int) {
          ir::Var k("k");
          ir::Buffer run = ir::MakeBuffer("running", c.src->dtype, {Expr(1)},
                                          ir::Scope::kVar);
          std::vector<Expr> idx;
          size_t j = 0;
          Expr pos = c.reverse ? Expr(int(n - 1)) - k : Expr(k);
          for (int d = 0; d < static_cast<int>(shape->size()); ++d)
            idx.push_back(
                d == c.dim ? pos : (shape->size() == 1 ? Expr(0) : li[j++]));
          Expr flat = FlatIndex(shp, idx);
          Stmt step =
              ir::Seq({ir::MakeStmt<ir::StoreNode>(
                           run, std::vector<Expr>{0},
                           ir::Load(run, {0}) + ir::Load(scratch, {flat}),
                           ir::SourceLoc()),
                       Store(scratch, {flat}, ir::Load(run, {0}))});
          return ir::MakeStmt<ir::AllocateNode>(
              run,
              ir::Seq(
                  {ir::MakeStmt<ir::StoreNode>(run, std::vector<Expr>{0},
                                               ir::Zero(c.src->dtype),
                                               ir::SourceLoc()),
                   MakeFor(k, 0, Expr(int(n)), ir::ForKind::kSerial, step)}),
              ir::SourceLoc());
        }));
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    if (c.dst->scope == ir::Scope::kFragment) {
      ir::Buffer local = Local(c.dst);
      out.push_back(ForEachLocal(c.dst, [&](const std::vector<Expr>& li,
                                            const std::vector<Expr>& logical) {
        return Store(local, li, ir::Load(scratch, {FlatIndex(shp, logical)}));
      }));
    } else {
      ir::Region full = ir::Region::Full(c.dst);
      out.push_back(
          ForEachElement(full, 1, [&](const std::vector<Expr>& sq, int) {
            return Store(c.dst, sq, ir::Load(scratch, {FlatIndex(shp, sq)}));
          }));
    }
    out.push_back(ir::MakeStmt<ir::SyncThreadsNode>(ir::SourceLoc()));
    return ir::Seq(out);
  }

  LoweringState& st_;
  ir::Var tx_;
  std::unordered_map<const ir::VarNode*, Range> ranges_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> locals_;
  std::unordered_set<const ir::CopyNode*> async_;
  std::vector<ir::Buffer> scratch_;
  std::optional<std::pair<int, bool>> swizzle_;
  std::vector<Expr> grid_;
  std::vector<ir::Var> block_vars_;
  int in_parallel_ = 0;
  int gemm_count_ = 0;
  int kept_count_ = 0;
  bool uses_wgmma_ = false;
  // Lowering a gemm that is a statement of a list (its wait may wait), and
  // the accumulators of the list's committed, unwaited wgmma.
  bool defer_wgmma_ = false;
  std::vector<ir::Buffer> deferred_wgmma_;

 public:
  bool uses_wgmma() const { return uses_wgmma_; }

 private:
  // Per gemm, its A and B kept in registers: (array, filled by this gemm).
  std::unordered_map<const ir::GemmNode*,
                     std::array<std::optional<std::pair<ir::Buffer, bool>>, 2>>
      kept_;
};

// wgmma reads shared memory through the async proxy: what threads wrote
// through the generic one (stores, cp.async) must be fenced before the
// barrier that publishes it, by every writer (fence.proxy.async).
ir::Stmt FenceAsyncProxyBeforeBarriers(const ir::Stmt& body) {
  struct Fence : ir::IRMutator {
    Stmt Visit(const ir::SyncThreadsNode* op) override {
      return ir::Seq({Intrin("fence_proxy_async", {}), Self(op)});
    }
    Stmt Visit(const ir::EvaluateNode* op) override {
      const ir::CallNode* c = op->value.As<ir::CallNode>();
      if (c != nullptr && c->name == "mbarrier_arrive")
        return ir::Seq({Intrin("fence_proxy_async", {}), Self(op)});
      return Self(op);
    }
  } fence;
  return fence.MutateStmt(body);
}

}  // namespace

absl::Status LowerTileOps(LoweringState& state) {
  Lowerer l(state);
  ir::Stmt body = l.MutateStmt(state.program.body);
  if (!l.status.ok()) return l.status;
  if (l.uses_wgmma()) body = FenceAsyncProxyBeforeBarriers(body);
  state.program.body = body;
  return absl::OkStatus();
}

}  // namespace tessel::passes
