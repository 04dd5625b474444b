#include "src/ir/parser/lexer.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tessel::ir::parser {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c));
}
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

// Two-character operators first, so that "<=" is not read as "<", "=".
constexpr std::string_view kPuncts[] = {
    "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "(", ")",
    "[",  "]",  ",",  ":",  "=",  "+",  "-",  "*",  "/", "%",
    "<",  ">",  "!",  "~",  "&",  "|",  "^",  "@",  "."};

absl::Status TokenizeLine(std::string_view text, int number, Line* line) {
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  line->number = number;
  line->indent = static_cast<int>(i);
  auto error = [&](size_t at, const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat(number, ":", at + 1, ": ", what));
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') break;  // a comment or a "# file.cc:42" location
    Token t;
    t.line = number;
    t.column = static_cast<int>(i) + 1;
    size_t start = i;
    if (IsIdentStart(c)) {
      while (i < text.size() && IsIdentChar(text[i])) ++i;
      t.kind = Token::Kind::kIdent;
      t.text = std::string(text.substr(start, i - start));
    } else if (IsDigit(c)) {
      t.kind = Token::Kind::kInt;
      while (i < text.size() && IsDigit(text[i])) ++i;
      if (i < text.size() && text[i] == '.') {
        t.kind = Token::Kind::kFloat;
        ++i;
        while (i < text.size() && IsDigit(text[i])) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        t.kind = Token::Kind::kFloat;
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (i >= text.size() || !IsDigit(text[i]))
          return error(i, "malformed exponent");
        while (i < text.size() && IsDigit(text[i])) ++i;
      }
      t.text = std::string(text.substr(start, i - start));
    } else if (c == '"') {
      t.kind = Token::Kind::kString;
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        t.text += text[i++];
      }
      if (i >= text.size()) return error(start, "unterminated string");
      ++i;
    } else {
      t.kind = Token::Kind::kPunct;
      for (std::string_view p : kPuncts) {
        if (text.substr(i, p.size()) == p) {
          t.text = std::string(p);
          break;
        }
      }
      if (t.text.empty())
        return error(
            i, absl::StrCat("unexpected character '", std::string(1, c), "'"));
      i += t.text.size();
    }
    line->tokens.push_back(std::move(t));
  }
  Token end;
  end.line = number;
  end.column = static_cast<int>(text.size()) + 1;
  line->tokens.push_back(end);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Line>> Tokenize(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    std::string_view raw(piece.data(), piece.size());
    ++number;
    Line line;
    if (absl::Status s = TokenizeLine(raw, number, &line); !s.ok()) return s;
    if (line.tokens.size() > 1) lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace tessel::ir::parser
