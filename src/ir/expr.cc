#include <memory>
#include <utility>
#include <vector>

#include "src/ir/expr.h"

namespace tessel::ir {
namespace {

// The nodes waiting to be freed by the outermost release on this thread
// (null when none runs). A plain pointer: nothing to destroy at thread exit.
thread_local std::vector<std::shared_ptr<const ExprNode>>* pending = nullptr;

// Frees `node` if this was its last handle. Freeing a node drops its
// operands' handles, which come back here and wait in `pending`: the stack
// stays as deep however deep the expression.
void Release(std::shared_ptr<const ExprNode> node) {
  if (node.use_count() != 1) return;  // others still hold it
  if (pending != nullptr) {
    pending->push_back(std::move(node));
    return;
  }
  std::vector<std::shared_ptr<const ExprNode>> nodes;
  pending = &nodes;
  nodes.push_back(std::move(node));
  while (!nodes.empty()) {
    std::shared_ptr<const ExprNode> last = std::move(nodes.back());
    nodes.pop_back();
    last.reset();
  }
  pending = nullptr;
}

}  // namespace

Expr::~Expr() {
  if (node_) Release(std::move(node_));
}

Expr& Expr::operator=(const Expr& other) {
  if (this != &other) {
    std::shared_ptr<const ExprNode> old = std::move(node_);
    node_ = other.node_;
    if (old) Release(std::move(old));
  }
  return *this;
}

Expr& Expr::operator=(Expr&& other) noexcept {
  if (this != &other) {
    std::shared_ptr<const ExprNode> old = std::move(node_);
    node_ = std::move(other.node_);
    if (old) Release(std::move(old));
  }
  return *this;
}

}  // namespace tessel::ir
