// The recording state behind tessel::ProgramBuilder: a stack of open scopes
// (frames), the first recorded mistake, the parameters.
//
//   dsl::BuilderState* s = dsl::BuilderState::Current();
//   if (s && s->BeginOp(loc, "copy"))
//   s->Append(ir::MakeStmt<ir::CopyNode>(...));
//
// Frames hold entries (statements, allocation markers, if-chains) that are
// folded into IR when the frame closes: an allocation marker wraps the rest
// of its frame in an AllocateNode.
#ifndef TESSEL_SRC_DSL_BUILDER_STATE_H_
#define TESSEL_SRC_DSL_BUILDER_STATE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/program.h"
#include "src/ir/stmt.h"

namespace tessel::dsl {

class BuilderState {
 public:
  enum class FrameKind { kRoot, kKernel, kLoop, kBranch };

  struct AllocEntry {
    ir::Buffer buffer;
    ir::SourceLoc loc;
  };
  struct IfEntry {
    std::vector<std::pair<ir::Expr, ir::Stmt>> branches;  // if, elif, ...
    ir::Stmt else_body;
    bool has_else = false;
    std::vector<ir::SourceLoc> locs;  // one per branch
  };
  using Entry = std::variant<ir::Stmt, AllocEntry, IfEntry>;

  struct Frame {
    FrameKind kind = FrameKind::kRoot;
    uint64_t id = 0;  // unique per builder, set by OpenFrame
    ir::SourceLoc loc;
    std::vector<Entry> entries;
    bool discard = false;  // opened in error (e.g. a nested kernel)
    // kKernel
    std::vector<ir::Expr> grid;
    int threads = 0;
    std::vector<ir::Var> block_vars;
    ir::Buffer default_barriers;  // T::create_list_of_mbarrier
    // kLoop
    ir::Var var;
    ir::Expr min, extent;
    ir::ForKind for_kind = ir::ForKind::kSerial;
    int num_stages = 0;
    std::vector<int> order, stage;
  };

  BuilderState(std::string name, ir::SourceLoc loc);
  ~BuilderState();

  // The builder constructed last on this thread and still alive, or null.
  static BuilderState* Current();
  // Current(), for an op about to record. Without one the op is an error
  // (no live builder, or one on another thread only) that the next
  // Finish(), on any thread, returns.
  static BuilderState* ForOp(const ir::SourceLoc& loc, std::string_view op);

  // Errors: the first one is kept. loc is the user's call site.
  void Error(const ir::SourceLoc& loc, std::string_view op,
             std::string_view message);
  // An expression-building mistake (operators have no call site): reported
  // at the next recorded op.
  void ExprError(std::string message);
  // Reports an expression mistake to the current builder, if any.
  static void ReportExprError(std::string message);
  const absl::Status& status() const { return status_; }
  // A dtype that is no DataType enumerator (a number cast to one): the
  // error for it, to record at the user's line.
  static std::string InvalidDtype(DataType t);

  // Whether an op may record now: not after finish(), inside a kernel (when
  // needs_kernel). Records the error otherwise. Also flushes ExprErrors.
  bool BeginOp(const ir::SourceLoc& loc, std::string_view op,
               bool needs_kernel = true);

  void Append(ir::Stmt stmt);
  void AppendAlloc(const ir::Buffer& buffer, const ir::SourceLoc& loc);
  // Adds an if-chain to the innermost frame; returns {frame id, entry index}.
  std::pair<uint64_t, int> AppendIf(ir::Expr cond, ir::Stmt then_body,
                                    const ir::SourceLoc& loc);
  // The if-chain, when it is still the last entry of the innermost frame.
  IfEntry* FindIf(uint64_t frame_id, int entry);

  // Opens a frame; returns its index (the depth).
  int OpenFrame(Frame frame);
  // Closes frame `index` (and any left open inside it), moves the frame to
  // *closed and returns its body. Undefined when the frame is gone already.
  ir::Stmt CloseFrame(int index, Frame* closed);
  Frame& frame(int index) { return frames_[index]; }
  Frame& top() { return frames_.back(); }
  int depth() const { return static_cast<int>(frames_.size()) - 1; }
  bool in_kernel() const;
  Frame* kernel_frame();
  int loop_depth() const;

  // Parameters and symbolic sizes.
  ir::Buffer AddTensor(std::string name, std::vector<ir::Expr> shape,
                       DataType dtype, const ir::SourceLoc& loc);
  ir::Var Dim(const std::string& name, const ir::SourceLoc& loc);

  // A fresh name with this prefix (shared0, frag1, ...), or `wanted`.
  std::string BufferName(std::string wanted, std::string_view prefix);
  // The printed name of a new loop variable at the current loop depth.
  std::string LoopVarName(std::string wanted);

  absl::StatusOr<ir::Program> Finish(const ir::SourceLoc& loc);

  // The program's kernel (one per program).
  int kernels() const { return kernels_; }
  void SetKernel(ir::Stmt kernel) {
    kernel_ = std::move(kernel);
    ++kernels_;
  }
  bool finished() const { return finished_; }
  // Unique among all builders of the process: what an IfChain keeps to
  // find its builder again (an address may be reused by a later builder).
  uint64_t id() const { return id_; }

 private:
  ir::Stmt Fold(std::vector<Entry> entries, const ir::SourceLoc& loc);
  // An integer expression of symbolic sizes only (a tensor dim K / 2).
  bool OfDims(const ir::Expr& e) const;

  const uint64_t id_;
  std::string name_;
  ir::SourceLoc loc_;
  absl::Status status_;
  std::string pending_expr_error_;
  bool finished_ = false;
  std::vector<Frame> frames_;
  std::vector<ir::Buffer> params_;
  std::map<std::string, ir::Var> dims_by_name_;
  std::vector<ir::Var> dims_;  // declaration order
  ir::Stmt kernel_;
  int kernels_ = 0;
  uint64_t next_frame_id_ = 1;
  std::map<std::string, int> name_counters_;
  BuilderState* previous_;  // the thread's builder stack
};

}  // namespace tessel::dsl

#endif  // TESSEL_SRC_DSL_BUILDER_STATE_H_
