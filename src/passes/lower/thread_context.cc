#include "src/passes/lower/thread_context.h"

#include "absl/strings/str_cat.h"
#include "src/ir/printer.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes::lower {

ThreadContext::ThreadContext(LoweringState& state)
    : st_(state), tx_(ir::Var("tx")) {
  st_.thread_var = tx_;
  ranges_[tx_.get()] = {0, state.threads - 1};
}

void ThreadContext::Fail(const ir::StmtNode* at, const std::string& what) {
  if (!status.ok()) return;
  if (at == nullptr || at->loc.line() == 0) at = user_stmt_;
  status = absl::UnimplementedError(
      absl::StrCat(at != nullptr ? ir::FormatLoc(at->loc) : "<unknown>", ": ",
                   st_.program.name, ": ", what));
}

Expr ThreadContext::Cast(DataType t, const Expr& e) {
  return e.dtype() == t ? e : ir::Cast(t, e);
}

// The local array a fragment becomes.
ir::Buffer ThreadContext::Local(const ir::Buffer& frag) {
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

const FragmentLayout& ThreadContext::Layout(const ir::Buffer& frag) {
  return st_.layouts.at(frag.get());
}

Stmt ThreadContext::Store(const ir::Buffer& b, std::vector<Expr> idx,
                          Expr value) {
  value = Cast(b->dtype, value);
  return Flatten(
      ir::MakeStmt<ir::StoreNode>(b, std::move(idx), value, ir::SourceLoc()));
}

Expr ThreadContext::Load(const ir::Buffer& b, std::vector<Expr> idx) {
  return FlattenExpr(ir::Load(b, std::move(idx)));
}

Stmt ThreadContext::Guard(const Expr& cond, Stmt s) {
  if (!cond.defined()) return s;
  return MakeIf(cond, std::move(s));
}

Expr ThreadContext::And(const Expr& a, const Expr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a && b;
}

// Upper bound of an index expression from the known variable ranges.
std::optional<int64_t> ThreadContext::Upper(const Expr& e) {
  return Bound(e, true);
}

std::optional<int64_t> ThreadContext::Bound(const Expr& e, bool upper) {
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
        if (a0 && b0 && ProvablyNonNegative(b->a) && ProvablyNonNegative(b->b))
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
Expr ThreadContext::InBounds(const ir::Buffer& b,
                             const std::vector<Expr>& idx) {
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
  // A start below 0 reads zeros there too (checked after the upper edges:
  // the provable kernels' code stays as it was).
  for (const Expr& i : idx) {
    if (!ProvablyNonNegative(i)) cond = And(cond, i >= ir::Zero(i.dtype()));
  }
  return cond;
}

// The flat element offset of indices into a shared buffer, swizzle applied
// to the last two dims; row terms that are multiples of the swizzle period
// are added outside the XOR so they stay cheap.
Expr ThreadContext::SharedOffset(const ir::Buffer& b,
                                 const std::vector<Expr>& idx) {
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
  Expr swz =
      ir::Binary(ir::BinaryOp::kBitXor, chunk,
                 ir::Binary(ir::BinaryOp::kBitAnd,
                            ir::Binary(ir::BinaryOp::kShr, inner, Expr(shift)),
                            Expr(mask)));
  Expr in_chunk = KnownDivisor(col) % vec == 0 ? Expr(0) : col % vec;
  if (b->layout.atoms && row_bytes > 128) {
    // Column atoms of 128 bytes, [rows][atom] each: the chunk XOR stays
    // inside the atom, the atom index picks the [rows][128 B] block.
    const int atom = 128 / eb;
    Expr in_atom =
        ir::Binary(ir::BinaryOp::kBitXor, chunk % (atom / vec),
                   ir::Binary(ir::BinaryOp::kBitAnd, inner, Expr(7)));
    return base + col / atom * int(rows * atom) + (inner + outer) * atom +
           in_atom * vec + in_chunk;
  }
  return base + (inner + outer) * int(cols) + swz * vec + in_chunk;
}

Expr ThreadContext::GlobalIndex(const ir::Buffer& b,
                                const std::vector<Expr>& idx) {
  if (auto it = st_.strides.find(b.get()); it != st_.strides.end()) {
    // A strided view: sum of index x stride, in 64 bits (a view of a few
    // rows of a large tensor reaches far).
    Expr flat;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr term = Cast(DataType::kI64, idx[d]);
      if (!ir::IsConstInt(it->second[d], 1))
        term = term * Cast(DataType::kI64, it->second[d]);
      flat = flat.defined() ? flat + term : term;
    }
    return flat.defined() ? flat : Expr(0);
  }
  bool wide = true;
  if (auto n = b->ConstNumElements()) wide = *n >= (int64_t{1} << 31);
  if (!wide) return FlatIndex(b->shape, idx);
  std::vector<Expr> shape, id;
  for (const Expr& s : b->shape) shape.push_back(Cast(DataType::kI64, s));
  for (const Expr& i : idx) id.push_back(Cast(DataType::kI64, i));
  return FlatIndex(shape, id);
}

Expr ThreadContext::FlatOffset(const ir::Buffer& b,
                               const std::vector<Expr>& idx) {
  if (b->scope == ir::Scope::kShared) return SharedOffset(b, idx);
  return GlobalIndex(b, idx);
}

bool ThreadContext::NeedsFlatten(const ir::Buffer& b, size_t n) {
  return (b->scope == ir::Scope::kGlobal || b->scope == ir::Scope::kShared) &&
         n == static_cast<size_t>(b->rank()) && b->rank() > 1;
}

Stmt ThreadContext::Flatten(const Stmt& s) {
  const auto* st = s.As<ir::StoreNode>();
  if (st == nullptr || !NeedsFlatten(st->buffer, st->indices.size())) return s;
  return ir::MakeStmt<ir::StoreNode>(
      st->buffer, std::vector<Expr>{FlatOffset(st->buffer, st->indices)},
      st->value, st->loc);
}

Expr ThreadContext::FlattenExpr(const Expr& e) {
  const auto* l = e.As<ir::LoadNode>();
  if (l == nullptr || !NeedsFlatten(l->buffer, l->indices.size())) return e;
  return ir::Load(l->buffer, {FlatOffset(l->buffer, l->indices)});
}

// Loops over every local element of a fragment's layout (unrolled), with
// the tail guard; fn gets (local indices, logical indices).
Stmt ThreadContext::ForEachLocal(
    const ir::Buffer& frag,
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
    body = MakeFor(vars[d], 0, Expr(int(ls[d])), ir::ForKind::kUnrolled, body);
  }
  return body;
}

// Spreads the elements of a region's (squeezed) box over the threads, vec
// consecutive elements (along the last dim) per step; fn gets the squeezed
// index of the first element and the vector width.
Stmt ThreadContext::ForEachElement(
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
int ThreadContext::VectorWidth(const ir::Region& global,
                               const ir::Region& other, int max_bytes) {
  if (global.buffer->dtype != other.buffer->dtype) return 1;
  if (!st_.InnerContiguous(global.buffer.get())) return 1;
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
    bool ok =
        ext->back() % vec == 0 && KnownDivisor(global.start.back()) % vec == 0;
    if (auto last = ir::AsConstInt(global.buffer->shape.back())) {
      ok = ok && *last % vec == 0;
    }
    if (ok) break;
    vec /= 2;
  }
  if (vec > 1) RequireAlignment(global.buffer, vec, "vectorized copies");
  return vec;
}

void ThreadContext::RequireAlignment(const ir::Buffer& b, int multiple,
                                     const std::string& why) {
  for (size_t i = 0; i < st_.program.params.size(); ++i) {
    if (st_.program.params[i].same_as(b)) {
      st_.alignment.push_back({static_cast<int>(i), multiple, why});
    }
  }
}

}  // namespace tessel::passes::lower
