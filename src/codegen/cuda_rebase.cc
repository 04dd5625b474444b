// Base pointers for the global and shared accesses of an unrolled loop nest.
//
// An unrolled epilogue stores C[(((by * 256) + ... + (mi * 64) + (h * 8)) *
// 4096) + ... + (ni * 8)] 64 times: NVVM rebuilds and folds the whole index
// for each copy of the body. Printed instead as
//
//   auto* const C_at = &C[((by * 256) + ...) * 4096 + ...];   // before
//   ... C_at[(mi * 262144) + (h * 32768) + (ni * 8)] ...        // inside
//
// the part that does not change in the nest is computed once and each copy
// adds a constant. Same addresses; NVVM's time on the sm_90a gemm -20 %, the
// same SASS; other kernels get other SASS (docs/benchmarks.md, "Compile
// latency"). Only with PassConfig::rebase_unrolled_nests.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/codegen/cuda_printer.h"
#include "src/ir/op.h"
#include "src/ir/substitute.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen {
namespace {

// The accesses of a buffer from one base: at least this many copies in the
// unrolled nest (a wgmma gemm's epilogue stores 64; linear attention's and
// flash attention's nests copy theirs 2-16 times).
constexpr int64_t kMinCopies = 32;

bool ConstExtent(const ir::ForNode& f) {
  return f.for_kind == ir::ForKind::kUnrolled && ir::AsConstInt(f.min) &&
         ir::AsConstInt(f.extent);
}

bool Pointer(const ir::BufferNode& b) { return b.scope == ir::Scope::kGlobal; }

// The nest's unrolled loop variables (constant bounds: each copy of the
// body sees constants) and every other variable bound inside it.
class NestVars : public ir::IRVisitor {
 public:
  std::vector<const ir::VarNode*> unrolled, inner;
  struct Access {
    const ir::BufferNode* buffer;
    ir::Expr index;
    int64_t copies;  // the product of the unrolled extents around it
  };
  std::vector<Access> accesses;
  int64_t copies = 1;

  void Visit(const ir::ForNode* op) override {
    const bool constant = ConstExtent(*op);
    (constant ? unrolled : inner).push_back(op->var.get());
    const int64_t outer = copies;
    if (constant) copies *= *ir::AsConstInt(op->extent);
    IRVisitor::Visit(op);
    copies = outer;
  }
  void Visit(const ir::CallNode* op) override {
    if (passes::IntrinsicOf(*op) == passes::Intrinsic::kLet) {
      inner.push_back(op->args[0].As<ir::VarNode>());
    }
    IRVisitor::Visit(op);
  }
  void Visit(const ir::LoadNode* op) override {
    Note(op->buffer.get(), op->indices);
    IRVisitor::Visit(op);
  }
  void Visit(const ir::StoreNode* op) override {
    Note(op->buffer.get(), op->indices);
    IRVisitor::Visit(op);
  }

 private:
  void Note(const ir::BufferNode* b, const std::vector<ir::Expr>& idx) {
    if (Pointer(*b) && idx.size() == 1) accesses.push_back({b, idx[0], copies});
  }
};

bool UsesAny(const ir::Expr& e, const std::vector<const ir::VarNode*>& vars) {
  return std::any_of(vars.begin(), vars.end(),
                     [&](const ir::VarNode* v) { return ir::UsesVar(e, v); });
}

}  // namespace

void Printer::DeclareRebases(const ir::ForNode& nest) {
  if (!st_.config.rebase_unrolled_nests || !ConstExtent(nest)) return;
  NestVars vars;
  vars.unrolled.push_back(nest.var.get());
  vars.copies = *ir::AsConstInt(nest.extent);
  vars.VisitStmt(nest.body);
  ir::VarMap zero;
  for (const ir::VarNode* v : vars.unrolled) {
    zero[v] = ir::IntImm(v->dtype, 0);
  }
  struct Group {
    const ir::BufferNode* buffer;
    ir::Expr base;
    int64_t copies;
  };
  std::vector<Group> groups;
  for (const auto& [buffer, index, copies] : vars.accesses) {
    if (!UsesAny(index, vars.unrolled)) continue;
    ir::Expr base = ir::Substitute(index, zero);
    if (ir::AsConstInt(base) || UsesAny(base, vars.inner) ||
        ir::ReadsMemory(base) || !ir::OffsetIn(index, base, vars.unrolled)) {
      continue;
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.buffer == buffer && ir::ConstDifference(base, g.base);
    });
    if (g == groups.end()) {
      groups.push_back({buffer, base, copies});
    } else {
      g->copies += copies;
    }
  }
  for (const Group& g : groups) {
    // Where the body is copied fewer times, the cubins of most kernels moved
    // (other register allocation) for a few percent of NVRTC time at most.
    if (g.copies < kMinCopies) continue;
    rebase_keys_.emplace_back();
    Rebase r{.buffer = g.buffer,
             .base = g.base,
             .vars = vars.unrolled,
             .name = Name(&rebase_keys_.back(), g.buffer->name + "_at")};
    Line(absl::StrCat("auto* const ", r.name, " = &", BufName(g.buffer), "[",
                      Expr(g.base), "];"));
    rebases_.push_back(std::move(r));
  }
}

std::optional<std::string> Printer::Rebased(const ir::BufferNode& b,
                                            const ir::Expr& index) {
  for (auto r = rebases_.rbegin(); r != rebases_.rend(); ++r) {
    if (r->buffer != &b) continue;
    if (std::optional<ir::Expr> offset = ir::OffsetIn(index, r->base, r->vars))
      return absl::StrCat(r->name, "[", Expr(*offset), "]");
  }
  return std::nullopt;
}

}  // namespace tessel::codegen
