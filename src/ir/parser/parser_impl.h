// The parser's state, shared by its expression half (expressions.cc) and its
// statement half (statements.cc): the tokens of the line being read and the
// names in scope.
#ifndef TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_
#define TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/parser/lexer.h"
#include "src/ir/program.h"
#include "src/ir/stmt.h"

namespace tessel::ir::parser {

class Parser {
 public:
  explicit Parser(std::vector<Line> lines) : lines_(std::move(lines)) {}
  // Buffers the text uses without allocating them.
  // Two of one name are known as the printer would write them: x, x_1.
  void Declare(const Buffer& b) {
    std::string name = b->name;
    for (int i = 1; buffers_.count(name); ++i)
      name = b->name + "_" + std::to_string(i);
    buffers_[name] = b;
  }
  absl::StatusOr<Program> ParseProgram();
  // One line "name = T.alloc_...(...)".
  absl::StatusOr<Buffer> ParseDeclaration();

 private:
  // --- tokens of the current line (lines_[line_], at pos_)
  const Token& Peek(int ahead = 0) const;
  Token Next();
  bool IsPunct(const std::string& p, int ahead = 0) const;
  bool IsIdent(const std::string& name, int ahead = 0) const;
  bool Accept(const std::string& punct);  // consumes it when there
  absl::Status Expect(const std::string& punct);
  absl::Status ExpectIdent(const std::string& name);
  absl::StatusOr<std::string> Ident();
  absl::StatusOr<int64_t> Integer();  // an optionally negative literal
  absl::Status ExpectEnd();
  absl::Status Error(const Token& at, const std::string& what) const;
  // "T.name" at the cursor: consumes "T." and returns name.
  bool AcceptTDot(const std::string& name);
  absl::StatusOr<DataType> Dtype();

  // --- expressions (expressions.cc)
  absl::StatusOr<Expr> ParseExpr(int min_prec = 1);
  absl::StatusOr<Expr> ParseUnary();
  absl::StatusOr<Expr> ParseAtom();
  absl::StatusOr<Expr> ParseTCall(const Token& at);
  absl::StatusOr<Expr> ParseCallIntrin(const Token& at);
  absl::StatusOr<std::vector<Expr>> ParseIndices();  // after '['
  absl::StatusOr<Buffer> BufferNamed(const Token& at) const;
  absl::StatusOr<Region> ParseRegion();
  absl::StatusOr<std::vector<Expr>> ParseShape();  // "(a, b)" or "(a,)"
  static Expr ExtentTo(const Expr& start, const Expr& stop);

  // --- statements (statements.cc)
  // The statements of lines_[line_..] indented exactly `indent`.
  absl::StatusOr<Stmt> ParseBlock(int indent);
  // One statement starting at lines_[line_]; an allocation takes `rest`,
  // the statements after it in the block, as its body.
  absl::StatusOr<Stmt> ParseStmt(int indent, bool* is_alloc, Buffer* alloc);
  absl::StatusOr<Stmt> ParseOpLine();
  absl::StatusOr<Stmt> ParseKernel(int indent);
  absl::StatusOr<Stmt> ParseFor(int indent);
  absl::StatusOr<Stmt> ParseIf(int indent);
  absl::StatusOr<Stmt> ParseWarpSpecialize(int indent);
  absl::StatusOr<Buffer> ParseAlloc(const std::string& name);
  absl::StatusOr<Stmt> ParseBody(int parent_indent);  // after "...:"
  absl::Status ParseSignature(Program* program);
  void StartLine(size_t index);
  // The name of the node the printer wrote as `printed`: "k_1" while a "k"
  // is in scope was a second "k" (the printer's clash suffix).
  std::string NodeName(const std::string& printed) const;
  bool AtLine() const { return line_ < lines_.size(); }

  std::vector<Line> lines_;
  size_t line_ = 0;
  size_t pos_ = 0;
  std::map<std::string, Buffer, std::less<>> buffers_;
  std::map<std::string, Var, std::less<>> vars_;
};

}  // namespace tessel::ir::parser

#endif  // TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_
