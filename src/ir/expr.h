// Expression nodes of the tile IR: immutable, shared behind value handles.
//
//   ir::Var i("i", i32);
//   ir::Expr e = i * 4 + 1;             // folded and simplified as built
//   if (const auto* add = e.As<ir::BinaryNode>()) { ... add->op ... }
//   ir::Expr x = ir::Load(acc, {i, j});   // acc: an ir::Buffer
//
// Nodes are never changed after construction; a pass builds new ones (see
// ir::IRMutator). Var and Buffer identity is the node's address: two Vars
// named "i" are different variables.
#ifndef TESSEL_SRC_IR_EXPR_H_
#define TESSEL_SRC_IR_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/ir/node_kinds.h"
#include "tessel/dtype.h"

namespace tessel::ir {

enum class ExprKind : uint8_t {
#define TESSEL_IR_KIND(K, N) k##K,
  TESSEL_IR_EXPR_NODES(TESSEL_IR_KIND)
#undef TESSEL_IR_KIND
};

class ExprNode : public std::enable_shared_from_this<ExprNode> {
 public:
  ExprNode(ExprKind kind, DataType dtype) : kind(kind), dtype(dtype) {}
  virtual ~ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;

  template <typename T>
  const T* As() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

  const ExprKind kind;
  const DataType dtype;
};

// A shared, immutable expression. Default-constructed handles are undefined.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node)
      : node_(std::move(node)) {}
  // The last handle to a node frees it, and its operands, without recursing:
  // an expression a hostile program nests 100,000 deep is freed in a loop.
  Expr(const Expr&) = default;
  Expr(Expr&&) noexcept = default;
  Expr& operator=(const Expr& other);
  Expr& operator=(Expr&& other) noexcept;
  ~Expr();
  // Constants: ints are i32, doubles f32 (the DSL's literal rules).
  Expr(int value);      // NOLINT: implicit, like a literal
  Expr(int64_t value);  // NOLINT: i64 constant
  Expr(double value);   // NOLINT: f32 constant

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }
  DataType dtype() const { return node_->dtype; }
  template <typename T>
  const T* As() const {
    return node_ ? node_->As<T>() : nullptr;
  }
  // Same node (not structural equality; see ir::ExprDeepEqual).
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

class VarNode;
class BufferNode;

// A variable: loop index, block index, symbolic dimension.
class Var {
 public:
  Var() = default;
  Var(std::string name, DataType dtype = DataType::kI32);
  explicit Var(std::shared_ptr<const VarNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const VarNode* get() const { return node_.get(); }
  const VarNode* operator->() const { return node_.get(); }
  const std::string& name() const;
  DataType dtype() const;
  operator Expr() const;  // NOLINT: a Var is an expression
  bool same_as(const Var& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const VarNode> node_;
};

// A handle to a buffer (see buffer.h for BufferNode and its fields).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<const BufferNode> node)
      : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const BufferNode>& node() const { return node_; }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const BufferNode> node_;
};

class IntImmNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImmNode(DataType dtype, int64_t value)
      : ExprNode(kKind, dtype), value(value) {}
  const int64_t value;  // wrapped to the dtype's width; bool is 0 or 1
};

class FloatImmNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImmNode(DataType dtype, double value)
      : ExprNode(kKind, dtype), value(value) {}
  const double value;
};

class VarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string name, DataType dtype)
      : ExprNode(kKind, dtype), name(std::move(name)) {}
  const std::string name;
};

enum class BinaryOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,  // integers: floor division (rounds toward -inf), like Python's //
  kMod,  // integers: floor modulo (sign of the divisor), like Python's %
  kMin,
  kMax,
  kCeilDiv,  // integers only: ceil(a / b)
  kPow,      // floats only
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,  // logical, bool operands
  kOr,
  kBitAnd,  // integers (or bool)
  kBitOr,
  kBitXor,
  kShl,
  kShr,  // arithmetic for signed, logical for unsigned
};

const char* BinaryOpName(BinaryOp op);  // "+", "min", "ceildiv", ...
bool IsComparison(BinaryOp op);
bool IsLogical(BinaryOp op);
bool IsBitwise(BinaryOp op);  // & | ^ << >>

class BinaryNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryNode(BinaryOp op, DataType dtype, Expr a, Expr b)
      : ExprNode(kKind, dtype), op(op), a(std::move(a)), b(std::move(b)) {}
  const BinaryOp op;
  const Expr a, b;  // same dtype; the result is bool for comparisons
};

enum class UnaryOp : uint8_t { kNeg, kNot, kBitNot };

class UnaryNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kUnary;
  UnaryNode(UnaryOp op, Expr a)
      : ExprNode(kKind, a.dtype()), op(op), a(std::move(a)) {}
  const UnaryOp op;
  const Expr a;
};

class SelectNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kSelect;
  SelectNode(Expr cond, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()),
        cond(std::move(cond)),
        true_value(std::move(t)),
        false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};

class CastNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastNode(DataType dtype, Expr value)
      : ExprNode(kKind, dtype), value(std::move(value)) {}
  const Expr value;
};

enum class MathOp : uint8_t {
  kExp,
  kExp2,
  kLog,
  kLog2,
  kSqrt,
  kRsqrt,
  kAbs,  // ints too
  kTanh,
  kSigmoid,
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,  // to nearest even
  kErf,
};

const char* MathOpName(MathOp op);  // "exp", "rsqrt", ...

class MathNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kMath;
  MathNode(MathOp op, Expr a)
      : ExprNode(kKind, a.dtype()), op(op), a(std::move(a)) {}
  const MathOp op;
  const Expr a;
};

// A named intrinsic with a result type: the hook through which lowered code
// (passes, codegen) expresses instructions the tile IR has no node for, e.g.
// Call(u32, "smem_addr", {...}). The interpreter rejects names it does not
// know.
class CallNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(DataType dtype, std::string name, std::vector<Expr> args)
      : ExprNode(kKind, dtype), name(std::move(name)), args(std::move(args)) {}
  const std::string name;
  const std::vector<Expr> args;
};

class LoadNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kLoad;
  LoadNode(DataType dtype, Buffer buffer, std::vector<Expr> indices)
      : ExprNode(kKind, dtype),
        buffer(std::move(buffer)),
        indices(std::move(indices)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;  // one per dimension, i32 or i64
};

inline const std::string& Var::name() const { return node_->name; }
inline DataType Var::dtype() const { return node_->dtype; }
inline Var::operator Expr() const { return Expr(node_); }

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_EXPR_H_
