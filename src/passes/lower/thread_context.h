// What the tile-op lowering knows about the thread running the code it
// writes: its index, the ranges of the loop variables around it (which make
// bounds provable, so predicates go away), the local array each fragment
// becomes, and the address arithmetic of shared (swizzled) and global
// buffers. The per-op lowerings (lowerer.h) build on it.
//
//   ThreadContext& t = ...;
//   Expr pred = t.InBounds(global, idx);        // undefined: provably in
//   Expr off = t.SharedOffset(shared, idx);     // swizzle applied
//   Stmt s = t.ForEachLocal(frag, [&](auto& local, auto& logical) {...});
#ifndef TESSEL_SRC_PASSES_LOWER_THREAD_CONTEXT_H_
#define TESSEL_SRC_PASSES_LOWER_THREAD_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "src/ir/stmt.h"
#include "src/passes/fragment_layout.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes::lower {

using ir::Expr;
using ir::Stmt;

struct Range {
  int64_t lo, hi;
};

class ThreadContext {
 public:
  explicit ThreadContext(LoweringState& state);

  // The first error; the lowering stops at the end of the walk. It names
  // the user's line of `at`, else of the innermost statement being lowered
  // that has one (a pass-made node has none).
  absl::Status status;
  void Fail(const ir::StmtNode* at, const std::string& what);
  const ir::StmtNode* user_stmt_ = nullptr;  // Lowerer::MutateStmt sets it

  static Expr Cast(DataType t, const Expr& e);
  static Stmt Guard(const Expr& cond, Stmt s);  // cond undefined: s
  static Expr And(const Expr& a, const Expr& b);

  // The local array a fragment becomes, and the fragment's layout.
  ir::Buffer Local(const ir::Buffer& frag);
  const FragmentLayout& Layout(const ir::Buffer& frag);

  // A store / load with a shared or global buffer's indices flattened.
  Stmt Store(const ir::Buffer& b, std::vector<Expr> idx, Expr value);
  Expr Load(const ir::Buffer& b, std::vector<Expr> idx);

  std::optional<int64_t> Upper(const Expr& e);
  std::optional<int64_t> Bound(const Expr& e, bool upper);
  // A tile copy's element idx inside global b, 0 <= i < dim (undefined:
  // provably inside); the boundary rule of docs/ir.md, as for elements.
  Expr InBounds(const ir::Buffer& b, const std::vector<Expr>& idx);
  // i >= 0 for every value of the variables (element_guards.cc's facts).
  bool ProvablyNonNegative(const Expr& i);

  // Element accesses of global tensors (element_guards.cc): the condition
  // under which idx lies inside b in every dim, 0 <= i < dim, with the
  // provable parts left out (undefined: provably inside). Outside, a load
  // reads 0 and a store or element atomic is skipped (the boundary rule).
  Expr ElementInBounds(const ir::Buffer& b, const std::vector<Expr>& idx);
  // Adds the conjuncts of cond to facts_; returns the size to cut back to
  // (facts_.resize) where cond no longer holds.
  size_t Assume(const Expr& cond);

  Expr SharedOffset(const ir::Buffer& b, const std::vector<Expr>& idx);
  Expr GlobalIndex(const ir::Buffer& b, const std::vector<Expr>& idx);
  Expr FlatOffset(const ir::Buffer& b, const std::vector<Expr>& idx);
  bool NeedsFlatten(const ir::Buffer& b, size_t n);
  Stmt Flatten(const Stmt& s);
  Expr FlattenExpr(const Expr& e);

  Stmt ForEachLocal(const ir::Buffer& frag,
                    const std::function<Stmt(const std::vector<Expr>&,
                                             const std::vector<Expr>&)>& fn);
  Stmt ForEachElement(
      const ir::Region& r, int vec,
      const std::function<Stmt(const std::vector<Expr>&, int)>& fn);

  int VectorWidth(const ir::Region& global, const ir::Region& other,
                  int max_bytes);
  void RequireAlignment(const ir::Buffer& b, int multiple,
                        const std::string& why);

  LoweringState& st_;
  ir::Var tx_;  // the thread index
  std::unordered_map<const ir::VarNode*, Range> ranges_;
  // What element guards know besides ranges_: every loop's and block
  // index's [min, min + extent) (symbolic ones too; ranges_ holds only the
  // loops the lowering bounds), and the conditions known true here (of the
  // enclosing ifs' then branches and selects' true values).
  struct LoopExtent {
    Expr min, extent;
  };
  std::unordered_map<const ir::VarNode*, LoopExtent> loop_extents_;
  std::vector<Expr> facts_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> locals_;
};

}  // namespace tessel::passes::lower

#endif  // TESSEL_SRC_PASSES_LOWER_THREAD_CONTEXT_H_
