// The parser's tokens: the printer's text cut into lines (indentation kept)
// of identifiers, numbers, strings and punctuation. Comments end a line.
#ifndef TESSEL_SRC_IR_PARSER_LEXER_H_
#define TESSEL_SRC_IR_PARSER_LEXER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessel::ir::parser {

struct Token {
  enum class Kind { kIdent, kInt, kFloat, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // a string's text unescaped, without its quotes
  int line = 0;
  int column = 0;  // 1-based
};

struct Line {
  int number = 0;             // 1-based
  int indent = 0;             // leading spaces
  std::vector<Token> tokens;  // ends with a kEnd token
};

// The lines that hold code (blank and comment-only lines skipped).
absl::StatusOr<std::vector<Line>> Tokenize(std::string_view text);

}  // namespace tessel::ir::parser

#endif  // TESSEL_SRC_IR_PARSER_LEXER_H_
