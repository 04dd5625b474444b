#include "src/ir/stmt.h"

#include "absl/strings/str_cat.h"

namespace tessel::ir {

std::string FormatLoc(const SourceLoc& loc) {
  if (loc.line() == 0 || loc.file_name() == nullptr ||
      *loc.file_name() == '\0') {
    return "<unknown>";
  }
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

const char* StmtKindName(StmtKind kind) {
  switch (kind) {
#define TESSEL_IR_NAME(K, N, name) \
  case StmtKind::k##K:             \
    return name;
    TESSEL_IR_STMT_NODES(TESSEL_IR_NAME)
#undef TESSEL_IR_NAME
  }
  return "?";
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kParallel:
      return "Parallel";
    case ForKind::kPipelined:
      return "Pipelined";
  }
  return "?";
}

const char* GemmWarpPolicyName(GemmWarpPolicy policy) {
  switch (policy) {
    case GemmWarpPolicy::kSquare:
      return "Square";
    case GemmWarpPolicy::kFullRow:
      return "FullRow";
    case GemmWarpPolicy::kFullCol:
      return "FullCol";
  }
  return "?";
}

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return "sum";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMin:
      return "min";
    case ReduceKind::kAbsSum:
      return "abssum";
    case ReduceKind::kAbsMax:
      return "absmax";
  }
  return "?";
}

const char* AtomicOpName(AtomicOp op) {
  switch (op) {
    case AtomicOp::kAdd:
      return "add";
    case AtomicOp::kMax:
      return "max";
    case AtomicOp::kMin:
      return "min";
  }
  return "?";
}

Stmt Seq(std::vector<Stmt> stmts, SourceLoc loc) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const auto* seq = s.As<SeqNode>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return MakeStmt<SeqNode>(std::move(flat), loc);
}

}  // namespace tessel::ir
