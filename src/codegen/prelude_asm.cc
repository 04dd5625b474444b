#include "src/codegen/prelude_asm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/codegen/prelude.h"

namespace tessel::codegen {
namespace {

bool IsWordChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

// (absl's string utilities here predate std::string_view: these are std.)
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0;;) {
    const size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    if (end == std::string_view::npos) return lines;
    at = end + 1;
  }
}

std::string_view Stripped(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(s.front())) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(s.back())) s.remove_suffix(1);
  return s;
}

// The decimal number s is, or -1.
int Number(std::string_view s) {
  if (s.empty() || s.size() > 6) return -1;
  int n = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// Whether a device compile for __CUDA_ARCH__ = cuda_arch takes the branch of
// `directive` ("if ...", "ifdef X", "ifndef X"). The prelude's conditions
// name __CUDA_ARCH__ only: defined in a device compile, so
// `!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= N` and
// `defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= N` both mean cuda_arch >= N.
absl::StatusOr<bool> Taken(std::string_view directive, int cuda_arch) {
  if (directive == "ifdef __CUDA_ARCH__") return true;
  if (directive == "ifndef __CUDA_ARCH__") return false;
  constexpr std::string_view kAtLeast = "__CUDA_ARCH__ >= ";
  const size_t at = directive.find(kAtLeast);
  if (directive.starts_with("if ") && at != std::string_view::npos) {
    const int threshold = Number(directive.substr(at + kAtLeast.size()));
    const std::string_view rest = directive.substr(3, at - 3);
    if (threshold >= 0 &&
        (rest.empty() || rest == "!defined(__CUDA_ARCH__) || " ||
         rest == "defined(__CUDA_ARCH__) && ")) {
      return cuda_arch >= threshold;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "a condition on more than __CUDA_ARCH__: #", std::string(directive)));
}

// `text` with the lines of branches not taken for cuda_arch blanked, and
// the conditional directives themselves.
absl::StatusOr<std::string> Preprocess(std::string_view text, int cuda_arch) {
  std::string out;
  std::vector<std::pair<bool, bool>> open;  // (this branch taken, outer)
  bool live = true;
  for (std::string_view line : Lines(text)) {
    const std::string_view code = Stripped(line);
    if (code.starts_with("#if")) {
      absl::StatusOr<bool> taken = Taken(code.substr(1), cuda_arch);
      if (!taken.ok()) return taken.status();
      open.push_back({*taken, live});
      live = live && *taken;
      line = "";
    } else if (code.starts_with("#else") || code.starts_with("#endif")) {
      if (open.empty()) return absl::InvalidArgumentError("#else / #endif");
      if (code.starts_with("#else")) {
        open.back().first = !open.back().first;
        live = open.back().second && open.back().first;
      } else {
        live = open.back().second;
        open.pop_back();
      }
      line = "";
    } else if (code.starts_with("#elif")) {
      return absl::InvalidArgumentError("#elif");
    }
    if (live) out.append(line);
    out.push_back('\n');
  }
  if (!open.empty()) return absl::InvalidArgumentError("#if without #endif");
  return out;
}

// The end of the comment, string or character literal starting at i, or i
// when none does.
size_t SkipCommentOrLiteral(std::string_view t, size_t i) {
  if (t.compare(i, 2, "//") == 0) return std::min(t.find('\n', i), t.size());
  if (t.compare(i, 2, "/*") == 0) {
    const size_t end = t.find("*/", i + 2);
    return end == std::string_view::npos ? t.size() : end + 2;
  }
  if (t[i] == '"' || t[i] == '\'') {
    size_t j = i + 1;
    while (j < t.size() && t[j] != t[i]) j += t[j] == '\\' ? 2 : 1;
    return std::min(j + 1, t.size());
  }
  return i;
}

// The string literal at t[*i] (after spaces and comments), decoded, and *i
// past it; nullopt when something else comes first.
absl::StatusOr<std::optional<std::string>> NextLiteral(std::string_view t,
                                                       size_t* i) {
  size_t j = *i;
  while (j < t.size()) {
    if (absl::ascii_isspace(t[j])) {
      ++j;
    } else if (t[j] != '"' && SkipCommentOrLiteral(t, j) != j) {
      j = SkipCommentOrLiteral(t, j);
    } else {
      break;
    }
  }
  if (j >= t.size() || t[j] != '"') return std::nullopt;
  std::string s;
  for (++j; j < t.size() && t[j] != '"'; ++j) {
    if (t[j] != '\\') {
      s.push_back(t[j]);
      continue;
    }
    const char e = ++j < t.size() ? t[j] : '\0';
    if (e == 'n') {
      s.push_back('\n');
    } else if (e == 't') {
      s.push_back('\t');
    } else if (e == '"' || e == '\\') {
      s.push_back(e);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("escape \\", std::string(1, e)));
    }
  }
  *i = j + 1;
  return s;
}

// The template of the asm statement whose `asm` keyword ends at *i: its
// string literals, joined; *i past the last.
absl::StatusOr<std::string> AsmTemplate(std::string_view t, size_t* i) {
  size_t j = *i;
  while (j < t.size() && absl::ascii_isspace(t[j])) ++j;
  if (t.compare(j, 8, "volatile") == 0) j += 8;
  while (j < t.size() && absl::ascii_isspace(t[j])) ++j;
  if (j >= t.size() || t[j] != '(') {
    return absl::InvalidArgumentError("an asm without its (");
  }
  ++j;
  std::string text;
  for (;;) {
    absl::StatusOr<std::optional<std::string>> piece = NextLiteral(t, &j);
    if (!piece.ok()) return piece.status();
    if (!*piece) break;
    text += **piece;
  }
  *i = j;
  return text;
}

// How many operands a template names: its highest %n, plus one.
int OperandsNamed(std::string_view text) {
  int count = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (text[i + 1] == '%') {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && absl::ascii_isdigit(text[end])) ++end;
    count = std::max(count, Number(text.substr(i + 1, end - i - 1)) + 1);
  }
  return count;
}

}  // namespace

absl::StatusOr<PreludeAsm> PreludeAsm::Parse(const std::vector<File>& files,
                                             int arch) {
  PreludeAsm result;
  for (const auto& [name, text] : files) {
    auto error = [&, name = name](const absl::Status& s) {
      return absl::InvalidArgumentError(absl::StrCat(
          "prelude ", std::string(name), ": ", std::string(s.message())));
    };
    absl::StatusOr<std::string> live = Preprocess(text, arch * 10);
    if (!live.ok()) return error(live.status());
    const std::string_view t = *live;
    // The function being defined: the word before the first "(" after
    // __forceinline__.
    std::string function, last_word;
    bool in_signature = false;
    for (size_t i = 0; i < t.size();) {
      if (const size_t end = SkipCommentOrLiteral(t, i); end != i) {
        i = end;
        continue;
      }
      if (!IsWordChar(t[i])) {
        if (t[i] == '(' && in_signature) {
          function = last_word;
          in_signature = false;
        }
        ++i;
        continue;
      }
      size_t end = i;
      while (end < t.size() && IsWordChar(t[end])) ++end;
      const std::string_view word = t.substr(i, end - i);
      i = end;
      if (word == "__forceinline__") in_signature = true;
      last_word = std::string(word);
      if (word != "asm") continue;
      if (function.empty()) {
        return error(absl::InvalidArgumentError("an asm outside a function"));
      }
      Asm a;
      absl::StatusOr<std::string> asm_text = AsmTemplate(t, &i);
      if (!asm_text.ok()) return error(asm_text.status());
      a.text = *std::move(asm_text);
      a.operands = OperandsNamed(a.text);
      if (const Asm* same = result.Find(function, a.operands)) {
        if (same->text == a.text) continue;
        return error(absl::InvalidArgumentError(
            absl::StrCat(function, " has two asm statements of ", a.operands,
                         " operands spelled differently")));
      }
      result.asm_[function].push_back(std::move(a));
    }
  }
  return result;
}

const PreludeAsm& PreludeAsm::Embedded(int arch) {
  static absl::Mutex mu;
  static auto* parsed = new std::map<int, std::unique_ptr<PreludeAsm>>;
  absl::MutexLock lock(&mu);
  std::unique_ptr<PreludeAsm>& slot = (*parsed)[arch];
  if (slot == nullptr) {
    std::vector<File> files;
    for (const jit::CudaHeader& h : PreludeHeaders())
      files.push_back({h.name, h.content});
    absl::StatusOr<PreludeAsm> a = Parse(files, arch);
    if (!a.ok()) {
      std::fprintf(stderr, "tessel internal error: %s\n",
                   std::string(a.status().message()).c_str());
      std::abort();
    }
    slot = std::make_unique<PreludeAsm>(*std::move(a));
  }
  return *slot;
}

const PreludeAsm::Asm* PreludeAsm::Find(std::string_view function,
                                        int operands) const {
  auto it = asm_.find(function);
  if (it == asm_.end()) return nullptr;
  for (const Asm& a : it->second) {
    if (a.operands == operands) return &a;
  }
  return nullptr;
}

std::vector<std::string> PreludeAsm::Spell(
    std::string_view function, const std::vector<std::string>& operands,
    const std::map<std::string, std::string>& locals) const {
  const Asm* a = Find(function, static_cast<int>(operands.size()));
  if (a == nullptr) return {};
  const std::string_view t = a->text;
  std::string text;
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '%' && i + 1 < t.size() && t[i + 1] == '%') {
      text.push_back('%');
      i += 2;
    } else if (t[i] == '%' && i + 1 < t.size() &&
               absl::ascii_isdigit(t[i + 1])) {
      size_t end = i + 1;
      while (end < t.size() && absl::ascii_isdigit(t[end])) ++end;
      text += operands[Number(t.substr(i + 1, end - i - 1))];
      i = end;
    } else if (IsWordChar(t[i]) &&
               (i == 0 || (!IsWordChar(t[i - 1]) && t[i - 1] != '.' &&
                           t[i - 1] != '%'))) {
      size_t end = i;
      while (end < t.size() && IsWordChar(t[end])) ++end;
      const std::string word(t.substr(i, end - i));
      auto local = locals.find(word);
      text += local == locals.end() ? word : local->second;
      i = end;
    } else {
      text.push_back(t[i++]);
    }
  }
  std::vector<std::string> instructions;
  for (std::string_view line : Lines(text)) {
    line = Stripped(line);
    if (line.empty() || line == "{" || line == "}" ||
        line.starts_with(".reg ")) {
      continue;
    }
    instructions.emplace_back(line);
  }
  return instructions;
}

std::string PreludeAsm::Opcode(std::string_view function) const {
  auto it = asm_.find(function);
  if (it == asm_.end() || it->second.size() != 1) return "";
  const Asm& a = it->second[0];
  const size_t space = a.text.find(' ');
  if (space == std::string::npos) return "";
  std::string operands;
  for (int i = 0; i < a.operands; ++i)
    absl::StrAppend(&operands, i ? ", %" : "%", i);
  if (a.text.substr(space) != absl::StrCat(" ", operands, ";\n")) return "";
  return a.text.substr(0, space);
}

}  // namespace tessel::codegen
