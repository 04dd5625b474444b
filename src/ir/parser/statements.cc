// The parser's statements: one per line, nested by indentation as the
// printer writes them; an allocation's body is the rest of its block.
#include <cctype>

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"
#include "src/ir/parser.h"
#include "src/ir/parser/parser_impl.h"
#include "tessel/status_macros.h"

namespace tessel::ir::parser {
namespace {

constexpr Scope kScopes[] = {Scope::kShared, Scope::kFragment, Scope::kLocal};
constexpr ForKind kForKinds[] = {ForKind::kSerial, ForKind::kUnrolled,
                                 ForKind::kParallel, ForKind::kPipelined};

}  // namespace

std::string Parser::NodeName(const std::string& printed) const {
  size_t cut = printed.find_last_of('_');
  if (cut == std::string::npos || cut == 0 || cut + 1 == printed.size())
    return printed;
  for (size_t i = cut + 1; i < printed.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(printed[i]))) return printed;
  std::string base = printed.substr(0, cut);
  return vars_.count(base) || buffers_.count(base) ? base : printed;
}

void Parser::StartLine(size_t index) {
  line_ = index;
  pos_ = 0;
}

absl::StatusOr<Stmt> Parser::ParseBody(int parent_indent) {
  TESSEL_RETURN_IF_ERROR(Expect(":"));
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  const Line& header = lines_[line_];
  StartLine(line_ + 1);
  if (!AtLine() || lines_[line_].indent <= parent_indent)
    return Error(header.tokens.back(), "expected an indented block");
  return ParseBlock(lines_[line_].indent);
}

absl::StatusOr<Stmt> Parser::ParseBlock(int indent) {
  std::vector<Stmt> stmts;
  while (AtLine() && lines_[line_].indent == indent) {
    StartLine(line_);
    if (IsIdent("pass") && Peek(1).kind == Token::Kind::kEnd) {
      StartLine(line_ + 1);
      continue;
    }
    bool is_alloc = false;
    Buffer alloc;
    SourceLoc loc;
    TESSEL_ASSIGN_OR_RETURN(auto s, ParseStmt(indent, &is_alloc, &alloc));
    if (is_alloc) {
      TESSEL_ASSIGN_OR_RETURN(auto rest, ParseBlock(indent));
      stmts.push_back(MakeStmt<AllocateNode>(alloc, rest, loc));
      break;
    }
    stmts.push_back(s);
  }
  if (AtLine() && lines_[line_].indent > indent)
    return Error(lines_[line_].tokens[0], "unexpected indentation");
  if (stmts.size() == 1) return stmts[0];
  return Seq(std::move(stmts));
}

absl::StatusOr<Stmt> Parser::ParseStmt(int indent, bool* is_alloc,
                                       Buffer* alloc) {
  if (IsIdent("with") && IsIdent("T", 1) && IsIdent("Kernel", 3))
    return ParseKernel(indent);
  if (IsIdent("with") && IsIdent("T", 1) && IsIdent("warp_specialize", 3))
    return ParseWarpSpecialize(indent);
  if (IsIdent("for")) return ParseFor(indent);
  if (IsIdent("if")) return ParseIf(indent);
  if (Peek().kind == Token::Kind::kIdent && IsPunct("=", 1)) {
    std::string name = Next().text;
    Next();
    TESSEL_ASSIGN_OR_RETURN(auto b, ParseAlloc(name));
    TESSEL_RETURN_IF_ERROR(ExpectEnd());
    StartLine(line_ + 1);
    *is_alloc = true;
    *alloc = b;
    return Stmt();
  }
  if (Peek().kind == Token::Kind::kIdent && IsPunct("[", 1)) {
    const Token at = Next();
    Next();
    TESSEL_ASSIGN_OR_RETURN(auto b, BufferNamed(at));
    TESSEL_ASSIGN_OR_RETURN(auto idx, ParseIndices());
    TESSEL_RETURN_IF_ERROR(Expect("="));
    TESSEL_ASSIGN_OR_RETURN(auto value, ParseExpr());
    TESSEL_RETURN_IF_ERROR(ExpectEnd());
    StartLine(line_ + 1);
    return MakeStmt<StoreNode>(b, idx, value, SourceLoc());
  }
  TESSEL_ASSIGN_OR_RETURN(auto op, ParseOpLine());
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  StartLine(line_ + 1);
  return op;
}

// name = T.alloc_shared((64, 32), f16, layout=T.swizzled(128)), ...; a name
// allocated again (in another branch) is the same buffer.
absl::StatusOr<Buffer> Parser::ParseAlloc(const std::string& name) {
  const Token at = Peek();
  Buffer b;
  std::optional<Scope> scalar;
  if (AcceptTDot("alloc_var")) scalar = Scope::kVar;
  if (!scalar && AcceptTDot("alloc_uniform")) scalar = Scope::kUniform;
  if (scalar) {
    const Scope scope = *scalar;
    TESSEL_RETURN_IF_ERROR(Expect("("));
    TESSEL_ASSIGN_OR_RETURN(auto d, Dtype());
    TESSEL_RETURN_IF_ERROR(Expect(")"));
    b = MakeBuffer(NodeName(name), d, {IntImm(DataType::kI32, 1)}, scope);
  } else if (AcceptTDot("alloc_barrier")) {
    TESSEL_RETURN_IF_ERROR(Expect("("));
    TESSEL_ASSIGN_OR_RETURN(auto n, ParseExpr());
    TESSEL_RETURN_IF_ERROR(Expect(")"));
    b = MakeBuffer(NodeName(name), DataType::kI64, {n}, Scope::kBarrier);
  } else {
    std::optional<Scope> scope;
    for (Scope s : kScopes)
      if (AcceptTDot(absl::StrCat("alloc_", ScopeName(s)))) scope = s;
    if (!scope) return Error(at, "expected T.alloc_...");
    TESSEL_RETURN_IF_ERROR(Expect("("));
    TESSEL_ASSIGN_OR_RETURN(auto shape, ParseShape());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto d, Dtype());
    Layout layout;
    if (Accept(",")) {
      TESSEL_RETURN_IF_ERROR(ExpectIdent("layout"));
      TESSEL_RETURN_IF_ERROR(Expect("="));
      if (!AcceptTDot("swizzled")) return Error(Peek(), "expected T.swizzled");
      TESSEL_RETURN_IF_ERROR(Expect("("));
      TESSEL_ASSIGN_OR_RETURN(auto bytes, Integer());
      layout.kind = Layout::Kind::kSwizzled;
      layout.swizzle_bytes = static_cast<int>(bytes);
      if (Accept(",")) {
        TESSEL_RETURN_IF_ERROR(ExpectIdent("atoms"));
        layout.atoms = true;
      }
      TESSEL_RETURN_IF_ERROR(Expect(")"));
    }
    TESSEL_RETURN_IF_ERROR(Expect(")"));
    b = MakeBuffer(NodeName(name), d, shape, *scope, layout);
  }
  auto [it, fresh] = buffers_.emplace(name, b);
  return it->second;
}

absl::StatusOr<Stmt> Parser::ParseKernel(int indent) {
  pos_ += 4;  // with T . Kernel
  TESSEL_RETURN_IF_ERROR(Expect("("));
  std::vector<Expr> grid;
  while (!IsIdent("threads")) {
    TESSEL_ASSIGN_OR_RETURN(auto e, ParseExpr());
    grid.push_back(e);
    TESSEL_RETURN_IF_ERROR(Expect(","));
  }
  Next();
  TESSEL_RETURN_IF_ERROR(Expect("="));
  TESSEL_ASSIGN_OR_RETURN(auto threads, Integer());
  TESSEL_RETURN_IF_ERROR(Expect(")"));
  TESSEL_RETURN_IF_ERROR(ExpectIdent("as"));
  std::vector<Var> vars;
  bool paren = Accept("(");
  do {
    TESSEL_ASSIGN_OR_RETURN(auto name, Ident());
    vars.emplace_back(NodeName(name), DataType::kI32);
    vars_[name] = vars.back();
  } while (paren && Accept(","));
  if (paren) TESSEL_RETURN_IF_ERROR(Expect(")"));
  TESSEL_ASSIGN_OR_RETURN(auto body, ParseBody(indent));
  return MakeStmt<KernelNode>(grid, static_cast<int>(threads), vars, body,
                              SourceLoc());
}

absl::StatusOr<Stmt> Parser::ParseWarpSpecialize(int indent) {
  pos_ += 4;  // with T . warp_specialize
  TESSEL_RETURN_IF_ERROR(Expect("("));
  TESSEL_RETURN_IF_ERROR(ExpectIdent("producer_threads"));
  TESSEL_RETURN_IF_ERROR(Expect("="));
  TESSEL_ASSIGN_OR_RETURN(auto producer_threads, Integer());
  int64_t groups = 1;
  Var group;
  if (Accept(",")) {
    TESSEL_RETURN_IF_ERROR(ExpectIdent("consumer_groups"));
    TESSEL_RETURN_IF_ERROR(Expect("="));
    TESSEL_ASSIGN_OR_RETURN(auto g, Integer());
    groups = g;
  }
  TESSEL_RETURN_IF_ERROR(Expect(")"));
  if (groups > 1) {
    TESSEL_RETURN_IF_ERROR(ExpectIdent("as"));
    TESSEL_ASSIGN_OR_RETURN(auto name, Ident());
    group = Var(NodeName(name), DataType::kI32);
    vars_[name] = group;
  }
  TESSEL_RETURN_IF_ERROR(Expect(":"));
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  const Token header = Peek();
  Stmt parts[2];
  const char* names[2] = {"producer", "consumer"};
  for (int i = 0; i < 2; ++i) {
    StartLine(line_ + 1);
    if (!AtLine() || lines_[line_].indent <= indent || !IsIdent(names[i]))
      return Error(header, absl::StrCat("expected '", names[i], ":'"));
    Next();
    TESSEL_ASSIGN_OR_RETURN(auto body, ParseBody(lines_[line_].indent));
    parts[i] = body;
    if (i == 0) --line_;  // ParseBody left the cursor past the block
  }
  return MakeStmt<WarpSpecializeNode>(static_cast<int>(producer_threads),
                                      parts[0], parts[1], SourceLoc(),
                                      static_cast<int>(groups), group);
}

absl::StatusOr<Stmt> Parser::ParseFor(int indent) {
  Next();
  TESSEL_ASSIGN_OR_RETURN(auto name, Ident());
  TESSEL_RETURN_IF_ERROR(ExpectIdent("in"));
  std::optional<ForKind> kind;
  for (ForKind k : kForKinds)
    if (!kind && AcceptTDot(ForKindName(k))) kind = k;
  if (!kind) return Error(Peek(), "expected T.serial, T.unroll, ...");
  TESSEL_RETURN_IF_ERROR(Expect("("));
  TESSEL_ASSIGN_OR_RETURN(auto first, ParseExpr());
  Expr min = IntImm(first.dtype(), 0), extent = first;
  if (Accept(",") && !IsIdent("num_stages")) {
    TESSEL_ASSIGN_OR_RETURN(auto stop, ParseExpr());
    min = first;
    extent = ExtentTo(first, stop);
    Accept(",");
  }
  int64_t stages = 0;
  std::vector<int> lists[2];
  if (IsIdent("num_stages")) {
    Next();
    TESSEL_RETURN_IF_ERROR(Expect("="));
    TESSEL_ASSIGN_OR_RETURN(auto n, Integer());
    stages = n;
    const char* keys[2] = {"order", "stage"};
    for (int i = 0; i < 2; ++i) {
      if (!IsPunct(",") || !IsIdent(keys[i], 1)) continue;
      pos_ += 2;
      TESSEL_RETURN_IF_ERROR(Expect("="));
      TESSEL_RETURN_IF_ERROR(Expect("["));
      while (!Accept("]")) {
        TESSEL_ASSIGN_OR_RETURN(auto v, Integer());
        lists[i].push_back(static_cast<int>(v));
        Accept(",");
      }
    }
  }
  TESSEL_RETURN_IF_ERROR(Expect(")"));
  Var var(NodeName(name), extent.dtype());
  std::optional<Var> outer;
  if (auto it = vars_.find(name); it != vars_.end()) outer = it->second;
  vars_[name] = var;
  TESSEL_ASSIGN_OR_RETURN(Stmt body, ParseBody(indent));
  if (outer) {
    vars_[name] = *outer;
  } else {
    vars_.erase(name);
  }
  return MakeStmt<ForNode>(var, min, extent, *kind, static_cast<int>(stages),
                           lists[0], lists[1], body, SourceLoc());
}

absl::StatusOr<Stmt> Parser::ParseIf(int indent) {
  Next();
  TESSEL_ASSIGN_OR_RETURN(auto cond, ParseExpr());
  TESSEL_ASSIGN_OR_RETURN(auto then_case, ParseBody(indent));
  Stmt else_case;
  if (AtLine() && lines_[line_].indent == indent) {
    StartLine(line_);
    if (IsIdent("else")) {
      Next();
      TESSEL_ASSIGN_OR_RETURN(auto e, ParseBody(indent));
      else_case = e;
    }
  }
  return MakeStmt<IfThenElseNode>(cond, then_case, else_case, SourceLoc());
}

absl::Status Parser::ParseSignature(Program* program) {
  TESSEL_RETURN_IF_ERROR(Expect("@"));
  if (!AcceptTDot("prim_func")) return Error(Peek(), "expected @T.prim_func");
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  StartLine(line_ + 1);
  if (!AtLine()) return Error(Peek(), "expected def");
  TESSEL_RETURN_IF_ERROR(ExpectIdent("def"));
  TESSEL_ASSIGN_OR_RETURN(auto name, Ident());
  program->name = name;
  TESSEL_RETURN_IF_ERROR(Expect("("));
  // The dims (after "*") come first: the params' shapes use them.
  size_t params_at = pos_;
  while (!IsPunct("*") && Peek().kind != Token::Kind::kEnd) Next();
  if (Accept("*")) {
    while (Accept(",")) {
      TESSEL_ASSIGN_OR_RETURN(auto dim, Ident());
      TESSEL_RETURN_IF_ERROR(Expect(":"));
      TESSEL_ASSIGN_OR_RETURN(auto d, Dtype());
      program->dims.emplace_back(dim, d);
      vars_[dim] = program->dims.back();
    }
  }
  size_t end_at = pos_;
  pos_ = params_at;
  while (Peek().kind == Token::Kind::kIdent) {
    TESSEL_ASSIGN_OR_RETURN(auto param, Ident());
    TESSEL_RETURN_IF_ERROR(Expect(":"));
    if (!AcceptTDot("Tensor")) return Error(Peek(), "expected T.Tensor");
    TESSEL_RETURN_IF_ERROR(Expect("("));
    TESSEL_ASSIGN_OR_RETURN(auto shape, ParseShape());
    TESSEL_RETURN_IF_ERROR(Expect(","));
    TESSEL_ASSIGN_OR_RETURN(auto d, Dtype());
    TESSEL_RETURN_IF_ERROR(Expect(")"));
    program->params.push_back(MakeBuffer(param, d, shape, Scope::kGlobal));
    buffers_[param] = program->params.back();
    if (!Accept(",")) break;
  }
  if (!program->dims.empty()) pos_ = end_at;
  TESSEL_RETURN_IF_ERROR(Expect(")"));
  TESSEL_RETURN_IF_ERROR(Expect(":"));
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  return absl::OkStatus();
}

absl::StatusOr<Program> Parser::ParseProgram() {
  if (lines_.empty())
    return absl::InvalidArgumentError("1:1: expected @T.prim_func");
  StartLine(0);
  Program program;
  TESSEL_RETURN_IF_ERROR(ParseSignature(&program));
  StartLine(line_ + 1);
  if (!AtLine() || lines_[line_].indent == 0)
    return Error(lines_[line_ - 1].tokens.back(), "expected the body");
  TESSEL_ASSIGN_OR_RETURN(auto body, ParseBlock(lines_[line_].indent));
  program.body = body;
  if (AtLine()) return Error(lines_[line_].tokens[0], "unexpected text");
  return program;
}

absl::StatusOr<Buffer> Parser::ParseDeclaration() {
  if (lines_.size() != 1)
    return absl::InvalidArgumentError("1:1: expected one declaration");
  StartLine(0);
  TESSEL_ASSIGN_OR_RETURN(std::string name, Ident());
  TESSEL_RETURN_IF_ERROR(Expect("="));
  TESSEL_ASSIGN_OR_RETURN(Buffer b, ParseAlloc(name));
  TESSEL_RETURN_IF_ERROR(ExpectEnd());
  return b;
}

}  // namespace tessel::ir::parser

namespace tessel::ir {

absl::StatusOr<Program> ParseProgram(std::string_view text,
                                     const std::vector<Buffer>& declared) {
  TESSEL_ASSIGN_OR_RETURN(std::vector<parser::Line> lines,
                          parser::Tokenize(text));
  parser::Parser p(std::move(lines));
  for (const Buffer& b : declared) p.Declare(b);
  return p.ParseProgram();
}

absl::StatusOr<Buffer> ParseBufferDeclaration(std::string_view text) {
  TESSEL_ASSIGN_OR_RETURN(std::vector<parser::Line> lines,
                          parser::Tokenize(text));
  return parser::Parser(std::move(lines)).ParseDeclaration();
}

}  // namespace tessel::ir
