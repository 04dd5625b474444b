// The PTX emitter's class, shared by its files: ptx_kernel.cc (the module,
// registers, scopes, statements, EmitPtx), ptx_values.cc (constants,
// operands, Emit), ptx_expressions.cc (expressions, casts, math),
// ptx_arithmetic.cc (binary operators, division by constants),
// ptx_memory.cc (local arrays, addresses, loads, vector atomics),
// ptx_intrinsics.cc (the intrinsics, wgmma), ptx_warp.cc (warp shuffles)
// and ptx_vectors.cc (vector moves); ../prelude_asm.h reads the prelude's
// instructions for them. Internal to src/codegen.
//
// The emitter spells lowered IR as PTX directly, so a kernel skips NVRTC's
// C++ front end and NVVM (most of a cold compile) and goes to ptxas. It does
// the little NVVM did that ptxas would not do as cheaply: unrolled loops are
// printed out with their variables bound to constants, constant expressions
// are folded, and equal pure expressions in one block are computed once.
// Everything it does not know yet is Unimplemented, and the kernel then goes
// through the CUDA printer and NVRTC as before. Each instruction the prelude
// holds as inline asm it spells from the prelude's own text (PreludeAsm), so
// that both backends spell it alike.
#ifndef TESSEL_SRC_CODEGEN_PTX_PTX_EMITTER_H_
#define TESSEL_SRC_CODEGEN_PTX_PTX_EMITTER_H_

#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/codegen/prelude_asm.h"
#include "src/codegen/ptx/ptx_codegen.h"
#include "src/ir/expr.h"
#include "src/ir/stmt.h"
#include "src/passes/intrinsics.h"
#include "src/passes/lowering_state.h"

namespace tessel::codegen::ptx {

// A value: a constant or a register. `key` names it for common
// subexpressions: a register that is assigned more than once (a loop
// counter, an alloc_var, a local array element) carries its version there.
struct Value {
  DataType dtype = DataType::kI32;
  std::optional<int64_t> int_const;  // integers and bools
  std::optional<double> float_const;
  std::string reg;  // when not a constant
  std::string key;

  bool is_const() const { return int_const || float_const; }
};

// Whether the emitter spells values of this dtype (8-bit types and f64 go
// through NVRTC for now).
inline bool Spelled(DataType t) {
  return t == DataType::kBool || t == DataType::kI32 || t == DataType::kU32 ||
         t == DataType::kI64 || t == DataType::kF16 || t == DataType::kBF16 ||
         t == DataType::kF32;
}

inline bool IsInt(DataType t) {
  return t == DataType::kI32 || t == DataType::kU32 || t == DataType::kI64;
}

// An integer wrapped to the width of t, as the GPU computes it.
inline int64_t Wrap(DataType t, int64_t v) {
  switch (t) {
    case DataType::kI32:
      return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DataType::kU32:
      return static_cast<uint32_t>(v);
    case DataType::kBool:
      return v != 0;
    default:
      return v;
  }
}

// The prelude function whose asm packs two f32 into an f16 / bf16 pair:
// cvt.rn.f16x2.f32 d, hi, lo (prelude/convert.cuh).
inline const char* PackFunction(DataType t) {
  return t == DataType::kBF16 ? "pack_bf16x2" : "pack_f16x2";
}

// log2 of a power of two, else -1.
inline int Log2(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  return std::countr_zero(static_cast<uint64_t>(v));
}

// A memory operand: [addr] or [addr+offset].
inline std::string At(const std::string& addr, int64_t offset) {
  return offset ? "[" + addr + "+" + std::to_string(offset) + "]"
                : "[" + addr + "]";
}

// x / d == mul.hi.u32(x, magic) >> shift for every 0 <= x < 2^31, for a
// constant 2 < d < 2^31 that is no power of two (ptx_arithmetic.cc).
struct DivisionMagic {
  uint32_t magic;
  int shift;
};
DivisionMagic MagicForDivisionBy(int64_t d);

class Emitter {
 public:
  Emitter(const passes::LoweringState& st, PtxEmitOptions options,
          const PreludeAsm& prelude)
      : st_(st), options_(options), prelude_(prelude) {}

  // The whole module; *entry gets the kernel's name. An error (Unimplemented
  // for what the emitter does not spell yet) leaves it empty.
  absl::StatusOr<std::string> Module(std::string* entry);

  // ptx_expressions.cc
  Value Expr(const ir::Expr& e);
  // The value as an instruction operand: a register or an immediate.
  std::string Operand(const Value& v);
  // The value in a register of its type (immediates moved into one).
  std::string InReg(const Value& v);
  Value Convert(const Value& v, DataType to);
  Value Const(DataType t, int64_t v);
  // An unsigned 32-bit shared address / a 64-bit generic or global one of
  // a buffer element.
  std::string SharedAddress(const ir::LoadNode& l, int64_t* offset);
  std::string GlobalAddress(const ir::LoadNode& l, int64_t* offset);
  std::string ElementAddress(const ir::Expr& load, int64_t* offset,
                             bool* shared);
  // The same as a memory operand, [addr+offset].
  std::string AddressOperand(const ir::Expr& load, bool* shared);
  // A local array element's register, at constant indices.
  std::string LocalElement(const ir::BufferNode* b,
                           const std::vector<int64_t>& idx);
  std::string RefElement(const ir::Expr& ref, const std::vector<int64_t>& more);
  // The load a register operand names (a ref call or the load itself), and
  // its buffer; null where it is something else.
  const ir::LoadNode* RefLoad(const ir::Expr& ref);
  const ir::BufferNode* RefBuffer(const ir::Expr& ref);

  // ptx_kernel.cc
  std::string NewReg(DataType t);
  std::string NewLabel();
  void Line(const std::string& s);
  void Fail(const std::string& what);
  bool failed() const { return !error_.ok(); }
  void Stmt(const ir::Stmt& s);
  // Scopes of common subexpressions: a branch's or loop's code. A pure
  // value computed in a branch from values outside it is computed before the
  // branch instead (at the slot MarkHoist left), so later branches find it:
  // the guarded stores of an unrolled epilogue share their addresses. So is
  // one a loop computes, unless PtxEmitOptions::hoist_out_of_loops is off:
  // loop bodies are then barriers (register pressure).
  void PushScope(bool barrier = false);
  void PopScope();
  // Before a construct opens a scope: where values hoisted to the current
  // scope go.
  void MarkHoist();
  int Depth(const Value& v);
  // Common subexpressions: the register holding `key`, or "".
  std::string Lookup(const std::string& key);
  void Remember(const std::string& key, const std::string& reg);
  // A register assigned again: its new key.
  std::string Reassigned(const std::string& reg);
  static const char* RegType(DataType t);    // ".b32", ".f32", ...
  static const char* ValueType(DataType t);  // "s32", "f32", ...

  // ptx_intrinsics.cc
  void Intrinsic(const ir::CallNode& c);
  // The instructions of the prelude function's asm with these operands
  // (PreludeAsm::Spell); Fail where the prelude has none.
  std::vector<std::string> FromPrelude(
      const std::string& function, const std::vector<std::string>& operands,
      const std::map<std::string, std::string>& locals = {});
  // The same, each as a Line.
  void PreludeLines(const std::string& function,
                    const std::vector<std::string>& operands);
  // The opcode of the prelude function's one instruction (for Emit).
  std::string PreludeOpcode(const std::string& function);
  Value CallExpr(const ir::CallNode& c);
  void Wgmma(const ir::CallNode& c);
  // ptx_warp.cc
  Value WarpShuffle(const ir::CallNode& c, passes::Intrinsic id);
  Value WarpScanExclusiveSum(const ir::CallNode& c);
  // ptx_memory.cc
  void AtomicAddVec(const ir::CallNode& c);
  // ptx_vectors.cc
  void VectorMove(const ir::CallNode& c, passes::Intrinsic id);

  const passes::LoweringState& st() const { return st_; }

 private:
  void Allocate(const ir::AllocateNode& a);
  void For(const ir::ForNode& f);
  void If(const ir::IfThenElseNode& i);
  void Store(const ir::StoreNode& s);
  void PackedPair(const ir::BufferNode* b, const std::string& hi);
  Value Binary(const ir::BinaryNode& b);
  // x / d for an i32 x >= 0 and a constant d that is no power of two.
  Value DivideByConstant(const Value& x, int64_t d);
  std::optional<Value> Contracted(const ir::BinaryNode& b);
  Value Logical(const ir::BinaryNode& b);
  Value Select(const ir::SelectNode& s);
  Value Math(const ir::MathNode& m);
  Value Load(const ir::LoadNode& l);
  bool Speculatable(const ir::Expr& e);
  bool LoadedBefore(const ir::LoadNode& l);
  std::string LoadKey(const ir::BufferNode& b, bool shared,
                      const std::string& addr, int64_t offset);
  std::pair<std::optional<Value>, int64_t> Linear(const ir::Expr& e);
  Value Cast(const Value& v, DataType to);
  Value Bitcast(const Value& v, DataType to);
  Value Emit(DataType t, const std::string& op, std::vector<Value> in);

  const passes::LoweringState& st_;
  const PtxEmitOptions options_;
  const PreludeAsm& prelude_;
  absl::Status error_;
  std::map<std::string, int> reg_count_;  // prefix -> registers made
  // The PTX ISA version (x10) an instruction needs beyond the target's
  // default: 81 for red with vector types.
  int ptx_isa_needed_ = 0;
  int labels_ = 0;
  // Variables bound to values: loop counters (unrolled ones to constants),
  // lets, the block indices.
  std::unordered_map<const ir::VarNode*, Value> vars_;
  // Buffers: global params (64-bit global base), shared (offset from the
  // dynamic shared base), local arrays (register names), vars (a register).
  std::unordered_map<const ir::BufferNode*, std::string> global_base_;
  std::unordered_map<const ir::BufferNode*, std::vector<std::string>> local_;
  std::unordered_map<const ir::BufferNode*, std::vector<int64_t>> extents_;
  // Local arrays an ldmatrix fills: a wgmma reading A from one of them
  // takes A straight from shared memory (Wgmma).
  std::unordered_set<const ir::BufferNode*> ldmatrix_filled_;
  std::unordered_map<std::string, int> versions_;
  std::vector<std::string> assigned_;  // every Reassigned register, in order
  void ForgetAssignedSince(size_t mark);
  struct Scope {
    std::unordered_map<std::string, std::string> cse;
    int hoist = -1;  // segments_ index of the slot; -1: none yet
    bool barrier = false;
  };
  std::vector<Scope> scopes_;
  std::vector<std::string> segments_ = {""};    // the body's text, in pieces
  std::unordered_map<std::string, int> depth_;  // key -> scope it is in
  std::string smem_base_;                       // u32
  std::vector<std::string> tensor_map_params_;
  std::unordered_set<const ir::BufferNode*> read_only_;  // ld.global.nc
  std::string tid_;                                      // %tid.x, i32
  Value pending_half_;
  // An f16 / bf16 value's key -> the f32 value it was rounded from, so that
  // two of them packed into a word are one cvt.rn.f16x2.f32.
  std::unordered_map<std::string, Value> rounded_from_;
  bool Current(
      const Value& v);  // store_vec: the low half of the word being packed
};

}  // namespace tessel::codegen::ptx

#endif  // TESSEL_SRC_CODEGEN_PTX_PTX_EMITTER_H_
