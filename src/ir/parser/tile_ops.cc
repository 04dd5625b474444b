// The parser's one-line operations: tile ops (T.copy, T.gemm, ...), barriers,
// T.print and T.evaluate, as printer.cc writes them.
#include <tuple>

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"
#include "src/ir/parser/parser_impl.h"
#include "tessel/status_macros.h"

namespace tessel::ir::parser {
namespace {

constexpr ReduceKind kReduceKinds[] = {ReduceKind::kSum, ReduceKind::kMax,
                                       ReduceKind::kMin, ReduceKind::kAbsSum,
                                       ReduceKind::kAbsMax};
constexpr AtomicOp kAtomicOps[] = {AtomicOp::kAdd, AtomicOp::kMax,
                                   AtomicOp::kMin};
constexpr GemmWarpPolicy kPolicies[] = {GemmWarpPolicy::kSquare,
                                        GemmWarpPolicy::kFullRow,
                                        GemmWarpPolicy::kFullCol};

}  // namespace

absl::StatusOr<Stmt> Parser::ParseOpLine() {
  const Token at = Peek();
  const SourceLoc loc;
  if (!IsIdent("T") || !IsPunct(".", 1) || Peek(2).kind != Token::Kind::kIdent)
    return Error(at, "expected a statement");
  pos_ += 2;
  const std::string op = Next().text;
  TESSEL_RETURN_IF_ERROR(Expect("("));
  // buffer[index], as barriers are referenced.
  auto barrier_ref = [&]() -> absl::StatusOr<std::pair<Buffer, Expr>> {
    TESSEL_ASSIGN_OR_RETURN(auto b, BufferNamed(Next()));
    TESSEL_RETURN_IF_ERROR(Expect("["));
    TESSEL_ASSIGN_OR_RETURN(auto index, ParseExpr());
    TESSEL_RETURN_IF_ERROR(Expect("]"));
    return std::pair{b, index};
  };
  auto buffer = [&]() -> absl::StatusOr<Buffer> { return BufferNamed(Next()); };
  // ", key=True" flags, in any order.
  auto flag = [&](const std::string& key) {
    if (!IsPunct(",") || !IsIdent(key, 1) || !IsPunct("=", 2) ||
        !IsIdent("True", 3))
      return false;
    pos_ += 4;
    return true;
  };
  // ", key =" before a keyword argument's value.
  auto keyword = [&](const char* key) -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_RETURN_IF_ERROR(ExpectIdent(key));
    return Expect("=");
  };
  // "src, dst, dim = D" of T.reduce_* and T.cumsum.
  auto rows_op = [&]() -> absl::StatusOr<std::tuple<Buffer, Buffer, int64_t>> {
    TESSEL_ASSIGN_OR_RETURN(auto src, buffer());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto dst, buffer());
    TESSEL_RETURN_IF_ERROR(keyword("dim"));
    TESSEL_ASSIGN_OR_RETURN(auto dim, Integer());
    return std::make_tuple(src, dst, dim);
  };
  Stmt s;
  if (op == "copy") {
    TESSEL_ASSIGN_OR_RETURN(auto src, ParseRegion());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto dst, ParseRegion());
    if (Accept(",")) {
      TESSEL_RETURN_IF_ERROR(ExpectIdent("barrier"));
      TESSEL_RETURN_IF_ERROR(Expect("="));
      TESSEL_ASSIGN_OR_RETURN(auto bar, barrier_ref());
      s = MakeStmt<CopyNode>(src, dst, bar.first, bar.second, loc);
    } else {
      s = MakeStmt<CopyNode>(src, dst, loc);
    }
  } else if (op == "gemm") {
    TESSEL_ASSIGN_OR_RETURN(auto a, ParseRegion());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto b, ParseRegion());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto c, ParseRegion());
    bool ta = flag("transpose_A"), tb = flag("transpose_B");
    bool clear = flag("clear_accum");
    GemmWarpPolicy policy = GemmWarpPolicy::kSquare;
    if (Accept(",")) {
      TESSEL_RETURN_IF_ERROR(ExpectIdent("policy"));
      TESSEL_RETURN_IF_ERROR(Expect("="));
      if (!AcceptTDot("GemmWarpPolicy"))
        return Error(Peek(), "expected policy");
      TESSEL_RETURN_IF_ERROR(Expect("."));
      TESSEL_ASSIGN_OR_RETURN(auto name, Ident());
      bool found = false;
      for (GemmWarpPolicy p : kPolicies)
        if (name == GemmWarpPolicyName(p)) policy = p, found = true;
      if (!found) return Error(Peek(), "unknown policy");
    }
    s = MakeStmt<GemmNode>(a, b, c, ta, tb, clear, policy, loc);
  } else if (op == "fill") {
    TESSEL_ASSIGN_OR_RETURN(auto dst, ParseRegion());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto value, ParseExpr());
    s = MakeStmt<FillNode>(dst, value, loc);
  } else if (op.starts_with("reduce_")) {
    std::optional<ReduceKind> kind;
    for (ReduceKind k : kReduceKinds)
      if (op == absl::StrCat("reduce_", ReduceKindName(k))) kind = k;
    if (!kind) return Error(at, absl::StrCat("unknown T.", op));
    TESSEL_ASSIGN_OR_RETURN(auto operands, rows_op());
    auto [src, dst, dim] = operands;
    TESSEL_RETURN_IF_ERROR(keyword("clear"));
    bool clear = IsIdent("True");
    if (!clear && !IsIdent("False")) return Error(Peek(), "expected a bool");
    Next();
    s = MakeStmt<ReduceNode>(src, dst, *kind, static_cast<int>(dim), clear,
                             loc);
  } else if (op == "cumsum") {
    TESSEL_ASSIGN_OR_RETURN(auto operands, rows_op());
    auto [src, dst, dim] = operands;
    bool reverse = flag("reverse");
    s = MakeStmt<CumsumNode>(src, dst, static_cast<int>(dim), reverse, loc);
  } else if (op.starts_with("atomic_")) {
    std::optional<AtomicOp> kind;
    for (AtomicOp k : kAtomicOps)
      if (op == absl::StrCat("atomic_", AtomicOpName(k))) kind = k;
    if (!kind) return Error(at, absl::StrCat("unknown T.", op));
    TESSEL_ASSIGN_OR_RETURN(auto dst, ParseRegion());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    // Element form: dst[i, j] (no slices), value; else a tile src region.
    bool element = !dst.IsFull() || dst.rank() == 0;
    for (const Expr& e : dst.extent) element &= IsConstInt(e, 1);
    bool src_is_region = Peek().kind == Token::Kind::kIdent &&
                         buffers_.count(Peek().text) &&
                         (IsPunct(",", 1) || IsPunct(")", 1));
    if (element && !src_is_region) {
      TESSEL_ASSIGN_OR_RETURN(auto value, ParseExpr());
      // A ticket: ", prev=slot[0]".
      std::optional<Region> prev;
      if (IsPunct(",") && IsIdent("prev", 1) && IsPunct("=", 2)) {
        pos_ += 3;
        TESSEL_ASSIGN_OR_RETURN(prev, ParseRegion());
      }
      s = MakeStmt<AtomicNode>(*kind, dst, std::nullopt, value, prev, loc);
    } else {
      TESSEL_ASSIGN_OR_RETURN(auto src, ParseRegion());
      s = MakeStmt<AtomicNode>(*kind, dst, src, Expr(), loc);
    }
  } else if (op == "sync_threads") {
    s = MakeStmt<SyncThreadsNode>(loc);
  } else if (op == "mbarrier_init") {
    TESSEL_ASSIGN_OR_RETURN(auto b, buffer());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_RETURN_IF_ERROR(Expect("["));
    std::vector<Expr> counts;
    if (!Accept("]")) {
      TESSEL_ASSIGN_OR_RETURN(auto c, ParseIndices());
      counts = c;
    }
    s = MakeStmt<MbarrierInitNode>(b, counts, loc);
  } else if (op == "mbarrier_arrive") {
    TESSEL_ASSIGN_OR_RETURN(auto bar, barrier_ref());
    s = MakeStmt<MbarrierArriveNode>(bar.first, bar.second, loc);
  } else if (op == "mbarrier_expect_tx" || op == "mbarrier_wait_parity") {
    TESSEL_ASSIGN_OR_RETURN(auto bar, barrier_ref());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto value, ParseExpr());
    if (op == "mbarrier_expect_tx") {
      s = MakeStmt<MbarrierExpectTxNode>(bar.first, bar.second, value, loc);
    } else {
      s = MakeStmt<MbarrierWaitParityNode>(bar.first, bar.second, value, loc);
    }
  } else if (op == "annotate_layout") {
    TESSEL_ASSIGN_OR_RETURN(auto b, buffer());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    Layout layout;
    if (AcceptTDot("swizzled")) {
      TESSEL_RETURN_IF_ERROR(Expect("("));
      TESSEL_ASSIGN_OR_RETURN(auto bytes, Integer());
      TESSEL_RETURN_IF_ERROR(Expect(")"));
      layout.kind = Layout::Kind::kSwizzled;
      layout.swizzle_bytes = static_cast<int>(bytes);
    } else if (AcceptTDot("row_major")) {
      TESSEL_RETURN_IF_ERROR(Expect("("));
      TESSEL_RETURN_IF_ERROR(Expect(")"));
    } else {
      return Error(Peek(), "expected T.swizzled(...) or T.row_major()");
    }
    s = MakeStmt<AnnotateLayoutNode>(b, layout, loc);
  } else if (op == "use_swizzle") {
    TESSEL_RETURN_IF_ERROR(ExpectIdent("panel_size"));
    TESSEL_RETURN_IF_ERROR(Expect("="));
    TESSEL_ASSIGN_OR_RETURN(auto panel, Integer());
    bool column_major = false;
    if (Accept(",")) {
      TESSEL_RETURN_IF_ERROR(ExpectIdent("order"));
      TESSEL_RETURN_IF_ERROR(Expect("="));
      if (Peek().kind != Token::Kind::kString || Peek().text != "col")
        return Error(Peek(), "expected \"col\"");
      Next();
      column_major = true;
    }
    s = MakeStmt<UseSwizzleNode>(static_cast<int>(panel), column_major, loc);
  } else if (op == "print") {
    Expr value;
    Buffer b;
    if (Peek().kind == Token::Kind::kIdent && buffers_.count(Peek().text) &&
        IsPunct(",", 1)) {
      TESSEL_ASSIGN_OR_RETURN(auto buf, buffer());
      b = buf;
    } else {
      TESSEL_ASSIGN_OR_RETURN(auto v, ParseExpr());
      value = v;
    }
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_RETURN_IF_ERROR(ExpectIdent("msg"));
    TESSEL_RETURN_IF_ERROR(Expect("="));
    if (Peek().kind != Token::Kind::kString)
      return Error(Peek(), "expected a string");
    s = MakeStmt<PrintNode>(Next().text, value, b, loc);
  } else if (op == "evaluate") {
    TESSEL_ASSIGN_OR_RETURN(auto value, ParseExpr());
    s = MakeStmt<EvaluateNode>(value, loc);
  } else {
    return Error(at, absl::StrCat("unknown statement T.", op));
  }
  TESSEL_RETURN_IF_ERROR(Expect(")"));
  return s;
}

}  // namespace tessel::ir::parser
