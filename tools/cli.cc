#include "tools/cli.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "jit/nvrtc.h"
#include "tessel/version.h"

namespace tessel::tools {
namespace {

// Levenshtein distance.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& k : known) {
    const size_t d = Distance(word, k);
    if (best == nullptr || d < best_distance) {
      best = &k;
      best_distance = d;
    }
  }
  // Close enough to be a typo: at most a third of the word, and 3 edits.
  if (best == nullptr || best_distance == 0 || best_distance > 3 ||
      best_distance * 3 > std::max(word.size(), best->size())) {
    return "";
  }
  return absl::StrCat(" (did you mean \"", *best, "\"?)");
}

std::string VersionLine(std::string_view tool) {
  return absl::StrCat(tool, " ", version(), " (NVRTC ", jit::NvrtcVersion(),
                      ")");
}

}  // namespace tessel::tools
