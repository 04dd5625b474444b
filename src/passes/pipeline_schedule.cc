#include "src/passes/pipeline_schedule.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "src/ir/visitor.h"
#include "src/passes/ir_util.h"

namespace tessel::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// The buffers a statement names, and those it writes.
struct Effects {
  std::set<const ir::BufferNode*> used, written;
};

Effects EffectsOf(const Stmt& s) {
  struct Collect : ir::IRVisitor {
    Effects e;
    void VisitBuffer(const ir::Buffer& b) override { e.used.insert(b.get()); }
  } c;
  c.VisitStmt(s);
  ForEachStmt(s, [&](const Stmt& n) {
    std::set<const ir::BufferNode*>& w = c.e.written;
    if (const auto* st = n.As<ir::StoreNode>()) w.insert(st->buffer.get());
    if (const auto* cp = n.As<ir::CopyNode>()) w.insert(cp->dst.buffer.get());
    if (const auto* g = n.As<ir::GemmNode>()) w.insert(g->c.buffer.get());
    if (const auto* f = n.As<ir::FillNode>()) w.insert(f->dst.buffer.get());
    if (const auto* r = n.As<ir::ReduceNode>()) w.insert(r->dst.get());
    if (const auto* cs = n.As<ir::CumsumNode>()) w.insert(cs->dst.get());
    if (const auto* a = n.As<ir::AtomicNode>()) {
      w.insert(a->dst.buffer.get());
      if (a->prev) w.insert(a->prev->buffer.get());
    }
  });
  return c.e;
}

// A buffer one of them writes and the other names, or null.
const ir::BufferNode* Conflict(const Effects& a, const Effects& b) {
  for (const ir::BufferNode* w : a.written)
    if (b.used.count(w)) return w;
  for (const ir::BufferNode* w : b.written)
    if (a.used.count(w)) return w;
  return nullptr;
}

absl::Status Refuse(const ir::ForNode& loop, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(
      ir::FormatLoc(loop.loc), ": Pipelined order / stage: ", what));
}

}  // namespace

bool IsPipelineProducer(const Stmt& s) {
  const auto* c = s.As<ir::CopyNode>();
  return c != nullptr && c->src.buffer->scope == ir::Scope::kGlobal &&
         c->dst.buffer->scope == ir::Scope::kShared;
}

std::vector<Stmt> LoopStatements(const ir::ForNode& loop) {
  if (const auto* seq = loop.body.As<ir::SeqNode>()) return seq->stmts;
  return {loop.body};
}

bool HasStatementSchedule(const ir::ForNode& loop) {
  return loop.for_kind == ir::ForKind::kPipelined &&
         (!loop.order.empty() || !loop.stage.empty());
}

absl::Status CheckPipelineSchedule(const ir::ForNode& loop) {
  if (!HasStatementSchedule(loop)) return absl::OkStatus();
  const std::vector<Stmt> stmts = LoopStatements(loop);
  for (const std::vector<int>* list : {&loop.order, &loop.stage}) {
    if (!list->empty() && list->size() != stmts.size()) {
      return Refuse(loop, absl::StrCat("the lists have ", list->size(),
                                       " entries; the loop body has ",
                                       stmts.size(), " statements"));
    }
  }
  const size_t n = stmts.size();
  auto order = [&](size_t i) {
    return loop.order.empty() ? static_cast<int>(i) : loop.order[i];
  };
  auto stage = [&](size_t i) { return loop.stage.empty() ? 0 : loop.stage[i]; };
  std::set<int> orders;
  for (size_t i = 0; i < n; ++i) {
    if (IsPipelineProducer(stmts[i])) continue;
    const std::string at = ir::FormatLoc(stmts[i]->loc);
    if (stage(i) < 0 || stage(i) > 1) {
      return Refuse(
          loop,
          absl::StrCat("statement ", i, " (", at, ") has stage ", stage(i),
                       "; stages are 0 and 1 (-1: a global -> "
                       "shared copy, which the producer takes)"));
    }
    if (order(i) < 0 || !orders.insert(order(i)).second) {
      return Refuse(
          loop,
          absl::StrCat("statement ", i, " (", at, ") has order ", order(i),
                       "; orders are distinct and non-negative"));
    }
  }
  // Dependences: a conflicting pair i < j (one writes what the other names)
  // keeps its sequential order in the rotated body.
  std::vector<Effects> effects;
  for (const Stmt& s : stmts) effects.push_back(EffectsOf(s));
  for (size_t i = 0; i < n; ++i) {
    if (IsPipelineProducer(stmts[i])) continue;
    for (size_t j = i + 1; j < n; ++j) {
      if (IsPipelineProducer(stmts[j])) continue;
      const ir::BufferNode* b = Conflict(effects[i], effects[j]);
      if (b == nullptr) continue;
      const std::string si = absl::StrCat("statement ", i, " (",
                                          ir::FormatLoc(stmts[i]->loc), ")"),
                        sj = absl::StrCat("statement ", j, " (",
                                          ir::FormatLoc(stmts[j]->loc), ")");
      if (stage(i) == stage(j) && order(i) > order(j)) {
        return Refuse(
            loop, absl::StrCat(si, " and ", sj, " both use ", b->name, ": ", sj,
                               " cannot be ordered before it"));
      }
      if (stage(i) == 1 && stage(j) == 0) {
        return Refuse(loop, absl::StrCat(si, " (stage 1) would run after ", sj,
                                         " (stage 0) of the same iteration; "
                                         "both use ",
                                         b->name));
      }
      if (stage(i) == 0 && stage(j) == 1 && order(j) > order(i)) {
        return Refuse(loop,
                      absl::StrCat(sj,
                                   " (stage 1) of iteration k - 1 "
                                   "must be ordered before ",
                                   si, " of iteration k: both use ", b->name));
      }
    }
  }
  return absl::OkStatus();
}

Stmt RotateLoop(const ir::Var& var, const Expr& min, const Expr& extent,
                const std::vector<ScheduledStmt>& stmts, ir::SourceLoc loc) {
  std::vector<size_t> sorted(stmts.size());
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return stmts[a].order < stmts[b].order;
  });
  // The statements of `stage` (any: -1) at iteration `k`.
  auto slot = [&](int only_stage, auto&& iteration) {
    std::vector<Stmt> out;
    for (size_t i : sorted) {
      const ScheduledStmt& s = stmts[i];
      if (only_stage >= 0 && s.stage != only_stage) continue;
      out.push_back(Substitute(s.stmt, {{var.get(), iteration(s.stage)}}));
    }
    return out;
  };
  const bool staged =
      std::any_of(stmts.begin(), stmts.end(),
                  [](const ScheduledStmt& s) { return s.stage > 0; });
  if (!staged) {
    return MakeFor(var, min, extent, ir::ForKind::kSerial,
                   ir::Seq(slot(0, [&](int) { return Expr(var); })));
  }
  std::vector<Stmt> out = slot(0, [&](int) { return min; });
  out.push_back(MakeFor(var, min + 1, extent - 1, ir::ForKind::kSerial,
                        ir::Seq(slot(-1, [&](int stage) {
                          return stage == 0 ? Expr(var) : Expr(var) - 1;
                        }))));
  std::vector<Stmt> last = slot(1, [&](int) { return min + extent - 1; });
  out.insert(out.end(), last.begin(), last.end());
  auto n = ir::AsConstInt(extent);
  if (n && *n > 0) return ir::Seq(out, loc);
  return ir::MakeStmt<ir::IfThenElseNode>(extent > 0, ir::Seq(out, loc), Stmt(),
                                          loc);
}

Stmt ScheduledConsumerLoop(const ir::ForNode& loop,
                           const std::vector<Stmt>& body,
                           const std::vector<size_t>& index,
                           const Stmt& wait_full, const Stmt& release) {
  if (!HasStatementSchedule(loop)) {
    std::vector<Stmt> s{wait_full};
    s.insert(s.end(), body.begin(), body.end());
    s.push_back(release);
    return MakeFor(loop.var, loop.min, loop.extent, ir::ForKind::kSerial,
                   ir::Seq(s));
  }
  auto entry = [](const std::vector<int>& list, size_t i, int otherwise) {
    return list.empty() ? otherwise : list[i];
  };
  std::vector<ScheduledStmt> s{{wait_full, 0, std::numeric_limits<int>::min()}};
  int last_stage = 0;
  for (size_t c = 0; c < body.size(); ++c) {
    const int stage = entry(loop.stage, index[c], 0);
    last_stage = std::max(last_stage, stage);
    s.push_back({body[c], stage,
                 entry(loop.order, index[c], static_cast<int>(index[c]))});
  }
  s.push_back({release, last_stage, std::numeric_limits<int>::max()});
  return RotateLoop(loop.var, loop.min, loop.extent, s, loop.loc);
}

}  // namespace tessel::passes
