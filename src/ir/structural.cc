#include "src/ir/structural.h"

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <xxhash.h>

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"

namespace tessel::ir {
namespace {

// Serialises a program into tokens: node kinds, fields, constants, strings,
// and variables / buffers as the index of their first appearance. Equality
// of token streams is structural equality (the encoding is prefix-free:
// every variable-length part carries its length).
class Serializer {
 public:
  std::vector<uint64_t> tokens;

  void Program(const ir::Program& p) {
    String(p.name);
    Put(p.params.size());
    for (const Buffer& b : p.params) {
      BufferDef(b, /*named=*/true);
    }
    Put(p.dims.size());
    for (const Var& v : p.dims) {
      VarRef(v.get());
      Put(static_cast<uint64_t>(v.dtype()));
    }
    Stmt(p.body);
  }

 private:
  void Put(uint64_t v) { tokens.push_back(v); }
  void String(const std::string& s) {
    Put(s.size());
    for (char c : s) Put(static_cast<unsigned char>(c));
  }
  void Double(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    Put(bits);
  }

  void VarRef(const VarNode* v) {
    auto [it, inserted] = vars_.emplace(v, vars_.size());
    Put(0xA000 + (inserted ? 1 : 0));
    Put(it->second);
  }

  // A buffer's first appearance carries its definition; later ones its index.
  void BufferDef(const Buffer& b, bool named) {
    auto [it, inserted] = buffers_.emplace(b.get(), buffers_.size());
    Put(0xB000 + (inserted ? 1 : 0));
    Put(it->second);
    if (!inserted) return;
    const BufferNode* n = b.get();
    Put(static_cast<uint64_t>(n->scope));
    Put(static_cast<uint64_t>(n->dtype));
    Put(static_cast<uint64_t>(n->layout.kind));
    Put(static_cast<uint64_t>(n->layout.swizzle_bytes));
    if (n->layout.atoms) Put(uint64_t{0xA7});  // older keys stay the same
    Exprs(n->shape);
    if (named) String(n->name);
  }
  void BufferRef(const Buffer& b) {
    if (!b.defined()) {
      Put(0xB0FF);
      return;
    }
    BufferDef(b, b->scope == Scope::kGlobal);
  }

  void Exprs(const std::vector<ir::Expr>& v) {
    Put(v.size());
    for (const ir::Expr& e : v) Expr(e);
  }

  void Region(const ir::Region& r) {
    BufferRef(r.buffer);
    Exprs(r.start);
    Exprs(r.extent);
  }

  void Expr(const ir::Expr& e) {
    if (!e.defined()) {
      Put(0xE0FF);
      return;
    }
    Put(0xE000 + static_cast<uint64_t>(e->kind));
    Put(static_cast<uint64_t>(e.dtype()));
    switch (e->kind) {
      case ExprKind::kIntImm:
        Put(static_cast<uint64_t>(e.As<IntImmNode>()->value));
        return;
      case ExprKind::kFloatImm:
        Double(e.As<FloatImmNode>()->value);
        return;
      case ExprKind::kVar:
        VarRef(e.As<VarNode>());
        return;
      case ExprKind::kBinary: {
        const auto* b = e.As<BinaryNode>();
        Put(static_cast<uint64_t>(b->op));
        Expr(b->a);
        Expr(b->b);
        return;
      }
      case ExprKind::kUnary: {
        const auto* u = e.As<UnaryNode>();
        Put(static_cast<uint64_t>(u->op));
        Expr(u->a);
        return;
      }
      case ExprKind::kSelect: {
        const auto* s = e.As<SelectNode>();
        Expr(s->cond);
        Expr(s->true_value);
        Expr(s->false_value);
        return;
      }
      case ExprKind::kCast:
        Expr(e.As<CastNode>()->value);
        return;
      case ExprKind::kMath: {
        const auto* m = e.As<MathNode>();
        Put(static_cast<uint64_t>(m->op));
        Expr(m->a);
        return;
      }
      case ExprKind::kCall: {
        const auto* c = e.As<CallNode>();
        String(c->name);
        Exprs(c->args);
        return;
      }
      case ExprKind::kLoad: {
        const auto* l = e.As<LoadNode>();
        BufferRef(l->buffer);
        Exprs(l->indices);
        return;
      }
    }
  }

  void Ints(const std::vector<int>& v) {
    Put(v.size());
    for (int i : v) Put(static_cast<uint64_t>(static_cast<int64_t>(i)));
  }

  void Stmt(const ir::Stmt& s) {
    if (!s.defined()) {
      Put(0x50FF);
      return;
    }
    Put(0x5000 + static_cast<uint64_t>(s->kind));
    switch (s->kind) {
      case StmtKind::kKernel: {
        const auto* k = s.As<KernelNode>();
        Exprs(k->grid);
        Put(static_cast<uint64_t>(k->threads));
        Put(k->block_vars.size());
        for (const Var& v : k->block_vars) VarRef(v.get());
        Stmt(k->body);
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.As<ForNode>();
        VarRef(f->var.get());
        Put(static_cast<uint64_t>(f->var.dtype()));
        Expr(f->min);
        Expr(f->extent);
        Put(static_cast<uint64_t>(f->for_kind));
        Put(static_cast<uint64_t>(static_cast<int64_t>(f->num_stages)));
        Ints(f->order);
        Ints(f->stage);
        Stmt(f->body);
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.As<IfThenElseNode>();
        Expr(i->cond);
        Stmt(i->then_case);
        Stmt(i->else_case);
        return;
      }
      case StmtKind::kStore: {
        const auto* st = s.As<StoreNode>();
        BufferRef(st->buffer);
        Exprs(st->indices);
        Expr(st->value);
        return;
      }
      case StmtKind::kSeq: {
        const auto* q = s.As<SeqNode>();
        Put(q->stmts.size());
        for (const ir::Stmt& c : q->stmts) Stmt(c);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* a = s.As<AllocateNode>();
        BufferDef(a->buffer, /*named=*/false);
        Stmt(a->body);
        return;
      }
      case StmtKind::kCopy: {
        const auto* c = s.As<CopyNode>();
        Region(c->src);
        Region(c->dst);
        Put(c->barrier.defined());
        if (c->barrier.defined()) {
          BufferRef(c->barrier);
          Expr(c->barrier_index);
        }
        return;
      }
      case StmtKind::kGemm: {
        const auto* g = s.As<GemmNode>();
        Region(g->a);
        Region(g->b);
        Region(g->c);
        Put(g->transpose_a);
        Put(g->transpose_b);
        Put(g->clear_accum);
        Put(static_cast<uint64_t>(g->policy));
        return;
      }
      case StmtKind::kFill: {
        const auto* f = s.As<FillNode>();
        Region(f->dst);
        Expr(f->value);
        return;
      }
      case StmtKind::kReduce: {
        const auto* r = s.As<ReduceNode>();
        BufferRef(r->src);
        BufferRef(r->dst);
        Put(static_cast<uint64_t>(r->reduce_kind));
        Put(static_cast<uint64_t>(static_cast<int64_t>(r->dim)));
        Put(r->clear);
        return;
      }
      case StmtKind::kCumsum: {
        const auto* c = s.As<CumsumNode>();
        BufferRef(c->src);
        BufferRef(c->dst);
        Put(static_cast<uint64_t>(static_cast<int64_t>(c->dim)));
        Put(c->reverse);
        return;
      }
      case StmtKind::kAtomic: {
        const auto* a = s.As<AtomicNode>();
        Put(static_cast<uint64_t>(a->op));
        Region(a->dst);
        Put(a->src.has_value());
        if (a->src) Region(*a->src);
        Expr(a->value);
        Put(a->prev.has_value());
        if (a->prev) Region(*a->prev);
        return;
      }
      case StmtKind::kSyncThreads:
        return;
      case StmtKind::kMbarrierInit: {
        const auto* m = s.As<MbarrierInitNode>();
        BufferRef(m->barriers);
        Exprs(m->arrive_counts);
        return;
      }
      case StmtKind::kMbarrierArrive: {
        const auto* m = s.As<MbarrierArriveNode>();
        BufferRef(m->barriers);
        Expr(m->index);
        return;
      }
      case StmtKind::kMbarrierExpectTx: {
        const auto* m = s.As<MbarrierExpectTxNode>();
        BufferRef(m->barriers);
        Expr(m->index);
        Expr(m->bytes);
        return;
      }
      case StmtKind::kMbarrierWaitParity: {
        const auto* m = s.As<MbarrierWaitParityNode>();
        BufferRef(m->barriers);
        Expr(m->index);
        Expr(m->parity);
        return;
      }
      case StmtKind::kAnnotateLayout: {
        const auto* a = s.As<AnnotateLayoutNode>();
        BufferRef(a->buffer);
        Put(static_cast<uint64_t>(a->layout.kind));
        Put(static_cast<uint64_t>(a->layout.swizzle_bytes));
        return;
      }
      case StmtKind::kUseSwizzle: {
        const auto* u = s.As<UseSwizzleNode>();
        Put(static_cast<uint64_t>(u->panel_size));
        Put(u->column_major);
        return;
      }
      case StmtKind::kPrint: {
        const auto* p = s.As<PrintNode>();
        String(p->message);
        Expr(p->value);
        BufferRef(p->buffer);
        return;
      }
      case StmtKind::kWarpSpecialize: {
        const auto* w = s.As<WarpSpecializeNode>();
        Put(static_cast<uint64_t>(w->producer_threads));
        if (w->consumer_groups > 1) {
          Put(static_cast<uint64_t>(w->consumer_groups));
          VarRef(w->group.get());
        }
        Stmt(w->producer);
        Stmt(w->consumer);
        return;
      }
      case StmtKind::kEvaluate:
        Expr(s.As<EvaluateNode>()->value);
        return;
    }
  }

  std::unordered_map<const VarNode*, uint64_t> vars_;
  std::unordered_map<const BufferNode*, uint64_t> buffers_;
};

std::vector<uint64_t> Tokens(const Program& p) {
  Serializer s;
  s.Program(p);
  return std::move(s.tokens);
}

}  // namespace

uint64_t StructuralHash(const Program& program) {
  std::vector<uint64_t> t = Tokens(program);
  return XXH3_64bits(t.data(), t.size() * sizeof(uint64_t));
}

std::string StructuralKey(const Program& program) {
  std::vector<uint64_t> t = Tokens(program);
  const XXH128_hash_t h = XXH3_128bits(t.data(), t.size() * sizeof(uint64_t));
  return absl::StrCat(absl::Hex(h.high64, absl::kZeroPad16),
                      absl::Hex(h.low64, absl::kZeroPad16));
}

bool StructuralEqual(const Program& a, const Program& b) {
  return Tokens(a) == Tokens(b);
}

}  // namespace tessel::ir
