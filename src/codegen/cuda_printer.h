// The CUDA printer's class, shared by its three files: cuda_codegen.cc
// (names, statements, the kernel around them), cuda_expressions.cc
// (expressions, expression intrinsics) and cuda_intrinsics.cc (statement
// intrinsics, one case per passes::Intrinsic). Internal to src/codegen.
#ifndef TESSEL_SRC_CODEGEN_CUDA_PRINTER_H_
#define TESSEL_SRC_CODEGEN_CUDA_PRINTER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "src/ir/expr.h"
#include "src/ir/stmt.h"
#include "src/passes/lowering_state.h"

namespace tessel::codegen {

inline bool IsFloat(DataType t) { return is_float(t); }

// The extents of a local array of rank >= 2 with constant extents, which the
// printer declares flat (one dimension, their product) and indexes row-major;
// nullopt for any other buffer, printed as declared. NVVM keeps a flat array
// in registers in less than half the time of a float[2][16][4] (wgmma's 64
// "+f" accumulator operands at a time), for the same cubin
// (docs/benchmarks.md, "Compile latency").
std::optional<std::vector<int64_t>> FlatLocalExtents(const ir::BufferNode& b);

// A C identifier for a user's name: other characters as '_', names the
// implementation reserves prefixed, long ones cut to a start and a hash.
std::string SanitizedName(const std::string& name);

class Printer {
 public:
  explicit Printer(const passes::LoweringState& st);

  // A C++ name for a node, unique in the kernel, stable once given.
  const std::string& Name(const void* key, const std::string& want);
  const std::string& VarName(const ir::VarNode* v) { return Name(v, v->name); }
  const std::string& BufName(const ir::BufferNode* b) {
    return Name(b, b->name);
  }

  // cuda_expressions.cc
  std::string Expr(const ir::Expr& e);
  std::string Access(const ir::LoadNode& l);
  std::string Access(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  // The element of reference `ref` (a kRef of a local array, fewer indices
  // than its rank) at the further constant indices `more`.
  std::string Element(const ir::Expr& ref, absl::Span<const int64_t> more);
  // The same element as a flat local array and its constant offset
  // (Element prints name[offset]); nullopt where an index is not constant.
  std::optional<std::pair<const ir::BufferNode*, int64_t>> FlatElement(
      const ir::Expr& ref, absl::Span<const int64_t> more);
  // FlatLocalExtents(*b), worked out once per buffer (null: not flat).
  const std::vector<int64_t>* FlatExtents(const ir::BufferNode* b);
  std::string Binary(const ir::BinaryNode& b);
  std::string Math(const ir::MathNode& m);
  std::string Call(const ir::CallNode& c);
  std::string Bitcast(DataType from, DataType to, std::string v);

  // Statements (cuda_codegen.cc).
  void Line(std::string_view s);
  void Stmt(const ir::Stmt& s);
  void Block(const ir::Stmt& s);

  // cuda_intrinsics.cc
  std::string Addr(const ir::Expr& load);
  static const char* VecType(int64_t bytes);
  // One asm statement for a run of consecutive wgmmas (cuda_intrinsics.cc).
  void Wgmmas(const std::vector<const ir::CallNode*>& calls);
  void FenceOperand(const ir::CallNode& c);
  void Intrinsic(const ir::CallNode& c);
  void StorePair(const ir::CallNode& c);
  void AtomicAddVec(const ir::CallNode& c);
  void Print(const ir::CallNode& c);

  // cuda_rebase.cc: before an outermost unrolled loop nest, a base pointer
  // for each global / shared element its accesses index at constant offsets
  // from; Rebased prints such an access through it (nullopt: no base).
  void DeclareRebases(const ir::ForNode& nest);
  std::optional<std::string> Rebased(const ir::BufferNode& b,
                                     const ir::Expr& index);

  void Kernel(const ir::KernelNode& k);
  // The whole translation unit; *entry gets the kernel's name.
  std::string Emit(std::string* entry);

  std::string error_;

 private:
  const passes::LoweringState& st_;
  std::string out_;
  int indent_ = 0;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> next_suffix_;  // Name()'s search
  // FlatExtents' answers (node-based: an answer stays where it is).
  std::unordered_map<const ir::BufferNode*, std::optional<std::vector<int64_t>>>
      flat_extents_;
  // Loop nests around mma.sync / ldmatrix printed unrolled (cuda_codegen.cc).
  bool unroll_fragment_nests_ = false;
  // The base pointers of the unrolled nest being printed (cuda_rebase.cc).
  struct Rebase {
    const ir::BufferNode* buffer;
    ir::Expr base;                         // the index the pointer points at
    std::vector<const ir::VarNode*> vars;  // the nest's unrolled variables
    std::string name;
  };
  std::vector<Rebase> rebases_;
  std::deque<char> rebase_keys_;  // a stable Name() key per base pointer
  bool in_unrolled_nest_ = false;
};

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_CUDA_PRINTER_H_
