// Scope objects: T::Kernel, the loop ranges, T::If chains, ProgramBuilder.
#include "absl/strings/str_cat.h"
#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "tessel/builder.h"

namespace tessel {

using dsl::Access;
using dsl::BuilderState;

// ---------------------------------------------------------------- builder

ProgramBuilder::ProgramBuilder(std::string name, SourceLocation loc)
    : state_(std::make_unique<BuilderState>(std::move(name), loc)) {}

ProgramBuilder::~ProgramBuilder() = default;

Buffer ProgramBuilder::tensor(std::string name,
                              std::initializer_list<Expr> shape, DataType dtype,
                              SourceLocation loc) {
  return tensor(std::move(name), std::vector<Expr>(shape), dtype, loc);
}

Buffer ProgramBuilder::tensor(std::string name, const std::vector<Expr>& shape,
                              DataType dtype, SourceLocation loc) {
  std::vector<ir::Expr> dims;
  for (const Expr& e : shape) dims.push_back(Access::ToIr(e));
  return Access::FromIr(
      state_->AddTensor(std::move(name), std::move(dims), dtype, loc));
}

Expr ProgramBuilder::dim(std::string name, SourceLocation loc) {
  return Access::FromIr(state_->Dim(name, loc));
}

absl::StatusOr<Program> ProgramBuilder::finish(SourceLocation loc) {
  absl::StatusOr<ir::Program> p = state_->Finish(loc);
  if (!p.ok()) return p.status();
  return Access::MakeProgram(*std::move(p));
}

Expr dim(std::string name, SourceLocation loc) {
  BuilderState* state = BuilderState::Current();
  if (state == nullptr) return Access::FromIr(ir::Var(std::move(name)));
  return Access::FromIr(state->Dim(name, loc));
}

// ---------------------------------------------------------------- kernel

namespace dsl {
namespace {

bool CheckIntExpr(BuilderState* state, const ir::SourceLoc& loc,
                  std::string_view op, const ir::Expr& e,
                  std::string_view what) {
  if (!e.defined() || !is_int(e.dtype())) {
    state->Error(
        loc, op,
        absl::StrCat(std::string(what), " must be an integer expression, got ",
                     e.defined() ? ir::ToString(e) : "an undefined one"));
    return false;
  }
  return true;
}

}  // namespace

KernelScope::KernelScope(std::vector<Expr> grid, KernelOptions options,
                         SourceLocation loc)
    : state_(BuilderState::ForOp(loc, "T::Kernel")), frame_(-1) {
  static constexpr const char* kNames[] = {"bx", "by", "bz"};
  BuilderState::Frame f;
  f.kind = BuilderState::FrameKind::kKernel;
  f.loc = loc;
  f.threads = options.threads;
  for (size_t d = 0; d < grid.size(); ++d) {
    f.grid.push_back(Access::ToIr(grid[d]));
    f.block_vars.emplace_back(kNames[d], DataType::kI32);
    block_vars_.push_back(Access::FromIr(f.block_vars.back()));
  }
  if (state_ == nullptr) return;
  const char* op = "T::Kernel";
  if (!state_->BeginOp(loc, op, /*needs_kernel=*/false)) {
    f.discard = true;
  } else if (state_->in_kernel()) {
    state_->Error(loc, op,
                  absl::StrCat("nested inside the T::Kernel opened at ",
                               ir::FormatLoc(state_->kernel_frame()->loc),
                               "; a kernel cannot contain another"));
    f.discard = true;
  } else if (state_->kernels() > 0) {
    state_->Error(
        loc, op,
        "a program holds one kernel; build a second program for another");
    f.discard = true;
  }
  for (size_t d = 0; d < f.grid.size(); ++d) {
    if (!CheckIntExpr(state_, loc, op, f.grid[d],
                      absl::StrCat("grid dimension ", d))) {
      f.grid[d] = ir::IntImm(DataType::kI32, 1);
    } else if (std::optional<int64_t> c = ir::AsConstInt(f.grid[d]);
               c && (*c <= 0 || *c > ir::kMaxGridDim[std::min<size_t>(d, 2)])) {
      state_->Error(
          loc, op,
          absl::StrCat("grid dimension ", d, " is ", *c, "; it must be 1 to ",
                       ir::kMaxGridDim[std::min<size_t>(d, 2)],
                       " (CUDA's grid limit)"));
    }
  }
  if (options.threads < 1 || options.threads > 1024) {
    state_->Error(loc, op,
                  absl::StrCat("threads = ", options.threads,
                               "; a block has 1 to 1024 threads"));
  }
  frame_ = state_->OpenFrame(std::move(f));
}

KernelScope::~KernelScope() {
  if (state_ == nullptr || frame_ < 0 || BuilderState::Current() != state_)
    return;
  BuilderState::Frame f;
  ir::Stmt body = state_->CloseFrame(frame_, &f);
  if (!body.defined() || f.discard) return;
  state_->SetKernel(ir::MakeStmt<ir::KernelNode>(f.grid, f.threads,
                                                 f.block_vars, body, f.loc));
}

// ---------------------------------------------------------------- loops

LoopRange::LoopRange(LoopKind kind, std::vector<std::pair<Expr, Expr>> ranges,
                     int num_stages, std::vector<int> order,
                     std::vector<int> stage, std::string name,
                     SourceLocation loc)
    : state_(BuilderState::ForOp(loc, "loop")) {
  static constexpr const char* kOps[] = {"T::Serial", "T::Unroll",
                                         "T::Parallel", "T::Pipelined"};
  static constexpr ir::ForKind kKinds[] = {
      ir::ForKind::kSerial, ir::ForKind::kUnrolled, ir::ForKind::kParallel,
      ir::ForKind::kPipelined};
  const char* op = kOps[static_cast<int>(kind)];
  if (state_ == nullptr) {
    for (size_t d = 0; d < ranges.size(); ++d)
      vars_.push_back(Access::FromIr(ir::Var("i")));
    return;
  }
  bool ok = state_->BeginOp(loc, op);
  if (num_stages < 0 || num_stages > ir::kMaxNumStages) {
    state_->Error(
        loc, op,
        absl::StrCat("num_stages = ", num_stages,
                     num_stages < 0 ? " is negative"
                                    : absl::StrCat("; tessel takes at most ",
                                                   ir::kMaxNumStages)));
    num_stages = 0;
  }
  if (!order.empty() && !stage.empty() && order.size() != stage.size()) {
    state_->Error(
        loc, op,
        absl::StrCat("order has ", order.size(), " entries but stage has ",
                     stage.size(), "; give one of each per statement"));
  }
  for (size_t d = 0; d < ranges.size(); ++d) {
    BuilderState::Frame f;
    f.kind = BuilderState::FrameKind::kLoop;
    f.loc = loc;
    f.discard = !ok;
    ir::Expr start = Access::ToIr(ranges[d].first),
             stop = Access::ToIr(ranges[d].second);
    bool valid = CheckIntExpr(state_, loc, op, start, "the loop start") &&
                 CheckIntExpr(state_, loc, op, stop, "the loop extent / stop");
    if (!valid) {
      start = ir::IntImm(DataType::kI32, 0);
      stop = ir::IntImm(DataType::kI32, 1);
    }
    f.var = ir::Var(state_->LoopVarName(d == 0 ? name : ""), start.dtype());
    f.min = start;
    f.extent = stop - start;
    f.for_kind = kKinds[static_cast<int>(kind)];
    f.num_stages = num_stages;
    f.order = order;
    f.stage = stage;
    vars_.push_back(Access::FromIr(f.var));
    int index = state_->OpenFrame(std::move(f));
    if (d == 0) first_frame_ = index;
    ++frames_;
  }
}

LoopRange::~LoopRange() {
  if (state_ == nullptr || first_frame_ < 0 ||
      BuilderState::Current() != state_)
    return;
  for (int index = first_frame_ + frames_ - 1; index >= first_frame_; --index) {
    BuilderState::Frame f;
    ir::Stmt body = state_->CloseFrame(index, &f);
    if (!body.defined()) continue;
    state_->Append(ir::MakeStmt<ir::ForNode>(f.var, f.min, f.extent, f.for_kind,
                                             f.num_stages, f.order, f.stage,
                                             body, f.loc));
  }
}

}  // namespace dsl

// ---------------------------------------------------------------- if / else

namespace {

// Runs body inside a fresh branch frame and returns what it recorded.
ir::Stmt RecordBranch(BuilderState* state, const std::function<void()>& body,
                      const SourceLocation& loc) {
  BuilderState::Frame f;
  f.kind = BuilderState::FrameKind::kBranch;
  f.loc = loc;
  int index = state->OpenFrame(std::move(f));
  if (body) body();
  BuilderState::Frame closed;
  return state->CloseFrame(index, &closed);
}

ir::Expr Condition(BuilderState* state, const Expr& cond,
                   const SourceLocation& loc, const char* op) {
  ir::Expr c = Access::ToIr(cond);
  if (!c.defined() || c.dtype() != DataType::kBool) {
    state->Error(loc, op,
                 absl::StrCat("the condition must be bool (a comparison), got ",
                              c.defined() ? ir::ToString(c)
                                          : "an undefined expression"));
    return ir::BoolImm(false);
  }
  return c;
}

}  // namespace

IfChain If(const Expr& cond, const std::function<void()>& then_body,
           SourceLocation loc) {
  BuilderState* state = BuilderState::ForOp(loc, "T::If");
  if (state == nullptr) return IfChain(0, 0, -1);
  state->BeginOp(loc, "T::If");
  ir::Expr c = Condition(state, cond, loc, "T::If");
  ir::Stmt body = RecordBranch(state, then_body, loc);
  auto [frame_id, entry] = state->AppendIf(c, body, loc);
  return IfChain(state->id(), frame_id, entry);
}

namespace {

// The builder that recorded the chain's T::If, when it is the current one;
// else null, with the error recorded (a chain kept past its builder, or
// continued while another builder records, would attach the branch to the
// wrong program).
BuilderState* ChainBuilder(uint64_t builder, const SourceLocation& loc,
                           const char* op) {
  BuilderState* state = BuilderState::ForOp(loc, op);
  if (state == nullptr || builder == 0) return nullptr;
  if (state->id() != builder) {
    state->Error(loc, op,
                 "its T::If(...) was recorded by another ProgramBuilder (or "
                 "one that is gone); continue a chain in the builder that "
                 "began it");
    return nullptr;
  }
  return state;
}

}  // namespace

IfChain IfChain::ElseIf(const Expr& cond, const std::function<void()>& body,
                        SourceLocation loc) const {
  BuilderState* state = ChainBuilder(builder_, loc, "ElseIf");
  if (state == nullptr) return *this;
  state->BeginOp(loc, "ElseIf");
  BuilderState::IfEntry* chain = state->FindIf(frame_, entry_);
  if (chain == nullptr || chain->has_else) {
    state->Error(
        loc, "ElseIf",
        "must directly follow its T::If(...) (or ElseIf) in the same scope");
    return *this;
  }
  ir::Expr c = Condition(state, cond, loc, "ElseIf");
  ir::Stmt recorded = RecordBranch(state, body, loc);
  chain = state->FindIf(frame_, entry_);  // frames may have moved
  chain->branches.emplace_back(c, recorded);
  chain->locs.push_back(loc);
  return *this;
}

void IfChain::Else(const std::function<void()>& body,
                   SourceLocation loc) const {
  BuilderState* state = ChainBuilder(builder_, loc, "Else");
  if (state == nullptr) return;
  state->BeginOp(loc, "Else");
  BuilderState::IfEntry* chain = state->FindIf(frame_, entry_);
  if (chain == nullptr || chain->has_else) {
    state->Error(loc, "Else",
                 "must directly follow its T::If(...) in the same scope, once");
    return;
  }
  ir::Stmt recorded = RecordBranch(state, body, loc);
  chain = state->FindIf(frame_, entry_);
  chain->else_body = recorded;
  chain->has_else = true;
}

}  // namespace tessel
