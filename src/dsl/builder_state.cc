#include "src/dsl/builder_state.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "src/dsl/depth_limit.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/verifier.h"
#include "src/ir/visitor.h"
#include "src/ir/walk.h"

namespace tessel::dsl {
namespace {

thread_local BuilderState* g_current = nullptr;
std::atomic<int> g_live_builders{0};  // on every thread

// The first op recorded with no builder to take it (ForOp).
std::mutex g_stray_mu;
absl::Status& StrayOp() {
  static auto* status = new absl::Status;
  return *status;
}

bool MentionsVar(const ir::Program& program, const ir::Var& v) {
  for (const ir::Buffer& b : program.params) {
    for (const ir::Expr& d : b->shape) {
      if (d.get() == v.get()) return true;
    }
  }
  return false;
}

uint64_t NextBuilderId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

BuilderState::BuilderState(std::string name, ir::SourceLoc loc)
    : id_(NextBuilderId()),
      name_(std::move(name)),
      loc_(loc),
      previous_(g_current) {
  g_current = this;
  ++g_live_builders;
  Frame root;
  root.kind = FrameKind::kRoot;
  root.loc = loc;
  OpenFrame(std::move(root));
}

BuilderState::~BuilderState() {
  --g_live_builders;
  if (g_current == this) g_current = previous_;
}

BuilderState* BuilderState::Current() { return g_current; }

BuilderState* BuilderState::ForOp(const ir::SourceLoc& loc,
                                  std::string_view op) {
  if (g_current != nullptr) return g_current;
  const char* why =
      g_live_builders.load() > 0
          ? "recorded on a thread without a ProgramBuilder while one is alive "
            "on another thread; a builder records only the ops of the "
            "thread that constructed it"
          : "recorded with no live ProgramBuilder; construct one first and "
            "keep it alive until finish()";
  std::lock_guard<std::mutex> lock(g_stray_mu);
  if (StrayOp().ok()) {
    StrayOp() = absl::InvalidArgumentError(
        absl::StrCat(ir::FormatLoc(loc), ": ", std::string(op), ": ", why,
                     " (the op was dropped; this is the first such op)"));
  }
  return nullptr;
}

void BuilderState::Error(const ir::SourceLoc& loc, std::string_view op,
                         std::string_view message) {
  if (!status_.ok()) return;
  status_ = absl::InvalidArgumentError(absl::StrCat(
      ir::FormatLoc(loc), ": ", std::string(op), ": ", std::string(message)));
}

void BuilderState::ExprError(std::string message) {
  if (pending_expr_error_.empty()) pending_expr_error_ = std::move(message);
}

void BuilderState::ReportExprError(std::string message) {
  if (BuilderState* s = Current()) s->ExprError(std::move(message));
}

bool BuilderState::BeginOp(const ir::SourceLoc& loc, std::string_view op,
                           bool needs_kernel) {
  if (!pending_expr_error_.empty()) {
    Error(
        loc, op,
        absl::StrCat("bad expression in its arguments: ", pending_expr_error_));
    pending_expr_error_.clear();
  }
  if (finished_) {
    Error(loc, op, "called after ProgramBuilder::finish()");
    return false;
  }
  if (needs_kernel && !in_kernel()) {
    Error(loc, op, "called outside a T::Kernel scope");
    return false;
  }
  return true;
}

bool BuilderState::in_kernel() const {
  for (const Frame& f : frames_) {
    if (f.kind == FrameKind::kKernel) return true;
  }
  return false;
}

BuilderState::Frame* BuilderState::kernel_frame() {
  for (Frame& f : frames_) {
    if (f.kind == FrameKind::kKernel) return &f;
  }
  return nullptr;
}

int BuilderState::loop_depth() const {
  return static_cast<int>(
      std::count_if(frames_.begin(), frames_.end(),
                    [](const Frame& f) { return f.kind == FrameKind::kLoop; }));
}

void BuilderState::Append(ir::Stmt stmt) {
  top().entries.emplace_back(std::move(stmt));
}

void BuilderState::AppendAlloc(const ir::Buffer& buffer,
                               const ir::SourceLoc& loc) {
  top().entries.emplace_back(AllocEntry{buffer, loc});
}

std::pair<uint64_t, int> BuilderState::AppendIf(ir::Expr cond,
                                                ir::Stmt then_body,
                                                const ir::SourceLoc& loc) {
  IfEntry e;
  e.branches.emplace_back(std::move(cond), std::move(then_body));
  e.locs.push_back(loc);
  top().entries.emplace_back(std::move(e));
  return {top().id, static_cast<int>(top().entries.size()) - 1};
}

BuilderState::IfEntry* BuilderState::FindIf(uint64_t frame_id, int entry) {
  Frame& f = top();
  if (f.id != frame_id || entry != static_cast<int>(f.entries.size()) - 1)
    return nullptr;
  return std::get_if<IfEntry>(&f.entries[entry]);
}

int BuilderState::OpenFrame(Frame frame) {
  frame.id = next_frame_id_++;
  if (!frames_.empty() && top().discard) frame.discard = true;
  frames_.push_back(std::move(frame));
  return depth();
}

ir::Stmt BuilderState::CloseFrame(int index, Frame* closed) {
  if (index <= 0 || index > depth()) return ir::Stmt();
  // Frames left open inside this one (only after a user's mistake, e.g. a
  // scope object kept alive past its parent) are closed and dropped.
  while (depth() > index) {
    Error(top().loc, "scope", "closed after its enclosing scope");
    frames_.pop_back();
  }
  *closed = std::move(frames_.back());
  frames_.pop_back();
  return Fold(std::move(closed->entries), closed->loc);
}

ir::Stmt BuilderState::Fold(std::vector<Entry> entries,
                            const ir::SourceLoc& loc) {
  std::vector<ir::Stmt> reversed;
  auto seq_of = [&](const std::vector<ir::Stmt>& rev) {
    return ir::Seq(std::vector<ir::Stmt>(rev.rbegin(), rev.rend()), loc);
  };
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (auto* s = std::get_if<ir::Stmt>(&*it)) {
      reversed.push_back(std::move(*s));
    } else if (auto* a = std::get_if<AllocEntry>(&*it)) {
      ir::Stmt body = seq_of(reversed);
      reversed.clear();
      reversed.push_back(
          ir::MakeStmt<ir::AllocateNode>(a->buffer, body, a->loc));
    } else {
      auto& chain = std::get<IfEntry>(*it);
      ir::Stmt else_case = chain.else_body;
      for (size_t b = chain.branches.size(); b-- > 0;) {
        else_case = ir::MakeStmt<ir::IfThenElseNode>(chain.branches[b].first,
                                                     chain.branches[b].second,
                                                     else_case, chain.locs[b]);
      }
      reversed.push_back(else_case);
    }
  }
  return seq_of(reversed);
}

bool BuilderState::OfDims(const ir::Expr& e) const {
  if (!e.defined() || !is_int(e.dtype()) || e.dtype() == DataType::kBool ||
      ir::AsConstInt(e) || ir::ReadsMemory(e)) {
    return false;
  }
  struct Vars : ir::IRVisitor {
    explicit Vars(const std::vector<ir::Var>& dims) : dims(dims) {}
    void Visit(const ir::VarNode* op) override {
      all &= std::any_of(dims.begin(), dims.end(),
                         [&](const ir::Var& v) { return v.get() == op; });
    }
    const std::vector<ir::Var>& dims;
    bool all = true;
  } vars(dims_);
  vars.VisitExpr(e);
  return vars.all;
}

ir::Buffer BuilderState::AddTensor(std::string name,
                                   std::vector<ir::Expr> shape, DataType dtype,
                                   const ir::SourceLoc& loc) {
  std::string op = absl::StrCat("tensor ", name);
  if (BeginOp(loc, op, /*needs_kernel=*/false)) {
    if (in_kernel())
      Error(loc, op, "declare tensors before the T::Kernel scope");
    if (name.empty()) Error(loc, op, "a tensor needs a name");
    for (const ir::Buffer& p : params_) {
      if (p->name == name)
        Error(loc, op, "a tensor of this name exists already");
    }
    if (shape.empty()) Error(loc, op, "a tensor needs at least one dimension");
    if (!dtype_valid(dtype)) {
      Error(loc, op, InvalidDtype(dtype));
      dtype = DataType::kF32;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      const ir::Expr& e = shape[d];
      bool is_dim =
          e.defined() && e.As<ir::VarNode>() != nullptr &&
          std::any_of(dims_.begin(), dims_.end(),
                      [&](const ir::Var& v) { return v.get() == e.get(); });
      // K / 2, ceildiv(K, 128): checked against the tensors at launch.
      is_dim |= OfDims(e);
      std::optional<int64_t> c = e.defined() ? ir::AsConstInt(e) : std::nullopt;
      if (!is_dim && c && *c > std::numeric_limits<int32_t>::max()) {
        Error(loc, op,
              absl::StrCat("dimension ", d, " is ", *c,
                           "; sizes are i32, at most ",
                           std::numeric_limits<int32_t>::max()));
        shape[d] = ir::IntImm(DataType::kI32, 1);
      } else if (!is_dim && !(c && *c > 0 && e.dtype() != DataType::kBool)) {
        Error(loc, op,
              absl::StrCat(
                  "dimension ", d, " is ",
                  e.defined() ? ir::ToString(e) : "undefined",
                  "; it must be a positive number, a T::dim(\"name\") or an "
                  "integer expression of T::dims (K / 2)"));
        shape[d] = ir::IntImm(DataType::kI32, 1);
      } else if (c) {
        shape[d] = ir::IntImm(DataType::kI32, *c);
      }
    }
  }
  ir::Buffer b = ir::MakeBuffer(std::move(name), dtype, std::move(shape),
                                ir::Scope::kGlobal);
  if (!finished_) params_.push_back(b);
  return b;
}

std::string BuilderState::InvalidDtype(DataType t) {
  return absl::StrCat("dtype value ", static_cast<int>(t),
                      " is not a tessel::DataType (f16, bf16, f32, ...)");
}

ir::Var BuilderState::Dim(const std::string& name, const ir::SourceLoc& loc) {
  auto it = dims_by_name_.find(name);
  if (it != dims_by_name_.end()) return it->second;
  if (name.empty()) Error(loc, "dim", "a symbolic dimension needs a name");
  ir::Var v(name, DataType::kI32);
  dims_by_name_.emplace(name, v);
  dims_.push_back(v);
  return v;
}

std::string BuilderState::BufferName(std::string wanted,
                                     std::string_view prefix) {
  if (!wanted.empty()) return wanted;
  int& n = name_counters_[std::string(prefix)];
  return absl::StrCat(std::string(prefix), n++);
}

std::string BuilderState::LoopVarName(std::string wanted) {
  if (!wanted.empty()) return wanted;
  static constexpr const char* kNames[] = {"i", "j", "k", "l", "m", "n"};
  int d = loop_depth();
  return d < 6 ? kNames[d] : absl::StrCat("i", d);
}

absl::StatusOr<ir::Program> BuilderState::Finish(const ir::SourceLoc& loc) {
  if (finished_) {
    Error(loc, "finish", "called twice");
    return status_;
  }
  if (!pending_expr_error_.empty()) {
    Error(loc, "finish", absl::StrCat("bad expression: ", pending_expr_error_));
    pending_expr_error_.clear();
  }
  finished_ = true;
  if (depth() > 0) {
    const Frame& open = frames_[1];
    Error(open.loc, open.kind == FrameKind::kKernel ? "T::Kernel" : "scope",
          absl::StrCat("scope still open when finish() was called at ",
                       ir::FormatLoc(loc),
                       "; close it first (end its C++ block)"));
  }
  {
    std::lock_guard<std::mutex> lock(g_stray_mu);
    if (!StrayOp().ok()) {
      status_ = StrayOp();  // before this builder's own mistakes: it came first
      StrayOp() = absl::OkStatus();
    }
  }
  if (!status_.ok()) return status_;
  if (kernels_ == 0) {
    Error(loc, "finish", absl::StrCat("program ", name_, " has no T::Kernel"));
    return status_;
  }
  ir::Program program;
  program.name = name_;
  program.params = params_;
  for (const ir::Var& v : dims_) {
    program.dims.push_back(v);
  }
  program.body = kernel_;
  // Before any walk that recurses (the verifier's, the printer's, ...).
  if (absl::Status s = CheckDepth(program, loc_); !s.ok()) {
    status_ = s;
    return status_;
  }
  for (const ir::Var& v : dims_) {
    if (!MentionsVar(program, v)) {
      Error(loc_, "dim",
            absl::StrCat("symbolic dimension ", v.name(),
                         " is not a dimension of any tensor, so it cannot be "
                         "bound at launch"));
      return status_;
    }
  }
  if (absl::Status s = ir::Verify(program); !s.ok()) {
    status_ = s;
    return status_;
  }
  if (const char* dump = std::getenv("TESSEL_DUMP_IR");
      dump != nullptr && *dump != '\0' && std::string_view(dump) != "0") {
    std::cerr << "// TESSEL_DUMP_IR: recorded program\n"
              << ir::ToString(program, {.locations = true});
  }
  return program;
}

}  // namespace tessel::dsl
