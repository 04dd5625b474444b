// What layout inference reads from a program: its fragments, the Parallel
// loops that index them and how, and the tile ops (gemm, reduce, cumsum,
// copy) that tie one fragment's layout to another's.
//
//   FragmentUses uses;
//   uses.VisitStmt(state.program.body);
//   for (const ParallelLoop& loop : uses.loops) { ... loop.full ... }
#ifndef TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_USES_H_
#define TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_USES_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "src/ir/visitor.h"

namespace tessel::passes {

inline bool IsFragment(const ir::Buffer& b) {
  return b->scope == ir::Scope::kFragment;
}

// A buffer's constant shape; empty when some extent is symbolic.
std::vector<int64_t> ShapeOf(const ir::Buffer& b);

// One (possibly nested) Parallel loop and the fragments it indexes.
struct ParallelLoop {
  std::vector<const ir::VarNode*> vars;
  std::vector<int64_t> extents;
  std::vector<ir::Buffer> full;  // indexed by exactly the loop's vars
  std::vector<ir::Buffer> rows;  // rank 1, indexed by the first var
  std::vector<ir::Buffer> cols;  // rank 1, indexed by the second of two
  // Read at other indices (an offset, a reversed or a constant index): by
  // threads that need not hold those elements.
  std::vector<ir::Buffer> other_reads;
  std::vector<ir::Buffer> touched;  // every fragment it loads or stores
  bool other_store = false;         // a fragment stored at other indices
};

class FragmentUses : public ir::IRVisitor {
 public:
  std::vector<ParallelLoop> loops;
  std::vector<const ir::GemmNode*> gemms;
  std::vector<const ir::ReduceNode*> reduces;
  std::vector<const ir::CumsumNode*> cumsums;
  std::vector<const ir::CopyNode*> copies;
  std::vector<ir::Buffer> fragments;  // in allocation order
  // Allocated inside a T.Parallel body: one per iteration.
  std::vector<ir::Buffer> per_iteration;
  std::unordered_map<const ir::BufferNode*, ir::Layout> annotated;
  int threads = 0;

  void Visit(const ir::KernelNode* op) override;
  void Visit(const ir::AllocateNode* op) override;
  void Visit(const ir::GemmNode* op) override;
  void Visit(const ir::ReduceNode* op) override;
  void Visit(const ir::CumsumNode* op) override;
  void Visit(const ir::CopyNode* op) override;
  void Visit(const ir::AnnotateLayoutNode* op) override;
  void Visit(const ir::ForNode* op) override;
  void Visit(const ir::LoadNode* op) override;
  void Visit(const ir::StoreNode* op) override;

 private:
  void Note(const ir::Buffer& b, const std::vector<ir::Expr>& idx, bool store);
  ParallelLoop* current_ = nullptr;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LAYOUT_INFERENCE_FRAGMENT_USES_H_
