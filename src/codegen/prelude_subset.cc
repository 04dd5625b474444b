#include "src/codegen/prelude_subset.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "src/codegen/prelude.h"

namespace tessel::codegen {
namespace {

constexpr std::string_view kUmbrella = "tessel_prelude.cuh";
constexpr std::string_view kAlwaysIncluded = "types.cuh";

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

// Calls take(end) at each whole-word occurrence of `word` in `code`, with
// the offset just past it; stops where take returns true.
template <typename Take>
void ForEachWord(std::string_view code, std::string_view word, Take&& take) {
  if (word.empty()) return;
  for (size_t at = code.find(word); at != std::string_view::npos;
       at = code.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at > 0 && IsWordChar(code[at - 1])) ||
        (end < code.size() && IsWordChar(code[end]))) {
      continue;
    }
    if (take(end)) return;
  }
}

// Whether `word` is one of the identifier-like words of `code`.
bool Mentions(std::string_view code, std::string_view word) {
  bool found = false;
  ForEachWord(code, word, [&](size_t) { return found = true; });
  return found;
}

// `text` without its comments (string literals in the prelude hold PTX, no
// comment markers).
std::string WithoutComments(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
      out.push_back(' ');
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

// The word that ends just before `end` in `code` (skipping spaces and one
// template argument list: "name<16> ("), or empty.
std::string_view WordBefore(std::string_view code, size_t end) {
  while (end > 0 && code[end - 1] == ' ') --end;
  if (end > 0 && code[end - 1] == '>') {
    int depth = 0;
    while (end > 0) {
      const char c = code[--end];
      if (c == '>') ++depth;
      if (c == '<' && --depth == 0) break;
    }
    while (end > 0 && code[end - 1] == ' ') --end;
  }
  size_t begin = end;
  while (begin > 0 && IsWordChar(code[begin - 1])) --begin;
  return code.substr(begin, end - begin);
}

size_t SkipSpaces(std::string_view code, size_t at) {
  while (at < code.size() && (code[at] == ' ' || code[at] == '\n')) ++at;
  return at;
}

// The names `code` declares at namespace scope the way the prelude writes
// them: functions ("__device__ ... name(" or "name<...>("), structs and
// classes ("struct alignas(64) Name"), type aliases ("using name =").
// Anything else is matched by mention instead (NeededParts).
std::unordered_set<std::string_view> Declared(std::string_view code) {
  std::unordered_set<std::string_view> declared;
  const auto each = [&](std::string_view word, auto&& take) {
    ForEachWord(code, word, [&](size_t end) {
      take(end);
      return false;
    });
  };
  each("__device__", [&](size_t from) {
    const size_t stop = code.find_first_of("(;{=", from);
    if (stop == std::string_view::npos || code[stop] != '(') return;
    const std::string_view name = WordBefore(code, stop);
    if (!name.empty()) declared.insert(name);
  });
  for (std::string_view keyword : {"struct", "class"}) {
    each(keyword, [&](size_t from) {
      size_t at = SkipSpaces(code, from);
      if (code.compare(at, 7, "alignas") == 0) {
        const size_t close = code.find(')', at);
        if (close == std::string_view::npos) return;
        at = SkipSpaces(code, close + 1);
      }
      size_t end = at;
      while (end < code.size() && IsWordChar(code[end])) ++end;
      if (end > at) declared.insert(code.substr(at, end - at));
    });
  }
  each("using", [&](size_t from) {
    const size_t at = SkipSpaces(code, from);
    size_t end = at;
    while (end < code.size() && IsWordChar(code[end])) ++end;
    if (end > at && SkipSpaces(code, end) < code.size() &&
        code[SkipSpaces(code, end)] == '=') {
      declared.insert(code.substr(at, end - at));
    }
  });
  return declared;
}

// The prelude names `kernel_text` uses: words after "tl::" or
// "tessel::dev::", and TESSEL_ macros.
std::unordered_set<std::string_view> UsedNames(std::string_view kernel_text) {
  std::unordered_set<std::string_view> used;
  for (std::string_view prefix : {"tl::", "dev::"}) {
    for (size_t at = kernel_text.find(prefix); at != std::string_view::npos;
         at = kernel_text.find(prefix, at + 1)) {
      // "tl::" must start a word ("xtl::" is not the alias).
      if (at > 0 && IsWordChar(kernel_text[at - 1])) continue;
      size_t end = at + prefix.size();
      while (end < kernel_text.size() && IsWordChar(kernel_text[end])) ++end;
      used.insert(
          kernel_text.substr(at + prefix.size(), end - at - prefix.size()));
    }
  }
  constexpr std::string_view kMacro = "TESSEL_";
  for (size_t at = kernel_text.find(kMacro); at != std::string_view::npos;
       at = kernel_text.find(kMacro, at + 1)) {
    if (at > 0 && IsWordChar(kernel_text[at - 1])) continue;
    size_t end = at;
    while (end < kernel_text.size() && IsWordChar(kernel_text[end])) ++end;
    used.insert(kernel_text.substr(at, end - at));
  }
  return used;
}

struct Part {
  std::string name;
  std::string code;                               // without comments
  std::unordered_set<std::string_view> declared;  // Declared(code)
};

struct PartIndex {
  std::vector<Part> parts;
};

// The parts with what they declare, once (the prelude is fixed at build
// time). No set of every word: building one was half a fresh process's
// first compile; the rare undeclared name is searched for instead.
const PartIndex& Index() {
  static const auto* index = [] {
    auto* x = new PartIndex;
    x->parts.reserve(PreludeHeaders().size());
    for (const jit::CudaHeader& h : PreludeHeaders()) {
      if (h.name == kUmbrella) continue;
      Part& part = x->parts.emplace_back();
      part.name = h.name;
      part.code = WithoutComments(h.content);
      part.declared = Declared(part.code);
    }
    return x;
  }();
  return *index;
}

const jit::CudaHeader& Umbrella() {
  for (const jit::CudaHeader& h : PreludeHeaders()) {
    if (h.name == kUmbrella) return h;
  }
  static const jit::CudaHeader missing;
  return missing;
}

// The parts a name brings: every part that declares it (all overloads and
// specializations of it); a name no part declares in a form Declared()
// knows (a macro, a constant) brings every part that mentions it. Worked out
// once per name: kernels use the same few dozen, and the prelude is fixed.
const std::vector<const Part*>& PartsFor(std::string_view name) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* const known =
      new absl::node_hash_map<std::string, std::vector<const Part*>>;
  absl::MutexLock lock(&mu);
  if (auto it = known->find(absl::string_view(name.data(), name.size()));
      it != known->end())
    return it->second;
  const PartIndex& index = Index();
  std::vector<const Part*> parts;
  for (const Part& part : index.parts) {
    if (part.declared.count(name)) parts.push_back(&part);
  }
  if (parts.empty()) {
    for (const Part& part : index.parts) {
      if (Mentions(part.code, name)) parts.push_back(&part);
    }
  }
  // Only a kernel's text names these, but a program's name is in it too:
  // a bounded memo (past the bound, each answer is worked out again).
  if (known->size() >= 4096) {
    thread_local std::vector<const Part*> unkept;
    unkept = std::move(parts);
    return unkept;
  }
  return (*known)[std::string(name)] = std::move(parts);
}

std::unordered_set<std::string> NeededParts(std::string_view kernel_text) {
  std::unordered_set<std::string> needed = {std::string(kAlwaysIncluded)};
  for (std::string_view name : UsedNames(kernel_text)) {
    for (const Part* part : PartsFor(name)) needed.insert(part->name);
  }
  return needed;
}

// The lines of `text`, without their '\n'.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (true) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return lines;
    text.remove_prefix(end + 1);
  }
}

// `#include "name"` or `#include <name>` on this line, else empty.
std::string_view IncludedName(std::string_view line) {
  const size_t hash = line.find_first_not_of(" \t");
  if (hash == std::string_view::npos || line.substr(hash, 1) != "#") return {};
  line.remove_prefix(hash + 1);
  line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
  if (line.substr(0, 7) != "include") return {};
  const size_t open = line.find_first_of("\"<");
  if (open == std::string_view::npos) return {};
  const size_t close = line.find_first_of("\">", open + 1);
  if (close == std::string_view::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<std::string> PreludePartsFor(std::string_view kernel_text) {
  const std::unordered_set<std::string> needed = NeededParts(kernel_text);
  std::vector<std::string> parts;
  for (std::string_view line : Lines(Umbrella().content)) {
    const std::string name(IncludedName(line));
    if (needed.count(name)) parts.push_back(name);
  }
  return parts;
}

std::vector<jit::CudaHeader> PreludeHeadersFor(std::string_view kernel_text) {
  const std::unordered_set<std::string> needed = NeededParts(kernel_text);
  const bool fp8 = kernel_text.find("__nv_fp8") != std::string_view::npos;
  // The umbrella's own lines, less the includes of parts not needed (and of
  // cuda_fp8.h without fp8): new parts and the alias follow by themselves.
  std::vector<std::string_view> kept;
  std::unordered_map<std::string_view, bool> is_part;
  for (const Part& part : Index().parts) is_part[part.name] = true;
  for (std::string_view line : Lines(Umbrella().content)) {
    const std::string_view name = IncludedName(line);
    if (name == "cuda_fp8.h" && !fp8) continue;
    if (is_part.count(name) && !needed.count(std::string(name))) continue;
    kept.push_back(line);
  }
  std::vector<jit::CudaHeader> headers = PreludeHeaders();
  for (jit::CudaHeader& h : headers) {
    if (h.name != kUmbrella) continue;
    h.content.clear();
    for (size_t i = 0; i < kept.size(); ++i) {
      h.content.append(kept[i]);
      if (i + 1 < kept.size()) h.content.push_back('\n');
    }
  }
  return headers;
}

}  // namespace tessel::codegen
