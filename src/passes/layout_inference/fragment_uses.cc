#include "src/passes/layout_inference/fragment_uses.h"

#include "src/passes/ir_util.h"

namespace tessel::passes {

std::vector<int64_t> ShapeOf(const ir::Buffer& b) {
  auto s = ConstShape(b->shape);
  return s ? *s : std::vector<int64_t>{};
}

void FragmentUses::Visit(const ir::KernelNode* op) {
  threads = op->threads;
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::AllocateNode* op) {
  if (IsFragment(op->buffer) && current_ != nullptr)
    per_iteration.push_back(op->buffer);
  else if (IsFragment(op->buffer))
    fragments.push_back(op->buffer);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::GemmNode* op) {
  gemms.push_back(op);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::ReduceNode* op) {
  reduces.push_back(op);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::CumsumNode* op) {
  cumsums.push_back(op);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::CopyNode* op) {
  copies.push_back(op);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::AnnotateLayoutNode* op) {
  annotated[op->buffer.get()] = op->layout;
}

void FragmentUses::Visit(const ir::ForNode* op) {
  if (op->for_kind != ir::ForKind::kParallel || current_ != nullptr) {
    IRVisitor::Visit(op);
    return;
  }
  ParallelLoop loop;
  const ir::ForNode* f = op;
  while (true) {
    loop.vars.push_back(f->var.get());
    auto e = ir::AsConstInt(f->extent);
    loop.extents.push_back(e ? *e : -1);
    const auto* inner = f->body.As<ir::ForNode>();
    if (inner == nullptr || inner->for_kind != ir::ForKind::kParallel) break;
    f = inner;
  }
  current_ = &loop;
  VisitStmt(f->body);
  current_ = nullptr;
  loops.push_back(std::move(loop));
}

void FragmentUses::Visit(const ir::LoadNode* op) {
  Note(op->buffer, op->indices, /*store=*/false);
  IRVisitor::Visit(op);
}

void FragmentUses::Visit(const ir::StoreNode* op) {
  Note(op->buffer, op->indices, /*store=*/true);
  IRVisitor::Visit(op);
}

void FragmentUses::Note(const ir::Buffer& b, const std::vector<ir::Expr>& idx,
                        bool store) {
  if (current_ == nullptr || !IsFragment(b)) return;
  current_->touched.push_back(b);
  const size_t before =
      current_->full.size() + current_->rows.size() + current_->cols.size();
  auto is_var = [&](size_t i, const ir::VarNode* v) {
    return idx[i].get() == v;
  };
  if (idx.size() == current_->vars.size()) {
    bool all = true;
    for (size_t i = 0; i < idx.size(); ++i) all &= is_var(i, current_->vars[i]);
    if (all) current_->full.push_back(b);
  }
  if (idx.size() == 1 && current_->vars.size() == 2 &&
      is_var(0, current_->vars[0])) {
    current_->rows.push_back(b);
  }
  if (idx.size() == 1 && current_->vars.size() == 2 &&
      is_var(0, current_->vars[1])) {
    current_->cols.push_back(b);
  }
  const size_t after =
      current_->full.size() + current_->rows.size() + current_->cols.size();
  if (after == before && !store) current_->other_reads.push_back(b);
  if (after == before && store) current_->other_store = true;
}

}  // namespace tessel::passes
