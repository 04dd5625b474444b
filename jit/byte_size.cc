#include "jit/byte_size.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tessel::jit {

std::optional<uint64_t> ParseByteSize(std::string text) {
  text = std::string(absl::StripAsciiWhitespace(text));
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        scale = uint64_t{1} << 10;
        break;
      case 'M':
        scale = uint64_t{1} << 20;
        break;
      case 'G':
        scale = uint64_t{1} << 30;
        break;
    }
    if (scale != 1) text.pop_back();
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value > UINT64_MAX / scale) {
    return std::nullopt;
  }
  return value * scale;
}

uint64_t ByteSizeFromEnv(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  if (std::optional<uint64_t> bytes = ParseByteSize(value)) return *bytes;
  // Once per variable and value in a process: every cache a program opens
  // reads it, and the warmup's forked children inherit the memory of it.
  static absl::Mutex mu(absl::kConstInit);
  static auto* warned = new std::set<std::string>();
  {
    absl::MutexLock lock(&mu);
    if (!warned->insert(absl::StrCat(name, "=", value)).second) return fallback;
  }
  std::fprintf(stderr,
               "tessel: warning: %s=%s is not a size (e.g. 1073741824 or 1G); "
               "using %llu bytes\n",
               name, value, static_cast<unsigned long long>(fallback));
  return fallback;
}

}  // namespace tessel::jit
