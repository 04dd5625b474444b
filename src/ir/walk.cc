#include "src/ir/walk.h"

#include "src/ir/visitor.h"

namespace tessel::ir {
namespace {

class VarFinder : public IRVisitor {
 public:
  explicit VarFinder(const VarNode* v) : v_(v) {}
  void Visit(const VarNode* op) override { found |= op == v_; }
  bool found = false;

 private:
  const VarNode* v_;
};

class BufferFinder : public IRVisitor {
 public:
  explicit BufferFinder(const BufferNode* b) : b_(b) {}
  void VisitBuffer(const Buffer& b) override { found |= b.get() == b_; }
  bool found = false;

 private:
  const BufferNode* b_;
};

class MemoryReadFinder : public IRVisitor {
 public:
  void Visit(const LoadNode* op) override { found = true; }
  void Visit(const CallNode* op) override { found = true; }
  bool found = false;
};

class StmtWalker : public IRVisitor {
 public:
  explicit StmtWalker(const std::function<void(const Stmt&)>& fn) : fn_(fn) {}
  void VisitStmt(const Stmt& s) override {
    if (!s.defined()) return;
    fn_(s);
    IRVisitor::VisitStmt(s);
  }

 private:
  const std::function<void(const Stmt&)>& fn_;
};

}  // namespace

void ForEachStmt(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  StmtWalker w(fn);
  w.VisitStmt(s);
}

bool UsesVar(const Expr& e, const VarNode* var) {
  VarFinder f(var);
  f.VisitExpr(e);
  return f.found;
}

bool UsesVar(const Stmt& s, const VarNode* var) {
  VarFinder f(var);
  f.VisitStmt(s);
  return f.found;
}

bool UsesBuffer(const Stmt& s, const BufferNode* buffer) {
  BufferFinder f(buffer);
  f.VisitStmt(s);
  return f.found;
}

bool ReadsMemory(const Expr& e) {
  MemoryReadFinder f;
  f.VisitExpr(e);
  return f.found;
}

}  // namespace tessel::ir
