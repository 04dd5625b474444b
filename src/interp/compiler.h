// Turns tile IR into closures over a Frame (internal to src/interp).
//
//   Compiler c(exe);                        // exe: the Executable being built
//   absl::StatusOr<IntFn> idx = c.Int(i * 64 + j);
//   absl::StatusOr<StmtFn> body = c.Statement(kernel->body);
//
// Every variable and buffer gets a slot of the Frame when its binder
// (kernel, loop, allocation, program parameter) is compiled; expressions
// capture slots, so running never looks anything up by name.
#ifndef TESSEL_SRC_INTERP_COMPILER_H_
#define TESSEL_SRC_INTERP_COMPILER_H_

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/interp/executable.h"
#include "src/interp/frame.h"
#include "src/interp/tile_ops.h"
#include "src/ir/expr.h"
#include "src/ir/let.h"
#include "src/ir/stmt.h"

namespace tessel::interp {

// A region whose start and extent closures are evaluated per use.
struct CompiledRegion {
  int slot = -1;
  std::vector<IntFn> start;
  std::vector<IntFn> extent;
};

class Compiler {
 public:
  explicit Compiler(Executable* exe) : exe_(exe) {}

  absl::Status CompileProgram(const ir::Program& program);

  // Expressions by result kind: Int for integer and bool dtypes, Float for
  // float dtypes, Double for any dtype (its value as a double).
  absl::StatusOr<IntFn> Int(const ir::Expr& e);
  absl::StatusOr<FloatFn> Float(const ir::Expr& e);
  absl::StatusOr<FloatFn> Double(const ir::Expr& e);
  absl::StatusOr<StmtFn> Statement(const ir::Stmt& s);

 private:
  absl::StatusOr<IntFn> IntBinary(const ir::BinaryNode* op);
  absl::StatusOr<FloatFn> FloatBinary(const ir::BinaryNode* op);
  absl::StatusOr<IntFn> IntLoad(const ir::LoadNode* op);
  absl::StatusOr<FloatFn> FloatLoad(const ir::LoadNode* op);
  absl::StatusOr<FloatFn> FloatMath(const ir::MathNode* op);
  // compile_bitcast.cc: T::bitcast of `value` to `to`.
  absl::StatusOr<IntFn> IntBitcast(const ir::Expr& value, DataType to);
  absl::StatusOr<FloatFn> FloatBitcast(const ir::Expr& value, DataType to);

  absl::StatusOr<StmtFn> Kernel(const ir::KernelNode* op);
  absl::StatusOr<StmtFn> For(const ir::ForNode* op);
  absl::StatusOr<StmtFn> Store(const ir::StoreNode* op);
  absl::StatusOr<StmtFn> Let(const ir::LetParts& let);
  absl::StatusOr<StmtFn> Allocate(const ir::AllocateNode* op);
  absl::StatusOr<StmtFn> Copy(const ir::CopyNode* op);
  absl::StatusOr<StmtFn> Gemm(const ir::GemmNode* op);
  absl::StatusOr<StmtFn> Fill(const ir::FillNode* op);
  absl::StatusOr<StmtFn> Reduce(const ir::ReduceNode* op);
  absl::StatusOr<StmtFn> Cumsum(const ir::CumsumNode* op);
  absl::StatusOr<StmtFn> Atomic(const ir::AtomicNode* op);
  // compile_ticket.cc: T::atomic_ticket (an Atomic with prev).
  absl::StatusOr<StmtFn> Ticket(const ir::AtomicNode* op);
  absl::StatusOr<StmtFn> Mbarrier(const ir::StmtNode* op);
  absl::StatusOr<StmtFn> Print(const ir::PrintNode* op);

  // Slots. BindVar gives a binder's variable a fresh slot.
  int BindVar(const ir::Var& var);
  absl::StatusOr<int> VarSlot(const ir::VarNode* var);
  // The slot of a buffer that is usable here: a parameter, or a per-block
  // buffer inside its Allocate.
  absl::StatusOr<int> BufferSlot(const ir::Buffer& buffer);
  absl::StatusOr<CompiledRegion> Region(const ir::Region& region);
  // Flat element index of buffer[indices] with bounds checks; -1 after a
  // failure (f.failed is set) and kOutside for an index outside a global
  // tensor (the boundary rule: the load reads 0, the store is skipped).
  // Loads of per-block buffers also check that the element was written.
  enum class Access { kLoad, kStore };
  static constexpr int64_t kOutside = -2;
  absl::StatusOr<IntFn> FlatIndex(const ir::Buffer& buffer,
                                  const std::vector<ir::Expr>& indices,
                                  Access access);

  // An error at the current statement: "<op> at file:line: message".
  absl::Status Error(absl::StatusCode code, const std::string& message) const;

  Executable* exe_;
  Site site_;
  bool in_kernel_ = false;
  int parallel_depth_ = 0;
  std::unordered_map<const ir::VarNode*, int> var_slots_;
  std::unordered_map<const ir::BufferNode*, int> buffer_slots_;
  std::unordered_set<const ir::BufferNode*> live_;
  // For the serial_only decision.
  std::unordered_set<int> atomic_targets_;
  std::unordered_set<int> globals_accessed_;  // read or written otherwise
  bool prints_ = false;
};

// Evaluates a compiled region into a box of the frame.
inline bool EvalBox(Frame& f, const CompiledRegion& r, Box* box) {
  box->slot = r.slot;
  box->buffer = &f.buffers[r.slot];
  box->start.resize(r.start.size());
  box->extent.resize(r.extent.size());
  for (size_t d = 0; d < r.start.size(); ++d) {
    box->start[d] = r.start[d](f);
    box->extent[d] = r.extent[d](f);
  }
  return !f.failed;
}

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_COMPILER_H_
