// Statement nodes of the tile IR: the kernel scope, loops, branches, element
// stores, tile ops, synchronisation and annotations.
//
//   ir::Stmt body = ir::Seq({ir::Fill(ir::Region::Full(acc), 0.0, loc), ...});
//   if (const auto* loop = s.As<ir::ForNode>()) Walk(loop->body);
//
// Every node keeps the std::source_location of the user call that recorded
// it (a default location when a pass made it); the verifier, interpreter and
// codegen quote it in their errors. Locations never take part in structural
// equality or hashing.
//
// Adding a node kind (e.g. a lowered instruction the codegen needs): prefer
// an EvaluateNode around an intrinsic ir::Call(dtype, "name", args). A real
// new kind goes into StmtKind, gets a node class here and a case in the
// visitor, mutator, printer and structural hash.
#ifndef TESSEL_SRC_IR_STMT_H_
#define TESSEL_SRC_IR_STMT_H_

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/node_kinds.h"

namespace tessel::ir {

using SourceLoc = std::source_location;

// "file.cc:42" (the path as the compiler gave it); "<unknown>" for a node
// that a pass made.
std::string FormatLoc(const SourceLoc& loc);

enum class StmtKind : uint8_t {
#define TESSEL_IR_KIND(K, N, name) k##K,
  TESSEL_IR_STMT_NODES(TESSEL_IR_KIND)
#undef TESSEL_IR_KIND
};

const char* StmtKindName(StmtKind kind);  // "kernel", "copy", ...

class StmtNode : public std::enable_shared_from_this<StmtNode> {
 public:
  StmtNode(StmtKind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~StmtNode() = default;
  StmtNode(const StmtNode&) = delete;
  StmtNode& operator=(const StmtNode&) = delete;

  template <typename T>
  const T* As() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

  const StmtKind kind;
  const SourceLoc loc;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node)
      : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  template <typename T>
  const T* As() const {
    return node_ ? node_->As<T>() : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

#define TESSEL_IR_STMT_KIND(K) static constexpr StmtKind kKind = StmtKind::K

// The kernel launch scope: grid of 1-3 dims (x fastest, as CUDA), threads per
// block, and one block-index variable per grid dim (ranging over [0, grid)).
class KernelNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kKernel);
  KernelNode(std::vector<Expr> grid, int threads, std::vector<Var> block_vars,
             Stmt body, SourceLoc loc)
      : StmtNode(kKind, loc),
        grid(std::move(grid)),
        threads(threads),
        block_vars(std::move(block_vars)),
        body(std::move(body)) {}
  const std::vector<Expr> grid;
  const int threads;
  const std::vector<Var> block_vars;
  const Stmt body;
};

enum class ForKind : uint8_t {
  kSerial,
  kUnrolled,
  kParallel,   // element-wise over a tile, iterations spread over all threads
  kPipelined,  // sequential semantics; the pipeline is an optimization
};

const char* ForKindName(ForKind kind);

// var runs over [min, min + extent) in order (for kParallel: in any order,
// iterations are independent).
class ForNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kFor);
  ForNode(Var var, Expr min, Expr extent, ForKind for_kind, int num_stages,
          std::vector<int> order, std::vector<int> stage, Stmt body,
          SourceLoc loc)
      : StmtNode(kKind, loc),
        var(std::move(var)),
        min(std::move(min)),
        extent(std::move(extent)),
        for_kind(for_kind),
        num_stages(num_stages),
        order(std::move(order)),
        stage(std::move(stage)),
        body(std::move(body)) {}
  const Var var;
  const Expr min;
  const Expr extent;
  const ForKind for_kind;
  // kPipelined only: stages (0 = not software-pipelined) and, as in
  // TileLang, optional per-statement order and stage lists of the body.
  const int num_stages;
  const std::vector<int> order;
  const std::vector<int> stage;
  const Stmt body;
};

class IfThenElseNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kIfThenElse);
  IfThenElseNode(Expr cond, Stmt then_case, Stmt else_case, SourceLoc loc)
      : StmtNode(kKind, loc),
        cond(std::move(cond)),
        then_case(std::move(then_case)),
        else_case(std::move(else_case)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be undefined
};

// buffer[indices] = value (value has the buffer's dtype).
class StoreNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kStore);
  StoreNode(Buffer buffer, std::vector<Expr> indices, Expr value, SourceLoc loc)
      : StmtNode(kKind, loc),
        buffer(std::move(buffer)),
        indices(std::move(indices)),
        value(std::move(value)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
};

class SeqNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kSeq);
  SeqNode(std::vector<Stmt> stmts, SourceLoc loc)
      : StmtNode(kKind, loc), stmts(std::move(stmts)) {}
  const std::vector<Stmt> stmts;
};

// The buffer exists (uninitialised) inside body and nowhere else.
class AllocateNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kAllocate);
  AllocateNode(Buffer buffer, Stmt body, SourceLoc loc)
      : StmtNode(kKind, loc),
        buffer(std::move(buffer)),
        body(std::move(body)) {}
  const Buffer buffer;
  const Stmt body;
};

// dst = src element-wise, converting dtypes. The regions' extents agree once
// unit dimensions are dropped. Boundary rule: elements of a global region
// outside the tensor read as zero and are not stored.
class CopyNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kCopy);
  CopyNode(Region src, Region dst, SourceLoc loc)
      : StmtNode(kKind, loc), src(std::move(src)), dst(std::move(dst)) {}
  // A TMA copy (made by warp_specialize): one thread issues it and it
  // completes on barrier[barrier_index], which expects its bytes.
  CopyNode(Region src, Region dst, Buffer barrier, Expr barrier_index,
           SourceLoc loc)
      : StmtNode(kKind, loc),
        src(std::move(src)),
        dst(std::move(dst)),
        barrier(std::move(barrier)),
        barrier_index(std::move(barrier_index)) {}
  const Region src;
  const Region dst;
  const Buffer barrier;  // undefined: an ordinary copy
  const Expr barrier_index;
};

enum class GemmWarpPolicy : uint8_t { kSquare, kFullRow, kFullCol };
const char* GemmWarpPolicyName(GemmWarpPolicy policy);

// C (+)= op(A) * op(B): A is [M, K] ([K, M] when transpose_a), B is [K, N]
// ([N, K] when transpose_b), C is [M, N], a fragment. clear_accum: C = A * B.
class GemmNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kGemm);
  GemmNode(Region a, Region b, Region c, bool transpose_a, bool transpose_b,
           bool clear_accum, GemmWarpPolicy policy, SourceLoc loc)
      : StmtNode(kKind, loc),
        a(std::move(a)),
        b(std::move(b)),
        c(std::move(c)),
        transpose_a(transpose_a),
        transpose_b(transpose_b),
        clear_accum(clear_accum),
        policy(policy) {}
  const Region a, b, c;
  const bool transpose_a, transpose_b, clear_accum;
  const GemmWarpPolicy policy;
};

// Every element of dst = value (T.fill; T.clear is fill with 0).
class FillNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kFill);
  FillNode(Region dst, Expr value, SourceLoc loc)
      : StmtNode(kKind, loc), dst(std::move(dst)), value(std::move(value)) {}
  const Region dst;
  const Expr value;  // dst's dtype
};

enum class ReduceKind : uint8_t { kSum, kMax, kMin, kAbsSum, kAbsMax };
const char* ReduceKindName(ReduceKind kind);

// dst = reduce of src over dimension dim. dst's shape is src's without dim
// (a [M, N] tile reduced over dim 1 gives [M]). clear = false combines with
// dst's old values (dst = dst op reduce(src)).
class ReduceNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kReduce);
  ReduceNode(Buffer src, Buffer dst, ReduceKind reduce_kind, int dim,
             bool clear, SourceLoc loc)
      : StmtNode(kKind, loc),
        src(std::move(src)),
        dst(std::move(dst)),
        reduce_kind(reduce_kind),
        dim(dim),
        clear(clear) {}
  const Buffer src, dst;
  const ReduceKind reduce_kind;
  const int dim;
  const bool clear;
};

// Inclusive prefix sum of src along dim into dst (same shape; may alias src);
// reverse sums from the end.
class CumsumNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kCumsum);
  CumsumNode(Buffer src, Buffer dst, int dim, bool reverse, SourceLoc loc)
      : StmtNode(kKind, loc),
        src(std::move(src)),
        dst(std::move(dst)),
        dim(dim),
        reverse(reverse) {}
  const Buffer src, dst;
  const int dim;
  const bool reverse;
};

enum class AtomicOp : uint8_t { kAdd, kMax, kMin };
const char* AtomicOpName(AtomicOp op);

// Atomic read-modify-write into a global tensor. Tile form (src set): every
// element of the src tile (shared/fragment/local) is combined into the same
// position of dst, whose extents match src's (unit dims dropped); elements
// past the tensor edge are skipped. Element form (src unset): dst has all
// extents 1 and value is combined into that element.
//
// A ticket (prev set, T::atomic_ticket): an element add on a global i32
// counter done once for the block, by one thread, whose old value lands in
// prev, a shared i32 element every thread then reads. It is a release and
// an acquire at GPU scope: the block's global writes before it are visible
// to a block whose ticket comes later, and that block's reads after it see
// them (docs/ir.md, "Tickets").
class AtomicNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kAtomic);
  AtomicNode(AtomicOp op, Region dst, std::optional<Region> src, Expr value,
             SourceLoc loc)
      : AtomicNode(op, std::move(dst), std::move(src), std::move(value),
                   std::nullopt, loc) {}
  AtomicNode(AtomicOp op, Region dst, std::optional<Region> src, Expr value,
             std::optional<Region> prev, SourceLoc loc)
      : StmtNode(kKind, loc),
        op(op),
        dst(std::move(dst)),
        src(std::move(src)),
        value(std::move(value)),
        prev(std::move(prev)) {}
  const AtomicOp op;
  const Region dst;
  const std::optional<Region> src;
  const Expr value;                  // element form only
  const std::optional<Region> prev;  // a ticket's old value (shared i32)
};

// __syncthreads(): every thread of the block waits here.
class SyncThreadsNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kSyncThreads);
  explicit SyncThreadsNode(SourceLoc loc) : StmtNode(kKind, loc) {}
};

// Initialises barriers[i] to expect arrive_counts[i] arrivals per phase. An
// mbarrier allocation is Allocate(barriers, Seq{MbarrierInit, ...}).
class MbarrierInitNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kMbarrierInit);
  MbarrierInitNode(Buffer barriers, std::vector<Expr> arrive_counts,
                   SourceLoc loc)
      : StmtNode(kKind, loc),
        barriers(std::move(barriers)),
        arrive_counts(std::move(arrive_counts)) {}
  const Buffer barriers;  // scope kBarrier, rank 1
  const std::vector<Expr> arrive_counts;
};

// The calling thread arrives on barriers[index].
class MbarrierArriveNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kMbarrierArrive);
  MbarrierArriveNode(Buffer barriers, Expr index, SourceLoc loc)
      : StmtNode(kKind, loc),
        barriers(std::move(barriers)),
        index(std::move(index)) {}
  const Buffer barriers;
  const Expr index;
};

// barriers[index] also waits for `bytes` of async (TMA) transactions.
class MbarrierExpectTxNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kMbarrierExpectTx);
  MbarrierExpectTxNode(Buffer barriers, Expr index, Expr bytes, SourceLoc loc)
      : StmtNode(kKind, loc),
        barriers(std::move(barriers)),
        index(std::move(index)),
        bytes(std::move(bytes)) {}
  const Buffer barriers;
  const Expr index;
  const Expr bytes;
};

// Waits until the phase of barriers[index] with this parity (0/1) completed.
class MbarrierWaitParityNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kMbarrierWaitParity);
  MbarrierWaitParityNode(Buffer barriers, Expr index, Expr parity,
                         SourceLoc loc)
      : StmtNode(kKind, loc),
        barriers(std::move(barriers)),
        index(std::move(index)),
        parity(std::move(parity)) {}
  const Buffer barriers;
  const Expr index;
  const Expr parity;
};

// The user asks for this layout of a (shared) buffer; the layout pass obeys.
class AnnotateLayoutNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kAnnotateLayout);
  AnnotateLayoutNode(Buffer buffer, Layout layout, SourceLoc loc)
      : StmtNode(kKind, loc), buffer(std::move(buffer)), layout(layout) {}
  const Buffer buffer;
  const Layout layout;
};

// Block rasterization: map blockIdx to tiles in panels of panel_size for L2
// reuse (T.use_swizzle). Changes only the block order, never the result.
class UseSwizzleNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kUseSwizzle);
  UseSwizzleNode(int panel_size, bool column_major, SourceLoc loc)
      : StmtNode(kKind, loc),
        panel_size(panel_size),
        column_major(column_major) {}
  const int panel_size;
  const bool column_major;
};

// Debug print of a value or of a whole buffer, with a message.
class PrintNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kPrint);
  PrintNode(std::string message, Expr value, Buffer buffer, SourceLoc loc)
      : StmtNode(kKind, loc),
        message(std::move(message)),
        value(std::move(value)),
        buffer(std::move(buffer)) {}
  const std::string message;
  const Expr value;     // defined for a value print
  const Buffer buffer;  // defined for a buffer print
};

// A warp-specialized block (made by warp_specialize): `producer_threads`
// more threads than the kernel's run `producer` (one of them issues it),
// while the kernel's own threads run `consumer`. They meet only through
// mbarriers; a barrier inside `consumer` syncs the consumers alone. With
// consumer_groups > 1 (ping-pong), that many copies of the kernel's
// threads run `consumer`, each with its own thread indices, `group` (0, 1,
// ...) telling them apart; a barrier syncs one group.
class WarpSpecializeNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kWarpSpecialize);
  WarpSpecializeNode(int producer_threads, Stmt producer, Stmt consumer,
                     SourceLoc loc, int consumer_groups = 1, Var group = Var())
      : StmtNode(kKind, loc),
        producer_threads(producer_threads),
        producer(std::move(producer)),
        consumer(std::move(consumer)),
        consumer_groups(consumer_groups),
        group(std::move(group)) {}
  const int producer_threads;
  const Stmt producer;
  const Stmt consumer;
  const int consumer_groups;
  const Var group;  // defined when consumer_groups > 1
};

// Evaluates an expression for its effect: the statement form of an intrinsic
// ir::Call (lowered instructions, fences, ...).
class EvaluateNode : public StmtNode {
 public:
  TESSEL_IR_STMT_KIND(kEvaluate);
  EvaluateNode(Expr value, SourceLoc loc)
      : StmtNode(kKind, loc), value(std::move(value)) {}
  const Expr value;
};

#undef TESSEL_IR_STMT_KIND

// Convenience constructors (loc defaults to "made by a pass").
Stmt Seq(std::vector<Stmt> stmts, SourceLoc loc = SourceLoc());
template <typename T, typename... Args>
Stmt MakeStmt(Args&&... args) {
  return Stmt(std::make_shared<const T>(std::forward<Args>(args)...));
}

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_STMT_H_
