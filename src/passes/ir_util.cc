#include "src/passes/ir_util.h"

#include <numeric>

#include "src/ir/let.h"
#include "src/ir/visitor.h"

namespace tessel::passes {
namespace {

class BufferSubst : public ir::IRMutator {
 public:
  explicit BufferSubst(const BufferMap& map) : map_(map) {}
  ir::Buffer MutateBuffer(const ir::Buffer& b) override {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }
  ir::Expr Visit(const ir::LoadNode* op) override {
    ir::Buffer b = MutateBuffer(op->buffer);
    bool changed = !b.same_as(op->buffer);
    std::vector<ir::Expr> idx = MutateExprs(op->indices, &changed);
    if (!changed) return Self(op);
    return ir::Load(b, idx);
  }

 private:
  const BufferMap& map_;
};

}  // namespace

ir::Stmt ReplaceBuffers(const ir::Stmt& s, const BufferMap& map) {
  if (map.empty()) return s;
  return BufferSubst(map).MutateStmt(s);
}

ir::Expr FlatIndex(const std::vector<ir::Expr>& shape,
                   const std::vector<ir::Expr>& indices) {
  ir::Expr flat = indices.empty() ? ir::Expr(0) : indices[0];
  for (size_t d = 1; d < indices.size(); ++d) {
    ir::Expr dim = shape[d];
    if (flat.dtype() != dim.dtype()) dim = ir::Cast(flat.dtype(), dim);
    ir::Expr idx = indices[d];
    if (idx.dtype() != flat.dtype()) idx = ir::Cast(flat.dtype(), idx);
    flat = flat * dim + idx;
  }
  return flat;
}

std::optional<std::vector<int64_t>> ConstShape(const std::vector<ir::Expr>& s) {
  std::vector<int64_t> out;
  for (const ir::Expr& e : s) {
    auto c = ir::AsConstInt(e);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::vector<int> NonUnitDims(const ir::Region& r) {
  std::vector<int> dims;
  for (int d = 0; d < r.rank(); ++d) {
    if (!ir::IsConstInt(r.extent[d], 1)) dims.push_back(d);
  }
  if (dims.empty() && r.rank() > 0) dims.push_back(r.rank() - 1);
  return dims;
}

std::vector<ir::Expr> SqueezedIndex(const ir::Region& r,
                                    const std::vector<ir::Expr>& full) {
  std::vector<ir::Expr> out;
  for (int d : NonUnitDims(r)) out.push_back(full[d]);
  return out;
}

std::vector<ir::Expr> RegionIndices(const ir::Region& r,
                                    const std::vector<ir::Expr>& squeezed) {
  std::vector<ir::Expr> out = r.start;
  std::vector<int> dims = NonUnitDims(r);
  for (size_t i = 0; i < dims.size() && i < squeezed.size(); ++i) {
    out[dims[i]] = r.start[dims[i]] + squeezed[i];
  }
  return out;
}

std::optional<std::vector<int64_t>> ConstSqueezedExtents(const ir::Region& r) {
  std::vector<int64_t> out;
  for (int d : NonUnitDims(r)) {
    auto c = ir::AsConstInt(r.extent[d]);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

ir::Stmt MakeFor(const ir::Var& var, ir::Expr min, ir::Expr extent,
                 ir::ForKind kind, ir::Stmt body) {
  return ir::MakeStmt<ir::ForNode>(var, std::move(min), std::move(extent), kind,
                                   0, std::vector<int>{}, std::vector<int>{},
                                   std::move(body), ir::SourceLoc());
}

ir::Stmt MakeIf(ir::Expr cond, ir::Stmt then_case, ir::Stmt else_case) {
  if (auto c = ir::AsConstInt(cond)) return *c ? then_case : else_case;
  return ir::MakeStmt<ir::IfThenElseNode>(std::move(cond), std::move(then_case),
                                          std::move(else_case),
                                          ir::SourceLoc());
}

bool ReadsOnlyUnwrittenGlobals(const std::vector<ir::Expr>& exprs,
                               const ir::Stmt& body) {
  struct Loads : ir::IRVisitor {
    std::vector<const ir::BufferNode*> buffers;
    void Visit(const ir::LoadNode* op) override {
      buffers.push_back(op->buffer.get());
      IRVisitor::Visit(op);
    }
  } loads;
  // A let (T::let) stands for its value.
  const ir::LetValues lets = ir::CollectLets(body);
  for (const ir::Expr& e : exprs) loads.VisitExpr(ir::InlineLets(e, lets));
  for (const ir::BufferNode* b : loads.buffers)
    if (b->scope != ir::Scope::kGlobal) return false;
  if (loads.buffers.empty()) return true;
  bool written = false;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    const ir::BufferNode* dst = nullptr;
    if (const auto* st = s.As<ir::StoreNode>()) dst = st->buffer.get();
    if (const auto* c = s.As<ir::CopyNode>()) dst = c->dst.buffer.get();
    if (const auto* f = s.As<ir::FillNode>()) dst = f->dst.buffer.get();
    if (const auto* a = s.As<ir::AtomicNode>()) dst = a->dst.buffer.get();
    for (const ir::BufferNode* b : loads.buffers) {
      written |= dst == b || (s.As<ir::EvaluateNode>() && !ir::AsLet(s) &&
                              UsesBuffer(s, b));
    }
  });
  return !written;
}

}  // namespace tessel::passes
