#include "src/passes/inject_pipeline.h"

#include <unordered_set>

#include "src/ir/let.h"
#include "src/ir/visitor.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

bool IsProducer(const ir::Stmt& s) {
  const auto* c = s.As<ir::CopyNode>();
  return c != nullptr && c->src.buffer->scope == ir::Scope::kGlobal &&
         c->dst.buffer->scope == ir::Scope::kShared;
}

// Prepends a stage index to every access of the staged buffers.
class AddStage : public ir::IRMutator {
 public:
  AddStage(const BufferMap& staged, ir::Expr stage)
      : staged_(staged), stage_(std::move(stage)) {}

  ir::Region MutateRegion(const ir::Region& r) override {
    ir::Region m = IRMutator::MutateRegion(r);
    auto it = staged_.find(r.buffer.get());
    if (it == staged_.end()) return m;
    ir::Region out{it->second, {stage_}, {ir::Expr(1)}};
    out.start.insert(out.start.end(), m.start.begin(), m.start.end());
    out.extent.insert(out.extent.end(), m.extent.begin(), m.extent.end());
    return out;
  }
  ir::Expr Visit(const ir::LoadNode* op) override {
    ir::Expr e = IRMutator::Visit(op);
    auto it = staged_.find(op->buffer.get());
    if (it == staged_.end()) return e;
    std::vector<ir::Expr> idx{stage_};
    const auto* l = e.As<ir::LoadNode>();
    idx.insert(idx.end(), l->indices.begin(), l->indices.end());
    return ir::Load(it->second, idx);
  }
  ir::Stmt Visit(const ir::StoreNode* op) override {
    ir::Stmt s = IRMutator::Visit(op);
    auto it = staged_.find(op->buffer.get());
    if (it == staged_.end()) return s;
    const auto* st = s.As<ir::StoreNode>();
    std::vector<ir::Expr> idx{stage_};
    idx.insert(idx.end(), st->indices.begin(), st->indices.end());
    return ir::MakeStmt<ir::StoreNode>(it->second, idx, st->value, st->loc);
  }

 private:
  const BufferMap& staged_;
  ir::Expr stage_;
};

// Whether a buffer is used by a node that takes it whole (reduce, cumsum,
// print): those cannot take a stage index.
bool UsedWhole(const ir::Stmt& s, const ir::BufferNode* b) {
  bool found = false;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    if (const auto* r = x.As<ir::ReduceNode>())
      found |= r->src.get() == b || r->dst.get() == b;
    if (const auto* c = x.As<ir::CumsumNode>())
      found |= c->src.get() == b || c->dst.get() == b;
    if (const auto* p = x.As<ir::PrintNode>()) found |= p->buffer.get() == b;
  });
  return found;
}

bool HasMbarrierOps(const ir::Stmt& s) {
  bool found = false;
  ForEachStmt(s, [&](const ir::Stmt& x) {
    found |= x->kind == ir::StmtKind::kMbarrierArrive ||
             x->kind == ir::StmtKind::kMbarrierWaitParity ||
             x->kind == ir::StmtKind::kMbarrierExpectTx;
  });
  return found;
}

// A copy may run ahead of its iteration when its origin reads nothing that
// could change meanwhile (only tensors the kernel never writes).
bool OriginFixed(const ir::CopyNode& c, const ir::Stmt& kernel_body) {
  return ReadsOnlyUnwrittenGlobals(c.src.start, kernel_body) &&
         ReadsOnlyUnwrittenGlobals(c.src.extent, kernel_body) &&
         ReadsOnlyUnwrittenGlobals(c.dst.start, kernel_body) &&
         ReadsOnlyUnwrittenGlobals(c.dst.extent, kernel_body);
}

class Pipeliner : public ir::IRMutator {
 public:
  Pipeliner(const LoweringState& state, const ir::Stmt& kernel_body)
      : state_(state), kernel_body_(kernel_body) {}

  // Staged buffers get their new (multi-buffered) node at their allocation.
  ir::Stmt Visit(const ir::AllocateNode* op) override {
    ir::Stmt body = MutateStmt(op->body);
    auto it = staged_.find(op->buffer.get());
    ir::Buffer b = it == staged_.end() ? op->buffer : it->second;
    if (b.same_as(op->buffer) && body.same_as(op->body)) return Self(op);
    return ir::MakeStmt<ir::AllocateNode>(b, body, op->loc);
  }

  ir::Stmt Visit(const ir::ForNode* op) override {
    ir::Stmt mutated = IRMutator::Visit(op);
    if (op->for_kind != ir::ForKind::kPipelined) return mutated;
    const auto* loop = mutated.As<ir::ForNode>();
    ir::Stmt out = Pipeline(*loop);
    if (out.defined()) return out;
    return ir::MakeStmt<ir::ForNode>(
        loop->var, loop->min, loop->extent, ir::ForKind::kSerial, 0,
        std::vector<int>{}, std::vector<int>{}, loop->body, loop->loc);
  }

 private:
  ir::Stmt Pipeline(const ir::ForNode& loop) {
    int stages = loop.num_stages == 0 ? 3 : loop.num_stages;
    if (stages < 2 || state_.config.disable_async_copy) return {};
    if (HasMbarrierOps(loop.body)) return {};
    std::vector<ir::Stmt> body;
    if (const auto* seq = loop.body.As<ir::SeqNode>()) {
      body = seq->stmts;
    } else {
      body = {loop.body};
    }
    std::vector<ir::Stmt> producers, consumers;
    BufferMap staged;
    for (const ir::Stmt& s : body) {
      if (IsProducer(s) && OriginFixed(*s.As<ir::CopyNode>(), kernel_body_)) {
        producers.push_back(s);
      } else {
        consumers.push_back(s);
      }
    }
    if (producers.empty()) return {};
    for (const ir::Stmt& p : producers) {
      const ir::Buffer& dst = p.As<ir::CopyNode>()->dst.buffer;
      if (staged.count(dst.get())) continue;
      // The buffer must live only in this loop, and be written only by the
      // producers.
      ir::Stmt others = ir::Seq(consumers);
      bool written_by_consumer = false;
      ForEachStmt(others, [&](const ir::Stmt& x) {
        if (const auto* c = x.As<ir::CopyNode>())
          written_by_consumer |= c->dst.buffer.get() == dst.get();
        if (const auto* st = x.As<ir::StoreNode>())
          written_by_consumer |= st->buffer.get() == dst.get();
        if (const auto* f = x.As<ir::FillNode>())
          written_by_consumer |= f->dst.buffer.get() == dst.get();
      });
      if (written_by_consumer || UsedWhole(others, dst.get()) ||
          UsedOutside(dst.get(), loop)) {
        return {};
      }
      std::vector<ir::Expr> shape{ir::Expr(stages)};
      shape.insert(shape.end(), dst->shape.begin(), dst->shape.end());
      staged[dst.get()] =
          ir::MakeBuffer(dst->name, dst->dtype, shape, dst->scope, dst->layout);
    }
    for (auto& [k, v] : staged) staged_[k] = v;

    const ir::Var& k = loop.var;
    ir::Expr n = loop.extent;
    // Copies that run ahead of their iteration read the values of the
    // iteration's lets, not the lets (bound later, or for iteration k).
    const ir::LetValues lets = ir::CollectLets(loop.body);
    ir::VarMap inline_lets(lets.begin(), lets.end());
    auto producer_at = [&](ir::Expr iter, ir::Expr stage) {
      ir::Stmt s = Substitute(Substitute(ir::Seq(producers), inline_lets),
                              {{k.get(), iter}});
      return AddStage(staged, stage).MutateStmt(s);
    };
    std::vector<ir::Stmt> out;
    for (int s = 0; s < stages - 1; ++s) {
      out.push_back(
          MakeIf(ir::Expr(s) < n, producer_at(loop.min + s, ir::Expr(s))));
      out.push_back(Intrin(Intrinsic::kCpAsyncCommit, {}));
    }
    ir::Expr rel = k - loop.min;
    std::vector<ir::Stmt> steady;
    steady.push_back(Intrin(Intrinsic::kCpAsyncWait, {ir::Expr(stages - 2)}));
    steady.push_back(
        MakeIf(rel + (stages - 1) < n,
               producer_at(k + (stages - 1), (rel + (stages - 1)) % stages)));
    steady.push_back(Intrin(Intrinsic::kCpAsyncCommit, {}));
    steady.push_back(
        AddStage(staged, rel % stages).MutateStmt(ir::Seq(consumers)));
    out.push_back(ir::MakeStmt<ir::ForNode>(
        k, loop.min, n, ir::ForKind::kSerial, 0, std::vector<int>{},
        std::vector<int>{}, ir::Seq(steady), loop.loc));
    out.push_back(Intrin(Intrinsic::kCpAsyncWait, {ir::Expr(0)}));
    return ir::Seq(out, loop.loc);
  }

  bool UsedOutside(const ir::BufferNode* b, const ir::ForNode& loop) {
    // Count uses in the whole kernel body that are not inside this loop.
    bool outside = false;
    std::function<void(const ir::Stmt&)> walk = [&](const ir::Stmt& s) {
      if (!s.defined() || outside) return;
      if (const auto* f = s.As<ir::ForNode>()) {
        if (f->var.same_as(loop.var)) return;
      }
      switch (s->kind) {
        case ir::StmtKind::kSeq:
          for (const ir::Stmt& c : s.As<ir::SeqNode>()->stmts) walk(c);
          return;
        case ir::StmtKind::kAllocate:
          walk(s.As<ir::AllocateNode>()->body);
          return;
        case ir::StmtKind::kKernel:
          walk(s.As<ir::KernelNode>()->body);
          return;
        case ir::StmtKind::kFor:
          walk(s.As<ir::ForNode>()->body);
          return;
        case ir::StmtKind::kIfThenElse:
          walk(s.As<ir::IfThenElseNode>()->then_case);
          walk(s.As<ir::IfThenElseNode>()->else_case);
          return;
        case ir::StmtKind::kAnnotateLayout:
          return;
        default:
          outside |= UsesBuffer(s, b);
      }
    };
    walk(kernel_body_);
    return outside;
  }

  const LoweringState& state_;
  const ir::Stmt& kernel_body_;
  BufferMap staged_;
};

}  // namespace

absl::Status InjectPipeline(LoweringState& state) {
  ir::Stmt body = state.program.body;
  state.program.body = Pipeliner(state, body).MutateStmt(body);
  return absl::OkStatus();
}

}  // namespace tessel::passes
