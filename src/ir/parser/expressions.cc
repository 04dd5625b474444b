// The parser's tokens and expressions: precedence climbing over the
// printer's operator levels (printer.cc, Precedence), nodes built as printed
// (no folding), so that printing them again gives the same text.
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"
#include "src/ir/parser/parser_impl.h"

namespace tessel::ir::parser {
namespace {

struct InfixOp {
  std::string_view text;
  BinaryOp op;
  int prec;
};
constexpr InfixOp kInfix[] = {
    {"||", BinaryOp::kOr, 1},    {"&&", BinaryOp::kAnd, 2},
    {"|", BinaryOp::kBitOr, 3},  {"^", BinaryOp::kBitXor, 4},
    {"&", BinaryOp::kBitAnd, 5}, {"==", BinaryOp::kEQ, 6},
    {"!=", BinaryOp::kNE, 6},    {"<", BinaryOp::kLT, 7},
    {"<=", BinaryOp::kLE, 7},    {">", BinaryOp::kGT, 7},
    {">=", BinaryOp::kGE, 7},    {"<<", BinaryOp::kShl, 8},
    {">>", BinaryOp::kShr, 8},   {"+", BinaryOp::kAdd, 9},
    {"-", BinaryOp::kSub, 9},    {"*", BinaryOp::kMul, 10},
    {"/", BinaryOp::kDiv, 10},   {"%", BinaryOp::kMod, 10},
};

// Binary ops printed as calls: T.min(a, b), ...
constexpr BinaryOp kCallOps[] = {BinaryOp::kMin, BinaryOp::kMax,
                                 BinaryOp::kCeilDiv, BinaryOp::kPow};
constexpr MathOp kMathOps[] = {MathOp::kExp,  MathOp::kExp2,  MathOp::kLog,
                               MathOp::kLog2, MathOp::kSqrt,  MathOp::kRsqrt,
                               MathOp::kAbs,  MathOp::kTanh,  MathOp::kSigmoid,
                               MathOp::kSin,  MathOp::kCos,   MathOp::kFloor,
                               MathOp::kCeil, MathOp::kRound, MathOp::kErf};

Expr MakeBinary(BinaryOp op, Expr a, Expr b) {
  DataType result =
      IsComparison(op) || IsLogical(op) ? DataType::kBool : a.dtype();
  return Expr(
      std::make_shared<BinaryNode>(op, result, std::move(a), std::move(b)));
}

}  // namespace

// ---------------------------------------------------------------- tokens

const Token& Parser::Peek(int ahead) const {
  const std::vector<Token>& t = lines_[line_].tokens;
  return t[std::min(pos_ + ahead, t.size() - 1)];
}

Token Parser::Next() {
  Token t = Peek();
  if (t.kind != Token::Kind::kEnd) ++pos_;
  return t;
}

bool Parser::IsPunct(const std::string& p, int ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == Token::Kind::kPunct && t.text == p;
}

bool Parser::IsIdent(const std::string& name, int ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == Token::Kind::kIdent && t.text == name;
}

bool Parser::Accept(const std::string& punct) {
  if (!IsPunct(punct)) return false;
  ++pos_;
  return true;
}

absl::Status Parser::Error(const Token& at, const std::string& what) const {
  return absl::InvalidArgumentError(
      absl::StrCat(at.line, ":", at.column, ": ", what));
}

absl::Status Parser::Expect(const std::string& punct) {
  if (Accept(punct)) return absl::OkStatus();
  const Token& t = Peek();
  return Error(
      t,
      absl::StrCat("expected '", punct, "', got '",
                   t.kind == Token::Kind::kEnd ? "end of line" : t.text, "'"));
}

absl::Status Parser::ExpectIdent(const std::string& name) {
  if (IsIdent(name)) {
    ++pos_;
    return absl::OkStatus();
  }
  return Error(Peek(), absl::StrCat("expected '", name, "'"));
}

absl::StatusOr<std::string> Parser::Ident() {
  if (Peek().kind != Token::Kind::kIdent)
    return Error(Peek(), "expected a name");
  return Next().text;
}

absl::StatusOr<int64_t> Parser::Integer() {
  bool negative = Accept("-");
  const Token& t = Peek();
  int64_t v = 0;
  auto [end, ec] =
      std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (t.kind != Token::Kind::kInt || ec != std::errc() ||
      end != t.text.data() + t.text.size()) {
    return Error(t, "expected an integer");
  }
  Next();
  return negative ? -v : v;
}

absl::Status Parser::ExpectEnd() {
  if (Peek().kind == Token::Kind::kEnd) return absl::OkStatus();
  return Error(Peek(), absl::StrCat("unexpected '", Peek().text, "'"));
}

bool Parser::AcceptTDot(const std::string& name) {
  if (!IsIdent("T") || !IsPunct(".", 1) || !IsIdent(name, 2)) return false;
  pos_ += 3;
  return true;
}

absl::StatusOr<DataType> Parser::Dtype() {
  const Token& t = Peek();
  std::optional<DataType> d;
  if (t.kind == Token::Kind::kIdent) d = dtype_from_name(t.text);
  if (!d) return Error(t, absl::StrCat("expected a dtype, got '", t.text, "'"));
  Next();
  return *d;
}

// ------------------------------------------------------------ expressions

absl::StatusOr<Expr> Parser::ParseExpr(int min_prec) {
  absl::StatusOr<Expr> lhs = ParseUnary();
  if (!lhs.ok()) return lhs;
  Expr a = *lhs;
  while (true) {
    const InfixOp* found = nullptr;
    if (Peek().kind == Token::Kind::kPunct) {
      for (const InfixOp& op : kInfix)
        if (Peek().text == op.text) found = &op;
    }
    if (found == nullptr || found->prec < min_prec) return a;
    Next();
    absl::StatusOr<Expr> rhs = ParseExpr(found->prec + 1);
    if (!rhs.ok()) return rhs;
    // x - 3 reads back as a subtraction (the printer writes x + -3 so too).
    a = MakeBinary(found->op, a, *rhs);
  }
}

absl::StatusOr<Expr> Parser::ParseUnary() {
  const Token at = Peek();
  for (auto [sym, op] :
       {std::pair{"-", UnaryOp::kNeg}, std::pair{"!", UnaryOp::kNot},
        std::pair{"~", UnaryOp::kBitNot}}) {
    if (!Accept(sym)) continue;
    absl::StatusOr<Expr> a = ParseUnary();
    if (!a.ok()) return a;
    // Negative constants print as "-3", "-1.5", "-T.infinity(f32)".
    if (op == UnaryOp::kNeg) {
      if (const auto* i = a->As<IntImmNode>(); i && i->value > 0)
        return IntImm(a->dtype(), -i->value);
      if (const auto* f = a->As<FloatImmNode>(); f && !std::signbit(f->value))
        return FloatImm(a->dtype(), -f->value);
    }
    return Expr(std::make_shared<UnaryNode>(op, *a));
  }
  return ParseAtom();
}

absl::StatusOr<Expr> Parser::ParseAtom() {
  const Token t = Peek();
  switch (t.kind) {
    case Token::Kind::kInt: {
      absl::StatusOr<int64_t> v = Integer();
      if (!v.ok()) return v.status();
      return IntImm(DataType::kI32, *v);
    }
    case Token::Kind::kFloat: {
      double v = 0;
      std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      Next();
      return FloatImm(DataType::kF32, v);
    }
    case Token::Kind::kPunct:
      if (Accept("(")) {
        absl::StatusOr<Expr> e = ParseExpr();
        if (!e.ok()) return e;
        if (absl::Status s = Expect(")"); !s.ok()) return s;
        return e;
      }
      return Error(t, absl::StrCat("unexpected '", t.text, "'"));
    case Token::Kind::kIdent:
      if (t.text == "True" || t.text == "False") {
        Next();
        return IntImm(DataType::kBool, t.text == "True");
      }
      if (t.text == "T" && IsPunct(".", 1)) return ParseTCall(t);
      Next();
      if (Accept("[")) {
        absl::StatusOr<Buffer> b = BufferNamed(t);
        if (!b.ok()) return b.status();
        absl::StatusOr<std::vector<Expr>> idx = ParseIndices();
        if (!idx.ok()) return idx.status();
        return Expr(std::make_shared<LoadNode>((*b)->dtype, *b, *idx));
      }
      if (auto it = vars_.find(t.text); it != vars_.end()) return it->second;
      return Error(t, absl::StrCat("unknown name '", t.text, "'"));
    default:
      return Error(t, "expected an expression");
  }
}

absl::StatusOr<Expr> Parser::ParseTCall(const Token& at) {
  pos_ += 2;  // "T."
  absl::StatusOr<std::string> name = Ident();
  if (!name.ok()) return name.status();
  if (*name == "call_intrin") return ParseCallIntrin(at);
  if (absl::Status s = Expect("("); !s.ok()) return s;
  auto args = [&](size_t n) -> absl::StatusOr<std::vector<Expr>> {
    std::vector<Expr> out;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0)
        if (absl::Status s = Expect(","); !s.ok()) return s;
      absl::StatusOr<Expr> e = ParseExpr();
      if (!e.ok()) return e.status();
      out.push_back(*e);
    }
    if (absl::Status s = Expect(")"); !s.ok()) return s;
    return out;
  };
  if (std::optional<DataType> d = dtype_from_name(*name)) {  // T.i64(5)
    bool negative = Accept("-");
    const Token v = Next();
    if (absl::Status s = Expect(")"); !s.ok()) return s;
    if (v.kind == Token::Kind::kInt && !is_float(*d)) {
      int64_t i = 0;
      std::from_chars(v.text.data(), v.text.data() + v.text.size(), i);
      return IntImm(*d, negative ? -i : i);
    }
    if (v.kind != Token::Kind::kInt && v.kind != Token::Kind::kFloat)
      return Error(v, "expected a number");
    double f = 0;
    std::from_chars(v.text.data(), v.text.data() + v.text.size(), f);
    return FloatImm(*d, negative ? -f : f);
  }
  if (*name == "nan" || *name == "infinity") {
    absl::StatusOr<DataType> d = Dtype();
    if (!d.ok()) return d.status();
    if (absl::Status s = Expect(")"); !s.ok()) return s;
    return FloatImm(*d, *name == "nan"
                            ? std::numeric_limits<double>::quiet_NaN()
                            : std::numeric_limits<double>::infinity());
  }
  if (*name == "cast") {
    absl::StatusOr<Expr> v = ParseExpr();
    if (!v.ok()) return v;
    if (absl::Status s = Expect(","); !s.ok()) return s;
    absl::StatusOr<DataType> d = Dtype();
    if (!d.ok()) return d.status();
    if (absl::Status s = Expect(")"); !s.ok()) return s;
    return Expr(std::make_shared<CastNode>(*d, *v));
  }
  if (*name == "if_then_else") {
    absl::StatusOr<std::vector<Expr>> a = args(3);
    if (!a.ok()) return a.status();
    return Expr(std::make_shared<SelectNode>((*a)[0], (*a)[1], (*a)[2]));
  }
  for (BinaryOp op : kCallOps) {
    if (*name != BinaryOpName(op)) continue;
    absl::StatusOr<std::vector<Expr>> a = args(2);
    if (!a.ok()) return a.status();
    return MakeBinary(op, (*a)[0], (*a)[1]);
  }
  for (MathOp op : kMathOps) {
    if (*name != MathOpName(op)) continue;
    absl::StatusOr<std::vector<Expr>> a = args(1);
    if (!a.ok()) return a.status();
    return Expr(std::make_shared<MathNode>(op, (*a)[0]));
  }
  return Error(at, absl::StrCat("unknown expression T.", *name));
}

// T.call_intrin(dtype, "name", args...); a let's first argument names the
// variable it binds (new, or the one of an earlier let of that name).
absl::StatusOr<Expr> Parser::ParseCallIntrin(const Token& at) {
  if (absl::Status s = Expect("("); !s.ok()) return s;
  absl::StatusOr<DataType> d = Dtype();
  if (!d.ok()) return d.status();
  if (absl::Status s = Expect(","); !s.ok()) return s;
  if (Peek().kind != Token::Kind::kString)
    return Error(Peek(), "expected the intrinsic's name");
  std::string name = Next().text;
  std::vector<Expr> args;
  std::optional<Token> let_var;
  if (name == "let" && IsPunct(",") && Peek(1).kind == Token::Kind::kIdent &&
      IsPunct(",", 2)) {
    Next();
    let_var = Next();
    args.emplace_back();  // the variable, once the value's dtype is known
  }
  while (Accept(",")) {
    absl::StatusOr<Expr> e = ParseExpr();
    if (!e.ok()) return e;
    args.push_back(*e);
  }
  if (absl::Status s = Expect(")"); !s.ok()) return s;
  if (let_var) {
    if (args.size() != 2) return Error(at, "a let takes a variable and value");
    auto it = vars_.find(let_var->text);
    if (it == vars_.end())
      it = vars_
               .emplace(let_var->text,
                        Var(NodeName(let_var->text), args[1].dtype()))
               .first;
    args[0] = it->second;
  }
  return Expr(std::make_shared<CallNode>(*d, name, std::move(args)));
}

absl::StatusOr<std::vector<Expr>> Parser::ParseIndices() {
  std::vector<Expr> idx;
  do {
    absl::StatusOr<Expr> e = ParseExpr();
    if (!e.ok()) return e.status();
    idx.push_back(*e);
  } while (Accept(","));
  if (absl::Status s = Expect("]"); !s.ok()) return s;
  return idx;
}

absl::StatusOr<Buffer> Parser::BufferNamed(const Token& at) const {
  auto it = buffers_.find(at.text);
  if (it == buffers_.end())
    return Error(at, absl::StrCat("unknown buffer '", at.text, "'"));
  return it->second;
}

// "A" (the whole buffer) or "A[i, 0:64, k * 32:k * 32 + 32]".
absl::StatusOr<Region> Parser::ParseRegion() {
  absl::StatusOr<Buffer> b = BufferNamed(Next());
  if (!b.ok()) return b.status();
  if (!Accept("[")) return Region::Full(*b);
  Region r{*b, {}, {}};
  do {
    absl::StatusOr<Expr> start = ParseExpr();
    if (!start.ok()) return start.status();
    Expr extent = IntImm(start->dtype(), 1);
    if (Accept(":")) {
      absl::StatusOr<Expr> stop = ParseExpr();
      if (!stop.ok()) return stop.status();
      extent = ExtentTo(*start, *stop);
    }
    r.start.push_back(*start);
    r.extent.push_back(extent);
  } while (Accept(","));
  if (absl::Status s = Expect("]"); !s.ok()) return s;
  return r;
}

// The printer writes a range as start:start + extent, simplified: where it
// kept the sum, extent is its right side; else the difference, folded.
Expr Parser::ExtentTo(const Expr& start, const Expr& stop) {
  if (const auto* add = stop.As<BinaryNode>();
      add && add->op == BinaryOp::kAdd && ExprDeepEqual(add->a, start)) {
    return add->b;
  }
  return stop - start;
}

absl::StatusOr<std::vector<Expr>> Parser::ParseShape() {
  if (absl::Status s = Expect("("); !s.ok()) return s;
  std::vector<Expr> shape;
  while (!Accept(")")) {
    absl::StatusOr<Expr> e = ParseExpr();
    if (!e.ok()) return e.status();
    shape.push_back(*e);
    if (!IsPunct(")"))
      if (absl::Status s = Expect(","); !s.ok()) return s;
  }
  return shape;
}

}  // namespace tessel::ir::parser
